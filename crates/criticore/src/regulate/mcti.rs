//! MCTI's memory-overload rule (mcti-task-isolation §4, Fig. 3) on top of
//! MemGuard's budgets (rules 1–4, [`super::memguard`], which the caller keeps
//! and passes in):
//! - Rule 4: an entity that exhausts its budget while it runs a non-critical
//!   task stalls until the next period.
//! - Rule 5: an entity that exhausts its budget while it runs a critical task
//!   (criticality > 0) keeps running, and the interconnect switches from fair
//!   to fixed priority, ranked by Property 1 (higher criticality first, then
//!   earlier deadline).
//! - Rule 2: at the next period every budget is restored and the interconnect
//!   is fair again.

use super::memguard::MemguardRules;

#[derive(Debug, Clone, PartialEq)]
pub struct MctiRules {
    overload: Vec<bool>,
    stalled: Vec<bool>,
    fixed_priority: bool,
    priority: Vec<u32>,
}

impl MctiRules {
    pub fn new(entities: usize) -> Self {
        MctiRules { overload: vec![false; entities], stalled: vec![false; entities], fixed_priority: false, priority: vec![0; entities] }
    }

    /// Rule 2: a regulation period started; the interconnect is fair again.
    pub fn period_started(&mut self) {
        self.fixed_priority = false;
    }

    /// Rules 4–5 for what runs now: per entity, the criticality of its
    /// running task (0: non-critical), its absolute deadline, and whether it
    /// runs anything. Returns whether the interconnect is in fixed priority.
    pub fn decide(&mut self, guard: &MemguardRules, criticality: &[u32], deadline_ns: &[u64], active: &[bool]) -> bool {
        for k in 0..self.overload.len() {
            let exhausted = guard.exhausted(k);
            self.overload[k] = exhausted && criticality[k] > 0;
            self.stalled[k] = exhausted && criticality[k] == 0 && active[k];
        }
        if self.overload.iter().any(|&o| o) {
            self.fixed_priority = true;
        }
        if self.fixed_priority {
            self.priority = property1_priorities(criticality, deadline_ns);
        }
        self.fixed_priority
    }

    /// Rule 4 for this entity (as of the last [`MctiRules::decide`]).
    pub fn must_stall(&self, k: usize) -> bool {
        self.stalled[k]
    }

    /// Rule 5: the entity runs a critical task past its budget.
    pub fn overload(&self, k: usize) -> bool {
        self.overload[k]
    }

    /// Bus priorities (higher wins) while the interconnect is fixed priority.
    pub fn bus_priority(&self) -> Option<&[u32]> {
        self.fixed_priority.then_some(&self.priority[..])
    }
}

/// Property 1: rank entities by (criticality desc, deadline asc); non-critical ones get 0.
pub fn property1_priorities(criticality: &[u32], deadline_ns: &[u64]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..criticality.len()).filter(|&c| criticality[c] > 0).collect();
    order.sort_by_key(|&c| (std::cmp::Reverse(criticality[c]), deadline_ns[c], c));
    let mut priority = vec![0u32; criticality.len()];
    for (rank, &c) in order.iter().enumerate() {
        priority[c] = (order.len() - rank) as u32;
    }
    priority
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regulate::memguard::MemguardOptions;

    #[test]
    fn property1_orders_by_criticality_then_deadline() {
        // Entity 0: criticality 1, deadline 50; 1: criticality 2, deadline 90;
        // 2: criticality 1, deadline 20; 3: not critical.
        let p = property1_priorities(&[1, 2, 1, 0], &[50, 90, 20, 10]);
        assert_eq!(p, vec![1, 3, 2, 0]);
    }

    #[test]
    fn a_critical_task_overloads_a_non_critical_one_stalls() {
        let mut guard = MemguardRules::new(1000, &[10, 10], MemguardOptions::default());
        let mut r = MctiRules::new(2);
        let crit = [2, 0];
        let deadlines = [500, 400];
        let active = [true, true];
        assert!(!r.decide(&guard, &crit, &deadlines, &active));
        assert!(guard.charge(1, 10.0));
        assert!(!r.decide(&guard, &crit, &deadlines, &active)); // rule 4 only: still fair
        assert!(r.must_stall(1) && !r.overload(1));
        assert!(guard.charge(0, 10.0));
        assert!(r.decide(&guard, &crit, &deadlines, &active)); // rule 5: fixed priority
        assert!(r.overload(0) && !r.must_stall(0));
        assert_eq!(r.bus_priority(), Some(&[1u32, 0][..]));
        assert!(guard.replenish_if_due(1000));
        r.period_started(); // rule 2: fair again
        assert_eq!(r.bus_priority(), None);
        assert!(!r.decide(&guard, &crit, &deadlines, &active));
        assert!(!r.must_stall(1));
    }
}
