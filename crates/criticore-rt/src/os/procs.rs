//! Processes by identity: a pid together with its start time (field 22 of
//! `/proc/<pid>/stat`, clock ticks since boot), so that a pid the kernel has
//! handed to another process since is never touched; the members of a
//! process group; putting every real-time thread of a process back to
//! SCHED_OTHER; ending a launched task's whole process group (SIGCONT and
//! SIGTERM, SIGKILL after a grace).
//!
//! Used by the regulator's own cleanup (`session.rs`), by the watchdog after
//! the regulator died (`watchdog.rs`) and by the cleaner of dead runs
//! (`runstate.rs`, `criticore regulate --clean`).
//!
//! Whose group it is. Each launched task leads a process group of its own
//! (`setpgid(0, 0)` in the child, [`crate::os::launch`]): group P is the
//! task's as long as its leader, pid P, lives with the recorded start time.
//! Once the leader is gone, pid P stays allocated while any process is still
//! in group P (the kernel frees a pid number only when nothing uses it as a
//! pid, a process group or a session), so members of group P with no process
//! P are the task's own orphans; a process P with another start time means
//! the number was handed out again after the whole group ended: not ours.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// One letter: R, S, D, T, t, Z, X, I.
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// Field 22: start time in clock ticks after boot.
    pub start: u64,
}

/// Parse the text of `/proc/<pid>/stat` (the command name may hold spaces
/// and parentheses: fields are counted after the last `)`).
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: field 3 state, 4 ppid, 5 pgrp, ... 22 starttime.
    if f.len() < 20 {
        return None;
    }
    Some(Stat { state: f[0].chars().next()?, ppid: f[1].parse().ok()?, pgrp: f[2].parse().ok()?, start: f[19].parse().ok()? })
}

pub fn stat(pid: i32) -> Option<Stat> {
    if pid <= 0 {
        return None;
    }
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The start time of a process (None: no such process).
pub fn start_time(pid: i32) -> Option<u64> {
    stat(pid).map(|s| s.start)
}

/// Whether `pid` is the process that started at `start` and has not ended
/// (a zombie has ended).
pub fn is_alive(pid: i32, start: u64) -> bool {
    stat(pid).is_some_and(|s| s.start == start && !matches!(s.state, 'Z' | 'X'))
}

/// Every live (not zombie) process whose process group is `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if let Some(s) = stat(pid) {
            if s.pgrp == pgid && !matches!(s.state, 'Z' | 'X') {
                out.push(pid);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Whether process group `pgid` (led by a task that started at `start`)
/// is still that task's (module doc): its leader alive with that start
/// time, or the leader gone and no other process holding the number.
pub fn group_is_ours(pgid: i32, start: u64) -> bool {
    match stat(pgid) {
        Some(s) => s.start == start,
        None => true,
    }
}

/// The thread ids of `pid` (none if it is gone).
pub fn threads(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| rd.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// Put every thread of `pid` that runs SCHED_FIFO, SCHED_RR or
/// SCHED_DEADLINE back to SCHED_OTHER; how many were.
pub fn demote_realtime(pid: i32) -> usize {
    let mut n = 0;
    for tid in threads(pid) {
        // SAFETY: plain queries and a policy change of one thread.
        let policy = unsafe { libc::sched_getscheduler(tid) };
        if policy >= 0 && is_realtime(policy & !libc::SCHED_RESET_ON_FORK) {
            let param = libc::sched_param { sched_priority: 0 };
            if unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) } == 0 {
                n += 1;
            }
        }
    }
    n
}

const SCHED_DEADLINE: i32 = 6;

fn is_realtime(policy: i32) -> bool {
    policy == libc::SCHED_FIFO || policy == libc::SCHED_RR || policy == SCHED_DEADLINE
}

/// Whether any thread of `pid` runs a real-time policy.
pub fn is_realtime_process(pid: i32) -> bool {
    threads(pid).into_iter().any(|tid| {
        // SAFETY: a plain query.
        let p = unsafe { libc::sched_getscheduler(tid) };
        p >= 0 && is_realtime(p & !libc::SCHED_RESET_ON_FORK)
    })
}

/// How long a launched task's group has, after SIGTERM, to write its
/// records and exit before SIGKILL (a periodic worker writes its job log
/// then; one second was too short on a busy host, issue 24).
pub const END_GRACE: Duration = Duration::from_secs(5);

/// What ending groups did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Processes found in the groups when they were told to end.
    pub processes: usize,
    /// Real-time threads put back to SCHED_OTHER first.
    pub demoted: usize,
    /// Groups that needed SIGKILL after the grace.
    pub killed: usize,
}

/// End whole process groups, each given as (pgid, its leader's start time):
/// every real-time thread of their members back to SCHED_OTHER, SIGCONT and
/// SIGTERM to each group, up to `grace` for them to empty (waiting for
/// `reap`, which should reap the leaders that are our children, and for
/// the rest to vanish from /proc), then SIGKILL to what is left. A group
/// that is no longer the task's ([`group_is_ours`]) is skipped.
pub fn end_groups(groups: &[(i32, u64)], grace: Duration, reap: &mut dyn FnMut() -> bool) -> Ended {
    let mut e = Ended::default();
    let ours: Vec<i32> = groups.iter().filter(|&&(g, s)| g > 1 && group_is_ours(g, s)).map(|&(g, _)| g).collect();
    for &g in &ours {
        let members = group_members(g);
        e.processes += members.len();
        for &p in &members {
            e.demoted += demote_realtime(p);
        }
        // SAFETY: signals to a process group that is the task's (checked above).
        unsafe {
            libc::kill(-g, libc::SIGCONT);
            libc::kill(-g, libc::SIGTERM);
        }
    }
    let end = Instant::now() + grace;
    loop {
        let leaders_done = reap();
        let left: Vec<i32> = ours.iter().copied().filter(|&g| !group_members(g).is_empty()).collect();
        if left.is_empty() && leaders_done {
            break;
        }
        if Instant::now() >= end {
            for g in left {
                if group_is_ours_now(g) {
                    e.killed += 1;
                    // SAFETY: as above; SIGKILL also ends stopped processes.
                    unsafe { libc::kill(-g, libc::SIGKILL) };
                }
            }
            let until = Instant::now() + Duration::from_secs(1);
            while !reap() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    e
}

/// After the grace: the group still has members, so its number cannot have
/// been handed out again (module doc); only a process P that is not in
/// group P would mean it was.
fn group_is_ours_now(g: i32) -> bool {
    stat(g).is_none_or(|s| s.pgrp == g)
}

/// Processes (other than this one) whose environment has `var=value`.
pub fn tagged(var: &str, value: &str) -> Vec<i32> {
    let want = format!("{var}={value}");
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut pids: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == want.as_bytes())))
        .collect();
    pids.sort_unstable();
    pids
}

/// End every process (but this one) whose environment has `var=value`:
/// real-time threads back to SCHED_OTHER, SIGCONT, SIGKILL. (ended, demoted).
pub fn end_tagged(var: &str, value: &str) -> (usize, usize) {
    let (mut ended, mut demoted) = (0, 0);
    for pid in tagged(var, value) {
        demoted += demote_realtime(pid);
        // SAFETY: a process carrying the tag, seen just now.
        unsafe {
            libc::kill(pid, libc::SIGCONT);
            libc::kill(pid, libc::SIGKILL);
        }
        ended += 1;
    }
    (ended, demoted)
}

/// Remove a file; Ok(false) if it was not there.
pub fn remove_file(path: &Path) -> io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_spaces_and_parentheses() {
        // Fields 3.. as the kernel writes them; 22 is the start time.
        let text = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3\n";
        assert_eq!(parse_stat(text), Some(Stat { state: 'S', ppid: 17, pgrp: 4242, start: 987654 }));
        assert_eq!(parse_stat("1 (x) S 0"), None);
    }

    #[test]
    fn this_process_is_alive_with_its_start_time_and_not_with_another() {
        let me = std::process::id() as i32;
        let s = start_time(me).unwrap();
        assert!(is_alive(me, s));
        assert!(!is_alive(me, s + 1));
        assert!(group_members(stat(me).unwrap().pgrp).contains(&me));
    }
}
