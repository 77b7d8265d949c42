//! Schedulers: one file each, all behind [`Scheduler`]. The engine tells a
//! scheduler about releases, completions and the passing of time, and asks it
//! what runs on each core; queues in [`queue`] do the common bookkeeping.

pub mod cbs;
pub mod gedf;
pub mod gfp;
pub mod mc2;
pub mod pedf;
pub mod periodic_server;
pub mod pfp;
pub mod priority;
pub mod queue;
pub mod server_cores;

use crate::error::FieldError;
use crate::model::TaskSystem;
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
// The policies come from below the simulator (shared with the analysis); the
// re-export keeps `sim::sched::SchedulerKind` for the bindings.
pub use crate::policy::SchedulerKind;

pub trait Scheduler {
    /// A job was released at `now`.
    fn release(&mut self, now: u64, id: JobId, job: &Job);
    /// The job running on `core` finished at `now`.
    fn complete(&mut self, now: u64, id: JobId, job: &Job, core: usize);
    /// Time passes from `from` to `to` under the current assignment (budgets drain).
    fn advance(&mut self, _from: u64, _to: u64) {}
    /// The next internal event (slot boundary, budget exhaustion, replenishment).
    fn next_timer(&self) -> u64 {
        NONE_U64
    }
    /// Handle the internal events due at `now`.
    fn timer(&mut self, _now: u64) {}
    /// Decide what runs: one entry per core.
    fn dispatch(&mut self, now: u64, jobs: &Jobs, running: &mut [Option<JobId>]);
    /// The cores whose entry the last `dispatch` may have changed, in
    /// increasing order (repeats allowed); None: any. The engine then looks at
    /// those alone.
    fn touched(&self) -> Option<&[usize]> {
        None
    }
    /// Per core, the server holding it; None where no server runs.
    fn servers_on_cores(&self, _out: &mut [Option<u32>]) {}
    /// A server's memory budget ran out at `now`: suspend it until its next period (MRS rule 5).
    fn deplete_server(&mut self, _now: u64, _server: u32) {}
    /// A regulator stops `task` (`held`) or lets it go: its jobs do not run
    /// meanwhile and its core goes to the others, as a stopped process's
    /// does. Returns false where the scheduler cannot (the regulator then
    /// stalls the core the task runs on).
    fn hold_task(&mut self, _now: u64, _task: u32, _held: bool) -> bool {
        false
    }
    /// A task's jobs run one at a time in release order, and a job waiting
    /// behind its predecessor never changes a decision: its release may then
    /// wait until the predecessor finishes (release.rs). Not so for servers,
    /// whose budgets react to arrivals, nor MC²'s table-driven Level A.
    fn serial_tasks(&self) -> bool {
        false
    }
}

/// Every task must have a core for a partitioned scheduler.
pub(crate) fn require_cores(system: &TaskSystem, scheduler: &str) -> Result<(), FieldError> {
    match system.tasks.iter().position(|t| t.core.is_none()) {
        Some(i) => Err(FieldError::new(format!("task[{i}].core"), format!("the {scheduler} scheduler needs a core for every task"))),
        None => Ok(()),
    }
}
