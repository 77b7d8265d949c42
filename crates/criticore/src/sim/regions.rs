//! Non-preemptive regions (`preemption = "cooperative"` or
//! `"non-preemptive"`, OSEK's task kinds, and implicit communication's
//! copies; docs/simulator.md): a cooperative job may be preempted only
//! between its runnables and copies, a non-preemptive one never, a
//! preemptive one with copies anywhere but in its copy-in and copy-out. The
//! engine marks a job `locked` while it is inside a non-preemptive region,
//! so the scheduler keeps it on its core, and makes the end of each region
//! an event, the preemption point where a higher-priority job may take the
//! core (or where a preemptible body ends and its copy-out begins).
//!
//! Regions are work at rate 1 (as `exec_ns − remaining_ns`); a reload charged
//! when a job comes back is done inside the region it comes back to, and the
//! last region is the job's rest (whatever its execution time). A runnable's
//! region is its time in the job (drawn, under `simulate --drawn`, or its
//! share of a job shorter than its PET: `sim::draws`), a body the job's own
//! work less its copies: a shorter job keeps its copies whole.

use super::draws::{Draws, Shape};
use super::job::Job;
use std::sync::Arc;
use crate::model::{Level, Part, Region, TaskSystem};

pub struct Regions {
    /// Per task: its regions, or None if it may be preempted anywhere.
    per_task: Vec<Option<Box<[Region]>>>,
    /// Per task: how a job shorter than its PET splits its time.
    shapes: Vec<Shape>,
    /// The run's draws, if it draws (`sim::draws`).
    draws: Option<Arc<Draws>>,
    any: bool,
}

impl Regions {
    /// `draws`: the run's draws under `ExecModel::Drawn` (`Releases::draws`).
    pub fn new(system: &TaskSystem, draws: Option<Arc<Draws>>) -> Self {
        let per_task: Vec<Option<Box<[Region]>>> = system.tasks.iter().map(|t| t.regions(Level::C).map(Vec::into_boxed_slice)).collect();
        let any = per_task.iter().any(Option::is_some);
        let shapes = system.tasks.iter().map(Shape::of).collect();
        Regions { per_task, shapes, draws, any }
    }

    /// Whether some task has regions (else the engine skips all of this).
    pub fn any(&self) -> bool {
        self.any
    }

    pub fn limited(&self, task: u32) -> bool {
        self.per_task[task as usize].is_some()
    }

    /// Region `index`'s length in `job`; the last lasts to the job's end.
    fn length(&self, job: &Job, index: u32) -> u64 {
        let regions = match &self.per_task[job.task as usize] {
            Some(r) if (index as usize) + 1 < r.len() => r,
            _ => return u64::MAX,
        };
        let region = regions[index as usize];
        // The job's own work (drawn or given), its reloads aside.
        let own = job.exec_ns - job.reload_ns;
        let shape = &self.shapes[job.task as usize];
        match region.part {
            // Drawn, or its share of a job shorter than its PET.
            Part::Runnable(k) => self.draws.as_ref().and_then(|d| d.runnable_ns(job.task, job.number, k)).unwrap_or_else(|| shape.runnable_ns(k, own)),
            // A body: the job's own work less its copies (the other regions).
            Part::Body => own.saturating_sub(shape.copies_ns()),
            _ => region.work_ns,
        }
    }

    /// Whether region `index` may be preempted (a preemptive task's body).
    fn preemptible(&self, task: u32, index: u32) -> bool {
        match &self.per_task[task as usize] {
            Some(r) => r.get(index as usize).is_some_and(|r| r.preemptible),
            None => true,
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
            job.region_end = done.saturating_add(reload).saturating_add(self.length(job, job.region));
            job.region += 1;
        } else {
            job.region_end = job.region_end.saturating_add(reload);
        }
    }

    /// The job kept its core having done `done`: past a preemption point it
    /// enters its next region.
    pub fn kept(&self, job: &mut Job, done: u64) {
        if self.limited(job.task) && done >= job.region_end {
            job.region_end = done.saturating_add(self.length(job, job.region));
            job.region += 1;
        }
    }

    /// Whether the job is inside a non-preemptive region, having done `done`.
    pub fn locked(&self, job: &Job, done: u64) -> bool {
        self.limited(job.task) && done < job.region_end && job.region > 0 && !self.preemptible(job.task, job.region - 1)
    }

    /// Whether the job's region ends before its work does (a point to stop at).
    pub fn ends_inside(&self, job: &Job, done: u64) -> bool {
        self.limited(job.task) && done < job.region_end && job.region_end < job.exec_ns
    }
}
