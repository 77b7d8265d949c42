//! MemGuard (Yun et al. 2013; notes/regulation-reference.md; mcti-task-isolation
//! §4 rules 1–4): each core may issue Qm memory requests per regulation period
//! M. Periods are synchronous on all cores; at each period start every budget
//! is restored and stalled cores resume. A core that exhausts its budget
//! stalls until the next period.

use super::{exhaustion_time, CoreView, Interval, IntervalLog, Regulator};
use crate::model::Regulation;
use crate::sim::job::NONE_U64;

#[derive(Debug, Clone)]
pub struct Memguard {
    pub period_ns: u64,
    pub budgets: Vec<f64>,
    /// Requests left this period, A_k(t).
    pub left: Vec<f64>,
    pub next_period: u64,
    pub exhaust_at: Vec<u64>,
    /// Budget used up this period.
    pub exhausted: Vec<bool>,
    pub stalled: Vec<bool>,
    pub log: IntervalLog,
}

impl Memguard {
    pub fn new(config: &Regulation) -> Self {
        let m = config.budgets.len();
        let budgets: Vec<f64> = config.budgets.iter().map(|&b| b as f64).collect();
        Memguard {
            period_ns: config.period_ns,
            left: budgets.clone(),
            budgets,
            next_period: config.period_ns,
            exhaust_at: vec![NONE_U64; m],
            exhausted: vec![false; m],
            stalled: vec![false; m],
            log: IntervalLog::new(m),
        }
    }

    /// Rules 1–2: restore every budget at the period start.
    pub fn replenish_if_due(&mut self, now: u64) -> bool {
        if now < self.next_period {
            return false;
        }
        while self.next_period <= now {
            self.next_period += self.period_ns;
        }
        self.left.copy_from_slice(&self.budgets);
        self.exhausted.fill(false);
        true
    }

    /// Mark cores whose budget runs out now.
    pub fn exhaust_due(&mut self, now: u64) {
        for c in 0..self.left.len() {
            if self.exhaust_at[c] <= now {
                self.left[c] = 0.0;
                self.exhausted[c] = true;
                self.exhaust_at[c] = NONE_U64;
            }
        }
    }
}

impl Regulator for Memguard {
    fn next_event(&self) -> u64 {
        self.exhaust_at.iter().copied().min().unwrap_or(NONE_U64).min(self.next_period)
    }

    fn advance(&mut self, from: u64, to: u64, requests_per_ns: &[f64]) {
        let dt = (to - from) as f64;
        for (left, r) in self.left.iter_mut().zip(requests_per_ns) {
            *left = (*left - r * dt).max(0.0);
        }
    }

    fn on_event(&mut self, now: u64, _cores: &[CoreView]) {
        // An exhaustion at a period boundary belongs to the period that ends.
        self.exhaust_due(now);
        self.replenish_if_due(now);
    }

    fn update(&mut self, now: u64, cores: &[CoreView]) {
        // Rule 4 for every task: an exhausted core stalls until the next period
        // (an idle one has nothing to stall).
        for c in 0..self.stalled.len() {
            self.stalled[c] = self.exhausted[c] && cores[c].task.is_some();
            self.log.set(c, self.stalled[c].then_some("stalled"), now);
        }
    }

    fn set_flows(&mut self, now: u64, requests_per_ns: &[f64]) {
        for c in 0..self.left.len() {
            let r = requests_per_ns[c];
            self.exhaust_at[c] = if !self.exhausted[c] && r > 0.0 {
                exhaustion_time(now, self.left[c], r)
            } else {
                NONE_U64
            };
        }
    }

    fn allowed(&self, core: usize) -> bool {
        !self.stalled[core]
    }

    fn finish(&mut self, end: u64) -> Vec<Interval> {
        self.log.finish(end)
    }
}
