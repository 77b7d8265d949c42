//! Non-preemptive regions (`preemption = "cooperative"` or
//! `"non-preemptive"`, OSEK's task kinds; docs/simulator.md): a cooperative
//! job may be preempted only between its runnables, a non-preemptive one
//! never. The engine marks a job `locked` while it is inside a region, so the
//! scheduler keeps it on its core, and makes the end of each region an event,
//! the preemption point where a higher-priority job may take the core.
//!
//! Regions are work at rate 1 (as `exec_ns − remaining_ns`); a reload charged
//! when a job comes back is done inside the region it comes back to, and the
//! last region is the job's rest (whatever its execution time).

use super::job::Job;
use crate::model::{Level, TaskSystem};

pub struct Regions {
    /// Per task: its regions' lengths, or None if it may be preempted anywhere.
    per_task: Vec<Option<Box<[u64]>>>,
    any: bool,
}

impl Regions {
    pub fn new(system: &TaskSystem) -> Self {
        let per_task: Vec<Option<Box<[u64]>>> = system.tasks.iter().map(|t| t.regions_ns(Level::C).map(Vec::into_boxed_slice)).collect();
        let any = per_task.iter().any(Option::is_some);
        Regions { per_task, any }
    }

    /// Whether some task has regions (else the engine skips all of this).
    pub fn any(&self) -> bool {
        self.any
    }

    pub fn limited(&self, task: u32) -> bool {
        self.per_task[task as usize].is_some()
    }

    /// Region `index`'s length; the last lasts to the job's end.
    fn length(&self, task: u32, index: u32) -> u64 {
        match &self.per_task[task as usize] {
            Some(r) if (index as usize) + 1 < r.len() => r[index as usize],
            _ => u64::MAX,
        }
    }

    /// The job got a core having done `done` of its work, `reload` added
    /// just now: at a preemption point (or its start) it enters its next
    /// region, reload first; stopped inside one (a regulator held it), that
    /// region ends `reload` later.
    pub fn on_core(&self, job: &mut Job, done: u64, reload: u64) {
        if !self.limited(job.task) {
            return;
        }
        if done >= job.region_end {
            job.region_end = done.saturating_add(reload).saturating_add(self.length(job.task, job.region));
            job.region += 1;
        } else {
            job.region_end = job.region_end.saturating_add(reload);
        }
    }

    /// The job kept its core having done `done`: past a preemption point it
    /// enters its next region.
    pub fn kept(&self, job: &mut Job, done: u64) {
        if self.limited(job.task) && done >= job.region_end {
            job.region_end = done.saturating_add(self.length(job.task, job.region));
            job.region += 1;
        }
    }

    /// Whether the job is inside a region, having done `done`.
    pub fn locked(&self, job: &Job, done: u64) -> bool {
        self.limited(job.task) && done < job.region_end
    }
}
