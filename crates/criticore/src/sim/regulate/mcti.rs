//! MCTI (mcti-task-isolation §4, Fig. 3): MemGuard's budget accounting (rules
//! 1–4) plus the memory-overload rule. When a core exhausts its budget while it
//! runs a critical task (criticality > 0), it keeps running (rule 5) and the
//! interconnect switches from fair to fixed priority, with bus priorities by
//! Property 1: higher criticality first, then earlier deadline. At the next
//! regulation period every budget is restored and the interconnect is fair
//! again (rule 2). Non-critical cores that exhaust their budget stall (rule 4).

use super::memguard::Memguard;
use super::{CoreView, Interval, Regulator};
use crate::model::Regulation;

#[derive(Debug, Clone)]
pub struct Mcti {
    guard: Memguard,
    overload: Vec<bool>,
    /// Bus priority per core (higher wins) while the interconnect is fixed priority.
    priority: Vec<u32>,
    fixed_priority: bool,
}

impl Mcti {
    pub fn new(config: &Regulation) -> Self {
        let m = config.budgets.len();
        Mcti { guard: Memguard::new(config), overload: vec![false; m], priority: vec![0; m], fixed_priority: false }
    }
}

/// Property 1: rank cores by (criticality desc, deadline asc); non-critical cores get 0.
pub fn property1_priorities(cores: &[CoreView]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..cores.len()).filter(|&c| cores[c].criticality > 0).collect();
    order.sort_by_key(|&c| (std::cmp::Reverse(cores[c].criticality), cores[c].deadline_ns, c));
    let mut priority = vec![0u32; cores.len()];
    for (rank, &c) in order.iter().enumerate() {
        priority[c] = (order.len() - rank) as u32;
    }
    priority
}

impl Regulator for Mcti {
    fn next_event(&self) -> u64 {
        self.guard.next_event()
    }

    fn advance(&mut self, from: u64, to: u64, requests_per_ns: &[f64]) {
        self.guard.advance(from, to, requests_per_ns);
    }

    fn on_event(&mut self, now: u64, _cores: &[CoreView]) {
        // An exhaustion at a period boundary belongs to the period that ends.
        self.guard.exhaust_due(now);
        if self.guard.replenish_if_due(now) {
            self.fixed_priority = false; // rule 2: fair at every period start
        }
    }

    fn update(&mut self, now: u64, cores: &[CoreView]) {
        for c in 0..cores.len() {
            let exhausted = self.guard.exhausted[c];
            // Rule 5 (memory overload) for a critical task; rule 4 otherwise.
            self.overload[c] = exhausted && cores[c].criticality > 0;
            self.guard.stalled[c] = exhausted && cores[c].criticality == 0 && cores[c].task.is_some();
            let state = if self.overload[c] {
                Some("overload")
            } else if self.guard.stalled[c] {
                Some("stalled")
            } else {
                None
            };
            self.guard.log.set(c, state, now);
        }
        if self.overload.iter().any(|&o| o) {
            self.fixed_priority = true;
        }
        if self.fixed_priority {
            self.priority = property1_priorities(cores);
        }
    }

    fn set_flows(&mut self, now: u64, requests_per_ns: &[f64]) {
        self.guard.set_flows(now, requests_per_ns);
    }

    fn allowed(&self, core: usize) -> bool {
        self.guard.allowed(core)
    }

    fn bus_priority(&self) -> Option<&[u32]> {
        self.fixed_priority.then_some(&self.priority[..])
    }

    fn finish(&mut self, end: u64) -> Vec<Interval> {
        self.guard.finish(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(criticality: u32, deadline_ns: u64) -> CoreView {
        CoreView { task: Some(0), criticality, deadline_ns, server: None, work_done_ns: 0 }
    }

    #[test]
    fn property1_orders_by_criticality_then_deadline() {
        // Core 0: criticality 1, deadline 50; core 1: criticality 2, deadline 90;
        // core 2: criticality 1, deadline 20; core 3: not critical.
        let p = property1_priorities(&[core(1, 50), core(2, 90), core(1, 20), core(0, 10)]);
        assert_eq!(p, vec![1, 3, 2, 0]);
    }
}
