//! Period accounting, written once for the period-based loops (MemGuard/MCTI
//! in `regulator.rs`, MRS servers in `server.rs`): per group, the counts read
//! since the last read, when it was stopped and for how long, and the record
//! of the period that runs; closing a period and the run's last one.

use super::Group;
use crate::os::counter::CounterError;
use crate::os::throttle::Throttler;

/// One group in one regulation period. Times are relative to the run's start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeriodRecord {
    pub period: u64,
    pub group: u32,
    /// When the period started in fact, and how late that was.
    pub start_ns: u64,
    pub lateness_ns: u64,
    /// Budget of this period (after reclaim) and events counted in it.
    pub budget: u64,
    pub used: u64,
    /// Events beyond the budget.
    pub overshoot: u64,
    /// When the loop saw the budget exhausted (0 = not exhausted).
    pub exhausted_ns: u64,
    /// From the moment the loop saw the exhaustion (woken by the overflow
    /// signal, or at a poll) to the stop being issued. The delay from the
    /// counter's crossing to the wake-up shows as overshoot instead.
    pub reaction_ns: u64,
    /// End to end: from the count crossing the armed threshold, as the
    /// program timestamped it (counter pages), through the signal, the
    /// loop's wake-up and the decision, to the stop issued (0 = not known).
    pub reaction_e2e_ns: u64,
    /// Time the group spent stopped in this period.
    pub throttled_ns: u64,
    /// Counts by which the counter was armed early at the period start (`lead.rs`).
    pub lead: u64,
    /// MCTI: the group ran a critical job past its budget (rule 5: it ran on,
    /// and the interconnect would have switched to fixed priority).
    pub overload: bool,
}

/// One group's accounts across the periods of a run.
#[derive(Debug)]
pub(crate) struct Account {
    /// Each counter's total at the last read.
    last: Vec<u64>,
    /// Since when the group is stopped (None: running).
    pub stopped_at: Option<u64>,
    /// The period that runs.
    pub record: PeriodRecord,
    /// Time stopped over the whole run, up to the last resume or period end.
    pub throttled_total_ns: u64,
}

impl Account {
    /// Start counting from the counters' totals now.
    pub fn open(g: &mut Group, record: PeriodRecord) -> Result<Account, CounterError> {
        let mut last = Vec::with_capacity(g.counters.len());
        for c in g.counters.iter_mut() {
            last.push(c.read()?.total());
        }
        Ok(Account { last, stopped_at: None, record, throttled_total_ns: 0 })
    }

    /// Read the group's counters; what they counted since the last read is
    /// added to the period's `used` and returned. A counter whose process
    /// ended (an OS error) keeps its last count; any other error ends the run.
    pub fn read(&mut self, g: &mut Group) -> Result<u64, CounterError> {
        let mut delta = 0u64;
        for (c, last) in g.counters.iter_mut().zip(self.last.iter_mut()) {
            let total = match c.read() {
                Ok(t) => t.total(),
                Err(CounterError::Os { .. }) => *last,
                Err(e) => return Err(e),
            };
            delta += total.saturating_sub(*last);
            *last = total;
        }
        self.record.used += delta;
        Ok(delta)
    }

    /// The group was stopped at `at`.
    pub fn stopped(&mut self, at: u64) {
        self.stopped_at = Some(at);
    }

    /// Resume group `k` if it is stopped, counting the time it was; whether it was.
    pub fn resume(&mut self, k: usize, throttler: &mut dyn Throttler, now: u64) -> bool {
        let Some(since) = self.stopped_at.take() else { return false };
        let _ = throttler.resume(k);
        self.record.throttled_ns += now.saturating_sub(since);
        self.throttled_total_ns += now.saturating_sub(since);
        true
    }

    /// End the period at `now` and start `next`; the record of the period
    /// that ended. `budgeted`: its overshoot is what it used beyond its
    /// budget (else 0). A group still stopped stays so: the time up to `now`
    /// is the ended period's, the rest the next one's.
    pub fn close(&mut self, now: u64, next: PeriodRecord, budgeted: bool) -> PeriodRecord {
        let mut done = std::mem::replace(&mut self.record, next);
        done.overshoot = if budgeted { done.used.saturating_sub(done.budget) } else { 0 };
        if let Some(since) = self.stopped_at {
            done.throttled_ns += now.saturating_sub(since);
            self.throttled_total_ns += now.saturating_sub(since);
            self.stopped_at = Some(now);
        }
        done
    }

    /// The run ended at `now`: the record of its last, unfinished period.
    pub fn finish(&mut self, now: u64, budgeted: bool) -> PeriodRecord {
        if let Some(since) = self.stopped_at.take() {
            self.record.throttled_ns += now.saturating_sub(since);
        }
        self.record.overshoot = if budgeted { self.record.used.saturating_sub(self.record.budget) } else { 0 };
        std::mem::take(&mut self.record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::counter::{Counter, Counts};
    use crate::os::throttle::{ThrottleError, UndoList};
    use std::sync::{Arc, Mutex};

    /// A counter whose next reads are scripted.
    struct Script(Arc<Mutex<Vec<Result<u64, CounterError>>>>);

    impl Counter for Script {
        fn describe(&self) -> String {
            "script".into()
        }
        fn read(&mut self) -> Result<Counts, CounterError> {
            self.0.lock().unwrap().remove(0).map(|reads| Counts { reads, writes: 0 })
        }
        fn arm(&mut self, _: Option<u64>) -> Result<bool, CounterError> {
            Ok(false)
        }
    }

    #[derive(Default)]
    struct Calls(Vec<(&'static str, usize)>);

    impl Throttler for Calls {
        fn name(&self) -> &'static str {
            "calls"
        }
        fn add(&mut self, _: usize, _: i32) -> Result<(), ThrottleError> {
            Ok(())
        }
        fn stop(&mut self, k: usize) -> Result<(), ThrottleError> {
            self.0.push(("stop", k));
            Ok(())
        }
        fn resume(&mut self, k: usize) -> Result<(), ThrottleError> {
            self.0.push(("resume", k));
            Ok(())
        }
        fn is_stopped(&self, _: usize) -> bool {
            false
        }
        fn resume_all(&mut self) {}
        fn undo_list(&self) -> UndoList {
            UndoList::default()
        }
    }

    fn group(reads: Vec<Result<u64, CounterError>>) -> Group {
        Group { name: "g".into(), pids: Vec::new(), counters: vec![Box::new(Script(Arc::new(Mutex::new(reads))))], criticality: 0, jobs: Vec::new() }
    }

    fn os_error() -> CounterError {
        CounterError::Os { what: "read".into(), reason: "gone".into() }
    }

    #[test]
    fn reads_charge_the_growth_and_a_gone_process_keeps_its_count() {
        let mut g = group(vec![Ok(100), Ok(130), Err(os_error()), Ok(135), Err(CounterError::PinnedError { event: "e".into() })]);
        let mut a = Account::open(&mut g, PeriodRecord::default()).unwrap();
        assert_eq!(a.read(&mut g).unwrap(), 30); // 130 − 100
        assert_eq!(a.read(&mut g).unwrap(), 0); // process gone: 130 kept
        assert_eq!(a.read(&mut g).unwrap(), 5); // 135 − 130
        assert_eq!(a.record.used, 35);
        assert_eq!(a.read(&mut g).unwrap_err(), CounterError::PinnedError { event: "e".into() });
    }

    #[test]
    fn stopped_time_is_split_at_period_ends_and_counted_on_resume() {
        let mut g = group(vec![Ok(0)]);
        let mut t = Calls::default();
        let mut a = Account::open(&mut g, PeriodRecord { budget: 10, used: 0, ..Default::default() }).unwrap();
        a.record.used = 14;
        a.stopped(1_000);
        // Stopped across the end at 1_600: 600 ns to the ended period, the group stays stopped.
        let done = a.close(1_600, PeriodRecord { period: 1, budget: 10, ..Default::default() }, true);
        assert_eq!((done.throttled_ns, done.overshoot, done.used), (600, 4, 14));
        assert_eq!(a.stopped_at, Some(1_600));
        assert_eq!((a.record.period, a.record.used), (1, 0));
        // Resumed at 1_900: 300 ns to the new period; 900 over the run.
        assert!(a.resume(3, &mut t, 1_900));
        assert!(!a.resume(3, &mut t, 2_000), "not stopped: nothing to resume");
        assert_eq!(t.0, vec![("resume", 3)]);
        assert_eq!((a.record.throttled_ns, a.throttled_total_ns), (300, 900));
        // Unbudgeted: no overshoot whatever it used.
        a.record.used = 50;
        let done = a.close(2_500, PeriodRecord::default(), false);
        assert_eq!((done.overshoot, done.throttled_ns), (0, 300));
        // The run's end while stopped: the last period gets the time since the stop.
        a.record = PeriodRecord { budget: 10, used: 12, ..Default::default() };
        a.stopped(3_000);
        let last = a.finish(3_250, true);
        assert_eq!((last.throttled_ns, last.overshoot), (250, 2));
        assert_eq!(a.stopped_at, None);
    }
}
