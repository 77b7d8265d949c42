//! What a group runs at time t, for MCTI at run time: the criticality L_k(t)
//! and deadline D_k(t) of mcti-task-isolation §4, from the jobs of its
//! processes (`criticore::regulate::entities::running` decides from them).
//!
//! A process's jobs are its task's releases in the file (the first at the
//! task's offset from the common start, then one every period), job k
//! ending when the program marks `JobEnd k` on its counter page (the
//! periodic worker does; `criticore.h` and `criticore.instrument` programs
//! may). A job released and not yet marked ended is in progress: its
//! deadline is its release plus the task's relative deadline. A program that
//! marks no job end (not instrumented) is in a job from its first release
//! to the end of the run, with no known deadline: a critical program so
//! counts as critical for its whole life (docs/runtime.md, MCTI). The
//! releases come from the file, not from the program, so that a program the
//! regulator stopped still counts as released.

use crate::os::counter_page::{CounterPage, EventKind, EventReader};
use criticore::regulate::entities::Job;

/// One process of a group, as MCTI sees it.
pub struct Member {
    pub criticality: u32,
    pub offset_ns: u64,
    pub period_ns: u64,
    pub deadline_ns: u64,
    page: Option<(CounterPage, EventReader)>,
    /// Jobs marked ended (JobEnd k: at least k + 1).
    ended: u64,
    /// The program marked a job end: its jobs are known.
    marks_jobs: bool,
    events: Vec<crate::os::counter_page::Event>,
}

impl Member {
    /// A process of a task with this criticality and timing; its counter page, if any.
    pub fn new(criticality: u32, offset_ns: u64, period_ns: u64, deadline_ns: u64, page: Option<CounterPage>) -> Self {
        Member { criticality, offset_ns, period_ns: period_ns.max(1), deadline_ns, page: page.map(|p| (p, EventReader::default())), ended: 0, marks_jobs: false, events: Vec::new() }
    }

    /// Jobs released by `t_ns` (time since the common start).
    fn released(&self, t_ns: u64) -> u64 {
        if t_ns < self.offset_ns {
            0
        } else {
            (t_ns - self.offset_ns) / self.period_ns + 1
        }
    }

    /// Read the program's new job marks.
    fn poll(&mut self) {
        if let Some((page, reader)) = &mut self.page {
            self.events.clear();
            reader.poll(page, &mut self.events);
            for e in &self.events {
                if e.kind == EventKind::JobEnd {
                    self.ended = self.ended.max(e.arg as u64 + 1);
                    self.marks_jobs = true;
                }
            }
        }
    }

    /// The job in progress at `t_ns`, if any.
    pub fn job(&mut self, t_ns: u64) -> Option<Job> {
        self.poll();
        let released = self.released(t_ns);
        if released == 0 || (self.marks_jobs && released <= self.ended) {
            return None;
        }
        let deadline_ns = match self.marks_jobs {
            // The oldest job not ended.
            true => self.offset_ns.saturating_add(self.ended.saturating_mul(self.period_ns)).saturating_add(self.deadline_ns),
            false if self.ended == 0 && released == 1 => self.offset_ns.saturating_add(self.deadline_ns),
            false => u64::MAX,
        };
        Some(Job { criticality: self.criticality, deadline_ns })
    }

    /// The next release after `t_ns`.
    pub fn next_release(&self, t_ns: u64) -> u64 {
        self.offset_ns + self.released(t_ns) * self.period_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_runs_from_its_release_to_its_end_mark() {
        let path = std::env::temp_dir().join(format!("criticore-jobs-test-{}", std::process::id()));
        let page = CounterPage::create(&path).unwrap();
        let writer = CounterPage::open(&path).unwrap();
        // Critical (2), released at 10 ms, 20 ms, ... (offset 10 ms, period 10 ms), deadline 8 ms.
        let mut m = Member::new(2, 10_000_000, 10_000_000, 8_000_000, Some(page));
        assert_eq!(m.job(9_999_999), None);
        assert_eq!(m.next_release(9_999_999), 10_000_000);
        assert_eq!(m.job(10_000_000), Some(Job { criticality: 2, deadline_ns: 18_000_000 }));
        writer.mark(EventKind::JobBegin, 0);
        writer.mark(EventKind::JobEnd, 0);
        assert_eq!(m.job(15_000_000), None, "job 0 ended, job 1 not yet released");
        assert_eq!(m.next_release(15_000_000), 20_000_000);
        // Job 1 released at 20 ms and still running past job 2's release at 30 ms: the oldest counts.
        assert_eq!(m.job(31_000_000), Some(Job { criticality: 2, deadline_ns: 28_000_000 }));
        writer.mark(EventKind::JobEnd, 1);
        assert_eq!(m.job(31_000_000), Some(Job { criticality: 2, deadline_ns: 38_000_000 }));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_program_that_marks_no_job_runs_one_job_from_its_first_release_on() {
        let mut m = Member::new(3, 5, 100, 100, None);
        assert_eq!(m.job(4), None);
        assert_eq!(m.job(50), Some(Job { criticality: 3, deadline_ns: 105 }));
        assert_eq!(m.job(1_000_000), Some(Job { criticality: 3, deadline_ns: u64::MAX }));
        // With a non-critical member in a job too, the group runs the critical one.
        let mut members = [Member::new(0, 0, 100, 10, None), m];
        let jobs: Vec<Job> = members.iter_mut().filter_map(|m| m.job(50)).collect();
        assert_eq!(criticore::regulate::entities::running(jobs), (3, 105));
    }
}
