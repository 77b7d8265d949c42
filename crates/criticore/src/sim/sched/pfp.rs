//! Partitioned fixed priority: each core runs its own tasks by priority
//! (explicit priorities, else rate-monotonic; see [`super::priority`]).

use super::priority::fixed;
use crate::policy::fixed_priority_ranks;
use super::queue::CoreQueue;
use super::{require_cores, Scheduler};
use crate::error::FieldError;
use crate::model::TaskSystem;
use crate::sim::job::{Job, JobId, Jobs};

pub struct Pfp {
    core_of: Vec<usize>,
    rank: Vec<u64>,
    cores: Vec<CoreQueue>,
}

impl Pfp {
    pub fn new(system: &TaskSystem) -> Result<Self, FieldError> {
        require_cores(system, "pfp")?;
        let all: Vec<usize> = (0..system.tasks.len()).collect();
        Ok(Pfp {
            core_of: system.tasks.iter().map(|t| t.core.unwrap_or(0)).collect(),
            rank: fixed_priority_ranks(system, &all),
            cores: vec![CoreQueue::default(); system.platform.cores],
        })
    }
}

impl Scheduler for Pfp {
    fn serial_tasks(&self) -> bool {
        true
    }

    fn release(&mut self, _now: u64, id: JobId, job: &Job) {
        self.cores[self.core_of[job.task as usize]].release(fixed(&self.rank, job, id));
    }

    fn complete(&mut self, _now: u64, id: JobId, _job: &Job, core: usize) {
        self.cores[core].complete(id);
    }

    fn hold_task(&mut self, _now: u64, task: u32, held: bool) -> bool {
        self.cores[self.core_of[task as usize]].hold(task, held);
        true
    }

    fn dispatch(&mut self, _now: u64, jobs: &Jobs, running: &mut [Option<JobId>]) {
        // A job in a non-preemptive region keeps its core (the engine marks it).
        for (slot, queue) in running.iter_mut().zip(&mut self.cores) {
            *slot = queue.dispatch_unless(|id| jobs.get(id).locked);
        }
    }
}
