//! Regulators: mechanisms that stall cores, suspend servers or change the bus
//! arbitration to contain memory interference. One file each, all behind
//! [`Regulator`], usable with any scheduler:
//! [`memguard`] (per-core budgets), [`mcti`] (MemGuard plus the memory-overload
//! rule), [`mrs`] (per-server memory budgets) and [`monitor`] (the bandwidth
//! monitor). [`Unregulated`] lets every core run.

pub mod mcti;
pub mod memguard;
pub mod monitor;
pub mod mrs;

use crate::regulate::entities::EntityPlan;
use crate::sim::job::NONE_U64;

/// What runs on one core, as a regulator sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreView {
    pub task: Option<u32>,
    /// MCTI criticality of the running task (0 = not critical or idle).
    pub criticality: u32,
    /// Absolute deadline of the running job (u64::MAX if idle).
    pub deadline_ns: u64,
    /// Server holding the core, if any.
    pub server: Option<u32>,
    /// Work the running job has done (for phase-aware regulators).
    pub work_done_ns: u64,
}

/// A span during which a regulator held a core in some state (for traces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub core: u32,
    /// "stalled" (budget exhausted), "overload" (MCTI rule 5), "suspended" (monitor),
    /// "depleted" (MRS server memory budget; `core` is then the server index),
    /// or "held" (a MemGuard group's tasks stopped; `core` is the group index).
    pub state: &'static str,
    pub start_ns: u64,
    pub end_ns: u64,
}

pub trait Regulator {
    /// False for no regulation (lets the engine skip it).
    fn is_active(&self) -> bool {
        true
    }
    /// Regulator-specific results (e.g. the monitor's parallelism), as JSON.
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
    /// Next time the regulator acts by itself (replenishment, exhaustion, sample).
    fn next_event(&self) -> u64 {
        NONE_U64
    }
    /// Time passes from `from` to `to` with these per-core request rates.
    fn advance(&mut self, _from: u64, _to: u64, _requests_per_ns: &[f64]) {}
    /// Handle the regulator's events due at `now`.
    fn on_event(&mut self, _now: u64, _cores: &[CoreView]) {}
    /// Whether [`Regulator::job_released`] matters (then every release is an event).
    fn observes_releases(&self) -> bool {
        false
    }
    fn job_released(&mut self, _now: u64, _task: u32) {}
    fn job_completed(&mut self, _now: u64, _task: u32) {}
    /// After a scheduling decision: which cores may run, and the bus mode.
    fn update(&mut self, _now: u64, _cores: &[CoreView]) {}
    /// After the memory model: the request rates until the next event.
    fn set_flows(&mut self, _now: u64, _requests_per_ns: &[f64]) {}
    /// Whether `core` may make progress now.
    fn allowed(&self, _core: usize) -> bool {
        true
    }
    /// Fixed bus priorities (higher wins) while they override the arbiter.
    fn bus_priority(&self) -> Option<&[u32]> {
        None
    }
    /// Servers whose memory budget ran out since the last call (MRS rule 5).
    fn take_depleted_servers(&mut self, _out: &mut Vec<u32>) {}
    /// Tasks to hold (true) or let go (false) since the last call
    /// ([`crate::sim::sched::Scheduler::hold_task`]).
    fn take_holds(&mut self, _out: &mut Vec<(u32, bool)>) {}
    /// Hand over the intervals closed so far (the engine drains them as it
    /// goes, so a long run does not keep them).
    fn drain_intervals(&mut self, _out: &mut Vec<Interval>) {}
    /// Close open intervals at the end and hand them over.
    fn finish(&mut self, _end: u64) -> Vec<Interval> {
        Vec::new()
    }
    /// Per regulated entity, its totals at the end (none for a regulator
    /// without budgets).
    fn entities(&mut self, _end: u64) -> Vec<EntityTotals> {
        Vec::new()
    }
    /// Who the budgets belong to (`regulate::entities`): the plan the runtime
    /// regulates the same file by.
    fn entity_plan(&self) -> Option<&EntityPlan> {
        None
    }
}

/// One regulated entity over a run: what `criticore regulate` logs per group
/// and period, summed, so that a real run and a simulated one can be set side
/// by side (`regulate --compare-sim`). Entities are numbered as the runtime's
/// groups: MemGuard's groups in file order (else its cores), MCTI's cores,
/// MRS's servers.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct EntityTotals {
    /// Whole periods (the one running at the end is left out, as in the
    /// runtime's per-group summary).
    pub periods: u64,
    /// Of those, the periods in which its budget ran out.
    pub exhausted_periods: u64,
    /// Memory requests charged to it in those periods.
    pub used: f64,
    /// Time held over the whole run: a core of it stalled (MemGuard, MCTI),
    /// or, for an MRS server, not holding a core.
    pub stopped_ns: u64,
}

impl EntityTotals {
    /// A period of the entity ends with `used` requests charged.
    pub fn period_ended(&mut self, used: f64, exhausted: bool) {
        self.periods += 1;
        self.used += used;
        self.exhausted_periods += u64::from(exhausted);
    }
}

/// Time each entity is held, as totals (an [`IntervalLog`] keeps every span).
#[derive(Debug, Clone, Default)]
pub struct HeldTime {
    since: Vec<Option<u64>>,
    total_ns: Vec<u64>,
}

impl HeldTime {
    pub fn new(slots: usize) -> Self {
        HeldTime { since: vec![None; slots], total_ns: vec![0; slots] }
    }

    pub fn set(&mut self, k: usize, held: bool, now: u64) {
        match (self.since[k], held) {
            (None, true) => self.since[k] = Some(now),
            (Some(start), false) => {
                self.total_ns[k] += now - start;
                self.since[k] = None;
            }
            _ => {}
        }
    }

    /// Close what is held at `end` and write the totals into `totals`.
    pub fn finish(&mut self, end: u64, totals: &mut [EntityTotals]) {
        for (k, t) in totals.iter_mut().enumerate() {
            self.set(k, false, end);
            t.stopped_ns = self.total_ns[k];
        }
    }
}

/// When a budget of `left` requests runs out at `requests_per_ns`, from `now`:
/// rounded up, at least 1 ns later (so the exhaustion is at most one request late).
pub fn exhaustion_time(now: u64, left: f64, requests_per_ns: f64) -> u64 {
    now.saturating_add((left / requests_per_ns).ceil().max(1.0) as u64)
}

/// No regulation.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unregulated;

impl Regulator for Unregulated {
    fn is_active(&self) -> bool {
        false
    }
}

/// Open/close bookkeeping of per-core states for [`Interval`]s.
#[derive(Debug, Clone, Default)]
pub struct IntervalLog {
    open: Vec<Option<(&'static str, u64)>>,
    pub done: Vec<Interval>,
}

impl IntervalLog {
    pub fn new(slots: usize) -> Self {
        IntervalLog { open: vec![None; slots], done: Vec::new() }
    }

    /// Set slot `i` to `state` (None = normal) at `now`.
    pub fn set(&mut self, i: usize, state: Option<&'static str>, now: u64) {
        let current = self.open[i].map(|(s, _)| s);
        if current == state {
            return;
        }
        if let Some((s, start)) = self.open[i].take() {
            if now > start {
                self.done.push(Interval { core: i as u32, state: s, start_ns: start, end_ns: now });
            }
        }
        self.open[i] = state.map(|s| (s, now));
    }

    pub fn drain(&mut self, out: &mut Vec<Interval>) {
        out.append(&mut self.done);
    }

    pub fn finish(&mut self, end: u64) -> Vec<Interval> {
        for i in 0..self.open.len() {
            self.set(i, None, end);
        }
        std::mem::take(&mut self.done)
    }
}
