//! Multiple-activation limits (`activation_limit`, OSEK's; docs/simulator.md):
//! at most N jobs of a task active (released, unfinished) at once; a release
//! that finds N active is lost (OSEK's E_OS_LIMIT), counted, and never a job.
//!
//! A busy task's releases are decided when they are made (release.rs parks
//! them until the job before finishes): the jobs active at a release r are
//! the task's jobs in flight now plus those that finished after r, so each
//! limited task keeps its last N finishing times.

use crate::model::TaskSystem;
use std::collections::VecDeque;

pub struct ActivationLimits {
    limit: Vec<Option<u32>>,
    /// Per limited task: its last `limit` jobs' finishing times.
    finished: Vec<VecDeque<u64>>,
    any: bool,
}

impl ActivationLimits {
    pub fn new(system: &TaskSystem) -> Self {
        let limit: Vec<Option<u32>> = system.tasks.iter().map(|t| t.activation_limit).collect();
        let any = limit.iter().any(Option::is_some);
        let finished = if any { vec![VecDeque::new(); limit.len()] } else { Vec::new() };
        ActivationLimits { limit, finished, any }
    }

    /// Whether some task has a limit (else the engine skips all of this).
    pub fn any(&self) -> bool {
        self.any
    }

    /// A job of `task` finished at `now`.
    pub fn completed(&mut self, task: u32, now: u64) {
        if let Some(n) = self.limit[task as usize] {
            let q = &mut self.finished[task as usize];
            q.push_back(now);
            if q.len() > n as usize {
                q.pop_front();
            }
        }
    }

    /// Whether a release of `task` at `release_ns` is lost, `in_flight` of its
    /// jobs (and `kept` earlier releases not yet made) being active now.
    pub fn lost(&self, task: u32, release_ns: u64, in_flight: u32, kept: u32) -> bool {
        let Some(n) = self.limit[task as usize] else { return false };
        let since = self.finished[task as usize].iter().filter(|&&f| f > release_ns).count() as u32;
        in_flight + kept + since >= n
    }
}
