//! Starting a regulated command: CPU affinity, scheduling policy and the
//! parent-death signal are set in the child between fork and exec
//! (`pre_exec`), so the command's first instruction already runs with them.
//!
//! - `prctl(PR_SET_PDEATHSIG, SIGCONT)`: if the thread that launched the
//!   command dies (the regulator thread, however it ends), the kernel sends
//!   the command SIGCONT, so a command the regulator had stopped resumes even
//!   before the watchdog acts (docs/references.md, Runtime §2). The signal fires
//!   when the creating *thread* exits, not the process: launch from the thread
//!   that regulates for the whole run. It is cleared on fork (grandchildren do
//!   not have it) and on exec of set-uid/capability programs; `getppid()` is
//!   checked after setting it, because the parent may already be gone.
//! - `sched_setaffinity` and `sched_setscheduler(SCHED_FIFO)` in the child.
//! - `setpgid(0, 0)` in the child when [`LaunchSpec::own_group`] is set (the
//!   regulator's tasks): the command leads a process group of its own, so
//!   the processes it starts are ended with it (`kill(-pgid)`,
//!   [`crate::os::procs::end_groups`]) by the regulator, its watchdog or the
//!   cleaner of dead runs; its stdin is then /dev/null (a background group
//!   that reads the terminal would be stopped by SIGTTIN), and Ctrl-C in the
//!   terminal reaches the regulator only, which ends the tasks itself.
//! - SCHED_DEADLINE is set from the parent right after the spawn
//!   ([`crate::os::deadline`]), with SCHED_FLAG_RESET_ON_FORK so the command may
//!   fork (a DL task cannot otherwise; its children start as SCHED_OTHER). The
//!   command's first microseconds therefore run as SCHED_OTHER. A DL task
//!   cannot have an affinity narrower than its root domain
//!   (docs/references.md, Regulation: Linux SCHED_DEADLINE): `cpus` together with `Deadline` is
//!   refused unless it names every online CPU; confine DL work with an
//!   exclusive cpuset partition instead.
//!
//! Errors in the child are passed back as the spawn error; each step adds its
//! own offset to the errno so the parent can say which step failed.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::os::deadline;
use crate::os::throttle::signal::{pidfd_open, pidfd_send_signal};

/// Scheduling policy of a launched command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_OTHER (inherited from the regulator if that is what it has).
    Other,
    /// SCHED_FIFO with this priority (1-99).
    Fifo(u8),
    /// SCHED_DEADLINE; `period_ns` 0 means period = deadline.
    Deadline { runtime_ns: u64, deadline_ns: u64, period_ns: u64 },
}

/// Where a launched command's stdout or stderr goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Inherit,
    Null,
    /// Created or truncated.
    File(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Program and arguments; the program is searched in PATH.
    pub argv: Vec<String>,
    /// CPUs the command may run on (None: inherited).
    pub cpus: Option<Vec<usize>>,
    pub policy: Policy,
    /// Added to the inherited environment.
    pub env: Vec<(String, String)>,
    pub stdout: Output,
    pub stderr: Output,
    /// Lead a process group of its own (stdin /dev/null).
    pub own_group: bool,
}

impl LaunchSpec {
    /// `argv` with inherited affinity, SCHED_OTHER, no extra environment, inherited output.
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> LaunchSpec {
        LaunchSpec {
            argv: argv.into_iter().map(Into::into).collect(),
            cpus: None,
            policy: Policy::Other,
            env: Vec::new(),
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            own_group: false,
        }
    }
}

/// A started command. `pidfd` refers to it for its whole life (the child is
/// ours and not reaped, so the pidfd was opened on the right process).
#[derive(Debug)]
pub struct Launched {
    pub child: Child,
    pub pid: i32,
    pub pidfd: OwnedFd,
    /// Its start time (`/proc/<pid>/stat` field 22): its identity for the
    /// watchdog and the run's state file.
    pub start: u64,
}

impl Launched {
    /// Send a signal through the pidfd (ESRCH once the process is gone).
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        pidfd_send_signal(self.pidfd.as_fd(), sig)
    }
}

/// One line: the command and why it did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError {
    pub command: String,
    pub reason: String,
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot start `{}`: {}", self.command, self.reason)
    }
}

impl std::error::Error for LaunchError {}

/// The step in the child that failed, encoded as errno + STEP * this.
const STEP: i32 = 10_000;
const STEP_PDEATHSIG: i32 = 1;
const STEP_AFFINITY: i32 = 2;
const STEP_FIFO: i32 = 3;
const STEP_PGID: i32 = 4;

/// Start the command of `spec`.
pub fn launch(spec: &LaunchSpec) -> Result<Launched, LaunchError> {
    let command = spec.argv.first().cloned().unwrap_or_default();
    let fail = |reason: String| LaunchError { command: command.clone(), reason };
    if command.is_empty() {
        return Err(fail("empty command".into()));
    }

    let cpuset = match &spec.cpus {
        None => None,
        Some(cpus) => Some(cpu_set(cpus).map_err(&fail)?),
    };
    let fifo = match spec.policy {
        Policy::Fifo(p) => {
            // SAFETY: plain query.
            let (lo, hi) = unsafe { (libc::sched_get_priority_min(libc::SCHED_FIFO), libc::sched_get_priority_max(libc::SCHED_FIFO)) };
            if (p as i32) < lo || (p as i32) > hi {
                return Err(fail(format!("SCHED_FIFO priority {p} is outside {lo}-{hi}")));
            }
            Some(p as i32)
        }
        Policy::Deadline { runtime_ns, deadline_ns, period_ns } => {
            deadline::validate(runtime_ns, deadline_ns, period_ns).map_err(|r| fail(format!("SCHED_DEADLINE: {r}")))?;
            if let (Some(cpus), Some(online)) = (&spec.cpus, deadline::online_cpus()) {
                if online.iter().any(|c| !cpus.contains(c)) {
                    return Err(fail(format!(
                        "a SCHED_DEADLINE task cannot be pinned to cpus {} (its affinity must cover its root domain, cpus {}); \
                         give it an exclusive cpuset partition instead",
                        deadline::cpu_list(cpus),
                        deadline::cpu_list(&online)
                    )));
                }
            }
            None
        }
        Policy::Other => None,
    };

    let mut cmd = Command::new(&command);
    cmd.args(&spec.argv[1..]);
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    cmd.stdout(stdio(&spec.stdout, "stdout").map_err(&fail)?);
    cmd.stderr(stdio(&spec.stderr, "stderr").map_err(&fail)?);
    if spec.own_group {
        cmd.stdin(Stdio::null());
    }
    let own_group = spec.own_group;

    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure only makes async-signal-safe system calls on data
    // prepared before the fork; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let step_err = |step: i32| io::Error::from_raw_os_error(step * STEP + io::Error::last_os_error().raw_os_error().unwrap_or(0));
            // docs/references.md, Runtime §2: PDEATHSIG fires when the creating thread exits.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGCONT as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(step_err(STEP_PDEATHSIG));
            }
            // Set after the parent may have died: then nobody would resume us.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(STEP_PDEATHSIG * STEP + libc::ECHILD));
            }
            if own_group && libc::setpgid(0, 0) != 0 {
                return Err(step_err(STEP_PGID));
            }
            // The session blocks SIGINT and SIGTERM while it runs; a command
            // must start with none blocked, or SIGTERM would not end it.
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if let Some(set) = &cpuset {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(step_err(STEP_AFFINITY));
                }
            }
            if let Some(prio) = fifo {
                let param = libc::sched_param { sched_priority: prio };
                if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
                    return Err(step_err(STEP_FIFO));
                }
            }
            Ok(())
        });
    }

    let child = cmd.spawn().map_err(|e| fail(spawn_reason(&e, &command, spec)))?;
    let pid = child.id() as i32;
    let mut launched = match pidfd_open(pid) {
        // Not yet reaped: /proc/<pid> is this child.
        Ok(pidfd) => Launched { child, pid, pidfd, start: crate::os::procs::start_time(pid).unwrap_or(0) },
        Err(e) => {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!("pidfd_open: {e}")));
        }
    };
    if let Policy::Deadline { runtime_ns, deadline_ns, period_ns } = spec.policy {
        if let Err(e) = deadline::set_deadline(pid, runtime_ns, deadline_ns, period_ns, deadline::SCHED_FLAG_RESET_ON_FORK) {
            let _ = launched.signal(libc::SIGKILL);
            let _ = launched.child.wait();
            return Err(fail(format!("SCHED_DEADLINE: {}", e.reason)));
        }
    }
    Ok(launched)
}

fn stdio(o: &Output, which: &str) -> Result<Stdio, String> {
    Ok(match o {
        Output::Inherit => Stdio::inherit(),
        Output::Null => Stdio::null(),
        Output::File(p) => File::create(p).map_err(|e| format!("cannot open {} for {which}: {e}", p.display()))?.into(),
    })
}

/// Pin the calling thread to `cpus` (the load generator and profiler pin themselves).
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), String> {
    let set = cpu_set(cpus)?;
    // SAFETY: a valid cpu_set_t of the right size; 0 = the calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// A cpu_set_t of `cpus`, each checked to be online.
fn cpu_set(cpus: &[usize]) -> Result<libc::cpu_set_t, String> {
    if cpus.is_empty() {
        return Err("empty CPU list".into());
    }
    let online = deadline::online_cpus();
    // SAFETY: cpu_set_t is plain data; CPU_SET is bounds-checked against CPU_SETSIZE below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize || online.as_ref().is_some_and(|o| !o.contains(&c)) {
            let have = online.as_deref().map(deadline::cpu_list).unwrap_or_else(|| "unknown".into());
            return Err(format!("cpu {c} is not online (online cpus: {have})"));
        }
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    Ok(set)
}

fn spawn_reason(e: &io::Error, command: &str, spec: &LaunchSpec) -> String {
    let Some(code) = e.raw_os_error() else { return e.to_string() };
    let (step, errno) = (code / STEP, code % STEP);
    let os = io::Error::from_raw_os_error(errno);
    match (step, errno) {
        (0, libc::ENOENT) if command.contains('/') => "no such file".into(),
        (0, libc::ENOENT) => "command not found".into(),
        // execvp reports EACCES if any PATH directory could not be searched,
        // even when the command exists nowhere: look for it ourselves.
        (0, libc::EACCES) if !command.contains('/') => match find_in_path(command) {
            Some(p) => format!("permission denied: {} is not executable by us", p.display()),
            None => "command not found".into(),
        },
        (0, libc::EACCES) => "permission denied (not executable?)".into(),
        (0, libc::ENOEXEC) => "not an executable format".into(),
        (0, libc::EAGAIN) => "fork refused (EAGAIN): a SCHED_DEADLINE regulator cannot fork unless it has \
                              SCHED_FLAG_RESET_ON_FORK, or the process limit is reached"
            .into(),
        (0, _) => os.to_string(),
        (STEP_PDEATHSIG, libc::ECHILD) => "the regulator exited while the command was starting".into(),
        (STEP_PDEATHSIG, _) => format!("prctl(PR_SET_PDEATHSIG): {os}"),
        (STEP_AFFINITY, _) => {
            let cpus = spec.cpus.as_deref().map(deadline::cpu_list).unwrap_or_default();
            match errno {
                libc::EINVAL => format!("cpus {cpus}: no usable CPU in the list (outside the allowed cpuset?)"),
                libc::EPERM => format!("cpus {cpus}: not permitted to set the CPU affinity"),
                _ => format!("setting CPU affinity {cpus}: {os}"),
            }
        }
        (STEP_FIFO, libc::EPERM) => {
            let p = match spec.policy {
                Policy::Fifo(p) => p,
                _ => 0,
            };
            format!(
                "not permitted to use SCHED_FIFO priority {p} (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= {p}; with RT group \
                 scheduling also cpu.rt_runtime_us > 0 in its cpu cgroup)"
            )
        }
        (STEP_FIFO, _) => format!("setting SCHED_FIFO: {os}"),
        (STEP_PGID, _) => format!("setpgid (a process group of its own): {os}"),
        _ => e.to_string(),
    }
}

/// The first PATH entry holding a file named `command` (executable or not).
fn find_in_path(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(command)).find(|p| p.is_file())
}

/// The calling thread's scheduling as it was: policy and priority, CPU
/// affinity, timer slack. Restored on drop, so the thread that ran a
/// regulation (SCHED_FIFO, pinned, 1 ns slack) goes back to what it was on
/// every way out, errors and panics included: the caller is the CLI's main
/// thread, which then writes files and may simulate (`--compare-sim`).
pub struct ThreadScheduling {
    policy: i32,
    param: libc::sched_param,
    affinity: libc::cpu_set_t,
    slack_ns: libc::c_int,
}

impl ThreadScheduling {
    pub fn save() -> ThreadScheduling {
        // SAFETY: plain data out-parameters of the right size; 0 = the calling thread.
        unsafe {
            let mut param: libc::sched_param = std::mem::zeroed();
            libc::sched_getparam(0, &mut param);
            let mut affinity: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut affinity);
            ThreadScheduling {
                policy: libc::sched_getscheduler(0),
                param,
                affinity,
                slack_ns: libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0),
            }
        }
    }
}

impl Drop for ThreadScheduling {
    fn drop(&mut self) {
        // SAFETY: values read from this very thread by `save`; failures leave it as it is.
        unsafe {
            if self.policy >= 0 {
                libc::sched_setscheduler(0, self.policy, &self.param);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.affinity);
            if self.slack_ns > 0 {
                libc::prctl(libc::PR_SET_TIMERSLACK, self.slack_ns as libc::c_ulong, 0, 0, 0);
            }
        }
    }
}

#[cfg(test)]
mod thread_scheduling_tests {
    use super::*;

    fn now() -> (i32, libc::c_int, usize) {
        // SAFETY: as in `save`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            (libc::sched_getscheduler(0), libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0), libc::CPU_COUNT(&set) as usize)
        }
    }

    #[test]
    fn a_pinned_thread_with_short_slack_gets_its_scheduling_back() {
        // In a thread of its own, so the test harness's thread is never touched.
        std::thread::spawn(|| {
            let before = now();
            {
                let _saved = ThreadScheduling::save();
                pin_current_thread(&[0]).unwrap();
                unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
                // SCHED_FIFO where permitted (root here); this thread ends with the test either way.
                let param = libc::sched_param { sched_priority: 1 };
                let fifo = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0;
                let policy = if fifo { libc::SCHED_FIFO } else { before.0 };
                // Newer kernels give a real-time thread no timer slack (they report 0).
                let (p, slack, cpus) = now();
                assert_eq!((p, cpus), (policy, 1));
                assert!(slack == 1 || (fifo && slack == 0), "slack {slack}");
            }
            assert_eq!(now(), before);
        })
        .join()
        .unwrap();
    }
}
