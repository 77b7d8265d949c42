//! The loops that regulate real processes: real counts and clocks feed the
//! engine's rules (`criticore::regulate`), whose decisions become stops and
//! resumes of process groups. One thread, one wait each: `sigtimedwait` on
//! the counters' overflow signal, SIGINT/SIGTERM (end cleanly) and SIGCHLD
//! (a regulated child ended), with a timeout at the loop's next deadline.
//!
//! - [`regulator`]: MemGuard and MCTI (per-group budgets per synchronous period).
//! - [`server`]: the Multi-Resource Server (mrs-multi-resource-server §III).
//! - [`monitor`]: the bandwidth monitor (blin-bandwidth-monitor §3.3).
//! - [`period`]: what the period-based loops (regulator, server) share: one
//!   group's counts, stopped time and per-period record.
//! - [`jobs`]: what a group runs at time t (MCTI's L_k(t), D_k(t)), from its processes' job marks.
//! - [`lead`]: arming counters early by the lag between a stop decision and the stop.
//!
//! This module holds what all three share: groups, the observer, snapshots,
//! reports, where an overflow signal comes from, the frame each loop runs in.

pub mod jobs;
pub mod lead;
pub mod monitor;
pub mod period;
pub mod regulator;
pub mod server;

pub use period::PeriodRecord;

use crate::os::clock::{now_ns, thread_cpu_ns};
use crate::os::counter::{overflow_signal, Counter, Notification};
use crate::os::signals::{signal_set, wait_info, Blocked};
use crate::os::throttle::Throttler;
use std::collections::HashMap;

/// A group of processes under one budget.
pub struct Group {
    pub name: String,
    pub pids: Vec<i32>,
    pub counters: Vec<Box<dyn Counter>>,
    /// MCTI criticality of the group's tasks (0 = not critical).
    pub criticality: u32,
    /// MCTI: its processes' jobs, what it runs at time t (`jobs.rs`; empty: `criticality` throughout).
    pub jobs: Vec<jobs::Member>,
}

/// What the live view shows, per group.
#[derive(Debug, Clone, Default)]
pub struct GroupSnapshot {
    pub name: String,
    pub budget: u64,
    pub used_last_period: u64,
    pub throttled_ns: u64,
    pub events_per_s: f64,
    pub stopped: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub elapsed_ns: u64,
    pub periods: u64,
    pub groups: Vec<GroupSnapshot>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    Duration,
    /// Every regulated process ended.
    AllExited,
    Interrupted,
    /// The observer asked to stop.
    Stopped,
}

#[derive(Debug)]
pub struct Report {
    pub periods: Vec<PeriodRecord>,
    pub elapsed_ns: u64,
    /// CPU time of the regulation thread.
    pub cpu_ns: u64,
    pub end: EndReason,
    pub warnings: Vec<String>,
    /// Overflow signals received, and signals that named no counter.
    pub signals: u64,
    pub throttle_errors: u64,
    /// MCTI: periods in which a critical group ran past its budget (rule 5)
    /// and the interconnect would have switched to fixed priority.
    pub overload_periods: u64,
}

impl Report {
    /// A run that has not started (or never will: `end` says why).
    pub fn empty(end: EndReason) -> Report {
        Report { periods: Vec::new(), elapsed_ns: 0, cpu_ns: 0, end, warnings: Vec::new(), signals: 0, throttle_errors: 0, overload_periods: 0 }
    }
}

/// Lets the loop ask whether regulated processes remain and show progress.
pub trait Observer {
    /// Whether any regulated process is still running (called on SIGCHLD and
    /// every few periods).
    fn any_alive(&mut self) -> bool;
    /// A snapshot for the live view; return false to end the run.
    fn snapshot(&mut self, _s: &Snapshot) -> bool {
        true
    }
}

/// What every loop runs in: its signals blocked while it runs (from before
/// anything can signal it), its time 0 and CPU time, its end.
pub(crate) struct Frame {
    /// The counters' overflow signal.
    pub sig: i32,
    set: libc::sigset_t,
    _blocked: Blocked,
    pub t0: u64,
    cpu0: u64,
    pub end_at: u64,
}

impl Frame {
    /// Block the loop's signals in this thread until the frame is dropped.
    pub fn block() -> Frame {
        let sig = overflow_signal();
        let set = signal_set(sig);
        let blocked = Blocked::new(&set);
        Frame { sig, set, _blocked: blocked, t0: 0, cpu0: 0, end_at: u64::MAX }
    }

    /// Time 0 of the run is now; it ends `duration_ns` later (None: never).
    pub fn start(&mut self, duration_ns: Option<u64>) {
        self.t0 = now_ns();
        self.cpu0 = thread_cpu_ns();
        self.end_at = duration_ns.map_or(u64::MAX, |d| self.t0 + d);
    }

    /// Time 0 was `origin`, a moment before `start` (the programs' common
    /// start): the run keeps its length from there.
    pub fn rebase(&mut self, origin: u64) {
        if origin <= self.t0 {
            self.end_at = self.end_at.saturating_sub(self.t0 - origin);
            self.t0 = origin;
        }
    }

    /// Sleep until `wake` or a signal. Returns the signal (or -1), the time
    /// after waking, and the run's end if the signal ends it: SIGINT or
    /// SIGTERM, or SIGCHLD with no regulated process left.
    pub fn wait(&self, wake: u64, info: &mut libc::siginfo_t, observer: &mut dyn Observer) -> (i32, u64, Option<EndReason>) {
        let got = wait_info(&self.set, wake, info);
        let now = now_ns();
        let end = if got == libc::SIGINT || got == libc::SIGTERM || crate::os::signals::take_stop() {
            Some(EndReason::Interrupted)
        } else if got == libc::SIGCHLD && !observer.any_alive() {
            Some(EndReason::AllExited)
        } else {
            None
        };
        (got, now, end)
    }

    /// CPU time of this thread since `start`.
    pub fn cpu_ns(&self) -> u64 {
        thread_cpu_ns() - self.cpu0
    }
}

/// Which group an overflow signal comes from.
pub(crate) struct Origins {
    by_fd: HashMap<i32, usize>,
    by_cookie: HashMap<u64, usize>,
    /// Every counter notifies (no polling needed).
    pub all_notify: bool,
}

impl Origins {
    pub(crate) fn new(groups: &[Group]) -> Self {
        let mut o = Origins { by_fd: HashMap::new(), by_cookie: HashMap::new(), all_notify: true };
        for (k, g) in groups.iter().enumerate() {
            for c in &g.counters {
                match c.notification() {
                    Some(Notification::Fd { fd, .. }) => {
                        o.by_fd.insert(fd, k);
                    }
                    Some(Notification::Cookie { cookie, .. }) => {
                        o.by_cookie.insert(cookie, k);
                    }
                    None => o.all_notify = false,
                }
            }
        }
        o
    }

    /// The group a signal names; None for SIGIO (queue overflow) or an unknown origin.
    pub(crate) fn group_of(&self, info: &libc::siginfo_t) -> Option<usize> {
        // Counter pages send a sigqueue value; perf events report si_fd.
        if info.si_signo == libc::SIGIO {
            return None;
        }
        if let Some((cookie, _job_end)) = crate::os::counter::shm::siginfo_cookie(info) {
            return self.by_cookie.get(&cookie).copied();
        }
        self.by_fd.get(&crate::os::counter::perf::siginfo_fd(info)).copied()
    }
}

/// Every exit path of a loop: resume every group and disarm every counter.
pub(crate) fn release(groups: &mut [Group], throttler: &mut dyn Throttler) {
    throttler.resume_all();
    for g in groups.iter_mut() {
        for c in g.counters.iter_mut() {
            c.arm(None).ok();
        }
    }
}

/// The p-th percentile (0–100) by nearest rank; 0 for no values.
pub fn percentile(values: &mut [u64], p: f64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    let rank = ((p / 100.0) * values.len() as f64).ceil().max(1.0) as usize;
    values[rank.min(values.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_by_nearest_rank() {
        let mut v = vec![5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
        assert_eq!(percentile(&mut v, 50.0), 5);
        assert_eq!(percentile(&mut v, 99.0), 10);
        assert_eq!(percentile(&mut v, 10.0), 1);
        assert_eq!(percentile(&mut [], 50.0), 0);
    }
}
