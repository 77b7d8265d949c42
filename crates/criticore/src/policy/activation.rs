//! Multiple-activation limits (`activation_limit`, OSEK's; docs/format.md):
//! at most N jobs of a task active (released, unfinished) at once; a release
//! that finds N active is lost (OSEK's E_OS_LIMIT), counted, and never a job.
//! The simulator and the runtime's periodic worker decide losses with
//! [`ActivationLimit`]; the analysis says whether any can happen
//! ([`jobs_active_at_most`]).
//!
//! A busy task's releases may be decided after they are due (the simulator
//! parks them until the job before finishes, the worker runs its jobs one
//! after another): the jobs active at a release r are those in flight now
//! plus those that finished after r, so a limited task keeps its last N
//! finishing times.

use crate::model::TaskSystem;
use std::collections::VecDeque;

/// One task's limit and its last `limit` jobs' finishing times.
#[derive(Debug, Clone)]
pub struct ActivationLimit {
    limit: u32,
    finished: VecDeque<u64>,
}

impl ActivationLimit {
    pub fn new(limit: u32) -> Self {
        ActivationLimit { limit, finished: VecDeque::with_capacity(limit as usize + 1) }
    }

    /// A job of the task finished at `now`.
    pub fn completed(&mut self, now: u64) {
        self.finished.push_back(now);
        if self.finished.len() > self.limit as usize {
            self.finished.pop_front();
        }
    }

    /// Whether a release at `release_ns` is lost, `active_now` of the task's
    /// jobs (released, unfinished, kept releases not yet made included) being
    /// active when it is decided.
    pub fn lost(&self, release_ns: u64, active_now: u32) -> bool {
        let since = self.finished.iter().filter(|&&f| f > release_ns).count() as u32;
        active_now + since >= self.limit
    }
}

/// Every task's limit, for a run of the whole system.
pub struct ActivationLimits {
    tasks: Vec<Option<ActivationLimit>>,
    any: bool,
}

impl ActivationLimits {
    pub fn new(system: &TaskSystem) -> Self {
        let tasks: Vec<Option<ActivationLimit>> = system.tasks.iter().map(|t| t.activation_limit.map(ActivationLimit::new)).collect();
        let any = tasks.iter().any(Option::is_some);
        ActivationLimits { tasks, any }
    }

    /// Whether some task has a limit (else a run skips all of this).
    pub fn any(&self) -> bool {
        self.any
    }

    pub fn completed(&mut self, task: u32, now: u64) {
        if let Some(l) = &mut self.tasks[task as usize] {
            l.completed(now);
        }
    }

    pub fn lost(&self, task: u32, release_ns: u64, active_now: u32) -> bool {
        self.tasks[task as usize].as_ref().is_some_and(|l| l.lost(release_ns, active_now))
    }
}

/// With response bound R and period T, at most ⌈R/T⌉ jobs of a task are
/// active at a release (one released ⌈R/T⌉ periods before has finished), at
/// least the one released.
pub fn jobs_active_at_most(bound_ns: u64, period_ns: u64) -> u64 {
    bound_ns.div_ceil(period_ns).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_lost_while_the_limit_s_jobs_are_active() {
        // Limit 2: jobs finished at 10 and 30; a release at 5 finds both active
        // (finished after it), one at 15 only the one finishing at 30.
        let mut l = ActivationLimit::new(2);
        l.completed(10);
        l.completed(30);
        assert!(l.lost(5, 0));
        assert!(!l.lost(15, 0));
        assert!(l.lost(15, 1), "with one in flight: two active");
        assert!(!l.lost(30, 1), "a job finishing at the release is no longer active");
        // Only the last two finishing times count.
        l.completed(40);
        assert!(!l.lost(35, 0), "only 40 is after 35 (10 and 30 no longer kept or before)");
        assert_eq!(l.finished, [30, 40]);
        assert_eq!((jobs_active_at_most(0, 10), jobs_active_at_most(10, 10), jobs_active_at_most(11, 10)), (1, 1, 2));
    }
}
