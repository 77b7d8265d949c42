//! MCTI in the simulator: MemGuard's accounting ([`super::memguard`]) plus the
//! memory-overload rule and Property 1's bus priorities from
//! `regulate::mcti`, per core.

use super::memguard::Memguard;
use super::{CoreView, EntityTotals, Interval, Regulator};
use crate::model::Regulation;
use crate::regulate::entities::{running, EntityPlan, Job};
use crate::regulate::mcti::MctiRules;

#[derive(Debug, Clone)]
pub struct Mcti {
    guard: Memguard,
    rules: MctiRules,
    criticality: Vec<u32>,
    deadline_ns: Vec<u64>,
    active: Vec<bool>,
}

impl Mcti {
    /// MCTI over the per-core entities of `plan` (`regulate::entities`).
    pub fn new(plan: EntityPlan, config: &Regulation, tasks: usize, cores: usize) -> Self {
        Mcti {
            guard: Memguard::new(plan, config, tasks, cores),
            rules: MctiRules::new(cores),
            criticality: vec![0; cores],
            deadline_ns: vec![u64::MAX; cores],
            active: vec![false; cores],
        }
    }
}

impl Regulator for Mcti {
    fn next_event(&self) -> u64 {
        self.guard.next_event()
    }

    fn advance(&mut self, from: u64, to: u64, requests_per_ns: &[f64]) {
        self.guard.advance(from, to, requests_per_ns);
    }

    fn on_event(&mut self, now: u64, _cores: &[CoreView]) {
        if self.guard.on_time(now) {
            self.rules.period_started(); // rule 2
        }
    }

    fn update(&mut self, now: u64, cores: &[CoreView]) {
        self.guard.map_cores(cores);
        for (c, v) in cores.iter().enumerate() {
            // §4: L_k(t) and D_k(t) from the one job the core runs.
            let job = v.task.map(|_| Job { criticality: v.criticality, deadline_ns: v.deadline_ns });
            (self.criticality[c], self.deadline_ns[c]) = running(job);
            self.active[c] = v.task.is_some();
        }
        self.rules.decide(&self.guard.rules, &self.criticality, &self.deadline_ns, &self.active);
        for c in 0..cores.len() {
            let stalled = self.rules.must_stall(c);
            self.guard.set_stalled(c, stalled);
            let state = if self.rules.overload(c) {
                Some("overload")
            } else if stalled {
                Some("stalled")
            } else {
                None
            };
            self.guard.log.set(c, state, now);
        }
        self.guard.note_held(now);
    }

    fn set_flows(&mut self, now: u64, requests_per_ns: &[f64]) {
        self.guard.set_flows(now, requests_per_ns);
    }

    fn allowed(&self, core: usize) -> bool {
        self.guard.allowed(core)
    }

    fn bus_priority(&self) -> Option<&[u32]> {
        self.rules.bus_priority()
    }

    fn drain_intervals(&mut self, out: &mut Vec<Interval>) {
        self.guard.drain_intervals(out);
    }

    fn finish(&mut self, end: u64) -> Vec<Interval> {
        self.guard.finish(end)
    }

    fn entities(&mut self, end: u64) -> Vec<EntityTotals> {
        self.guard.entities(end)
    }

    fn entity_plan(&self) -> Option<&EntityPlan> {
        self.guard.entity_plan()
    }
}
