//! The bandwidth monitor's rule (blin-bandwidth-monitor §3.3). While a job of
//! the real-time task is active, the global memory traffic is sampled every
//! Δ. Each sample looks up the overhead table of the job's current phase at
//! `bytes >> shift` and adds overhead × Δ / ExecT to a running sum (ExecT:
//! the task's execution time alone). When the sum exceeds the threshold minus
//! one sample's share of ExecT (footnote 4: the next sample could add up to
//! one more share), every best-effort entity is suspended until the job ends
//! (or reaches its deadline). The sum restarts with each job.

use crate::model::overhead::OverheadTable;

#[derive(Debug, Clone, PartialEq)]
pub struct MonitorRules {
    pub table: OverheadTable,
    pub sample_ns: u64,
    pub threshold: f64,
    exec_ns: f64,
    sum: f64,
    suspended: bool,
}

impl MonitorRules {
    pub fn new(table: OverheadTable, sample_ns: u64, threshold: f64, exec_ns: u64) -> Self {
        MonitorRules { table, sample_ns, threshold, exec_ns: exec_ns.max(1) as f64, sum: 0.0, suspended: false }
    }

    /// A job of the real-time task starts being monitored.
    pub fn start_job(&mut self) {
        self.sum = 0.0;
        self.suspended = false;
    }

    /// The job ended (or reached its deadline): the best-effort work resumes.
    pub fn end_job(&mut self) {
        self.suspended = false;
    }

    /// One sample of Δ during which `bytes` moved, in `phase` of the job.
    /// Returns true when this sample suspends the best-effort entities.
    pub fn sample(&mut self, phase: usize, bytes: u64) -> bool {
        let share = self.sample_ns as f64 / self.exec_ns;
        self.sum += self.table.lookup(phase, bytes) * share;
        if !self.suspended && self.sum > self.threshold - share {
            self.suspended = true;
            return true;
        }
        false
    }

    /// The estimated overhead of the current job so far.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    pub fn suspended(&self) -> bool {
        self.suspended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suspends_when_the_sum_passes_threshold_minus_one_share() {
        // Δ = 50 µs, ExecT = 1 ms: one sample is 5% of ExecT. Threshold 10%.
        // Index = bytes >> 10; overhead 0 below 1 KiB, 0.5 from 1 KiB on.
        let table = OverheadTable { sample_ns: 50_000, shift: 10, phases: vec![vec![0.0, 0.5]] };
        let mut m = MonitorRules::new(table, 50_000, 0.10, 1_000_000);
        m.start_job();
        assert!(!m.sample(0, 1023)); // index 0: adds 0
        assert!(!m.sample(0, 1024)); // adds 0.5 × 0.05 = 0.025 → sum 0.025 ≤ 0.05
        assert!(!m.sample(0, 4096)); // sum 0.05, not > 0.05
        assert!(m.sample(0, 4096)); // sum 0.075 > 0.10 − 0.05
        assert!(m.suspended());
        assert!(!m.sample(0, 4096)); // already suspended
        m.end_job();
        assert!(!m.suspended());
        m.start_job();
        assert_eq!(m.sum(), 0.0);
    }
}
