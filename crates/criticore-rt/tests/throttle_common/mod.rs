//! Helpers shared by the throttle, watchdog and launch tests: children the
//! test starts itself (and always ends), process states read from /proc,
//! bounded waits, and guards that leave nothing stopped, frozen or behind
//! even when an assertion fails.
#![allow(dead_code)]

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criticore_rt::os::throttle::freezer::{criticore_ancestor, release_criticore_dir};
use criticore_rt::os::throttle::signal::{pidfd_open, pidfd_send_signal};

/// Every wait in these tests ends after this at the latest.
pub const WAIT: Duration = Duration::from_secs(5);

/// Field 3 of /proc/<pid>/stat: 'R' running, 'S' sleeping, 'T' stopped,
/// 'D' (v1-frozen), 'Z' zombie. None once the process is gone.
pub fn proc_state(pid: i32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    s[s.rfind(')')? + 1..].split_whitespace().next()?.chars().next()
}

/// Poll `f` every 50 us until it holds (Some(elapsed)) or `timeout` passes (None).
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let t0 = Instant::now();
    loop {
        if f() {
            return Some(t0.elapsed());
        }
        if t0.elapsed() >= timeout {
            return None;
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

pub fn wait_state(pid: i32, timeout: Duration, want: impl Fn(char) -> bool) -> Option<Duration> {
    wait_until(timeout, || proc_state(pid).is_some_and(&want))
}

/// poll() a pidfd for the process's exit.
pub fn wait_exit(fd: &OwnedFd, timeout: Duration) -> bool {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) > 0 }
}

/// A child the test started. Drop: SIGCONT, SIGKILL, thaw its freezer
/// cgroup if it is still in one (a v1-frozen task does not die until
/// thawed), reap it; every step bounded.
pub struct Kid {
    pub child: Child,
    pub pid: i32,
    pub pidfd: OwnedFd,
}

impl Kid {
    pub fn spawn(cmd: &mut Command) -> Kid {
        let child = cmd.spawn().expect("spawn test child");
        let pid = child.id() as i32;
        let pidfd = pidfd_open(pid).expect("pidfd of our child");
        Kid { child, pid, pidfd }
    }

    /// `sh -c 'while :; do :; done'` at nice 19: state R whenever it may run.
    pub fn busy() -> Kid {
        let mut c = Command::new("sh");
        c.args(["-c", "while :; do :; done"]).stdin(Stdio::null());
        // SAFETY: setpriority is async-signal-safe.
        unsafe {
            c.pre_exec(|| {
                libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                Ok(())
            });
        }
        Kid::spawn(&mut c)
    }

    pub fn sleeper() -> Kid {
        Kid::spawn(Command::new("sleep").arg("60").stdin(Stdio::null()))
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = pidfd_send_signal(self.pidfd.as_fd(), libc::SIGCONT);
        let _ = pidfd_send_signal(self.pidfd.as_fd(), libc::SIGKILL);
        if !wait_exit(&self.pidfd, Duration::from_millis(500)) {
            release_freezer_cgroups_of(self.pid);
            let _ = pidfd_send_signal(self.pidfd.as_fd(), libc::SIGKILL);
            if !wait_exit(&self.pidfd, WAIT) {
                eprintln!("test child {} did not exit", self.pid);
                return;
            }
        }
        let _ = self.child.wait();
    }
}

/// Thaw any criticore cgroup `pid` is in (both hierarchies).
fn release_freezer_cgroups_of(pid: i32) {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else { return };
    for line in text.lines() {
        let path = line.splitn(3, ':').nth(2).unwrap_or("");
        for mount in ["/sys/fs/cgroup/freezer", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
            let dir = Path::new(mount).join(path.trim_start_matches('/'));
            if let Some(c) = criticore_ancestor(&dir) {
                if c.is_dir() {
                    release_criticore_dir(&c);
                }
            }
        }
    }
}

/// A cgroup directory tree the test made (or a throttler made for it): Drop
/// thaws it, moves its processes to the directory holding it and removes it.
pub struct CgroupGuard(pub PathBuf);

impl Drop for CgroupGuard {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let r = release_criticore_dir(&self.0);
            if !r.errors.is_empty() {
                eprintln!("cleanup of {}: {:?}", self.0.display(), r.errors);
            }
        }
    }
}

/// A pid that no process has now (searched down from pid_max).
pub fn free_pid() -> i32 {
    let max: i32 = std::fs::read_to_string("/proc/sys/kernel/pid_max").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(32768);
    (2..max).rev().find(|p| !Path::new(&format!("/proc/{p}")).exists()).expect("a free pid")
}

pub fn is_root() -> bool {
    // SAFETY: cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub fn read_trim(p: &Path) -> String {
    std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_else(|e| format!("<{e}>"))
}

/// The freezer cgroup path of `pid` in /proc/<pid>/cgroup (v1 line with
/// `freezer`, or the v2 `0::` line).
pub fn cgroup_of(pid: i32, v2: bool) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    text.lines().find_map(|l| {
        let mut it = l.splitn(3, ':');
        let (id, ctrl, path) = (it.next()?, it.next()?, it.next()?);
        let hit = if v2 { id == "0" && ctrl.is_empty() } else { ctrl.split(',').any(|c| c == "freezer") };
        hit.then(|| path.to_string())
    })
}
