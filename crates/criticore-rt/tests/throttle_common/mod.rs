//! Helpers shared by the throttle, watchdog and launch tests: children the
//! test starts itself (and always ends), process states read from /proc,
//! bounded waits, guards that leave nothing stopped, frozen or behind even
//! when an assertion fails, and the trials' runner: a test that needs what
//! this machine cannot give (root, a freezer, SCHED_DEADLINE) is counted as
//! ignored, with its reason, never passed.
#![allow(dead_code)]

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criticore_rt::os::deadline::{admission_limit, online_cpus, set_deadline};
use criticore_rt::os::throttle::freezer::{criticore_ancestor, release_criticore_dir, FreezerKind, FreezerThrottler};
use criticore_rt::os::throttle::signal::{pidfd_open, pidfd_send_signal};
use libtest_mimic::{Arguments, Completion, Trial};

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

// ---- trials ----

/// Checks what a test needs of this machine: Err says what is missing.
pub type Need = fn() -> Result<(), String>;

/// A test: its name, its body (plain asserts) and what it needs.
pub struct Test {
    name: &'static str,
    body: fn(),
    needs: Vec<Need>,
}

pub fn test(name: &'static str, body: fn()) -> Test {
    Test { name, body, needs: Vec::new() }
}

impl Test {
    pub fn needs(mut self, need: Need) -> Test {
        self.needs.push(need);
        self
    }
}

/// Run the tests as libtest would (same flags, same summary line). A test
/// whose needs this machine does not meet is ignored with the reason, which
/// the runner counts ("N ignored") and which is printed on stderr as
/// `skipped NAME: REASON` (shown under --quiet too).
pub fn run(tests: Vec<Test>) -> ! {
    let args = Arguments::from_args();
    let trials = tests
        .into_iter()
        .map(|t| {
            Trial::ignorable_test(t.name, move || {
                for need in &t.needs {
                    if let Err(reason) = need() {
                        eprintln!("skipped {}: {reason}", t.name);
                        return Ok(Completion::ignored_with(reason));
                    }
                }
                (t.body)();
                Ok(Completion::Completed)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}

/// Tests that take SCHED_DEADLINE bandwidth (and the probe below) run one at a time.
pub static DL_LOCK: Mutex<()> = Mutex::new(());

/// SCHED_FIFO for a child of ours (CAP_SYS_NICE or RLIMIT_RTPRIO).
pub fn sched_fifo() -> Result<(), String> {
    let k = Kid::sleeper();
    let p = libc::sched_param { sched_priority: 1 };
    // SAFETY: our own child.
    if unsafe { libc::sched_setscheduler(k.pid, libc::SCHED_FIFO, &p) } != 0 {
        return Err(format!("SCHED_FIFO refused here: {} (needs CAP_SYS_NICE or RLIMIT_RTPRIO)", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// A SCHED_DEADLINE reservation (10% of a CPU, 1 ms period: released within
/// a period of the probe's end) for a child of ours.
pub fn sched_deadline() -> Result<(), String> {
    let _l = DL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let k = Kid::sleeper();
    set_deadline(k.pid, 100_000, 1_000_000, 1_000_000, 0).map_err(|e| format!("SCHED_DEADLINE refused here: {e}"))
}

/// Admission control limits SCHED_DEADLINE bandwidth.
pub fn deadline_limit() -> Result<(), String> {
    admission_limit().map(|_| ()).ok_or_else(|| "no SCHED_DEADLINE bandwidth limit (sched_rt_runtime_us = -1)".to_string())
}

pub fn two_cpus() -> Result<(), String> {
    match online_cpus().map(|c| c.len()) {
        Some(n) if n >= 2 => Ok(()),
        n => Err(format!("needs 2 online CPUs, has {n:?}")),
    }
}

fn freezer(kind: FreezerKind) -> Result<(), String> {
    FreezerThrottler::open(kind).map(drop).map_err(|e| e.to_string())
}

/// The cgroup v1 freezer, usable by us (creating a probe cgroup works).
pub fn freezer_v1() -> Result<(), String> {
    freezer(FreezerKind::V1)
}

/// The cgroup v2 freezer (cgroup.freeze), usable by us.
pub fn freezer_v2() -> Result<(), String> {
    freezer(FreezerKind::V2)
}
