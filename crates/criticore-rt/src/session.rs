//! One `criticore regulate` run: from the task-system file and the command
//! line to groups of real processes, their counters, a throttler and a
//! watchdog; then the regulation loop; then everything resumed, ended and
//! removed, on every path out.
//!
//! Groups follow the file's `[regulation]`: one per `[[regulation.group]]`,
//! else one per core (the processes of the tasks on that core, MemGuard's
//! per-core budgets). Each task with a `command` becomes a process pinned to
//! its core; `--attach` adds running processes to a task's group.

use crate::os::counter::perf::{self, Target};
use crate::os::counter::shm::ShmCounter;
use crate::os::counter::{Counter, CounterError};
use crate::os::counter_page::CounterPage;
use crate::os::launch::{launch, LaunchSpec, Launched, Output};
use crate::loops::monitor::{self, MonitorConfig};
use crate::loops::regulator::{self, Rules};
use crate::loops::jobs::Member;
use crate::loops::{server, EndReason, Group, Observer, Report, Snapshot};
use crate::os::throttle::freezer::FreezerThrottler;
use crate::os::throttle::signal::SignalThrottler;
use crate::os::throttle::Throttler;
use crate::os::runstate::{self, RunState};
use crate::os::watchdog::{locate as locate_watchdog, Watchdog};
use crate::workload::worker;
use criticore::model::overhead::OverheadTable;
use criticore::model::{RegulationKind, TaskSystem};
use criticore::policy::pet;
use criticore::model::ServerKind;
use criticore::regulate::entities::{self, EntityPlan, Holder};
use criticore::regulate::monitor::MonitorRules;
use criticore::regulate::mrs::MrsMemoryRules;
use criticore::regulate::mrs_cpu::{MrsCpuRules, MrsServer};
use criticore::regulate::mcti::MctiRules;
use criticore::regulate::memguard::{MemguardOptions, MemguardRules};
use std::fmt;
use std::path::PathBuf;

/// Where counts come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterChoice {
    /// Hardware PMU if present, else shared-memory counter pages.
    Auto,
    /// Shared-memory counter pages written by instrumented programs.
    Shm,
    /// A perf_event event (`llc-misses`, `raw:0x17,0x18`, `sw:page-faults`, …), per task.
    Perf(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleChoice {
    Signal,
    Freezer,
}

/// Where a launched task may write its job records (`Options::job_log_dir`).
pub const JOB_LOG_ENV: &str = "CRITICORE_JOB_LOG";

#[derive(Debug, Clone)]
pub struct Options {
    /// None = the file's `[regulation] kind`.
    pub mode: Option<RegulationKind>,
    pub duration_ns: Option<u64>,
    /// None = the file's period.
    pub period_ns: Option<u64>,
    pub poll_ns: Option<u64>,
    pub counter: CounterChoice,
    pub throttle: ThrottleChoice,
    /// Running processes to regulate: (pid, task name).
    pub attach: Vec<(i32, String)>,
    /// A command from the command line for one task: (task name, argv).
    pub command: Option<(String, Vec<String>)>,
    /// How to start the watchdog; empty: the native `criticore-watchdog`
    /// that [`crate::os::watchdog::locate`] finds (an error if there is none).
    pub watchdog: Vec<String>,
    /// What a leading `criticore` in a task's command becomes (e.g. [python, -m, criticore]).
    pub criticore: Vec<String>,
    /// Launched commands' output (None = discarded).
    pub output: Option<PathBuf>,
    /// SCHED_FIFO priority of the regulation thread (None = leave as is).
    pub fifo_priority: Option<u8>,
    pub snapshot_ns: u64,
    /// Monitor mode: the overhead table (the front end reads the file).
    pub overhead_table: Option<OverheadTable>,
    /// Stop early by the learnt stop lag (lead.rs); false = act at the budget.
    pub lead: bool,
    /// Launched tasks get `CRITICORE_JOB_LOG=<dir>/<task>.csv`: where the
    /// periodic mode of `criticore load` writes its job records (for `--compare-sim`).
    pub job_log_dir: Option<PathBuf>,
    /// Pin the regulation thread to this CPU (None = wherever it wakes).
    pub regulator_cpu: Option<usize>,
}

/// A problem with the plan (one line; the CLI exits 2) or with the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionError {
    /// The file field or option at fault ("task[2].command", "--attach").
    pub field: String,
    pub reason: String,
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for SessionError {}

fn err(field: impl Into<String>, reason: impl fmt::Display) -> SessionError {
    SessionError { field: field.into(), reason: reason.to_string() }
}

/// Who runs in a group: one budget entity of the engine's plan
/// (`criticore::regulate::entities`), as processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupPlan {
    /// Its entity in [`Groups::plan`].
    pub entity: usize,
    pub name: String,
    pub budget: u64,
    pub criticality: u32,
    /// Task indices: the entity's tasks that have a command.
    pub tasks: Vec<usize>,
}

/// The engine's entity plan and the groups of processes it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    /// The same plan the simulator's regulator holds for this file and mode.
    pub plan: EntityPlan,
    pub groups: Vec<GroupPlan>,
}

/// The groups a file's regulation implies (pure; tested without an OS): every
/// entity of the plan. A core, a server or a best-effort core holds its
/// tasks that have commands (the monitor's best-effort cores without any are
/// left out); a budget group and the monitor's task hold all theirs, and a
/// task among them without a command must be given one or `--attach`ed.
pub fn plan_groups(system: &TaskSystem, mode: RegulationKind) -> Result<Groups, SessionError> {
    let plan = entities::plan(system, mode).map_err(|e| err(e.field, e.reason))?;
    if mode == RegulationKind::Mrs {
        if let Some(s) = system.servers.iter().position(|sv| sv.kind != ServerKind::Periodic) {
            return Err(err(format!("server[{s}].kind"), "mrs mode runs idling periodic servers; CBS servers are SCHED_DEADLINE reservations"));
        }
    }
    let mut groups = Vec::new();
    for (k, e) in plan.entities.iter().enumerate() {
        let placed = matches!(e.holder, Holder::Core(_) | Holder::Server(_) | Holder::BestEffortCore(_));
        let tasks: Vec<usize> = e.tasks.iter().copied().filter(|&t| !placed || system.tasks[t].command.is_some()).collect();
        if tasks.is_empty() && matches!(e.holder, Holder::BestEffortCore(_)) {
            continue;
        }
        groups.push(GroupPlan { entity: k, name: e.name.clone(), budget: e.budget.unwrap_or(0), criticality: e.criticality, tasks });
    }
    if matches!(mode, RegulationKind::Memguard | RegulationKind::Mcti) && groups.iter().all(|g| !matches!(plan.entities[g.entity].holder, Holder::Group(_))) {
        // Per-core budgets: a process runs where its budget is.
        if let Some(i) = (0..system.tasks.len()).find(|&t| system.tasks[t].command.is_some() && entities::core_of(system, t).is_none()) {
            return Err(err(format!("task[{i}].core"), "per-core budgets need every task with a command on a core"));
        }
    }
    Ok(Groups { plan, groups })
}

/// What the run did, for the CLI's tables and files.
#[derive(Debug)]
pub struct SessionReport {
    pub report: Report,
    pub groups: Vec<GroupPlan>,
    /// Per group, the processes regulated (pid, task name).
    pub processes: Vec<Vec<(i32, String)>>,
    pub counter: String,
    pub throttle: String,
    pub period_ns: u64,
    pub mode: &'static str,
    /// Monitor mode: its samples and jobs (the periods of `report` stay empty).
    pub monitor: Option<(Vec<monitor::SampleRecord>, Vec<monitor::JobRecord>)>,
    /// One-line notices (fallbacks taken, processes that ended early).
    pub notices: Vec<String>,
    /// Every launched task ended by itself before the run's end with a
    /// failure (exit status not 0, or a signal), and nothing was attached:
    /// nothing was regulated for long (the CLI exits 1).
    pub tasks_failed: bool,
}

struct Running {
    launched: Vec<Launched>,
    /// Per launched process: its task's name, when it was launched and when
    /// the run saw it end (CLOCK_MONOTONIC ns).
    tasks: Vec<String>,
    launched_ns: Vec<u64>,
    ended_ns: Vec<Option<u64>>,
    pages: Vec<PathBuf>,
    /// What the run changed, for the cleaner if it and its watchdog die.
    state: Option<RunState>,
}

impl Running {
    /// End what we started, each launched task's whole process group, and
    /// remove our files (every path out): SIGCONT and SIGTERM to each group,
    /// time to write their records and exit (a periodic worker writes its
    /// job log at SIGTERM: a second was too short on a busy host), SIGKILL
    /// to what is left; the state file last.
    fn cleanup(&mut self) {
        let groups: Vec<(i32, u64)> = self.launched.iter().map(|l| (l.pid, l.start)).collect();
        let launched = &mut self.launched;
        crate::os::procs::end_groups(&groups, crate::os::procs::END_GRACE, &mut || {
            launched.iter_mut().all(|l| !matches!(l.child.try_wait(), Ok(None)))
        });
        for l in &mut self.launched {
            if matches!(l.child.try_wait(), Ok(None)) {
                let _ = l.child.kill();
                let _ = l.child.wait();
            }
        }
        self.launched.clear();
        for p in self.pages.drain(..) {
            let _ = std::fs::remove_file(p);
        }
        if let Some(s) = self.state.take() {
            s.remove();
        }
    }

    /// Note in the state file what `f` adds; a failure is a notice (the
    /// watchdog still undoes it all; only a dead run's cleaner misses it).
    fn record(&mut self, notices: &mut Vec<String>, f: impl FnOnce(&mut runstate::State)) {
        if let Some(s) = &mut self.state {
            if let Err(e) = s.update(f) {
                notices.push(format!("could not update the run's state file {}: {e}", s.path.display()));
            }
        }
    }

    /// One notice per launched task that ended by itself before the run's
    /// end, with its exit status; whether every one of them failed (exit
    /// status not 0, or a signal) so, none running at the end.
    fn early_exits(&mut self, notices: &mut Vec<String>) -> bool {
        use std::os::unix::process::ExitStatusExt;
        let mut failed = 0;
        for (i, l) in self.launched.iter_mut().enumerate() {
            let Ok(Some(status)) = l.child.try_wait() else { continue };
            let after = self.ended_ns[i].map(|t| format!(" {:.2} s after its launch", t.saturating_sub(self.launched_ns[i]) as f64 / 1e9)).unwrap_or_default();
            let how = match (status.code(), status.signal()) {
                (Some(c), _) => format!("with exit status {c}"),
                (None, Some(sig)) => format!("killed by signal {sig}"),
                _ => format!("with {status}"),
            };
            if !status.success() {
                failed += 1;
            }
            notices.push(format!("task \"{}\" (pid {}) ended by itself{after}, {how}, before the run's end", self.tasks[i], l.pid));
        }
        failed > 0 && failed == self.launched.len()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.cleanup();
    }
}

struct Alive<'a, F: FnMut(&Snapshot) -> bool> {
    launched: &'a mut Vec<Launched>,
    ended_ns: &'a mut Vec<Option<u64>>,
    attached: &'a [i32],
    watchdog: &'a Watchdog,
    /// Set when the loop ended because the watchdog did.
    watchdog_gone: bool,
    on_snapshot: F,
}

impl<F: FnMut(&Snapshot) -> bool> Observer for Alive<'_, F> {
    fn any_alive(&mut self) -> bool {
        // Regulation never runs without a watchdog (it is our child: its
        // end is a SIGCHLD too).
        if self.watchdog.is_gone() {
            self.watchdog_gone = true;
            return false;
        }
        let mut launched = false;
        for (l, ended) in self.launched.iter_mut().zip(self.ended_ns.iter_mut()) {
            match l.child.try_wait() {
                Ok(None) => launched = true,
                _ if ended.is_none() => *ended = Some(crate::os::counter_page::now_ns()),
                _ => {}
            }
        }
        let attached = self.attached.iter().any(|&p| unsafe { libc::kill(p, 0) } == 0);
        launched || attached
    }

    fn snapshot(&mut self, s: &Snapshot) -> bool {
        (self.on_snapshot)(s)
    }
}

fn open_counter(choice: &CounterChoice, pid: i32, page: Option<&PathBuf>, cookie: u64) -> Result<Box<dyn Counter>, SessionError> {
    match choice {
        CounterChoice::Shm | CounterChoice::Auto => {
            let path = page.expect("a page for every shm process");
            let c = ShmCounter::open(path, cookie).map_err(|e| err("--counter", e))?;
            Ok(Box::new(c))
        }
        CounterChoice::Perf(event) => {
            let spec = perf::parse_event(event).map_err(|e| err("--counter", e))?;
            let c = perf::open(&spec, Target::Task(pid), true).map_err(|e| err("--counter", e))?;
            Ok(Box::new(c))
        }
    }
}

/// The shared-memory page a running process was started with, from its environment.
fn page_of_process(pid: i32) -> Option<PathBuf> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let key = format!("{}=", crate::os::counter_page::ENV);
    env.split(|&b| b == 0).find_map(|kv| kv.strip_prefix(key.as_bytes()).map(|v| PathBuf::from(String::from_utf8_lossy(v).into_owned())))
}

/// A launched program whose first job waits for the common start.
struct Starter {
    /// Index in `Running::launched`.
    launched: usize,
    task: String,
    page: CounterPage,
    /// Wait for the program to attach until then (CLOCK_MONOTONIC ns): a
    /// criticore program attaches and takes part, so for as long as the
    /// start waits; under shared-memory counters every program must attach
    /// (`criticore.h`, `criticore.instrument`), so for ATTACH_GRACE_NS, long
    /// enough to see whether it says it takes part; any other, not at all.
    /// Once attached, a program is waited for only if it said it takes part.
    attach_by_ns: u64,
}

/// How long the common start waits for an instrumented program (not
/// criticore's own) to attach and say whether it takes part: an interpreter's
/// start-up and imports, on a busy host.
const ATTACH_GRACE_NS: u64 = 5_000_000_000;

/// SIGINT and SIGTERM: what ends a run.
fn stop_signals() -> libc::sigset_t {
    let mut signals: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut signals);
        libc::sigaddset(&mut signals, libc::SIGINT);
        libc::sigaddset(&mut signals, libc::SIGTERM);
    }
    signals
}

/// Whether a signal of `set` (blocked) is pending, or was caught in another
/// thread (`StopHandlers`); takes it.
fn stop_pending(set: &libc::sigset_t) -> bool {
    let mut pending = crate::os::signals::take_stop();
    while matches!(crate::os::signals::wait(set, 0), libc::SIGINT | libc::SIGTERM) {
        pending = true;
    }
    pending
}

/// MCTI's switch to fixed priority (rule 5), mapped to resctrl memory-bandwidth
/// caps where the machine has them (`os/resctrl.rs`); the notice says which.
fn mcti_caps(groups: &[Group], running: &mut Running, notices: &mut Vec<String>) -> Option<crate::os::resctrl::Classes> {
    let rules = "MCTI: a group past its budget stops while it runs no critical job (rule 4) and runs on while it runs one (rule 5)";
    let Some(limits) = crate::os::resctrl::present() else {
        notices.push(format!("{rules}; user space cannot switch the interconnect to fixed priority and this machine has no resctrl memory-bandwidth control, so that switch is reported per period (overload), not made"));
        return None;
    };
    let pids: Vec<Vec<i32>> = groups.iter().map(|g| g.pids.clone()).collect();
    match crate::os::resctrl::Classes::create(std::path::Path::new(crate::os::resctrl::ROOT), &std::process::id().to_string(), &pids) {
        Ok(c) => {
            let dirs = c.dirs().to_vec();
            running.record(notices, |s| s.resctrl.extend(dirs));
            notices.push(format!("{rules}; the interconnect's switch to fixed priority is mapped to resctrl MB caps: the group Property 1 ranks highest keeps 100 %, the others {} % (docs/runtime.md)", limits.min_percent));
            Some(c)
        }
        Err(e) => {
            notices.push(format!("{rules}; resctrl MB is present but its classes could not be made ({e}), so the switch to fixed priority is reported per period (overload), not made"));
            None
        }
    }
}

/// Longest wait for the launched programs to set up, all together.
const START_TIMEOUT_NS: u64 = 60_000_000_000;

/// The common start (counter_page.rs), run as the programs are launched: each
/// program that takes part sets up (interpreter, buffers, calibration) alone,
/// before the next is launched, while the earlier ones wait for time 0, so no
/// calibration is measured against another's; then time 0 is written to all.
struct CommonStart {
    starters: Vec<Starter>,
    signals: libc::sigset_t,
    began_ns: u64,
    /// SIGINT or SIGTERM came while waiting: launch the rest without waiting.
    interrupted: bool,
    timed_out: bool,
}

impl CommonStart {
    fn new() -> Self {
        CommonStart { starters: Vec::new(), signals: stop_signals(), began_ns: crate::os::counter_page::now_ns(), interrupted: false, timed_out: false }
    }

    /// Take a SIGINT or SIGTERM that came since (the session blocks them).
    fn poll(&mut self) {
        self.interrupted |= stop_pending(&self.signals);
    }

    /// Wait until every starter is set up or has ended (or the time-out, or a signal).
    fn wait(&mut self, launched: &mut [Launched], notices: &mut Vec<String>) {
        use crate::os::counter_page::SETTING_UP;
        let _blocked = crate::os::signals::Blocked::new(&self.signals);
        while !(self.interrupted || self.timed_out) {
            let waiting: Vec<&str> = self
                .starters
                .iter()
                .filter(|s| matches!(launched[s.launched].child.try_wait(), Ok(None)))
                .filter(|s| s.page.ready_ns() == SETTING_UP || (s.page.writer_pid() == 0 && crate::os::counter_page::now_ns() < s.attach_by_ns))
                .map(|s| s.task.as_str())
                .collect();
            if waiting.is_empty() {
                return;
            }
            let now = crate::os::counter_page::now_ns();
            if now - self.began_ns > START_TIMEOUT_NS {
                notices.push(format!("common start: {} not set up after {} s; started without waiting for them", waiting.join(", "), START_TIMEOUT_NS / 1_000_000_000));
                self.timed_out = true;
                return;
            }
            let got = crate::os::signals::wait(&self.signals, now + 2_000_000);
            if got == libc::SIGINT || got == libc::SIGTERM || crate::os::signals::take_stop() {
                self.interrupted = true;
            }
        }
    }

    /// Time 0 for every starter: now. Whether a signal came, and the origin written.
    fn release(mut self, notices: &mut Vec<String>) -> (bool, Option<u64>) {
        self.poll();
        if self.starters.is_empty() {
            return (self.interrupted, None);
        }
        let origin = crate::os::counter_page::now_ns();
        for s in &self.starters {
            s.page.release_start(origin);
        }
        let ready = self.starters.iter().filter(|s| s.page.ready_ns() > crate::os::counter_page::SETTING_UP).count();
        notices.push(format!("common start: {ready} program(s) set up one after another in {:.1} s, unregulated; their time 0 is the regulation's", (origin - self.began_ns) as f64 / 1e9));
        (self.interrupted, Some(origin))
    }
}

/// Undo what dead runs left (both the run and its watchdog killed): their
/// state files' tasks ended, real-time policies back to SCHED_OTHER, frozen
/// cgroups thawed and removed, counter pages removed; one line per thing
/// undone (`criticore regulate --clean`, and the start of every run).
pub fn clean_dead_runs() -> Vec<String> {
    runstate::clean_dead_runs()
}

/// Tasks placed on a core that give a `priority` run SCHED_FIFO in that
/// order, as the simulator's fixed-priority schedulers run them (`pfp`, and
/// inside a server, MRS §III: Table V's 98, 97): ranked 1, 2, … so that every
/// one stays below the regulator (`regulator_fifo`), which must be able to
/// stop them. Tasks without one keep SCHED_OTHER, and so do all when the
/// regulator itself is not SCHED_FIFO.
fn task_fifo(system: &TaskSystem, regulator_fifo: u8, notices: &mut Vec<String>) -> Vec<Option<u8>> {
    let placed = |t: usize| entities::core_of(system, t).is_some();
    let mut levels: Vec<i64> = (0..system.tasks.len()).filter(|&t| placed(t)).filter_map(|t| system.tasks[t].priority).collect();
    levels.sort_unstable();
    levels.dedup();
    if levels.is_empty() {
        return vec![None; system.tasks.len()];
    }
    let top = regulator_fifo.saturating_sub(1).max(1) as usize;
    let rank = |p: i64| (levels.iter().position(|&l| l == p).unwrap_or(0) + 1).min(top) as u8;
    if levels.len() > top {
        notices.push(format!("{} task priorities share {top} SCHED_FIFO levels below the regulator's {regulator_fifo}: the highest ones run at {top}", levels.len()));
    }
    let map: Vec<String> = levels.iter().map(|&l| format!("{l} → {}", rank(l))).collect();
    notices.push(format!("tasks with a priority run SCHED_FIFO by it ({}), below the regulator's {regulator_fifo}", map.join(", ")));
    (0..system.tasks.len()).map(|t| if placed(t) { system.tasks[t].priority.map(rank) } else { None }).collect()
}

/// Run the whole session, in steps: `plan` (the file and the options,
/// checked before anything starts), the throttler and the watchdog,
/// `launch_all` (commands started and attached processes taken, each counted
/// and watched from the start), `arm` (the regulator's CPU and policy, the
/// common start), `regulate_loop` (one of the three loops) and `finish`
/// (everything resumed, ended and removed). `on_snapshot` feeds the live view
/// (return false to stop). Every path out, errors included, resumes and ends
/// what was started: `Started` and `Running` clean up on drop, the watchdog
/// undoes when its pipe closes, the throttler resumes on drop.
pub fn run(system: &TaskSystem, options: &Options, on_snapshot: impl FnMut(&Snapshot) -> bool) -> Result<SessionReport, SessionError> {
    // The PETs the simulator runs (cost curves under the allocation): one truth.
    let system = &pet::conditioned(system).map_err(|e| {
        let e = e.field_error();
        err(e.field, e.reason)
    })?;
    let mut notices = Vec::new();
    let plan = plan(system, options, &mut notices)?;
    // A Ctrl-C from here on is the session's, in whatever thread of the
    // process it lands (an interpreter's handler would see it only once the
    // run is over); blocked in this thread below, once the watchdog (which
    // must not inherit a blocked SIGTERM) is started.
    let _stop_handlers = crate::os::signals::StopHandlers::install();
    let mut throttler: Box<dyn Throttler> = match options.throttle {
        ThrottleChoice::Signal => Box::new(SignalThrottler::new()),
        ThrottleChoice::Freezer => Box::new(FreezerThrottler::detect().map_err(|e| err("--throttle", e))?),
    };
    // Before anything is launched: never a regulation without a watchdog.
    let program = match options.watchdog.is_empty() {
        true => vec![locate_watchdog().map_err(|e| err("watchdog", e))?.display().to_string()],
        false => options.watchdog.clone(),
    };
    let mut watchdog = Watchdog::spawn(&program).map_err(|e| err("watchdog", e))?;
    // `arm` pins this thread and makes it SCHED_FIFO: back to what it was on every way out.
    let _caller = crate::os::launch::ThreadScheduling::save();
    // Ctrl-C at any moment of the session is taken by it, not by the caller
    // (an interpreter would only see it once the run is over): during the
    // launch it ends the launch, during the loop the loop. Launched commands
    // start with an empty mask (std::process::Command resets it).
    let stop = stop_signals();
    let _stop_blocked = crate::os::signals::Blocked::new(&stop);
    let (mut started, gate) = launch_all(system, options, &plan, throttler.as_mut(), &mut watchdog, &mut notices)?;
    let interrupted = arm(options, &mut started, gate, &mut watchdog, &mut notices)?;
    let (result, monitor_log) = regulate_loop(system, options, &plan, &mut started, throttler.as_mut(), &watchdog, interrupted, on_snapshot, &mut notices)?;
    let mut report = finish(plan, started, throttler, watchdog, result, monitor_log, notices)?;
    // A Ctrl-C while everything was being ended still says the run was cut short.
    if stop_pending(&stop) {
        report.report.end = EndReason::Interrupted;
    }
    Ok(report)
}

/// What the file and the options ask for, checked before anything starts.
struct Plan {
    mode: RegulationKind,
    period_ns: u64,
    memguard: MemguardOptions,
    /// The engine's entities (the simulator's too) run as processes.
    groups: Vec<GroupPlan>,
    /// Per task: its command (the file's, or the command line's).
    commands: Vec<Option<Vec<String>>>,
    /// Per task: running processes to regulate as it.
    attach_of_task: Vec<Vec<i32>>,
    counter: CounterChoice,
}

/// The groups (budgets scaled to another period), each task's command or
/// attached processes, the counter; one-line errors for what cannot run.
fn plan(system: &TaskSystem, options: &Options, notices: &mut Vec<String>) -> Result<Plan, SessionError> {
    let reg = system.regulation.as_ref().ok_or_else(|| err("regulation", "the file has no [regulation] table"))?;
    let mode = options.mode.unwrap_or(reg.kind);
    let Groups { groups: mut groups_plan, .. } = plan_groups(system, mode)?;
    for line in clean_dead_runs() {
        notices.push(format!("cleaned up after a dead run: {line}"));
    }
    let period_ns = options.period_ns.unwrap_or(reg.period_ns);
    let mut memguard = reg.memguard;
    if matches!(mode, RegulationKind::Memguard | RegulationKind::Mcti) && period_ns != reg.period_ns && reg.period_ns > 0 {
        // Budgets are per period: another period keeps their bandwidth.
        let scale = |b: u64| ((b as u128 * period_ns as u128 + reg.period_ns as u128 / 2) / reg.period_ns as u128) as u64;
        let before: Vec<u64> = groups_plan.iter().map(|g| g.budget).collect();
        for g in groups_plan.iter_mut() {
            g.budget = scale(g.budget);
        }
        memguard.reclaim_min = (memguard.reclaim_min * period_ns as f64 / reg.period_ns as f64).max(0.0);
        let shown: Vec<String> = before.iter().zip(&groups_plan).map(|(b, g)| format!("{b} → {}", g.budget)).collect();
        notices.push(format!("--period {} µs instead of the file's {} µs: budgets scaled to keep their bandwidth ({} lines per period)", period_ns as f64 / 1e3, reg.period_ns as f64 / 1e3, shown.join(", ")));
    }

    check_intervals(system, options, mode, period_ns, groups_plan.len())?;

    // Commands per task: the file's, or the command line's for one task.
    let mut commands: Vec<Option<Vec<String>>> = system.tasks.iter().map(|t| t.command.clone()).collect();
    if let Some((name, argv)) = &options.command {
        let i = system.tasks.iter().position(|t| &t.name == name).ok_or_else(|| err("--task", format!("no task named \"{name}\"")))?;
        commands[i] = Some(argv.clone());
    }
    let mut attach_of_task: Vec<Vec<i32>> = vec![Vec::new(); system.tasks.len()];
    for (pid, name) in &options.attach {
        let i = system.tasks.iter().position(|t| &t.name == name).ok_or_else(|| err("--attach", format!("no task named \"{name}\"")))?;
        if *pid <= 0 || unsafe { libc::kill(*pid, 0) } != 0 {
            return Err(err("--attach", format!("pid {pid}: no such process, or not ours to signal")));
        }
        attach_of_task[i].push(*pid);
    }
    let mut members = Vec::new();
    for g in &groups_plan {
        for &t in &g.tasks {
            crate::workload::periodic::refuse_limited_preemption(system, t).map_err(|e| err(e.field, e.reason))?;
            if commands[t].is_none() && attach_of_task[t].is_empty() {
                return Err(err(format!("task[{t}].command"), format!("task \"{}\" has no command to run (add command = [...] or --attach PID)", system.tasks[t].name)));
            }
            members.push(t);
        }
    }
    if members.is_empty() {
        return Err(err("task", "no task with a command in any regulated group"));
    }

    let counter = match &options.counter {
        CounterChoice::Auto if perf::pmu_present() => CounterChoice::Perf("llc-misses".into()),
        CounterChoice::Auto => {
            notices.push("no hardware PMU: counting with shared-memory counters written by instrumented programs (criticore load, criticore.h, criticore.instrument)".into());
            CounterChoice::Shm
        }
        c => c.clone(),
    };
    if let CounterChoice::Perf(event) = &counter {
        // Fail before starting anything: unknown events and missing PMUs are one line.
        let spec = perf::parse_event(event).map_err(|e| err("--counter", e))?;
        perf::open(&spec, Target::Task(std::process::id() as i32), false).map_err(|e| err("--counter", e))?;
    }
    Ok(Plan { mode, period_ns, memguard, groups: groups_plan, commands, attach_of_task, counter })
}

/// The most per-period (or per-sample) records a run with a `--duration`
/// may keep: the log holds every one in memory (about 100 bytes each).
pub const MAX_RECORDS: u64 = 10_000_000;

/// Periods and intervals this machine can honour (the floor measured,
/// `clock::period_floor_ns`), and a log of bounded size: one line each.
fn check_intervals(system: &TaskSystem, options: &Options, mode: RegulationKind, period_ns: u64, groups: usize) -> Result<(), SessionError> {
    let reg = system.regulation.as_ref().expect("checked");
    let mut asked: Vec<(&str, u64)> = Vec::new();
    match mode {
        RegulationKind::Memguard | RegulationKind::Mcti => asked.push((if options.period_ns.is_some() { "--period" } else { "regulation.period" }, period_ns)),
        RegulationKind::Monitor => asked.extend(reg.monitor.as_ref().map(|m| ("regulation.sample", m.sample_ns))),
        RegulationKind::Mrs => {}
    }
    asked.extend(options.poll_ns.map(|p| ("--poll", p)));
    if let Some(&(_, shortest)) = asked.iter().min_by_key(|a| a.1) {
        // Measured only when something could be below any plausible floor.
        if shortest < 1_000_000 {
            let late = crate::os::clock::timer_lateness_ns(options.fifo_priority, options.regulator_cpu);
            let floor = crate::os::clock::period_floor_ns(late);
            if let Some(&(field, ns)) = asked.iter().find(|a| a.1 < floor) {
                return Err(err(
                    field,
                    format!(
                        "{} µs is below what this machine can honour: {:.1} µs, the median lateness of the regulator's timer wake-ups measured now ({:.1} µs; at its SCHED_FIFO priority and CPU; at least {} µs; docs/runtime.md)",
                        ns as f64 / 1e3,
                        floor as f64 / 1e3,
                        late as f64 / 1e3,
                        crate::os::clock::MIN_PERIOD_NS / 1000
                    ),
                ));
            }
        }
    }
    if let (Some(d), Some(&(field, each))) = (options.duration_ns, asked.iter().filter(|a| a.0 != "--poll").min_by_key(|a| a.1)) {
        let records = (d / each.max(1)).saturating_add(1).saturating_mul(groups.max(1) as u64);
        if records > MAX_RECORDS {
            return Err(err(
                "--duration",
                format!(
                    "{} s at {} µs ({field}) over {groups} group(s) is {records} records, and the log keeps each in memory; at most {MAX_RECORDS}: a longer period or a shorter run",
                    d as f64 / 1e9,
                    each as f64 / 1e3
                ),
            ));
        }
    }
    Ok(())
}

/// What was started for the run. Fields drop in this order on every path
/// out: the counters before the pages they read, then the launched commands
/// ended and their pages removed.
struct Started {
    groups: Vec<Group>,
    /// Per group, the processes regulated (pid, task name).
    processes: Vec<Vec<(i32, String)>>,
    attached_pids: Vec<i32>,
    /// Monitor mode: the real-time program's page (its job and phase marks).
    rt_page: Option<PathBuf>,
    /// Tasks with a priority, to run SCHED_FIFO once all are set up (pid, priority).
    fifo_pids: Vec<(i32, u8)>,
    /// The common start, once written: the programs' releases count from it.
    origin_ns: Option<u64>,
    running: Running,
}

/// Start each task's command and take each attached process, group by
/// group: each is in the throttler, told to the watchdog and counted from
/// its first instruction, and sets up alone while the earlier ones wait for
/// the common start.
fn launch_all(
    system: &TaskSystem,
    options: &Options,
    plan: &Plan,
    throttler: &mut dyn Throttler,
    watchdog: &mut Watchdog,
    notices: &mut Vec<String>,
) -> Result<(Started, CommonStart), SessionError> {
    let (mode, counter) = (plan.mode, &plan.counter);
    let fifo = match options.fifo_priority {
        // A SCHED_FIFO task above a SCHED_OTHER regulator could keep it from stopping anything.
        Some(p) if mode != RegulationKind::Monitor && p > 1 => task_fifo(system, p, notices),
        _ => vec![None; system.tasks.len()],
    };
    let mut fifo_pids: Vec<(i32, u8)> = Vec::new();
    // The run's state file, before anything is launched: if the run and its
    // watchdog are both killed, the next run or `--clean` undoes what it lists.
    let state = RunState::create().map_err(|e| err("run state", format!("cannot write {}/{}…: {e}", runstate::DIR, runstate::PREFIX)))?;
    watchdog.file(&state.path).map_err(|e| err("watchdog", e))?;
    let mut running = Running { launched: Vec::new(), tasks: Vec::new(), launched_ns: Vec::new(), ended_ns: Vec::new(), pages: Vec::new(), state: Some(state) };
    let wd = runstate::Proc::of(watchdog.pid());
    running.record(notices, |s| s.watchdog = wd);
    // Every command launched carries the run's tag; the watchdog ends what
    // carries it, listed or not.
    let tag = runstate::Proc::of(std::process::id() as i32).map(|me| runstate::run_tag(&me));
    if let Some(t) = &tag {
        watchdog.tag(t).map_err(|e| err("watchdog", e))?;
    }
    let mut gate = CommonStart::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut processes: Vec<Vec<(i32, String)>> = Vec::new();
    let mut attached_pids = Vec::new();
    let mut cookie = 0u64;
    let stamp = std::process::id();
    // Monitor mode: the real-time program's page (its job and phase marks).
    let mut rt_page: Option<PathBuf> = None;
    let native_worker = worker::locate();
    if native_worker.is_none() && plan.commands.iter().flatten().any(|argv| worker::native_command(argv).is_some()) {
        notices.push(format!("no {} program (build it with `make build`): `criticore load` tasks run in Python", worker::PROGRAM));
    }
    for (k, g) in plan.groups.iter().enumerate() {
        let mut group = Group { name: g.name.clone(), pids: Vec::new(), counters: Vec::new(), criticality: g.criticality, jobs: Vec::new() };
        // MCTI: each process's jobs, from its task's releases and its page's job marks.
        let member = |t: usize, page: Option<&PathBuf>| {
            let task = &system.tasks[t];
            let page = page.and_then(|p| CounterPage::open(p).ok());
            let (period_ns, deadline_ns) = task.running_period_deadline_ns();
            Member::new(task.criticality, task.offset_ns, period_ns, deadline_ns, page)
        };
        let mut procs = Vec::new();
        for &t in &g.tasks {
            // Ctrl-C during the launch: launch no more, regulate nothing.
            gate.poll();
            if gate.interrupted {
                break;
            }
            let task = &system.tasks[t];
            if let Some(argv) = &plan.commands[t] {
                let page = PathBuf::from(format!("/dev/shm/criticore-{stamp}-{cookie}"));
                let ours = argv[0] == "criticore";
                let mut argv = argv.clone();
                // The periodic worker runs natively: no interpreter before time 0.
                match native_worker.as_ref().and_then(|program| worker::native_argv(&argv, program)) {
                    Some(native) => argv = native,
                    _ if ours && !options.criticore.is_empty() => {
                        argv.splice(0..1, options.criticore.iter().cloned());
                    }
                    _ => {}
                }
                let mut spec = LaunchSpec::new(argv);
                // A process group of its own: what it starts ends with it.
                spec.own_group = true;
                // Its run's tag: found even before the watchdog or the state file lists it.
                if let Some(t) = &tag {
                    spec.env.push((runstate::RUN_ENV.into(), t.clone()));
                }
                // A server's tasks run on the server's core.
                spec.cpus = task.core.or(task.server.map(|sv| system.servers[sv].core)).map(|c| vec![c]);
                spec.stdout = options.output.clone().map_or(Output::Null, Output::File);
                spec.stderr = spec.stdout.clone();
                if let Some(dir) = &options.job_log_dir {
                    spec.env.push((JOB_LOG_ENV.into(), dir.join(format!("{}.csv", task.name)).display().to_string()));
                }
                // criticore's own programs get a page under any counter: it
                // carries their job marks and the common start.
                if *counter == CounterChoice::Shm || mode == RegulationKind::Monitor || ours {
                    // The reader creates the page; the program attaches through the environment.
                    let p = CounterPage::create(&page).map_err(|e| err("--counter", format!("{}: {e}", page.display())))?;
                    p.hold_start();
                    running.pages.push(page.clone());
                    watchdog.file(&page).map_err(|e| err("watchdog", e))?;
                    running.record(notices, |s| s.pages.push(page.clone()));
                    let attach_by_ns = match (ours, *counter == CounterChoice::Shm) {
                        (true, _) => u64::MAX,
                        (false, true) => crate::os::counter_page::now_ns() + ATTACH_GRACE_NS,
                        (false, false) => 0,
                    };
                    gate.starters.push(Starter { launched: running.launched.len(), task: task.name.clone(), page: p, attach_by_ns });
                    spec.env.push((crate::os::counter_page::ENV.into(), page.display().to_string()));
                }
                let launched = launch(&spec).map_err(|e| err(format!("task[{t}].command"), e))?;
                let (pid, start) = (launched.pid, launched.start);
                if let Some(p) = fifo[t] {
                    fifo_pids.push((pid, p));
                }
                running.launched.push(launched);
                running.tasks.push(task.name.clone());
                running.launched_ns.push(crate::os::counter_page::now_ns());
                running.ended_ns.push(None);
                watchdog.launched(pid, start).map_err(|e| err("watchdog", e))?;
                running.record(notices, |s| s.launched.push(runstate::Proc { pid, start }));
                throttler.add(k, pid).map_err(|e| err(format!("task[{t}].command"), e))?;
                watchdog.watch(&throttler.undo_list()).map_err(|e| err("watchdog", e))?;
                record_cgroups(&mut running, throttler, notices);
                group.counters.push(open_counter(counter, pid, Some(&page), cookie)?);
                if mode == RegulationKind::Mcti {
                    group.jobs.push(member(t, running.pages.contains(&page).then_some(&page)));
                }
                group.pids.push(pid);
                if k == 0 && rt_page.is_none() {
                    rt_page = Some(page.clone());
                }
                procs.push((pid, task.name.clone()));
                cookie += 1;
                // Counted and watched from its first instruction; set up alone.
                gate.wait(&mut running.launched, notices);
            }
            for &pid in &plan.attach_of_task[t] {
                throttler.add(k, pid).map_err(|e| err("--attach", e))?;
                watchdog.watch(&throttler.undo_list()).map_err(|e| err("watchdog", e))?;
                record_cgroups(&mut running, throttler, notices);
                let page = page_of_process(pid);
                if *counter == CounterChoice::Shm && page.is_none() {
                    return Err(err("--attach", format!("pid {pid} was not started with {} (not instrumented); use --counter sw:… or a PMU event", crate::os::counter_page::ENV)));
                }
                if k == 0 && rt_page.is_none() {
                    rt_page = page.clone();
                }
                group.counters.push(open_counter(counter, pid, page.as_ref(), cookie)?);
                if mode == RegulationKind::Mcti {
                    group.jobs.push(member(t, page.as_ref()));
                }
                group.pids.push(pid);
                attached_pids.push(pid);
                procs.push((pid, task.name.clone()));
                cookie += 1;
            }
        }
        groups.push(group);
        processes.push(procs);
    }
    Ok((Started { groups, processes, attached_pids, rt_page, fifo_pids, origin_ns: None, running }, gate))
}

/// The `criticore-*` cgroup directories the throttler holds, into the state file.
fn record_cgroups(running: &mut Running, throttler: &dyn Throttler, notices: &mut Vec<String>) {
    let dirs: Vec<PathBuf> = throttler.undo_list().thaw.iter().filter_map(|(p, _)| crate::os::throttle::freezer::criticore_ancestor(std::path::Path::new(p))).collect();
    let new: Vec<PathBuf> = dirs.into_iter().filter(|d| running.state.as_ref().is_some_and(|s| !s.state.cgroups.contains(d))).collect();
    if !new.is_empty() {
        running.record(notices, |s| {
            for d in new {
                if !s.cgroups.contains(&d) {
                    s.cgroups.push(d);
                }
            }
        });
    }
}

/// Before time 0: the regulator's CPU and policy, then the common start
/// (the programs' set-up ran unregulated), then tasks with a priority at
/// SCHED_FIFO. Whether a signal came while the programs set up.
fn arm(options: &Options, started: &mut Started, gate: CommonStart, watchdog: &mut Watchdog, notices: &mut Vec<String>) -> Result<bool, SessionError> {
    if let Some(c) = options.regulator_cpu {
        // RESULTS anomaly 3: unpinned, at short periods it takes most of the
        // CPU it wakes on and starves what runs there; a best-effort CPU is
        // the place for it.
        crate::os::launch::pin_current_thread(&[c]).map_err(|e| err("--regulator-cpu", e))?;
    }
    if let Some(p) = options.fifo_priority {
        let param = libc::sched_param { sched_priority: p as i32 };
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            notices.push(format!("could not run the regulator at SCHED_FIFO {p}: {}", std::io::Error::last_os_error()));
        }
        // docs/references.md, Runtime §2: the default 50 µs timer slack delays every wake-up.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    }
    // Set-up (interpreter start, buffers, calibration) runs unregulated and at
    // the launched programs' own policy; the regulation's time 0 is their
    // common start.
    let (interrupted, origin) = gate.release(notices);
    started.origin_ns = origin;
    // Tasks with a priority go SCHED_FIFO only now, all launched and set up and the regulator
    // above them: launched so, a task that never blocks would starve the ones
    // started after it on its core before they reach exec (and the launch with them).
    for &(pid, p) in &started.fifo_pids {
        let param = libc::sched_param { sched_priority: p as i32 };
        watchdog.demote(pid).map_err(|e| err("watchdog", e))?;
        let me = runstate::Proc::of(pid);
        started.running.record(notices, |s| s.fifo.extend(me));
        if unsafe { libc::sched_setscheduler(pid, libc::SCHED_FIFO, &param) } != 0 {
            notices.push(format!("could not run pid {pid} at SCHED_FIFO {p}: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(interrupted)
}

/// What one loop returned, and monitor mode's samples and jobs.
type LoopResult = (Result<Report, CounterError>, Option<(Vec<monitor::SampleRecord>, Vec<monitor::JobRecord>)>);

/// Run the mode's loop (none if a signal came during the set-up).
#[allow(clippy::too_many_arguments)]
fn regulate_loop(
    system: &TaskSystem,
    options: &Options,
    plan: &Plan,
    started: &mut Started,
    throttler: &mut dyn Throttler,
    watchdog: &Watchdog,
    interrupted: bool,
    on_snapshot: impl FnMut(&Snapshot) -> bool,
    notices: &mut Vec<String>,
) -> Result<LoopResult, SessionError> {
    let reg = system.regulation.as_ref().expect("planned");
    let (mode, period_ns, memguard) = (plan.mode, plan.period_ns, plan.memguard);
    let groups_plan = &plan.groups;
    let groups = &mut started.groups;
    let rt_page = &started.rt_page;
    let budgets: Vec<u64> = groups_plan.iter().map(|g| g.budget).collect();
    let rules = match mode {
        RegulationKind::Mcti => {
            let caps = mcti_caps(groups, &mut started.running, notices);
            Rules::Mcti { guard: MemguardRules::new(period_ns, &budgets, Default::default()), rules: MctiRules::new(groups.len()), caps }
        }
        _ => Rules::Memguard(MemguardRules::new(period_ns, &budgets, memguard)),
    };
    let config = regulator::Config {
        period_ns,
        poll_ns: options.poll_ns,
        duration_ns: options.duration_ns,
        snapshot_ns: options.snapshot_ns,
        lead: options.lead,
        origin_ns: started.origin_ns,
        ..Default::default()
    };
    let mut monitor_log = None;
    let (result, watchdog_gone) = {
        let running = &mut started.running;
        let mut observer = Alive { launched: &mut running.launched, ended_ns: &mut running.ended_ns, attached: &started.attached_pids, watchdog, watchdog_gone: false, on_snapshot };
        let result = if interrupted {
            Ok(Report::empty(EndReason::Interrupted))
        } else if mode == RegulationKind::Monitor {
            let m = reg.monitor.as_ref().expect("planned");
            let table = options.overhead_table.clone().ok_or_else(|| err("regulation.overhead_table", "monitor mode needs the overhead table"))?;
            let rt = &system.tasks[m.rt_task];
            let path = rt_page.clone().ok_or_else(|| err("--attach", format!("the real-time task \"{}\" was not started with a counter page, so its jobs cannot be seen", rt.name)))?;
            let page = CounterPage::open(&path).map_err(|e| err("--counter", format!("{}: {e}", path.display())))?;
            let rules = MonitorRules::new(table, m.sample_ns, m.threshold, pet::run_pet_ns(system, m.rt_task, pet::RUN_LEVEL));
            let mconfig = MonitorConfig {
                duration_ns: options.duration_ns,
                line_bytes: system.platform.llc.line_bytes,
                deadline_ns: rt.deadline_ns,
                snapshot_ns: options.snapshot_ns,
            };
            monitor::run(&mconfig, rules, 0, &page, groups, throttler, &mut observer).map(|r| {
                monitor_log = Some((r.samples, r.jobs));
                Report {
                    periods: Vec::new(),
                    elapsed_ns: r.elapsed_ns,
                    cpu_ns: r.cpu_ns,
                    end: r.end,
                    warnings: r.warnings,
                    signals: r.signals,
                    throttle_errors: 0,
                    overload_periods: 0,
                }
            })
        } else if mode == RegulationKind::Mrs {
            let cpu = MrsCpuRules::new(&system.servers.iter().map(|sv| MrsServer::new(sv.core, sv.priority, sv.period_ns, sv.budget_ns)).collect::<Vec<_>>());
            let mem = MrsMemoryRules::new(&system.servers.iter().map(|sv| (sv.period_ns, sv.memory_budget)).collect::<Vec<_>>());
            server::run(options.duration_ns, options.snapshot_ns, cpu, mem, groups, throttler, &mut observer)
        } else {
            regulator::regulate(&config, rules, groups, throttler, &mut observer)
        };
        (result, observer.watchdog_gone)
    };
    if watchdog_gone {
        notices.push(format!("the watchdog (pid {}) ended during the run: regulation stopped there, since it never runs without one", watchdog.pid()));
    }
    Ok((result, monitor_log))
}

/// Everything resumed, the launched commands ended, their pages removed,
/// the throttler released, the watchdog told the run ended; the report.
fn finish(
    plan: Plan,
    started: Started,
    mut throttler: Box<dyn Throttler>,
    watchdog: Watchdog,
    result: Result<Report, CounterError>,
    monitor_log: Option<(Vec<monitor::SampleRecord>, Vec<monitor::JobRecord>)>,
    mut notices: Vec<String>,
) -> Result<SessionReport, SessionError> {
    let Started { groups, processes, mut running, attached_pids, .. } = started;
    throttler.resume_all();
    // Before the cleanup ends the rest: which tasks ended by themselves.
    let tasks_failed = running.early_exits(&mut notices) && attached_pids.is_empty();
    // Described after the run: a counter page names its writer once the program attached.
    let counter_name = groups.iter().flat_map(|g| g.counters.first()).map(|c| c.describe()).next().unwrap_or_default();
    drop(groups); // counters before the pages go
    running.cleanup();
    let throttle = throttler.name().to_string();
    drop(throttler);
    let _ = watchdog.finish();
    let report = result.map_err(|e: CounterError| err("--counter", e))?;
    Ok(SessionReport { report, groups: plan.groups, processes, counter: counter_name, throttle, period_ns: plan.period_ns, mode: plan.mode.name(), monitor: monitor_log, notices, tasks_failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system(text: &str) -> TaskSystem {
        criticore::parse_task_system(text, criticore::Format::Toml, "t.toml").unwrap()
    }

    const TASKS: &str = "[platform]\ncores = 2\n\
        [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"1ms\"\ncommand = \"criticore load\"\n\
        [[task]]\nname = \"b\"\ncore = 1\nlevel = \"B\"\nperiod = \"10ms\"\npet = \"1ms\"\ncommand = [\"sleep\", \"1\"]\n\
        [[task]]\nname = \"c\"\ncore = 1\nperiod = \"10ms\"\npet = \"1ms\"\n";

    #[test]
    fn per_core_groups_hold_the_tasks_with_commands() {
        let s = system(&format!("{TASKS}[regulation]\nkind = \"memguard\"\nbudgets = [10, 20]\n"));
        let g = plan_groups(&s, RegulationKind::Memguard).unwrap().groups;
        assert_eq!(g.iter().map(|g| (g.name.as_str(), g.budget, g.tasks.clone())).collect::<Vec<_>>(), vec![
            ("core0", 10, vec![0]),
            ("core1", 20, vec![1])
        ]);
        // MCTI: core 1 runs a Level-B task, criticality 2 (A = 3, B = 2, C = 1).
        let g = plan_groups(&s, RegulationKind::Mcti).unwrap().groups;
        assert_eq!((g[0].criticality, g[1].criticality), (0, 2));
    }

    #[test]
    fn file_groups_become_runtime_groups() {
        let s = system(&format!("{TASKS}[regulation]\nkind = \"memguard\"\n[[regulation.group]]\nname = \"g\"\ntasks = [\"a\", \"c\"]\nbudget = 5\n"));
        let g = plan_groups(&s, RegulationKind::Memguard).unwrap().groups;
        assert_eq!((g.len(), g[0].tasks.clone(), g[0].budget), (1, vec![0, 2], 5));
        assert!(plan_groups(&s, RegulationKind::Mcti).unwrap_err().reason.contains("per core"));
        assert!(plan_groups(&s, RegulationKind::Mrs).unwrap_err().reason.contains("[[server]]"));
    }

    #[test]
    fn no_watchdog_no_regulation() {
        let marker = std::env::temp_dir().join(format!("criticore-session-no-watchdog-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let text = format!(
            "[platform]\ncores = 1\n[[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"1ms\"\ncommand = [\"touch\", \"{}\"]\n\
             [regulation]\nkind = \"memguard\"\nbudgets = [10]\n",
            marker.display()
        );
        let options = Options {
            mode: None,
            duration_ns: Some(1_000_000),
            period_ns: None,
            poll_ns: None,
            counter: CounterChoice::Shm,
            throttle: ThrottleChoice::Signal,
            attach: Vec::new(),
            command: None,
            watchdog: vec!["/nonexistent/criticore-watchdog".into()],
            criticore: Vec::new(),
            output: None,
            fifo_priority: None,
            snapshot_ns: 200_000_000,
            overhead_table: None,
            lead: true,
            job_log_dir: None,
            regulator_cpu: None,
        };
        let e = run(&system(&text), &options, |_| true).unwrap_err();
        assert_eq!(e.field, "watchdog");
        assert!(e.reason.starts_with("cannot start watchdog `/nonexistent/criticore-watchdog`"), "{e}");
        assert!(!e.to_string().contains('\n'));
        assert!(!marker.exists(), "the task was launched without a watchdog");
    }

    #[test]
    fn monitor_groups_are_the_rt_task_then_each_best_effort_core() {
        let s = system(&format!("{TASKS}[regulation]\nkind = \"monitor\"\nrt_task = \"a\"\nbe_cores = [1]\nthreshold = 0.05\noverhead_table = \"t.toml\"\n"));
        let g = plan_groups(&s, RegulationKind::Monitor).unwrap().groups;
        // c has no command: not launched, not in a group.
        assert_eq!(g.iter().map(|g| (g.name.as_str(), g.tasks.clone())).collect::<Vec<_>>(), vec![("a", vec![0]), ("core1", vec![1])]);
    }
}
