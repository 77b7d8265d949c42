//! Lead compensation: arm a group's counter early by the counts it makes
//! between the regulator's stop decision and the moment the stop lands.
//!
//! A kernel regulator stops a core within a few µs of the overflow interrupt
//! (MemGuard); a user-space one takes a signal delivery, a wake-up and a
//! SIGSTOP or freezer write, and a streaming program moves hundreds of lines
//! meanwhile. The rules (engine, `criticore::regulate`) decide *that* a group
//! is exhausted; this estimator only moves *when* the runtime acts, so the
//! traffic per period lands on the budget on average instead of above it.
//! The lag is learnt per group as an EWMA of (count at period end − the count
//! at which its counter was armed to signal) over periods that ended stopped.

/// EWMA weight of a new lag sample (1/4: settles within ~10 periods, smooths
/// one-off preemptions).
pub const WEIGHT: f64 = 0.25;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lead {
    lines: f64,
    enabled: bool,
}

impl Lead {
    pub fn new(enabled: bool) -> Self {
        Lead { lines: 0.0, enabled }
    }

    /// Counts to stop early by (0 when disabled).
    pub fn lines(&self) -> f64 {
        if self.enabled {
            self.lines
        } else {
            0.0
        }
    }

    /// A period ended with the group stopped: it counted `after_stop` more
    /// after its armed count.
    pub fn sample(&mut self, after_stop: u64) {
        self.lines += (after_stop as f64 - self.lines) * WEIGHT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converges_to_a_constant_lag() {
        let mut l = Lead::new(true);
        l.sample(400);
        assert_eq!(l.lines(), 100.0); // 0 + (400 − 0) / 4
        l.sample(400);
        assert_eq!(l.lines(), 175.0); // 100 + 300 / 4
        for _ in 0..60 {
            l.sample(400);
        }
        assert!((l.lines() - 400.0).abs() < 0.01);
    }

    #[test]
    fn disabled_leads_by_nothing_but_still_learns() {
        let mut l = Lead::new(false);
        l.sample(400);
        assert_eq!(l.lines(), 0.0);
        assert_eq!(l.lines, 100.0);
    }
}
