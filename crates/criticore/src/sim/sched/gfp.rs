//! Global fixed priority: the m highest-priority jobs run (explicit
//! priorities, else rate-monotonic order; see [`super::priority`]).

use super::priority::fixed;
use crate::policy::fixed_priority_ranks;
use super::queue::GlobalQueue;
use super::Scheduler;
use crate::model::TaskSystem;
use crate::sim::job::{Job, JobId, Jobs};

pub struct Gfp {
    rank: Vec<u64>,
    queue: GlobalQueue,
}

impl Gfp {
    pub fn new(system: &TaskSystem) -> Self {
        let all: Vec<usize> = (0..system.tasks.len()).collect();
        Gfp { rank: fixed_priority_ranks(system, &all), queue: GlobalQueue::new(system.platform.cores) }
    }
}

impl Scheduler for Gfp {
    fn serial_tasks(&self) -> bool {
        true
    }

    fn release(&mut self, _now: u64, id: JobId, job: &Job) {
        self.queue.release(fixed(&self.rank, job, id));
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
