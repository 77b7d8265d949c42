//! The watchdog: a separate process that outlives the regulator and resumes
//! everything the regulator stopped or froze when the regulator ends, however
//! it ends (normal exit, SIGINT, SIGTERM, SIGKILL, panic, abort).
//! A regulator that dies with its loads stopped or frozen leaves them so
//! forever (docs/references.md, Runtime §2 and Regulation: "never leave
//! work stopped"); in-process cleanup (Drop, signal handlers)
//! cannot run after SIGKILL, so the undo must live in another process.
//!
//! Mechanisms, and why each exists:
//! - **A pipe as the life line.** The regulator holds the only write end of
//!   the watchdog's stdin. When the regulator process ends for any reason the
//!   kernel closes its descriptors, the watchdog's blocked `read` returns 0
//!   (EOF) at once, and the watchdog acts: no polling loop, no timeout, no
//!   pid to watch that could be reused. The write end is close-on-exec (Rust
//!   creates every descriptor so), so commands the regulator launches do not
//!   hold it and keep the watchdog waiting.
//! - **Own session (`setsid`) and ignored SIGINT/SIGTERM/SIGHUP/SIGQUIT.**
//!   Ctrl-C in the terminal signals the foreground process group, and a
//!   terminal hang-up the session: both must end the regulator, not its
//!   watchdog. SIGPIPE is ignored so a closed stdout cannot kill it. SIGKILL
//!   cannot be ignored: a supervisor that kills a whole cgroup (systemd stop)
//!   kills the watchdog too; the regulated processes' PDEATHSIG = SIGCONT
//!   ([`crate::os::launch`]) and [`crate::os::throttle::freezer::clean_stale`] cover that.
//! - **A pidfd per pid, opened as soon as the line is read**, while the
//!   regulator is alive and the process is its (unreaped) child or at least
//!   known alive: SIGCONT later goes to that very process, never to a
//!   recycled pid (docs/references.md, Runtime §2). A pid that has already exited is skipped.
//! - **Thaw texts written to the freezer files**, then for directories that
//!   criticore created (`criticore-*`): processes moved to the directory that
//!   holds it, directories removed ([`crate::os::throttle::freezer::release_criticore_dir`]).
//!   SIGCONT and thaw come first: they are what the loads wait for.
//! - **SCHED_FIFO 90 when permitted**: the watchdog sleeps in `read` all the
//!   time; when it wakes it must not wait behind real-time loads.
//! - **A ready line** on the watchdog's stdout after its set-up, which
//!   [`Watchdog::spawn`] waits for: a regulator never starts stopping things
//!   believing a watchdog runs when its program failed to start.
//! - **An `end` line** before a normal close: the watchdog undoes everything
//!   all the same (idempotent; SIGCONT to a running process does nothing) but
//!   only complains on stderr when the regulator ended without it.
//!
//! - **SCHED_OTHER again for what the regulator made SCHED_FIFO** (`demote N`,
//!   MRS server tasks): first of all, so that a task that never blocks does
//!   not keep its core once nothing stops it any more.
//!
//! - **Launched tasks end with the run** (`launched N START`): each task the
//!   regulator started leads a process group of its own; once everything is
//!   resumed and thawed, every such group gets SIGCONT and SIGTERM, and
//!   SIGKILL after [`crate::os::procs::END_GRACE`] if it has not emptied
//!   (its real-time threads first put back to SCHED_OTHER). Processes the
//!   user `--attach`ed are only ever `pid N` lines: resumed, never ended.
//!   START (field 22 of `/proc/N/stat`) makes sure a reused pid is not
//!   taken for the task ([`crate::os::procs`]).
//! - **Files removed last** (`file PATH`): the run's counter pages and its
//!   state file (`crate::os::runstate`), once everything they list is undone.
//!
//! Protocol (text lines on the watchdog's stdin): `pid N`, `demote N`,
//! `launched N START`, `thaw PATH\tTEXT`, `file PATH`, `end`. Paths and
//! texts may not contain tabs or newlines.
//!
//! - **A native program, never an interpreter.** The process that must
//!   survive everything depends on no interpreter and no package import: it
//!   is the `criticore-watchdog` binary, which [`locate`] finds (shipped in
//!   the Python package's `_bin/`, beside the extension module). A missing
//!   binary is a one-line error before anything is started, never a
//!   regulation without a watchdog.
//!
//! [`run`] is the watchdog's body (the `criticore-watchdog` binary).

use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::os::throttle::freezer::{criticore_ancestor, release_criticore_dir};
use crate::os::throttle::signal::{pidfd_open, pidfd_send_signal};
use crate::os::throttle::UndoList;

/// How long [`Watchdog::finish`] (and `Drop`) waits for the watchdog to exit.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(2);
/// How long [`Watchdog::spawn`] waits for the ready line (a loaded machine
/// may take a while to schedule a new process).
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// What the watchdog writes on stdout once it listens.
pub const READY_LINE: &str = "criticore-watchdog ready";
/// The watchdog program's file name.
pub const PROGRAM: &str = "criticore-watchdog";
/// Names the watchdog program to use instead of searching for it.
pub const PROGRAM_ENV: &str = "CRITICORE_WATCHDOG";

/// The native watchdog program: `$CRITICORE_WATCHDOG` if set, else
/// `_bin/criticore-watchdog` beside the module holding this code (the Python
/// package's extension module: `make build` and the wheel put it there), else
/// `criticore-watchdog` beside it (a Rust program built by cargo). The error
/// is one line naming where it looked.
pub fn locate() -> Result<PathBuf, String> {
    locate_in(std::env::var_os(PROGRAM_ENV).map(PathBuf::from), module_path().as_deref())
}

/// [`locate`] with the variable's value and the module's path given.
pub fn locate_in(from_env: Option<PathBuf>, module: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = from_env {
        return executable(&p).map(|_| p.clone()).map_err(|why| format!("{PROGRAM_ENV}={}: {why}", p.display()));
    }
    let dir = module.and_then(Path::parent).ok_or_else(|| format!("cannot find {PROGRAM}: the path of the running module is unknown; set {PROGRAM_ENV}"))?;
    let candidates = [dir.join("_bin").join(PROGRAM), dir.join(PROGRAM)];
    if let Some(p) = candidates.iter().find(|p| executable(p).is_ok()) {
        return Ok(p.clone());
    }
    Err(format!(
        "no {PROGRAM} program at {} or {} (build it with `make build`, or set {PROGRAM_ENV}); regulation never runs without a watchdog",
        candidates[0].display(),
        candidates[1].display()
    ))
}

/// Ok if `p` is a file someone may execute.
fn executable(p: &Path) -> Result<(), &'static str> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Err(_) => Err("no such file"),
        Ok(m) if !m.is_file() => Err("not a file"),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Err("not executable"),
        Ok(_) => Ok(()),
    }
}

/// The file of the shared object or executable that holds this code.
pub(crate) fn module_path() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address; dli_fname points into the loader's tables.
    let found = unsafe { libc::dladdr(locate as *const libc::c_void, &mut info) } != 0;
    if found && !info.dli_fname.is_null() {
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
        // The main program may be named as it was started (relative).
        if path.is_absolute() {
            return Some(path);
        }
    }
    std::env::current_exe().ok()
}

/// The regulator's side: the pipe to a running watchdog.
pub struct Watchdog {
    child: Child,
    pidfd: OwnedFd,
    input: Option<ChildStdin>,
    sent_pids: BTreeSet<i32>,
    sent_thaw: BTreeSet<(String, String)>,
}

impl Watchdog {
    /// Start `program` (e.g. `[criticore-watchdog]`) in its own session with
    /// stdin a pipe from us, and wait until it says it listens.
    pub fn spawn(program: &[String]) -> io::Result<Watchdog> {
        let (exe, args) = program.split_first().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty watchdog command"))?;
        let mut cmd = Command::new(exe);
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                // Ignored dispositions survive exec: closes the window before run() starts.
                for sig in IGNORED {
                    libc::signal(sig, libc::SIG_IGN);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot start watchdog `{exe}`: {e}")))?;
        let pidfd = match pidfd_open(child.id() as i32) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let mut out = child.stdout.take().expect("piped");
        let ready = wait_readable(out.as_fd(), READY_TIMEOUT).and_then(|ok| {
            let mut buf = [0u8; 128];
            let n = if ok { out.read(&mut buf)? } else { 0 };
            Ok(String::from_utf8_lossy(&buf[..n]).lines().next() == Some(READY_LINE))
        });
        drop(out);
        if !matches!(ready, Ok(true)) {
            let _ = child.kill();
            let status = child.wait();
            return Err(io::Error::other(format!(
                "watchdog `{exe}` did not report ready within {} s ({})",
                READY_TIMEOUT.as_secs(),
                match status {
                    Ok(s) => format!("it ended with {s}"),
                    Err(e) => e.to_string(),
                }
            )));
        }
        let input = child.stdin.take();
        Ok(Watchdog { child, pidfd, input, sent_pids: BTreeSet::new(), sent_thaw: BTreeSet::new() })
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Tell the watchdog what it would have to undo, sending only entries it
    /// has not been told yet, and flush. Call after every `add` and before the
    /// first `stop` of a new group. An error means the watchdog is gone
    /// (EPIPE): the regulator must not go on stopping things.
    pub fn watch(&mut self, undo: &UndoList) -> io::Result<()> {
        let mut text = String::new();
        let mut new_pids = Vec::new();
        let mut new_thaw = Vec::new();
        for &pid in &undo.pids {
            if !self.sent_pids.contains(&pid) && !new_pids.contains(&pid) {
                text.push_str(&format!("pid {pid}\n"));
                new_pids.push(pid);
            }
        }
        for (path, thaw) in &undo.thaw {
            if [path, thaw].iter().any(|s| s.contains(['\t', '\n'])) {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("watchdog: path or text contains a tab or newline: {path:?}")));
            }
            let entry = (path.clone(), thaw.clone());
            if !self.sent_thaw.contains(&entry) && !new_thaw.contains(&entry) {
                text.push_str(&format!("thaw {path}\t{thaw}\n"));
                new_thaw.push(entry);
            }
        }
        if text.is_empty() {
            return Ok(());
        }
        let input = self.input.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "watchdog already finished"))?;
        input.write_all(text.as_bytes())?;
        input.flush()?;
        self.sent_pids.extend(new_pids);
        self.sent_thaw.extend(new_thaw);
        Ok(())
    }

    /// Tell the watchdog to put `pid` back to SCHED_OTHER if the regulator
    /// ends without doing so (the regulator made it SCHED_FIFO).
    pub fn demote(&mut self, pid: i32) -> io::Result<()> {
        let input = self.input.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "watchdog already finished"))?;
        input.write_all(format!("demote {pid}\n").as_bytes())?;
        input.flush()
    }

    /// Tell the watchdog that `pid` (started at `start`) is a task the run
    /// launched: if the run ends without ending it, the watchdog ends its
    /// whole process group.
    pub fn launched(&mut self, pid: i32, start: u64) -> io::Result<()> {
        self.send(&format!("launched {pid} {start}\n"))
    }

    /// Tell the watchdog the run's tag (`runstate::RUN_ENV`): whatever carries
    /// it when the run ends is ended too, launched before the watchdog heard
    /// of it or started in another process group.
    pub fn tag(&mut self, tag: &str) -> io::Result<()> {
        if tag.contains(char::is_whitespace) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("watchdog: tag contains white space: {tag:?}")));
        }
        self.send(&format!("tag {tag}\n"))
    }

    /// Tell the watchdog to remove `path` once it has undone everything (a
    /// counter page, the run's state file).
    pub fn file(&mut self, path: &Path) -> io::Result<()> {
        let text = path.to_string_lossy();
        if text.contains(['\t', '\n']) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("watchdog: path contains a tab or newline: {text:?}")));
        }
        self.send(&format!("file {text}\n"))
    }

    fn send(&mut self, line: &str) -> io::Result<()> {
        let input = self.input.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "watchdog already finished"))?;
        input.write_all(line.as_bytes())?;
        input.flush()
    }

    /// Whether the watchdog process has ended (its pidfd is readable).
    pub fn is_gone(&self) -> bool {
        wait_readable(self.pidfd.as_fd(), Duration::ZERO).unwrap_or(false)
    }

    /// Normal end (after the throttlers were released): tell the watchdog,
    /// close the pipe, wait up to [`FINISH_TIMEOUT`] for it to exit (it
    /// resumes and thaws once more, harmlessly). A watchdog still running
    /// then is killed and reported.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(mut input) = self.input.take() {
            let _ = input.write_all(b"end\n").and_then(|_| input.flush());
        }
        self.close_and_wait()
    }

    fn close_and_wait(&mut self) -> io::Result<()> {
        self.input = None;
        let exited = wait_readable(self.pidfd.as_fd(), FINISH_TIMEOUT).unwrap_or(false);
        if !exited {
            let _ = pidfd_send_signal(self.pidfd.as_fd(), libc::SIGKILL);
            let _ = self.child.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("watchdog pid {} did not exit within {} s after its pipe closed; killed it", self.pid(), FINISH_TIMEOUT.as_secs()),
            ));
        }
        let status = self.child.wait()?;
        if !status.success() {
            return Err(io::Error::other(format!("watchdog pid {} ended with {status}", self.pid())));
        }
        Ok(())
    }
}

impl Drop for Watchdog {
    /// Without `finish` (an error path, a panic unwinding): close the pipe
    /// without `end`; the watchdog undoes everything and says so.
    fn drop(&mut self) {
        if self.input.is_some() {
            let _ = self.close_and_wait();
        }
    }
}

/// poll() for readability (a pidfd is readable once the process exited).
fn wait_readable(fd: BorrowedFd<'_>, timeout: Duration) -> io::Result<bool> {
    let end = Instant::now() + timeout;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if r > 0 {
            return Ok(true);
        }
        if r == 0 {
            return Ok(false);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

// ---------------------------------------------------------------------------
// The watchdog process

const IGNORED: [i32; 5] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE];

/// What the watchdog did when its input closed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// The regulator sent `end` (a normal finish).
    pub finished: bool,
    /// Pids it was told of, and how many of them got SIGCONT.
    pub pids: usize,
    pub resumed: usize,
    /// Thaw texts written.
    pub thawed: usize,
    /// Processes put back to SCHED_OTHER.
    pub demoted: usize,
    /// criticore directories removed.
    pub removed_dirs: usize,
    /// Launched tasks' process groups told to end, the processes in them,
    /// and the groups that needed SIGKILL.
    pub ended_groups: usize,
    pub ended_processes: usize,
    pub killed_groups: usize,
    /// Files removed (counter pages, the state file).
    pub removed_files: usize,
    pub errors: Vec<String>,
}

/// The watchdog's body: ignore the terminal and termination signals, say
/// ready on stdout, read the regulator's lines from `input_fd` until EOF,
/// undo, exit 0.
pub fn run(input_fd: RawFd) -> ! {
    // SAFETY: setting dispositions to SIG_IGN and our own scheduling policy.
    unsafe {
        for sig in IGNORED {
            libc::signal(sig, libc::SIG_IGN);
        }
        let param = libc::sched_param { sched_priority: 90 };
        let _ = libc::sched_setscheduler(0, libc::SCHED_FIFO, &param);
    }
    {
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{READY_LINE}").and_then(|_| out.flush());
    }
    // Nobody reads stdout any more: point it at /dev/null.
    // SAFETY: replacing fd 1 with a freshly opened descriptor.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
    let report = serve(input_fd);
    if !report.finished && (report.resumed > 0 || report.thawed > 0 || report.removed_dirs > 0 || report.ended_processes > 0) {
        eprintln!(
            "criticore-watchdog: the regulator ended without finishing; resumed {} of {} process(es), wrote {} thaw(s), removed {} freezer dir(s), ended {} launched process(es) in {} group(s) ({} killed after the grace), removed {} file(s)",
            report.resumed, report.pids, report.thawed, report.removed_dirs, report.ended_processes, report.ended_groups, report.killed_groups, report.removed_files
        );
    }
    for e in &report.errors {
        eprintln!("criticore-watchdog: {e}");
    }
    std::process::exit(0)
}

/// Read lines from `input_fd` until EOF (or a read error), then undo. Does not
/// touch signal dispositions (that is [`run`]'s part).
pub fn serve(input_fd: RawFd) -> Report {
    let mut state = State::default();
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reading into our own buffer.
        let n = unsafe { libc::read(input_fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            state.report.errors.push(format!("reading the regulator's pipe: {e}; acting as if it ended"));
            break;
        }
        if n == 0 {
            break;
        }
        pending.extend_from_slice(&buf[..n as usize]);
        while let Some(i) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=i).collect();
            state.line(String::from_utf8_lossy(&line[..i]).trim_end_matches('\r'));
        }
    }
    if !pending.is_empty() {
        let line = String::from_utf8_lossy(&pending).into_owned();
        state.line(&line);
    }
    state.undo()
}

#[derive(Default)]
struct State {
    pidfds: Vec<(i32, OwnedFd)>,
    demote: Vec<(i32, OwnedFd)>,
    thaw: Vec<(PathBuf, String)>,
    /// Launched tasks: (pid = their process group, start time).
    launched: Vec<(i32, u64)>,
    /// The run's tag: processes carrying it are ended at the end.
    tag: Option<String>,
    files: Vec<PathBuf>,
    report: Report,
}

impl State {
    fn line(&mut self, line: &str) {
        if let Some(n) = line.strip_prefix("pid ") {
            let Ok(pid) = n.trim().parse::<i32>() else {
                self.report.errors.push(format!("bad line {line:?}"));
                return;
            };
            if self.pidfds.iter().any(|p| p.0 == pid) {
                return;
            }
            self.report.pids += 1;
            match pidfd_open(pid) {
                Ok(fd) => self.pidfds.push((pid, fd)),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {} // already gone: nothing to resume
                Err(e) => self.report.errors.push(format!("pidfd_open({pid}): {e}")),
            }
        } else if let Some(n) = line.strip_prefix("demote ") {
            let Ok(pid) = n.trim().parse::<i32>() else {
                self.report.errors.push(format!("bad line {line:?}"));
                return;
            };
            // Held by a pidfd: the pid is checked alive before it is demoted.
            match pidfd_open(pid) {
                Ok(fd) => self.demote.push((pid, fd)),
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => self.report.errors.push(format!("pidfd_open({pid}): {e}")),
            }
        } else if let Some(rest) = line.strip_prefix("thaw ") {
            match rest.split_once('\t') {
                Some((path, text)) => {
                    let entry = (PathBuf::from(path), text.to_string());
                    if !self.thaw.contains(&entry) {
                        self.thaw.push(entry);
                    }
                }
                None => self.report.errors.push(format!("bad line {line:?}")),
            }
        } else if let Some(rest) = line.strip_prefix("launched ") {
            let mut it = rest.split_whitespace().map(|w| w.parse::<u64>());
            match (it.next(), it.next()) {
                (Some(Ok(pid)), Some(Ok(start))) if pid > 1 && pid <= i32::MAX as u64 => {
                    if !self.launched.iter().any(|l| l.0 == pid as i32) {
                        self.launched.push((pid as i32, start));
                    }
                }
                _ => self.report.errors.push(format!("bad line {line:?}")),
            }
        } else if let Some(tag) = line.strip_prefix("tag ") {
            self.tag = Some(tag.trim().to_string());
        } else if let Some(path) = line.strip_prefix("file ") {
            let p = PathBuf::from(path);
            if !self.files.contains(&p) {
                self.files.push(p);
            }
        } else if line.trim() == "end" {
            self.report.finished = true;
        } else if !line.trim().is_empty() {
            self.report.errors.push(format!("unknown line {line:?}"));
        }
    }

    fn undo(mut self) -> Report {
        let r = &mut self.report;
        // Real-time threads in the launched tasks' groups (threads and
        // children they started) first too, with the tasks themselves.
        for &(g, start) in &self.launched {
            if crate::os::procs::group_is_ours(g, start) {
                for p in crate::os::procs::group_members(g) {
                    r.demoted += crate::os::procs::demote_realtime(p);
                }
            }
        }
        for (pid, fd) in &self.demote {
            let param = libc::sched_param { sched_priority: 0 };
            // Signal 0 through the pidfd: still the process we were told of.
            if pidfd_send_signal(fd.as_fd(), 0).is_ok() && unsafe { libc::sched_setscheduler(*pid, libc::SCHED_OTHER, &param) } == 0 {
                r.demoted += 1;
            }
        }
        for (pid, fd) in &self.pidfds {
            match pidfd_send_signal(fd.as_fd(), libc::SIGCONT) {
                Ok(()) => r.resumed += 1,
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) => r.errors.push(format!("SIGCONT to pid {pid}: {e}")),
            }
        }
        for (path, text) in &self.thaw {
            match write_existing(path, text) {
                Ok(()) => r.thawed += 1,
                // Released already (normal end) or removed by someone else.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => r.errors.push(format!("writing {text} to {}: {e}", path.display())),
            }
        }
        let mut dirs: Vec<PathBuf> = self
            .thaw
            .iter()
            .filter(|(p, _)| p.file_name().is_some_and(|n| n == "freezer.state" || n == "cgroup.freeze"))
            .filter_map(|(p, _)| criticore_ancestor(p.parent()?))
            .collect();
        dirs.sort();
        dirs.dedup();
        for d in dirs.iter().filter(|d| d.is_dir()) {
            let rel = release_criticore_dir(d);
            r.removed_dirs += rel.removed;
            r.errors.extend(rel.errors);
        }
        // Resumed and thawed: now the tasks the run launched can end. Not
        // our children: whoever adopted them reaps them.
        let live: Vec<(i32, u64)> = self.launched.iter().copied().filter(|&(g, s)| crate::os::procs::group_is_ours(g, s) && !crate::os::procs::group_members(g).is_empty()).collect();
        r.ended_groups = live.len();
        let ended = crate::os::procs::end_groups(&live, crate::os::procs::END_GRACE, &mut || true);
        r.ended_processes = ended.processes;
        r.killed_groups = ended.killed;
        r.demoted += ended.demoted;
        // What carries the run's tag and is still here: launched before the
        // watchdog heard of it (the run killed in that instant), or a task's
        // child in a group of its own.
        if let Some(tag) = &self.tag {
            let (ended, demoted) = crate::os::procs::end_tagged(crate::os::runstate::RUN_ENV, tag);
            r.ended_processes += ended;
            r.demoted += demoted;
        }
        for f in &self.files {
            match crate::os::procs::remove_file(f) {
                Ok(true) => r.removed_files += 1,
                Ok(false) => {}
                Err(e) => r.errors.push(format!("removing {}: {e}", f.display())),
            }
        }
        self.report
    }
}

fn write_existing(path: &Path, text: &str) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
    f.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn file(p: &Path, mode: u32) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn locate_looks_in_bin_beside_the_module_then_beside_it() {
        let d = Dir(std::env::temp_dir().join(format!("criticore-locate-{}", std::process::id())));
        let module = d.0.join("_core.abi3.so");
        let (in_bin, beside) = (d.0.join("_bin").join(PROGRAM), d.0.join(PROGRAM));
        let e = locate_in(None, Some(&module)).unwrap_err();
        assert_eq!(
            e,
            format!(
                "no criticore-watchdog program at {} or {} (build it with `make build`, or set CRITICORE_WATCHDOG); regulation never runs without a watchdog",
                in_bin.display(),
                beside.display()
            )
        );
        file(&beside, 0o755);
        assert_eq!(locate_in(None, Some(&module)).unwrap(), beside);
        file(&in_bin, 0o644);
        assert_eq!(locate_in(None, Some(&module)).unwrap(), beside, "a file nobody may execute is passed over");
        file(&in_bin, 0o755);
        assert_eq!(locate_in(None, Some(&module)).unwrap(), in_bin);
    }

    #[test]
    fn the_variable_wins_and_must_name_a_program() {
        let d = Dir(std::env::temp_dir().join(format!("criticore-locate-env-{}", std::process::id())));
        let module = d.0.join("_core.abi3.so");
        file(&d.0.join("_bin").join(PROGRAM), 0o755);
        let named = d.0.join("mine");
        assert_eq!(locate_in(Some(named.clone()), Some(&module)).unwrap_err(), format!("CRITICORE_WATCHDOG={}: no such file", named.display()));
        file(&named, 0o600);
        assert_eq!(locate_in(Some(named.clone()), Some(&module)).unwrap_err(), format!("CRITICORE_WATCHDOG={}: not executable", named.display()));
        assert_eq!(locate_in(Some(d.0.clone()), Some(&module)).unwrap_err(), format!("CRITICORE_WATCHDOG={}: not a file", d.0.display()));
        file(&named, 0o700);
        assert_eq!(locate_in(Some(named.clone()), Some(&module)).unwrap(), named);
    }

    #[test]
    fn the_module_holding_this_code_is_this_test_program() {
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        assert_eq!(module_path().unwrap().canonicalize().unwrap(), exe);
    }
}
