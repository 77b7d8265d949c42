//! MC² composite scheduler (mc2-hardware-management §2, Fig. 1): on each core
//! Level A follows the cyclic-executive table the analysis synthesizes, above
//! Level B rate-monotonic; Level C is global EDF over whatever cores A and B
//! leave idle at that instant; Level D (best effort, FIFO) takes what is left.
//!
//! A Level-A job runs in its task's table slots; if it finishes early, the
//! rest of the slot goes to lower levels. Level-D tasks are global here
//! (a `core` on a Level-D task is ignored by this scheduler).

use super::priority::{edf, fifo, rate_monotonic};
use super::queue::{CoreQueue, GlobalQueue};
use super::Scheduler;
use crate::policy::cyclic_executive::{self, CyclicTable, NoTable};
use crate::policy::provisioning::Provisioning;
use crate::error::FieldError;
use crate::model::{Level, TaskSystem};
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
use std::collections::VecDeque;

/// Where one core is in its Level-A table.
struct TableCursor {
    table: CyclicTable,
    /// Task of the slot active now, if any.
    active: Option<u32>,
    /// Next slot boundary (start or end).
    next_boundary: u64,
}

impl TableCursor {
    fn seek(&mut self, now: u64) {
        let h = self.table.hyperperiod_ns;
        if self.table.slots.is_empty() || h == 0 {
            self.active = None;
            self.next_boundary = NONE_U64;
            return;
        }
        let base = now - now % h;
        let pos = now % h;
        let slots = &self.table.slots;
        // First slot that ends after pos.
        let i = slots.partition_point(|s| s.start_ns + s.length_ns <= pos);
        (self.active, self.next_boundary) = match slots.get(i) {
            Some(s) if s.start_ns <= pos => (Some(s.task as u32), base + s.start_ns + s.length_ns),
            Some(s) => (None, base + s.start_ns),
            None => (None, base + h + slots[0].start_ns),
        };
    }
}

pub struct Mc2 {
    level: Vec<Option<Level>>,
    period: Vec<u64>,
    core_of: Vec<usize>,
    tables: Vec<TableCursor>,
    /// Pending Level-A jobs per task, oldest first.
    a_pending: Vec<VecDeque<JobId>>,
    level_b: Vec<CoreQueue>,
    level_c: GlobalQueue,
    level_d: GlobalQueue,
    /// Per core: the Level-A or -B job holding it at the last dispatch.
    holder_ab: Vec<Option<JobId>>,
}

impl Mc2 {
    pub fn new(system: &TaskSystem) -> Result<Self, FieldError> {
        if let Some(i) = system.tasks.iter().position(|t| t.level.is_none()) {
            return Err(FieldError::new(format!("task[{i}].level"), "the mc2 scheduler needs an MC² level (A–D) on every task"));
        }
        let m = system.platform.cores;
        let tables = (0..m)
            .map(|core| {
                let table = cyclic_executive::table(system, core, Provisioning::MC2_ISOLATED).map_err(|why| {
                    let reason = match why {
                        NoTable::Overloaded => "Level A does not fit, so MC² has no cyclic-executive table".to_string(),
                        NoTable::TooLarge { jobs } => format!("the Level-A table would hold {jobs} jobs per hyperperiod"),
                        NoTable::MissingPet => "a Level-A PET is missing".to_string(),
                    };
                    FieldError::new(format!("core {core}"), reason)
                })?;
                let mut cursor = TableCursor { table, active: None, next_boundary: 0 };
                cursor.seek(0);
                Ok(cursor)
            })
            .collect::<Result<Vec<_>, FieldError>>()?;
        Ok(Mc2 {
            level: system.tasks.iter().map(|t| t.level).collect(),
            period: system.tasks.iter().map(|t| t.period_ns).collect(),
            core_of: system.tasks.iter().map(|t| t.core.unwrap_or(0)).collect(),
            tables,
            a_pending: vec![VecDeque::new(); system.tasks.len()],
            level_b: vec![CoreQueue::default(); m],
            level_c: GlobalQueue::new(m),
            level_d: GlobalQueue::new(m),
            holder_ab: vec![None; m],
        })
    }

}

impl Scheduler for Mc2 {
    fn release(&mut self, _now: u64, id: JobId, job: &Job) {
        let task = job.task as usize;
        match self.level[task] {
            Some(Level::A) => self.a_pending[task].push_back(id),
            Some(Level::B) => {
                let key = rate_monotonic(&self.period, job, id);
                self.level_b[self.core_of[task]].release(key)
            }
            Some(Level::C) => self.level_c.release(edf(job, id)),
            _ => self.level_d.release(fifo(job, id)),
        }
    }

    fn complete(&mut self, _now: u64, id: JobId, job: &Job, core: usize) {
        let task = job.task as usize;
        match self.level[task] {
            Some(Level::A) => {
                self.a_pending[task].retain(|&j| j != id);
            }
            Some(Level::B) => self.level_b[core].complete(id),
            Some(Level::C) => self.level_c.complete(id, core),
            _ => self.level_d.complete(id, core),
        }
        if self.holder_ab[core] == Some(id) {
            self.holder_ab[core] = None;
        }
    }

    fn next_timer(&self) -> u64 {
        self.tables.iter().map(|t| t.next_boundary).min().unwrap_or(NONE_U64)
    }

    fn timer(&mut self, now: u64) {
        for cursor in &mut self.tables {
            if cursor.next_boundary <= now {
                cursor.seek(now);
            }
        }
    }

    fn dispatch(&mut self, _now: u64, jobs: &Jobs, running: &mut [Option<JobId>]) {
        let m = running.len();
        for p in 0..m {
            // Level A: the oldest pending job of the task whose slot is active.
            let a = self.tables[p].active.and_then(|task| self.a_pending[task as usize].front().copied());
            self.holder_ab[p] = match a {
                Some(job) => {
                    self.level_b[p].yield_core();
                    Some(job)
                }
                None => self.level_b[p].dispatch(),
            };
            if self.holder_ab[p].is_some() {
                self.level_c.vacate(p);
                self.level_d.vacate(p);
            }
        }
        let holder_ab = &self.holder_ab;
        self.level_c.dispatch(|p| holder_ab[p].is_none(), |id| jobs.get(id).last_core);
        for p in 0..m {
            if self.level_c.running[p].is_some() {
                self.level_d.vacate(p);
            }
        }
        let level_c = &self.level_c;
        self.level_d.dispatch(|p| holder_ab[p].is_none() && level_c.running[p].is_none(), |id| jobs.get(id).last_core);
        for p in 0..m {
            running[p] = self.holder_ab[p]
                .or(self.level_c.running[p].map(|k| k.2))
                .or(self.level_d.running[p].map(|k| k.2));
        }
    }
}
