//! Throttling: stopping and resuming groups of processes. One trait,
//! [`Throttler`]: SIGSTOP/SIGCONT through pidfds ([`signal`]) or the cgroup
//! freezer, v1 `freezer.state` or v2 `cgroup.freeze` ([`freezer`]).
//! A group is what one budget covers (a core's processes, a server, the
//! best-effort loads); every group is stopped and resumed as a whole.

pub mod freezer;
pub mod signal;

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleError {
    pub what: String,
    pub reason: String,
}

impl fmt::Display for ThrottleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.reason)
    }
}

impl std::error::Error for ThrottleError {}

pub trait Throttler: Send {
    /// For the run's log: "signal (pidfd SIGSTOP/SIGCONT)", "cgroup v1 freezer", "cgroup v2 cgroup.freeze".
    fn name(&self) -> &'static str;
    /// Put `pid` into group `group` (groups are numbered from 0, created on first use).
    /// Checks that the process exists and may be signalled before accepting it.
    fn add(&mut self, group: usize, pid: i32) -> Result<(), ThrottleError>;
    /// Stop every process of the group (asynchronous where the mechanism is).
    fn stop(&mut self, group: usize) -> Result<(), ThrottleError>;
    /// Resume every process of the group.
    fn resume(&mut self, group: usize) -> Result<(), ThrottleError>;
    /// Whether the group is stopped (as far as this throttler knows).
    fn is_stopped(&self, group: usize) -> bool;
    /// Resume everything, ignoring errors (every exit path calls this).
    fn resume_all(&mut self);
    /// What the watchdog must undo if this process dies: pids to SIGCONT and
    /// freezer files to thaw (path, thaw text).
    fn undo_list(&self) -> UndoList;
}

/// What a watchdog does to leave nothing stopped or frozen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoList {
    pub pids: Vec<i32>,
    /// (file, text to write), e.g. ("/sys/fs/cgroup/freezer/x/freezer.state", "THAWED").
    pub thaw: Vec<(String, String)>,
}
