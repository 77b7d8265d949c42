//! MemGuard's rules (Yun et al. RTAS 2013, TC 2016; docs/references.md, Regulation: MemGuard;
//! mcti-task-isolation §4 rules 1–4): each entity k may issue Q_k memory
//! requests per regulation period M; periods are synchronous for all entities.
//!
//! - Rules 1–2: at every period start each budget is restored and every
//!   stalled entity may run again.
//! - Rule 3: each request is charged to the entity that issued it.
//! - Rule 4: an entity whose budget is used up stalls until the next period.
//!
//! Two options of the MemGuard module (docs/references.md, Runtime §1):
//! - reclaim: at a period start an entity whose predicted use (EWMA with
//!   a = 1/2 of its past use) is below its budget donates the difference to a
//!   global pool and keeps the prediction as its budget; when its budget runs
//!   out it first takes back its own donation, then up to `reclaim_min`
//!   requests from the pool. An entity stalled while it used less than its
//!   full budget is a "throttle error": its next prediction is its full
//!   budget, so it donates nothing next period.
//! - spare sharing: once every active entity is stalled, all run freely
//!   until the next period.

// The options are part of the task system (`regulation` in the file).
pub use crate::model::MemguardOptions;

#[derive(Debug, Clone, PartialEq)]
pub struct MemguardRules {
    period_ns: u64,
    next_period_ns: u64,
    /// Q_k, the reserved budget.
    budgets: Vec<f64>,
    /// This period's budget after donating and reclaiming.
    assigned: Vec<f64>,
    /// Requests charged this period.
    used: Vec<f64>,
    exhausted: Vec<bool>,
    options: MemguardOptions,
    predicted: Vec<f64>,
    donated: Vec<f64>,
    pool: f64,
    /// Spare sharing: every active entity is stalled, so none is, until the next period.
    released: bool,
    /// Periods started so far (the first period is number 0).
    pub period_index: u64,
    /// Throttle errors (reclaim): stalled while under the reserved budget.
    pub throttle_errors: u64,
}

impl MemguardRules {
    /// The first period starts at 0.
    pub fn new(period_ns: u64, budgets: &[u64], options: MemguardOptions) -> Self {
        let budgets: Vec<f64> = budgets.iter().map(|&b| b as f64).collect();
        let n = budgets.len();
        MemguardRules {
            period_ns,
            next_period_ns: period_ns,
            assigned: budgets.clone(),
            predicted: budgets.clone(),
            budgets,
            used: vec![0.0; n],
            exhausted: vec![false; n],
            options,
            donated: vec![0.0; n],
            pool: 0.0,
            released: false,
            period_index: 0,
            throttle_errors: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.budgets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.budgets.is_empty()
    }

    pub fn period_ns(&self) -> u64 {
        self.period_ns
    }

    pub fn next_period_ns(&self) -> u64 {
        self.next_period_ns
    }

    /// Q_k.
    pub fn budget(&self, k: usize) -> f64 {
        self.budgets[k]
    }

    /// This period's budget of k (Q_k unless reclaim moved some).
    pub fn assigned(&self, k: usize) -> f64 {
        self.assigned[k]
    }

    pub fn used(&self, k: usize) -> f64 {
        self.used[k]
    }

    /// Requests k may still issue this period, A_k(t).
    pub fn left(&self, k: usize) -> f64 {
        (self.assigned[k] - self.used[k]).max(0.0)
    }

    pub fn exhausted(&self, k: usize) -> bool {
        self.exhausted[k]
    }

    /// Rules 1–2: if a period boundary is due at `now`, start the new period
    /// (restore every budget, lift every stall). Returns whether one started.
    /// Several missed boundaries count as one new period (the runtime reports
    /// its lateness; the budgets are not owed for missed periods).
    pub fn replenish_if_due(&mut self, now: u64) -> bool {
        if now < self.next_period_ns {
            return false;
        }
        while self.next_period_ns <= now {
            self.next_period_ns += self.period_ns;
            self.period_index += 1;
        }
        self.pool = 0.0;
        for k in 0..self.budgets.len() {
            if self.options.reclaim {
                if self.exhausted[k] && self.used[k] < self.budgets[k] {
                    // Throttle error: it gave away more than it could spare.
                    self.throttle_errors += 1;
                    self.predicted[k] = self.budgets[k];
                } else {
                    self.predicted[k] = 0.5 * (self.predicted[k] + self.used[k]);
                }
                let donation = (self.budgets[k] - self.predicted[k]).max(0.0).floor();
                self.donated[k] = donation;
                self.pool += donation;
                self.assigned[k] = self.budgets[k] - donation;
            } else {
                self.assigned[k] = self.budgets[k];
            }
            self.used[k] = 0.0;
            self.exhausted[k] = false;
        }
        self.released = false;
        true
    }

    /// Rule 3: charge `requests` to `k`. Returns true when k's budget is used
    /// up by this charge and nothing could be reclaimed (k must stall, rule 4).
    pub fn charge(&mut self, k: usize, requests: f64) -> bool {
        self.used[k] += requests;
        if self.exhausted[k] || self.used[k] < self.assigned[k] {
            return false;
        }
        self.exhaust(k)
    }

    /// k's budget has run out (the simulator calls this at the computed
    /// exhaustion time): reclaim if allowed, else mark k exhausted. Returns
    /// whether k is now exhausted.
    pub fn exhaust(&mut self, k: usize) -> bool {
        if self.exhausted[k] {
            return true;
        }
        self.used[k] = self.used[k].max(self.assigned[k]);
        if self.options.reclaim {
            // Own donation first, then up to reclaim_min from the pool.
            // (Its donation may already be partly taken by others.)
            let own = self.donated[k];
            let grant = if own > 0.0 { own } else { self.options.reclaim_min.max(1.0) }.min(self.pool);
            self.donated[k] = 0.0;
            if grant > 0.0 {
                self.pool -= grant;
                self.assigned[k] += grant;
                return false;
            }
        }
        self.exhausted[k] = true;
        true
    }

    /// Rule 4 (with spare sharing): whether k must stall now. `active[k]`:
    /// k has work to do (an idle entity has nothing to stall).
    pub fn must_stall(&self, k: usize, active: &[bool]) -> bool {
        self.exhausted[k] && active[k] && !self.released
    }

    /// Spare sharing: once every active entity is exhausted, release them all
    /// until the next period. Call after the charges of an instant.
    /// Returns true when this call released them.
    pub fn share_spare(&mut self, active: &[bool]) -> bool {
        if !self.options.spare_sharing || self.released {
            return false;
        }
        let mut any = false;
        for k in 0..self.budgets.len() {
            if active[k] && self.budgets[k] > 0.0 {
                if !self.exhausted[k] {
                    return false;
                }
                any = true;
            }
        }
        self.released = any;
        any
    }

    /// Whether spare sharing has released every entity this period.
    pub fn released(&self) -> bool {
        self.released
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_budgets_stall_until_the_next_period() {
        let mut g = MemguardRules::new(1_000_000, &[100, 50], MemguardOptions::default());
        let active = [true, true];
        assert!(!g.charge(0, 99.0));
        assert!(!g.must_stall(0, &active));
        assert!(g.charge(0, 1.0)); // the 100th request uses the budget up
        assert!(g.must_stall(0, &active));
        assert!(!g.must_stall(0, &[false, true])); // idle: nothing to stall
        assert!(!g.charge(0, 7.0)); // already exhausted: no second report
        assert_eq!(g.used(0), 107.0); // overshoot stays visible
        assert!(!g.replenish_if_due(999_999));
        assert!(g.replenish_if_due(1_000_000));
        assert!(!g.must_stall(0, &active));
        assert_eq!(g.left(0), 100.0);
        assert_eq!(g.next_period_ns(), 2_000_000);
        // Three missed boundaries: one new period, index counts all.
        assert!(g.replenish_if_due(4_500_000));
        assert_eq!((g.next_period_ns(), g.period_index), (5_000_000, 4));
    }

    #[test]
    fn reclaim_donates_the_predicted_surplus_and_takes_it_back() {
        let opts = MemguardOptions { reclaim: true, reclaim_min: 10.0, spare_sharing: false };
        let mut g = MemguardRules::new(1000, &[100, 100], opts);
        // Period 0: entity 0 uses 20, entity 1 uses 100 (nothing donated yet: it stalls).
        g.charge(0, 20.0);
        assert!(g.charge(1, 100.0));
        g.replenish_if_due(1000);
        // Predictions (100 + 20)/2 = 60 and (100 + 100)/2 = 100: entity 0 donates 40.
        assert_eq!((g.assigned(0), g.assigned(1)), (60.0, 100.0));
        // Entity 1 runs out and takes reclaim_min = 10 from the pool (40 → 30).
        assert!(!g.charge(1, 100.0));
        assert_eq!(g.assigned(1), 110.0);
        // Entity 0 runs out and takes back what is left of its donation: 30.
        assert!(!g.charge(0, 60.0));
        assert_eq!(g.assigned(0), 90.0);
        // The pool is empty: both stall at their next exhaustion.
        assert!(g.charge(1, 10.0));
        assert!(g.charge(0, 30.0));
        // Entity 0 stalled at 90 < 100: a throttle error; next period it donates nothing.
        g.replenish_if_due(2000);
        assert_eq!(g.throttle_errors, 1);
        // Entity 1: (100 + 110)/2 = 105 ≥ 100, no donation either.
        assert_eq!((g.assigned(0), g.assigned(1)), (100.0, 100.0));
    }

    #[test]
    fn spare_sharing_releases_everyone_once_all_active_are_stalled() {
        let opts = MemguardOptions { spare_sharing: true, ..Default::default() };
        let mut g = MemguardRules::new(1000, &[10, 10, 10], opts);
        let active = [true, true, false]; // entity 2 is idle
        assert!(g.charge(0, 10.0));
        assert!(!g.share_spare(&active));
        assert!(g.must_stall(0, &active));
        assert!(g.charge(1, 10.0));
        assert!(g.share_spare(&active));
        assert!(!g.must_stall(0, &active) && !g.must_stall(1, &active));
        g.replenish_if_due(1000);
        assert!(!g.released());
        assert!(g.charge(0, 10.0));
        assert!(g.must_stall(0, &active));
    }
}
