//! Global EDF: the m jobs with the earliest absolute deadlines run.

use super::priority::edf;
use super::queue::GlobalQueue;
use super::Scheduler;
use crate::model::TaskSystem;
use crate::sim::job::{Job, JobId, Jobs};

pub struct Gedf {
    queue: GlobalQueue,
}

impl Gedf {
    pub fn new(system: &TaskSystem) -> Self {
        Gedf { queue: GlobalQueue::new(system.platform.cores) }
    }
}

impl Scheduler for Gedf {
    fn serial_tasks(&self) -> bool {
        true
    }

    fn release(&mut self, _now: u64, id: JobId, job: &Job) {
        self.queue.release(edf(job, id));
    }

    fn complete(&mut self, _now: u64, id: JobId, _job: &Job, core: usize) {
        self.queue.complete(id, core);
    }

    fn dispatch(&mut self, _now: u64, jobs: &Jobs, running: &mut [Option<JobId>]) {
        self.queue.dispatch(|_| true, |id| jobs.get(id).last_core);
        self.queue.hand_out(running);
    }

    fn touched(&self) -> Option<&[usize]> {
        Some(&self.queue.touched)
    }
}
