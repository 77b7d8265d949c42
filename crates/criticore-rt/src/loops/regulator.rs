//! The MemGuard and MCTI loop: per group, a budget of counted events per
//! synchronous period (`criticore::regulate::memguard`, `mcti`). A group's
//! counter is armed with the budget left, like MemGuard's `sample_period =
//! budget`; its overflow signal, a poll, or the period boundary wakes the
//! loop, which charges the counts, stops a group past its budget and resumes
//! every group at the next period.
//!
//! Per period and group the loop records what it counted, the budget, how
//! far the count overshot it, when the exhaustion was seen and the stop
//! issued, how long the group stayed stopped, and how late the period
//! started (a user-space timer is late by tens of µs; the run reports it
//! rather than assume MemGuard's hrtimer).
//!
//! [`regulate`] runs in named steps: `plan` (signals, poll period), `arm`
//! (time 0, accounts, counters armed), the loop (`run`: an overflow, a poll,
//! a period's end, the zero check, a snapshot) and `finish` (last records,
//! everything resumed).

use super::lead::Lead;
use super::period::{Account, PeriodRecord};
use super::{release, EndReason, Frame, Group, GroupSnapshot, Observer, Origins, Report, Snapshot};
use crate::os::clock::{now_ns, process_cpu_ns};
use crate::os::counter::CounterError;
use crate::os::throttle::Throttler;
use criticore::regulate::mcti::MctiRules;
use criticore::regulate::memguard::MemguardRules;

/// Which rules decide.
pub enum Rules {
    /// MemGuard: per-group budgets per synchronous period (rules 1–4, reclaim, spare sharing).
    Memguard(MemguardRules),
    /// MCTI: a group past its budget stops while it runs no critical job
    /// (rule 4) and runs on while it does (rule 5), its jobs seen through
    /// `jobs.rs`. The interconnect switch has no programmable arbiter; where
    /// resctrl controls memory bandwidth, `caps` maps it (`os/resctrl.rs`).
    Mcti { guard: MemguardRules, rules: MctiRules, caps: Option<crate::os::resctrl::Classes> },
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
    /// The programs' common start, a moment before the loop starts: the
    /// regulation's time 0 too, so periods and releases line up as in the
    /// simulator (None: the loop's start).
    pub origin_ns: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config { period_ns: 1_000_000, poll_ns: None, duration_ns: None, snapshot_ns: 200_000_000, zero_check_cpu_ns: 2_000_000_000, lead: true, origin_ns: None }
    }
}

/// MCTI rule 5 / rule 2 on resctrl: the caps of the interconnect's mode
/// now (fixed priority by Property 1, or fair). A write that fails is one
/// warning, and the caps are given up (the classes removed).
fn apply_caps(caps: &mut Option<crate::os::resctrl::Classes>, m: &MctiRules, warnings: &mut Vec<String>) {
    if let Some(c) = caps {
        if let Err(e) = c.apply(m.bus_priority()) {
            warnings.push(format!("resctrl: could not write a memory-bandwidth cap ({e}); fixed priority is reported, not mapped, from here on"));
            *caps = None;
        }
    }
}

/// Early signals in one period after which a group's counter is muted and
/// polled: a stale signal or two per period is normal (queued before a
/// re-arm); more means a copy of the event fires on a period we cannot set
/// (os/counter/perf.rs, "Per-task counters and threads"), at worst at every count.
const EARLY_LIMIT: u32 = 8;

/// What the loop keeps per group beyond its period accounts.
struct GroupState {
    acc: Account,
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
}

/// Run the loop until the duration, the end of every process, a signal, or
/// the observer says stop. The caller resumes everything afterwards as well
/// (every exit path must); the loop resumes what it stopped before returning.
pub fn regulate(
    config: &Config,
    rules: Rules,
    groups: &mut [Group],
    throttler: &mut dyn Throttler,
    observer: &mut dyn Observer,
) -> Result<Report, CounterError> {
    let mut r = Regulation::plan(config, rules, groups, throttler);
    r.arm()?;
    let end = r.run(observer)?;
    Ok(r.finish(end))
}

/// One run of the loop, between its steps.
struct Regulation<'a> {
    config: &'a Config,
    rules: Rules,
    groups: &'a mut [Group],
    throttler: &'a mut dyn Throttler,
    frame: Frame,
    origins: Origins,
    state: Vec<GroupState>,
    /// Every group takes part in spare sharing (MemGuard) and MCTI's decisions.
    active: Vec<bool>,
    poll_ns: Option<u64>,
    next_poll: u64,
    /// MCTI: when to look again at what the exhausted groups run.
    next_review: u64,
    report: Report,
}

impl<'a> Regulation<'a> {
    /// Block the loop's signals; poll only if some counter cannot notify.
    fn plan(config: &'a Config, rules: Rules, groups: &'a mut [Group], throttler: &'a mut dyn Throttler) -> Self {
        let frame = Frame::block();
        let origins = Origins::new(groups);
        let poll_ns = config.poll_ns.or(if origins.all_notify { None } else { Some(fallback_poll_ns(config)) });
        let n = groups.len();
        Regulation {
            config,
            rules,
            groups,
            throttler,
            frame,
            origins,
            state: Vec::with_capacity(n),
            active: vec![true; n],
            poll_ns,
            next_poll: u64::MAX,
            next_review: u64::MAX,
            report: Report::empty(EndReason::Duration),
        }
    }

    /// Time 0: open every group's accounts (period 0) and arm its counters with its budget.
    fn arm(&mut self) -> Result<(), CounterError> {
        self.frame.start(self.config.duration_ns);
        if let Some(origin) = self.config.origin_ns {
            // The programs' releases and the regulation periods count from one time 0.
            self.frame.rebase(origin);
        }
        let t0 = self.frame.t0;
        for (k, g) in self.groups.iter_mut().enumerate() {
            let record = PeriodRecord { period: 0, group: k as u32, budget: self.rules.guard().assigned(k) as u64, ..Default::default() };
            let acc = Account::open(g, record)?;
            let cpu: u64 = g.pids.iter().filter_map(|&p| process_cpu_ns(p)).sum();
            let mut s = GroupState {
                acc,
                used_last_period: 0,
                window_events: 0,
                zero_since_cpu: Some(cpu),
                zero_warned: false,
                overloaded: false,
                lead: Lead::new(self.config.lead),
                trigger_used: 0,
                armed: false,
                early: 0,
            };
            arm(g, self.rules.guard().left(k), &mut s)?;
            self.state.push(s);
        }
        self.next_poll = self.poll_ns.map(|p| t0 + p).unwrap_or(u64::MAX);
        Ok(())
    }

    /// Wait and act until the run ends; why it ended.
    fn run(&mut self, observer: &mut dyn Observer) -> Result<EndReason, CounterError> {
        let t0 = self.frame.t0;
        let end_at = self.frame.end_at;
        let mut next_snapshot = t0 + self.config.snapshot_ns;
        let mut next_zero_check = t0 + 1_000_000_000;
        let mut periods_since_alive_check = 0u32;
        loop {
            let boundary = t0 + self.rules.guard().next_period_ns();
            let wake = boundary.min(self.next_poll).min(self.next_review).min(end_at);
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let (got, now, end) = self.frame.wait(wake, &mut info, observer);
            if let Some(end) = end {
                return Ok(end);
            }
            if got == self.frame.sig || got == libc::SIGIO {
                self.overflow(&info, now)?;
            }
            if now >= self.next_poll {
                self.charge_all(now)?;
                self.next_poll = self.poll_ns.map(|p| now + p).unwrap_or(u64::MAX);
            }
            if now >= boundary {
                self.end_period(now, boundary)?;
                periods_since_alive_check += 1;
                if periods_since_alive_check >= 10 {
                    periods_since_alive_check = 0;
                    if !observer.any_alive() {
                        return Ok(EndReason::AllExited);
                    }
                }
            }
            self.next_review = self.mcti_review(now);
            if now >= next_zero_check {
                next_zero_check = now + 1_000_000_000;
                self.zero_check();
            }
            if now >= next_snapshot {
                let window_ns = now - (next_snapshot - self.config.snapshot_ns);
                next_snapshot = now + self.config.snapshot_ns;
                if !observer.snapshot(&self.snapshot(now, window_ns)) {
                    return Ok(EndReason::Stopped);
                }
            }
            if now >= end_at {
                return Ok(EndReason::Duration);
            }
        }
    }

    /// An overflow signal (or SIGIO): charge the group it names, or all if it
    /// names none; mute a group whose counter keeps signalling early.
    fn overflow(&mut self, info: &libc::siginfo_t, now: u64) -> Result<(), CounterError> {
        self.report.signals += 1;
        let Some(k) = self.origins.group_of(info) else {
            // Unknown origin (e.g. a counter page of a process that was re-armed): check all.
            return self.charge_all(now);
        };
        let (armed, trigger) = (self.state[k].armed, self.state[k].trigger_used);
        self.charge_and_act(k, now)?;
        if armed && self.state[k].acc.record.used < trigger {
            self.state[k].early += 1;
            if self.state[k].early == EARLY_LIMIT {
                let p = *self.poll_ns.get_or_insert(fallback_poll_ns(self.config));
                self.next_poll = self.next_poll.min(now + p);
                let warning = mute(&mut self.groups[k], &mut self.state[k], p)?;
                self.report.warnings.push(warning);
            }
        }
        Ok(())
    }

    fn charge_all(&mut self, now: u64) -> Result<(), CounterError> {
        for k in 0..self.groups.len() {
            self.charge_and_act(k, now)?;
        }
        Ok(())
    }

    /// Read k's counters and charge what they counted since the last read;
    /// whether the group became exhausted.
    fn charge(&mut self, k: usize) -> Result<bool, CounterError> {
        let s = &mut self.state[k];
        let delta = s.acc.read(&mut self.groups[k])?;
        s.window_events += delta;
        if delta > 0 {
            s.zero_since_cpu = None;
        }
        Ok(self.rules.guard_mut().charge(k, delta as f64))
    }

    /// Charge group k, then carry out what the rules decide: stop it, let
    /// every group run (spare sharing), or re-arm it with what is left.
    fn charge_and_act(&mut self, k: usize, now: u64) -> Result<(), CounterError> {
        let t0 = self.frame.t0;
        let mut newly = self.charge(k)?;
        if !newly && !self.rules.guard().exhausted(k) && self.rules.guard().left(k) <= self.state[k].lead.lines() {
            // The budget will be gone by the time the stop lands: exhausted now (lead.rs).
            newly = self.rules.guard_mut().exhaust(k);
        }
        if newly && self.state[k].acc.record.exhausted_ns == 0 {
            self.state[k].acc.record.exhausted_ns = now - t0;
        }
        let stall = match &mut self.rules {
            Rules::Memguard(g) => {
                if g.share_spare(&self.active) {
                    // Spare sharing: every active group is exhausted; all run until the next period.
                    for (j, s) in self.state.iter_mut().enumerate() {
                        s.lead.released();
                        s.acc.resume(j, self.throttler, now);
                    }
                }
                g.must_stall(k, &self.active)
            }
            Rules::Mcti { .. } => {
                self.mcti_decide(now);
                let Rules::Mcti { rules: m, .. } = &self.rules else { unreachable!() };
                if m.overload(k) {
                    self.state[k].overloaded = true;
                    self.state[k].lead.released(); // rule 5: it runs on past its budget
                }
                m.must_stall(k)
            }
        };
        let s = &mut self.state[k];
        if stall && s.acc.stopped_at.is_none() {
            let _ = self.throttler.stop(k);
            let stopped = now_ns();
            s.acc.stopped(stopped);
            // The lag runs from the count that should have signalled (delivery,
            // wake-up and stop all take time while the program goes on).
            s.lead.stopped(s.trigger_used.min(s.acc.record.used));
            s.acc.record.reaction_ns = stopped.saturating_sub(now);
            // From the crossing this period, if the counter saw one.
            let period_start = self.frame.t0 + s.acc.record.start_ns;
            let crossed = self.groups[k].counters.iter().filter_map(|c| c.crossed_ns()).filter(|&t| t >= period_start && t <= stopped).min();
            s.acc.record.reaction_e2e_ns = crossed.map_or(0, |t| stopped - t);
        } else if !self.rules.guard().exhausted(k) {
            arm(&mut self.groups[k], self.rules.guard().left(k), s)?;
        }
        if self.rules.guard().exhausted(k) {
            disarm(&mut self.groups[k], s)?;
        }
        Ok(())
    }

    /// MCTI §4 rules 4–5 for what every group runs at `now`: L_k(t), D_k(t)
    /// from its processes' jobs (a group without any known: its tasks'
    /// highest criticality, no deadline).
    fn mcti_decide(&mut self, now: u64) {
        let t = now.saturating_sub(self.frame.t0);
        let Rules::Mcti { guard, rules: m, caps } = &mut self.rules else { return };
        let n = self.groups.len();
        let (mut crit, mut deadline, mut active) = (vec![0; n], vec![u64::MAX; n], vec![true; n]);
        for (k, g) in self.groups.iter_mut().enumerate() {
            if g.jobs.is_empty() {
                crit[k] = g.criticality;
            } else {
                // A group between jobs runs nothing: nothing to stall (as an idle simulated core).
                let now_running: Vec<_> = g.jobs.iter_mut().filter_map(|m| m.job(t)).collect();
                active[k] = !now_running.is_empty();
                (crit[k], deadline[k]) = criticore::regulate::entities::running(now_running);
            }
        }
        m.decide(guard, &crit, &deadline, &active);
        apply_caps(caps, m, &mut self.report.warnings);
    }

    /// MCTI between charges: a job released or ended changes what an
    /// exhausted group runs, so it is stopped (rule 4) or resumed (rule 5)
    /// without waiting for its counter. When to look next.
    fn mcti_review(&mut self, now: u64) -> u64 {
        if !matches!(self.rules, Rules::Mcti { .. }) || !(0..self.groups.len()).any(|k| self.rules.guard().exhausted(k)) {
            return u64::MAX;
        }
        self.mcti_decide(now);
        let Rules::Mcti { rules: m, .. } = &self.rules else { unreachable!() };
        let t = now.saturating_sub(self.frame.t0);
        let mut next = now + fallback_poll_ns(self.config);
        for k in 0..self.groups.len() {
            let (stall, overload) = (m.must_stall(k), m.overload(k));
            let s = &mut self.state[k];
            if overload {
                s.overloaded = true;
                s.lead.released(); // rule 5: it runs on past its budget
            }
            if stall && s.acc.stopped_at.is_none() {
                let _ = self.throttler.stop(k);
                s.acc.stopped(now_ns());
            } else if !stall && s.acc.stopped_at.is_some() {
                s.acc.resume(k, self.throttler, now);
                s.lead.released(); // what it counts from here is no stop's lag
            }
            if self.rules.guard().exhausted(k) {
                // A release is seen when it happens; a job end at the next look.
                for mb in &self.groups[k].jobs {
                    next = next.min(self.frame.t0 + mb.next_release(t));
                }
            }
        }
        next
    }

    /// The period boundary `ideal`, seen at `now`: counts up to it belong to
    /// the period that ends; replenish, resume, record, re-arm.
    fn end_period(&mut self, now: u64, ideal: u64) -> Result<(), CounterError> {
        let t0 = self.frame.t0;
        for k in 0..self.groups.len() {
            self.charge(k)?;
        }
        if self.rules.guard_mut().replenish_if_due(now - t0) {
            if let Rules::Mcti { rules: m, caps, .. } = &mut self.rules {
                m.period_started(); // rule 2
                apply_caps(caps, m, &mut self.report.warnings);
            }
        }
        let guard = self.rules.guard();
        let period = guard.period_index;
        for (k, s) in self.state.iter_mut().enumerate() {
            s.lead.period_end(s.acc.record.used, s.acc.stopped_at.is_some());
            s.early = 0;
            s.acc.resume(k, self.throttler, now);
            if s.overloaded {
                self.report.overload_periods += 1;
                s.acc.record.overload = true;
                s.overloaded = false;
            }
            let next = PeriodRecord {
                period,
                group: k as u32,
                start_ns: now - t0,
                lateness_ns: now - ideal,
                budget: guard.assigned(k) as u64,
                lead: s.lead.lines() as u64,
                ..Default::default()
            };
            let done = s.acc.close(now, next, true);
            s.used_last_period = done.used;
            self.report.periods.push(done);
        }
        for (k, g) in self.groups.iter_mut().enumerate() {
            arm(g, self.rules.guard().left(k), &mut self.state[k])?;
        }
        Ok(())
    }

    /// Warn once per group whose counters stayed at zero while its processes
    /// used `zero_check_cpu_ns` of CPU (a wrong event, or a program not instrumented).
    fn zero_check(&mut self) {
        for (g, s) in self.groups.iter().zip(self.state.iter_mut()) {
            if s.zero_warned {
                continue;
            }
            let cpu: u64 = g.pids.iter().filter_map(|&p| process_cpu_ns(p)).sum();
            match s.zero_since_cpu {
                // Counted something since the last check: start over.
                None => s.zero_since_cpu = Some(cpu),
                Some(start) if cpu.saturating_sub(start) >= self.config.zero_check_cpu_ns => {
                    let described: Vec<String> = g.counters.iter().map(|c| c.describe()).collect();
                    self.report.warnings.push(format!(
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

    /// What the live view shows; events per second over the last `window_ns`.
    fn snapshot(&mut self, now: u64, window_ns: u64) -> Snapshot {
        let window = window_ns.max(1) as f64 / 1e9;
        let guard = self.rules.guard();
        Snapshot {
            elapsed_ns: now - self.frame.t0,
            periods: guard.period_index,
            groups: self
                .groups
                .iter()
                .zip(self.state.iter_mut())
                .enumerate()
                .map(|(k, (g, s))| GroupSnapshot {
                    name: g.name.clone(),
                    budget: guard.budget(k) as u64,
                    used_last_period: s.used_last_period,
                    throttled_ns: s.acc.throttled_total_ns,
                    events_per_s: std::mem::take(&mut s.window_events) as f64 / window,
                    stopped: s.acc.stopped_at.is_some(),
                })
                .collect(),
        }
    }

    /// The last, unfinished period of every group; everything resumed and disarmed.
    fn finish(mut self, end: EndReason) -> Report {
        let now = now_ns();
        for s in self.state.iter_mut() {
            s.acc.record.overload |= s.overloaded;
            self.report.periods.push(s.acc.finish(now, true));
        }
        release(self.groups, self.throttler);
        self.report.throttle_errors = self.rules.guard().throttle_errors;
        self.report.end = end;
        self.report.elapsed_ns = now - self.frame.t0;
        self.report.cpu_ns = self.frame.cpu_ns();
        self.report
    }
}

/// The poll period when some counter cannot notify: a tenth of a period, at least 10 µs.
fn fallback_poll_ns(config: &Config) -> u64 {
    (config.period_ns / 10).max(10_000)
}

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

/// Arm for `left` more counts, less the stop lag.
fn arm(g: &mut Group, left: f64, s: &mut GroupState) -> Result<(), CounterError> {
    let after = (left - s.lead.lines()).max(1.0) as u64;
    s.trigger_used = s.acc.record.used + after;
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
