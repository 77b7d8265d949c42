//! Memory budgets of the Multi-Resource Server (mrs-multi-resource-server
//! §III): server S_s may issue M_s memory requests per server period P_s.
//! - Rule 1: m_s = M_s at every period start of S_s (with its CPU budget).
//! - Rule 4: requests of the tasks S_s runs are charged to m_s.
//! - Rule 5: when m_s reaches 0, S_s is suspended and its remaining CPU
//!   budget discarded until its next period (the driver tells the CPU rules,
//!   [`super::mrs_cpu::MrsCpuRules::deplete`]).

#[derive(Debug, Clone, PartialEq)]
pub struct MrsMemoryRules {
    period_ns: Vec<u64>,
    /// M_s; None = unlimited.
    budget: Vec<Option<f64>>,
    left: Vec<f64>,
    next_replenish: Vec<u64>,
    depleted: Vec<bool>,
}

impl MrsMemoryRules {
    /// Servers as (period, memory budget); every first period starts at 0.
    pub fn new(servers: &[(u64, Option<u64>)]) -> Self {
        let budget: Vec<Option<f64>> = servers.iter().map(|s| s.1.map(|m| m as f64)).collect();
        MrsMemoryRules {
            period_ns: servers.iter().map(|s| s.0).collect(),
            left: budget.iter().map(|b| b.unwrap_or(f64::INFINITY)).collect(),
            budget,
            next_replenish: servers.iter().map(|s| s.0).collect(),
            depleted: vec![false; servers.len()],
        }
    }

    pub fn next_replenish_ns(&self) -> u64 {
        self.next_replenish.iter().copied().min().unwrap_or(u64::MAX)
    }

    /// Rule 1 for every server whose period starts at or before `now`;
    /// `replenished(s)` is called for each.
    pub fn replenish_due(&mut self, now: u64, mut replenished: impl FnMut(usize)) {
        for s in 0..self.left.len() {
            if self.next_replenish[s] > now {
                continue;
            }
            while self.next_replenish[s] <= now {
                self.next_replenish[s] += self.period_ns[s];
            }
            self.left[s] = self.budget[s].unwrap_or(f64::INFINITY);
            self.depleted[s] = false;
            replenished(s);
        }
    }

    /// m_s: requests left this period (infinite if unlimited).
    pub fn left(&self, s: usize) -> f64 {
        self.left[s]
    }

    pub fn limited(&self, s: usize) -> bool {
        self.budget[s].is_some()
    }

    pub fn depleted(&self, s: usize) -> bool {
        self.depleted[s]
    }

    /// Rule 4: charge `requests`. Returns true when this charge depleted the
    /// budget (rule 5 applies from now).
    pub fn charge(&mut self, s: usize, requests: f64) -> bool {
        if self.depleted[s] {
            return false;
        }
        self.left[s] = (self.left[s] - requests).max(0.0);
        if self.left[s] <= 0.0 {
            self.depleted[s] = true;
            return true;
        }
        false
    }

    /// The budget ran out at a computed time (the simulator's exhaustion event).
    pub fn deplete(&mut self, s: usize) -> bool {
        self.charge(s, f64::INFINITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_deplete_once_and_refill_at_each_servers_own_period() {
        let mut r = MrsMemoryRules::new(&[(10, Some(100)), (25, None)]);
        assert!(!r.charge(0, 60.0));
        assert!(r.charge(0, 40.0)); // rule 5 from here
        assert!(!r.charge(0, 5.0));
        assert!(!r.charge(1, 1e12)); // unlimited
        let mut seen = Vec::new();
        r.replenish_due(9, |s| seen.push(s));
        assert!(seen.is_empty() && r.depleted(0));
        r.replenish_due(10, |s| seen.push(s));
        assert_eq!(seen, vec![0]);
        assert_eq!((r.left(0), r.depleted(0)), (100.0, false));
        assert_eq!(r.next_replenish_ns(), 20);
        r.replenish_due(50, |s| seen.push(s));
        assert_eq!(seen, vec![0, 0, 1]);
        assert_eq!(r.next_replenish_ns(), 60);
    }
}
