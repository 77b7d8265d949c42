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
//! A group let run past its budget (MCTI rule 5, spare sharing) counts on by
//! the rules, not by lag: that period teaches nothing, even if a later stop
//! (rule 4 again) ends it stopped.

/// EWMA weight of a new lag sample (1/4: settles within ~10 periods, smooths
/// one-off preemptions).
pub const WEIGHT: f64 = 0.25;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lead {
    lines: f64,
    enabled: bool,
    /// This period's stop on a counted decision: the count it should have landed at.
    from: Option<u64>,
    /// Let run past its budget this period.
    released: bool,
}

impl Lead {
    pub fn new(enabled: bool) -> Self {
        Lead { lines: 0.0, enabled, from: None, released: false }
    }

    /// Counts to stop early by (0 when disabled).
    pub fn lines(&self) -> f64 {
        if self.enabled {
            self.lines
        } else {
            0.0
        }
    }

    /// The group was stopped on a counted decision; `armed` is the count the
    /// stop should have landed at (the counter's trigger, or the count seen).
    pub fn stopped(&mut self, armed: u64) {
        if !self.released && self.from.is_none() {
            self.from = Some(armed);
        }
    }

    /// The group runs past its budget until the period ends (MCTI rule 5,
    /// spare sharing): what it counts from now on is no stop lag.
    pub fn released(&mut self) {
        self.from = None;
        self.released = true;
    }

    /// The period ended with `used` counted, the group `stopped` or not: a
    /// stop on a counted decision that held to the end is a lag sample.
    pub fn period_end(&mut self, used: u64, stopped: bool) {
        if let (true, Some(at)) = (stopped, self.from.take()) {
            self.sample(used.saturating_sub(at));
        }
        self.from = None;
        self.released = false;
    }

    /// A period ended with the group stopped: it counted `after_stop` more
    /// after its armed count.
    fn sample(&mut self, after_stop: u64) {
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

    #[test]
    fn a_stop_that_holds_to_the_period_end_is_a_sample() {
        let mut l = Lead::new(true);
        l.stopped(10_000);
        l.stopped(10_300); // a second stop in the period: the first decision's count stands
        l.period_end(10_400, true);
        assert_eq!(l.lines(), 100.0); // (10,400 − 10,000) / 4
        // A stop resumed before the end (not stopped at the end): no sample.
        l.stopped(10_000);
        l.period_end(10_400, false);
        assert_eq!(l.lines(), 100.0);
    }

    #[test]
    fn a_group_let_run_past_its_budget_teaches_no_lag() {
        // MCTI: stopped at 10,000 during a non-critical job (rule 4), resumed
        // for a critical one that runs 20,000 more (rule 5), stopped again when
        // it ends (rule 4): stopped at the end, yet 20,000 are no lag.
        let mut l = Lead::new(true);
        l.stopped(10_000);
        l.released();
        l.stopped(30_000);
        l.period_end(30_050, true);
        assert_eq!(l.lines(), 0.0);
        // The next period learns again.
        l.stopped(10_000);
        l.period_end(10_400, true);
        assert_eq!(l.lines(), 100.0);
    }
}
