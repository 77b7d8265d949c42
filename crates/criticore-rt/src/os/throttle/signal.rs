//! Throttling by job-control signals sent through pidfds: SIGSTOP stops a
//! process at once, SIGCONT resumes it (docs/references.md, Runtime §2: ~27 us
//! p50 until the stop is visible on the development VM).
//!
//! Why pidfds and not `kill(pid)`: a pidfd refers to one process for its whole
//! life; once that process is gone every signal through it fails with ESRCH,
//! so a recycled pid can never be stopped by mistake (docs/references.md, Runtime §2). The pidfd is
//! opened in [`SignalThrottler::add`], while the caller knows the pid is its
//! process (for a child of ours: not reaped yet, so the pid cannot have been
//! reused before `pidfd_open`).
//!
//! Caveats (docs/references.md, Runtime §2): the target's parent sees the stop and the continue
//! (SIGCHLD, `waitpid(WUNTRACED)`), and anyone allowed to may send SIGCONT.
//! The cgroup freezer ([`super::freezer`]) is invisible to the task.
//!
//! The pidfd helpers here are also used by the watchdog and the launcher.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use super::{ThrottleError, Throttler, UndoList};

/// `pidfd_open(pid, 0)` (Linux 5.3). EINVAL for a thread id that is not a
/// thread-group leader, ESRCH when there is no such process.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    if pid <= 0 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: plain syscall with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_long, 0 as libc::c_long) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `pidfd_send_signal(fd, sig, NULL, 0)` (Linux 5.1); `sig` 0 only checks
/// that the process exists and may be signalled.
pub fn pidfd_send_signal(fd: BorrowedFd<'_>, sig: i32) -> io::Result<()> {
    // SAFETY: plain syscall; a NULL siginfo makes the kernel fill in SI_USER.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd() as libc::c_long,
            sig as libc::c_long,
            std::ptr::null::<libc::siginfo_t>(),
            0 as libc::c_long,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Open a pidfd for a process a throttler is asked to take, after the checks
/// every throttler makes: not ourselves or our parent (the regulator must never
/// stop itself or the CLI that waits for it), the process exists, we may
/// signal it. The error is one line about `pid N`.
pub(crate) fn open_checked(pid: i32) -> Result<OwnedFd, ThrottleError> {
    let what = format!("pid {pid}");
    let refuse = |reason: &str| ThrottleError { what: what.clone(), reason: reason.to_string() };
    if pid <= 0 {
        return Err(refuse("not a process id"));
    }
    // SAFETY: getpid/getppid cannot fail.
    let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
    if pid == me {
        return Err(refuse("is the regulator itself; it must never stop itself"));
    }
    if pid == parent {
        return Err(refuse("is the regulator's parent (the command that started it); it must never be stopped"));
    }
    if pid == 1 {
        return Err(refuse("is init; stopping it would stop the system"));
    }
    let fd = pidfd_open(pid).map_err(|e| refuse(&os_reason(&e)))?;
    pidfd_send_signal(fd.as_fd(), 0).map_err(|e| refuse(&os_reason(&e)))?;
    Ok(fd)
}

/// The plain words for the errors pidfd calls give.
pub(crate) fn os_reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ESRCH) => "no such process".to_string(),
        Some(libc::EPERM) => "not permitted to signal it (another user's process; needs CAP_KILL)".to_string(),
        Some(libc::EINVAL) => "not a process (a thread id that is not its process's main thread?)".to_string(),
        Some(libc::ENOSYS) => "pidfd_open/pidfd_send_signal not supported by this kernel (needs Linux 5.3)".to_string(),
        _ => e.to_string(),
    }
}

struct Member {
    pid: i32,
    fd: OwnedFd,
}

#[derive(Default)]
struct Group {
    members: Vec<Member>,
    stopped: bool,
}

/// SIGSTOP/SIGCONT through one pidfd per process. Dropping it resumes
/// everything it stopped.
#[derive(Default)]
pub struct SignalThrottler {
    groups: BTreeMap<usize, Group>,
}

impl SignalThrottler {
    pub fn new() -> SignalThrottler {
        SignalThrottler::default()
    }

    /// The pids of a group (empty if the group does not exist).
    pub fn pids(&self, group: usize) -> Vec<i32> {
        self.groups.get(&group).map(|g| g.members.iter().map(|m| m.pid).collect()).unwrap_or_default()
    }

    /// Send `sig` to every member of `group`; members that have exited are
    /// dropped (ESRCH through a pidfd means that very process is gone), the
    /// first other error is returned after trying all members.
    fn signal_group(&mut self, group: usize, sig: i32) -> Result<(), ThrottleError> {
        let g = self
            .groups
            .get_mut(&group)
            .ok_or_else(|| ThrottleError { what: format!("group {group}"), reason: "no such group (add a process to it first)".into() })?;
        let mut first_err = None;
        g.members.retain(|m| match pidfd_send_signal(m.fd.as_fd(), sig) {
            Ok(()) => true,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => false,
            Err(e) => {
                first_err.get_or_insert(ThrottleError { what: format!("pid {}", m.pid), reason: os_reason(&e) });
                true
            }
        });
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Throttler for SignalThrottler {
    fn name(&self) -> &'static str {
        "signal (pidfd SIGSTOP/SIGCONT)"
    }

    /// Refuses a pid that does not exist, may not be signalled, is ours or our
    /// parent's (or init), or is already in another group. Adding to a
    /// stopped group stops the process at once: a group is stopped as a whole.
    fn add(&mut self, group: usize, pid: i32) -> Result<(), ThrottleError> {
        for (&n, g) in &self.groups {
            if g.members.iter().any(|m| m.pid == pid) {
                if n == group {
                    return Ok(());
                }
                return Err(ThrottleError { what: format!("pid {pid}"), reason: format!("already in group {n}") });
            }
        }
        let fd = open_checked(pid)?;
        let g = self.groups.entry(group).or_default();
        if g.stopped {
            pidfd_send_signal(fd.as_fd(), libc::SIGSTOP)
                .map_err(|e| ThrottleError { what: format!("pid {pid}"), reason: os_reason(&e) })?;
        }
        g.members.push(Member { pid, fd });
        Ok(())
    }

    fn stop(&mut self, group: usize) -> Result<(), ThrottleError> {
        let r = self.signal_group(group, libc::SIGSTOP);
        if let Some(g) = self.groups.get_mut(&group) {
            g.stopped = true;
        }
        r
    }

    fn resume(&mut self, group: usize) -> Result<(), ThrottleError> {
        let r = self.signal_group(group, libc::SIGCONT);
        if let Some(g) = self.groups.get_mut(&group) {
            g.stopped = false;
        }
        r
    }

    fn is_stopped(&self, group: usize) -> bool {
        self.groups.get(&group).is_some_and(|g| g.stopped)
    }

    /// SIGCONT to every member of every group (stopped or not: SIGCONT to a
    /// running process does nothing), then forget the groups.
    fn resume_all(&mut self) {
        for g in self.groups.values() {
            for m in &g.members {
                let _ = pidfd_send_signal(m.fd.as_fd(), libc::SIGCONT);
            }
        }
        self.groups.clear();
    }

    /// Every member, stopped or not (the watchdog opens its own pidfd for each
    /// as soon as it is told, so it must hear of them before they are stopped).
    fn undo_list(&self) -> UndoList {
        UndoList { pids: self.groups.values().flat_map(|g| g.members.iter().map(|m| m.pid)).collect(), thaw: Vec::new() }
    }
}

impl Drop for SignalThrottler {
    fn drop(&mut self) {
        self.resume_all();
    }
}
