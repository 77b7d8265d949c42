//! The regulation loop: real counts and real clocks drive the engine's rules
//! (`criticore::regulate`), and their decisions become stops and resumes of
//! process groups. One thread, one wait: `sigtimedwait` on the counters'
//! overflow signal (a counter armed with the budget left, like MemGuard's
//! `sample_period = budget`), SIGINT/SIGTERM (end cleanly) and SIGCHLD (a
//! regulated child ended), with a timeout at the next period boundary or poll.
//!
//! Per period and group the loop records what it counted, the budget, how
//! far the count overshot it, when the exhaustion was seen and the stop
//! issued, how long the group stayed stopped, and how late the period
//! started (notes/runtime-anchors.md §2: a user-space timer is late by tens
//! of µs; the run reports it rather than assume MemGuard's hrtimer).

use crate::counter::{overflow_signal, Counter, CounterError, Notification};
use crate::counter_page::now_ns;
use crate::lead::Lead;
use crate::throttle::Throttler;
use criticore::regulate::mcti::MctiRules;
use criticore::regulate::memguard::MemguardRules;
use std::collections::HashMap;

/// Which rules decide.
pub enum Rules {
    /// MemGuard: per-group budgets per synchronous period (rules 1–4, reclaim, spare sharing).
    Memguard(MemguardRules),
    /// MCTI: groups running critical tasks are never stalled (rule 5); the
    /// interconnect switch has no programmable arbiter to act on here.
    Mcti { guard: MemguardRules, rules: MctiRules },
}

impl Rules {
    fn guard(&self) -> &MemguardRules {
        match self {
            Rules::Memguard(g) => g,
            Rules::Mcti { guard, .. } => guard,
        }
    }

    fn guard_mut(&mut self) -> &mut MemguardRules {
        match self {
            Rules::Memguard(g) => g,
            Rules::Mcti { guard, .. } => guard,
        }
    }
}

/// A group of processes under one budget.
pub struct Group {
    pub name: String,
    pub pids: Vec<i32>,
    pub counters: Vec<Box<dyn Counter>>,
    /// MCTI criticality of the group's tasks (0 = not critical).
    pub criticality: u32,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub period_ns: u64,
    /// Read every counter this often within a period (counters that cannot
    /// notify need it; None = only at overflow signals and period starts).
    pub poll_ns: Option<u64>,
    pub duration_ns: Option<u64>,
    /// How often the observer sees a snapshot.
    pub snapshot_ns: u64,
    /// Warn when a group's counters stay at zero while its processes use this much CPU.
    pub zero_check_cpu_ns: u64,
    /// Stop early by the learnt stop lag (`lead.rs`).
    pub lead: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { period_ns: 1_000_000, poll_ns: None, duration_ns: None, snapshot_ns: 200_000_000, zero_check_cpu_ns: 2_000_000_000, lead: true }
    }
}

/// One group in one regulation period. Times are relative to the run's start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeriodRecord {
    pub period: u64,
    pub group: u32,
    /// When the period started in fact, and how late that was.
    pub start_ns: u64,
    pub lateness_ns: u64,
    /// Budget of this period (after reclaim) and events counted in it.
    pub budget: u64,
    pub used: u64,
    /// Events beyond the budget.
    pub overshoot: u64,
    /// When the loop saw the budget exhausted (0 = not exhausted).
    pub exhausted_ns: u64,
    /// From the moment the loop saw the exhaustion (woken by the overflow
    /// signal, or at a poll) to the stop being issued. The delay from the
    /// counter's crossing to the wake-up shows as overshoot instead.
    pub reaction_ns: u64,
    /// Time the group spent stopped in this period.
    pub throttled_ns: u64,
    /// Counts by which the counter was armed early at the period start (`lead.rs`).
    pub lead: u64,
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

/// The signals a regulation loop waits for: `sig` (overflows, job ends),
/// SIGIO, SIGINT, SIGTERM, SIGCHLD; `sig` and SIGIO get a no-op handler.
pub(crate) fn signal_set(sig: i32) -> libc::sigset_t {
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        for s in [sig, libc::SIGIO, libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
            libc::sigaddset(&mut set, s);
        }
    }
    // A thread that does not block the overflow signal must not die of it
    // (a real-time signal's default action is to terminate): give it a no-op handler.
    extern "C" fn ignore(_: i32) {}
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = ignore as extern "C" fn(i32) as usize;
        libc::sigaction(sig, &action, std::ptr::null_mut());
        // fcntl(2): when the real-time queue is full the kernel sends SIGIO instead.
        libc::sigaction(libc::SIGIO, &action, std::ptr::null_mut());
        // SIGCHLD only for children that end: stopping and continuing them
        // must not wake the loop again (it halves the wake-ups when throttling).
        let mut chld: libc::sigaction = std::mem::zeroed();
        chld.sa_sigaction = ignore as extern "C" fn(i32) as usize;
        chld.sa_flags = libc::SA_NOCLDSTOP;
        libc::sigaction(libc::SIGCHLD, &chld, std::ptr::null_mut());
    }
    set
}

/// Wait for a signal of `set` until the monotonic time `wake`; the signal or -1.
pub(crate) fn wait_info(set: &libc::sigset_t, wake: u64, info: &mut libc::siginfo_t) -> i32 {
    let wait = wake.saturating_sub(now_ns());
    let ts = libc::timespec { tv_sec: (wait / 1_000_000_000) as i64, tv_nsec: (wait % 1_000_000_000) as i64 };
    unsafe { libc::sigtimedwait(set, info, &ts) }
}

pub(crate) fn wait(set: &libc::sigset_t, wake: u64) -> i32 {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    wait_info(set, wake, &mut info)
}

pub(crate) struct Blocked {
    old: libc::sigset_t,
}

impl Blocked {
    pub(crate) fn new(set: &libc::sigset_t) -> Self {
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, set, &mut old) };
        Blocked { old }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// User + system CPU time of a process, from /proc (None if gone).
pub fn process_cpu_ns(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may contain spaces: utime is field 14.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(ticks * 1_000_000_000 / hz)
}

struct GroupState {
    last: Vec<u64>,
    stopped_at: Option<u64>,
    record: PeriodRecord,
    throttled_total_ns: u64,
    used_last_period: u64,
    window_events: u64,
    zero_since_cpu: Option<u64>,
    zero_warned: bool,
    overloaded: bool,
    lead: Lead,
    /// record.used at which the counter was armed to signal.
    trigger_used: u64,
    /// The counter is armed to signal (false once the group is exhausted).
    armed: bool,
    /// Signals this period that came before the armed count (see `EARLY_LIMIT`).
    early: u32,
    /// trigger_used of a stop this period: the lag is counted from there.
    stop_used: Option<u64>,
}

/// Run the loop until the duration, the end of every process, a signal, or
/// the observer says stop. The caller resumes everything afterwards as well
/// (every exit path must); the loop resumes what it stopped before returning.
pub fn regulate(
    config: &Config,
    mut rules: Rules,
    groups: &mut [Group],
    throttler: &mut dyn Throttler,
    observer: &mut dyn Observer,
) -> Result<Report, CounterError> {
    let n = groups.len();
    let sig = overflow_signal();
    let set = signal_set(sig);
    let _blocked = Blocked::new(&set);

    let origins = Origins::new(groups);
    let mut poll_ns = config.poll_ns.or(if origins.all_notify { None } else { Some((config.period_ns / 10).max(10_000)) });

    let t0 = now_ns();
    let cpu0 = thread_cpu_ns();
    let mut state: Vec<GroupState> = Vec::with_capacity(n);
    for g in groups.iter_mut() {
        let mut last = Vec::with_capacity(g.counters.len());
        for c in g.counters.iter_mut() {
            last.push(c.read()?.total());
        }
        let cpu: u64 = g.pids.iter().filter_map(|&p| process_cpu_ns(p)).sum();
        state.push(GroupState {
            last,
            stopped_at: None,
            record: PeriodRecord::default(),
            throttled_total_ns: 0,
            used_last_period: 0,
            window_events: 0,
            zero_since_cpu: Some(cpu),
            zero_warned: false,
            overloaded: false,
            lead: Lead::new(config.lead),
            stop_used: None,
            trigger_used: 0,
            armed: false,
            early: 0,
        });
    }
    for (k, g) in groups.iter_mut().enumerate() {
        let left = rules.guard().left(k);
        arm(g, left, &mut state[k])?;
        state[k].record = PeriodRecord { period: 0, group: k as u32, budget: rules.guard().assigned(k) as u64, ..Default::default() };
    }

    let mut report = Report {
        periods: Vec::new(),
        elapsed_ns: 0,
        cpu_ns: 0,
        end: EndReason::Duration,
        warnings: Vec::new(),
        signals: 0,
        throttle_errors: 0,
        overload_periods: 0,
    };
    let active = vec![true; n];
    let mut next_poll = poll_ns.map(|p| t0 + p).unwrap_or(u64::MAX);
    let mut next_snapshot = t0 + config.snapshot_ns;
    let mut next_zero_check = t0 + 1_000_000_000;
    let mut periods_since_alive_check = 0u32;
    let end_at = config.duration_ns.map(|d| t0 + d).unwrap_or(u64::MAX);

    let end = loop {
        let boundary = t0 + rules.guard().next_period_ns();
        let wake = boundary.min(next_poll).min(end_at);
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let got = wait_info(&set, wake, &mut info);
        let now = now_ns();
        if got == libc::SIGINT || got == libc::SIGTERM {
            break EndReason::Interrupted;
        }
        if got == libc::SIGCHLD && !observer.any_alive() {
            break EndReason::AllExited;
        }
        if got == sig || got == libc::SIGIO {
            report.signals += 1;
            match origins.group_of(&info) {
                Some(k) => {
                    let (armed, trigger) = (state[k].armed, state[k].trigger_used);
                    charge_and_act(k, now, t0, &mut rules, groups, &mut state, throttler, &active)?;
                    if armed && state[k].record.used < trigger {
                        state[k].early += 1;
                        if state[k].early == EARLY_LIMIT {
                            let p = poll_ns.get_or_insert((config.period_ns / 10).max(10_000));
                            next_poll = next_poll.min(now + *p);
                            report.warnings.push(mute(&mut groups[k], &mut state[k], *p)?);
                        }
                    }
                }
                // Unknown origin (e.g. a counter page of a process that was re-armed): check all.
                None => {
                    for k in 0..n {
                        charge_and_act(k, now, t0, &mut rules, groups, &mut state, throttler, &active)?;
                    }
                }
            }
        }
        if now >= next_poll {
            for k in 0..n {
                charge_and_act(k, now, t0, &mut rules, groups, &mut state, throttler, &active)?;
            }
            next_poll = poll_ns.map(|p| now + p).unwrap_or(u64::MAX);
        }
        if now >= boundary {
            // Counts up to the boundary belong to the period that ends.
            for k in 0..n {
                read_into(k, groups, &mut state, &mut rules)?;
            }
            let ideal = boundary;
            if rules.guard_mut().replenish_if_due(now - t0) {
                if let Rules::Mcti { rules: m, .. } = &mut rules {
                    m.period_started(); // rule 2
                }
            }
            let guard = rules.guard();
            let period = guard.period_index;
            for k in 0..n {
                let s = &mut state[k];
                if let (Some(_), Some(at)) = (s.stopped_at, s.stop_used.take()) {
                    s.lead.sample(s.record.used - at);
                }
                s.early = 0;
                if let Some(since) = s.stopped_at.take() {
                    throttler.resume(k).ok();
                    s.record.throttled_ns += now.saturating_sub(since);
                    s.throttled_total_ns += now.saturating_sub(since);
                }
                if s.overloaded {
                    report.overload_periods += 1;
                    s.overloaded = false;
                }
                let mut done = std::mem::take(&mut s.record);
                done.overshoot = done.used.saturating_sub(done.budget);
                s.used_last_period = done.used;
                report.periods.push(done);
                s.record = PeriodRecord {
                    period,
                    group: k as u32,
                    start_ns: now - t0,
                    lateness_ns: now - ideal,
                    budget: guard.assigned(k) as u64,
                    lead: s.lead.lines() as u64,
                    ..Default::default()
                };
            }
            for (k, g) in groups.iter_mut().enumerate() {
                let left = rules.guard().left(k);
                arm(g, left, &mut state[k])?;
            }
            periods_since_alive_check += 1;
            if periods_since_alive_check >= 10 {
                periods_since_alive_check = 0;
                if !observer.any_alive() {
                    break EndReason::AllExited;
                }
            }
        }
        if now >= next_zero_check {
            next_zero_check = now + 1_000_000_000;
            zero_check(config, groups, &mut state, &mut report.warnings);
        }
        if now >= next_snapshot {
            let window = (now - (next_snapshot - config.snapshot_ns)).max(1) as f64 / 1e9;
            next_snapshot = now + config.snapshot_ns;
            let snap = Snapshot {
                elapsed_ns: now - t0,
                periods: rules.guard().period_index,
                groups: groups
                    .iter()
                    .zip(state.iter_mut())
                    .enumerate()
                    .map(|(k, (g, s))| GroupSnapshot {
                        name: g.name.clone(),
                        budget: rules.guard().budget(k) as u64,
                        used_last_period: s.used_last_period,
                        throttled_ns: s.throttled_total_ns,
                        events_per_s: std::mem::take(&mut s.window_events) as f64 / window,
                        stopped: s.stopped_at.is_some(),
                    })
                    .collect(),
            };
            if !observer.snapshot(&snap) {
                break EndReason::Stopped;
            }
        }
        if now >= end_at {
            break EndReason::Duration;
        }
    };

    let now = now_ns();
    for s in state.iter_mut() {
        if let Some(since) = s.stopped_at.take() {
            s.record.throttled_ns += now.saturating_sub(since);
        }
        s.record.overshoot = s.record.used.saturating_sub(s.record.budget);
        report.periods.push(std::mem::take(&mut s.record));
    }
    release(groups, throttler);
    report.throttle_errors = rules.guard().throttle_errors;
    report.end = end;
    report.elapsed_ns = now - t0;
    report.cpu_ns = thread_cpu_ns() - cpu0;
    Ok(report)
}

/// Early signals in one period after which a group's counter is muted and
/// polled: a stale signal or two per period is normal (queued before a
/// re-arm); more means a copy of the event fires on a period we cannot set
/// (counter/perf.rs, "Per-task counters and threads"), at worst at every count.
const EARLY_LIMIT: u32 = 8;

/// Mute a group's counters for the rest of the run; the warning to report.
fn mute(g: &mut Group, s: &mut GroupState, poll_ns: u64) -> Result<String, CounterError> {
    for c in g.counters.iter_mut() {
        c.mute()?;
    }
    s.armed = false;
    Ok(format!(
        "group {}: its counter signalled {EARLY_LIMIT} times in one period before the armed count (a thread's inherited copy keeps the period it was created with); polled every {} µs from now on",
        g.name,
        poll_ns / 1000
    ))
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
        if let Some((cookie, _job_end)) = crate::counter::shm::siginfo_cookie(info) {
            return self.by_cookie.get(&cookie).copied();
        }
        self.by_fd.get(&crate::counter::perf::siginfo_fd(info)).copied()
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

/// Arm for `left` more counts, less the stop lag.
fn arm(g: &mut Group, left: f64, s: &mut GroupState) -> Result<(), CounterError> {
    let after = (left - s.lead.lines()).max(1.0) as u64;
    s.trigger_used = s.record.used + after;
    s.armed = true;
    for c in g.counters.iter_mut() {
        c.arm(Some(after))?;
    }
    Ok(())
}

/// An exhausted group must not keep signalling: a sampling counter fires
/// every `after` counts, so a small `after` left armed while the stop lands
/// (or while an MCTI critical group runs on) turns each count into a signal
/// and each signal into counter reads across CPUs (IPIs on a VM).
fn disarm(g: &mut Group, s: &mut GroupState) -> Result<(), CounterError> {
    if s.armed {
        s.armed = false;
        for c in g.counters.iter_mut() {
            c.arm(None)?;
        }
    }
    Ok(())
}

/// Read k's counters and charge what they counted since the last read.
fn read_into(k: usize, groups: &mut [Group], state: &mut [GroupState], rules: &mut Rules) -> Result<bool, CounterError> {
    let mut delta = 0u64;
    for (i, c) in groups[k].counters.iter_mut().enumerate() {
        let total = match c.read() {
            Ok(t) => t.total(),
            // A process that ended keeps its last count.
            Err(CounterError::Os { .. }) => state[k].last[i],
            Err(e) => return Err(e),
        };
        delta += total.saturating_sub(state[k].last[i]);
        state[k].last[i] = total;
    }
    let s = &mut state[k];
    s.record.used += delta;
    s.window_events += delta;
    if delta > 0 {
        s.zero_since_cpu = None;
    }
    Ok(rules.guard_mut().charge(k, delta as f64))
}

#[allow(clippy::too_many_arguments)]
fn charge_and_act(
    k: usize,
    now: u64,
    t0: u64,
    rules: &mut Rules,
    groups: &mut [Group],
    state: &mut [GroupState],
    throttler: &mut dyn Throttler,
    active: &[bool],
) -> Result<(), CounterError> {
    let mut newly = read_into(k, groups, state, rules)?;
    if !newly && !rules.guard().exhausted(k) && rules.guard().left(k) <= state[k].lead.lines() {
        // The budget will be gone by the time the stop lands: exhausted now (lead.rs).
        newly = rules.guard_mut().exhaust(k);
    }
    if newly && state[k].record.exhausted_ns == 0 {
        state[k].record.exhausted_ns = now - t0;
    }
    let stall = match rules {
        Rules::Memguard(g) => {
            if g.share_spare(active) {
                // Spare sharing: every active group is exhausted; all run until the next period.
                for (j, s) in state.iter_mut().enumerate() {
                    s.stop_used = None; // released: what follows is no stop lag
                    if let Some(since) = s.stopped_at.take() {
                        throttler.resume(j).ok();
                        s.record.throttled_ns += now.saturating_sub(since);
                        s.throttled_total_ns += now.saturating_sub(since);
                    }
                }
            }
            g.must_stall(k, active)
        }
        Rules::Mcti { guard, rules: m } => {
            let crit: Vec<u32> = groups.iter().map(|g| g.criticality).collect();
            let deadlines = vec![u64::MAX; groups.len()];
            m.decide(guard, &crit, &deadlines, active);
            if m.overload(k) {
                state[k].overloaded = true;
            }
            m.must_stall(k)
        }
    };
    if stall && state[k].stopped_at.is_none() {
        let _ = throttler.stop(k);
        let stopped = now_ns();
        state[k].stopped_at = Some(stopped);
        // The lag runs from the count that should have signalled (delivery,
        // wake-up and stop all take time while the program goes on).
        state[k].stop_used = Some(state[k].trigger_used.min(state[k].record.used));
        state[k].record.reaction_ns = stopped.saturating_sub(now);
    } else if !rules.guard().exhausted(k) {
        let left = rules.guard().left(k);
        arm(&mut groups[k], left, &mut state[k])?;
    }
    if rules.guard().exhausted(k) {
        disarm(&mut groups[k], &mut state[k])?;
    }
    Ok(())
}

fn zero_check(config: &Config, groups: &[Group], state: &mut [GroupState], warnings: &mut Vec<String>) {
    for (g, s) in groups.iter().zip(state.iter_mut()) {
        if s.zero_warned {
            continue;
        }
        let cpu: u64 = g.pids.iter().filter_map(|&p| process_cpu_ns(p)).sum();
        match s.zero_since_cpu {
            // Counted something since the last check: start over.
            None => s.zero_since_cpu = Some(cpu),
            Some(start) if cpu.saturating_sub(start) >= config.zero_check_cpu_ns => {
                let described: Vec<String> = g.counters.iter().map(|c| c.describe()).collect();
                warnings.push(format!(
                    "group {}: counter ({}) stayed at 0 while its processes ran {} ms of CPU: wrong event, or a program that is not instrumented?",
                    g.name,
                    described.join("; "),
                    cpu.saturating_sub(start) / 1_000_000
                ));
                s.zero_warned = true;
            }
            Some(_) => {}
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

    #[test]
    fn process_cpu_time_of_a_busy_self_grows() {
        let pid = std::process::id() as i32;
        let before = process_cpu_ns(pid).unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 60 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(process_cpu_ns(pid).unwrap() > before);
        assert_eq!(process_cpu_ns(i32::MAX), None);
    }
}
