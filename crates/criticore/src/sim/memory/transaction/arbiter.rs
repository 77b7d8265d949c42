//! Bus arbiters: which waiting core's request crosses the interconnect next.
//! One request holds the bus for one line's transfer time.
//!
//! - `round-robin`: the least-recently-granted waiting core (the NIC-301's
//!   default, mc2-io-ipc-os-isolation §2: cycles go to the least recently used).
//! - `fcfs`: the request that has waited longest.
//! - `aging`: each request's priority grows with its wait (one level per
//!   `aging_ps`); with equal base priorities this is FCFS, with unequal ones a
//!   low-priority request is served after a bounded wait.
//! - `fixed-priority`: the highest priority, then FCFS (MCTI's overload mode,
//!   mcti-task-isolation §5.2.2).
//! - `tdma`: core k may be granted only in slot k of a round of m slots of one
//!   line time each; idle slots are wasted.

use crate::model::Arbiter;

#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    pub core: usize,
    pub since: u64,
}

#[derive(Debug, Clone)]
pub struct BusArbiter {
    pub kind: Arbiter,
    /// Priority per core (higher wins), for fixed-priority and aging.
    pub priority: Vec<u32>,
    last_grant: Vec<u64>,
    grants: u64,
    pub slot_ps: u64,
    pub aging_ps: u64,
}

impl BusArbiter {
    pub fn new(kind: Arbiter, cores: usize, slot_ps: u64) -> BusArbiter {
        // Default fixed priorities: core 0 highest (docs/memory-model.md item 3).
        let priority = (0..cores).map(|c| (cores - c) as u32).collect();
        BusArbiter { kind, priority, last_grant: vec![0; cores], grants: 0, slot_ps, aging_ps: 10 * slot_ps.max(1) }
    }

    /// Earliest time ≥ `now` at which one of `waiting` may be granted.
    pub fn earliest(&self, now: u64, waiting: &[Waiting]) -> u64 {
        if self.kind != Arbiter::Tdma || waiting.is_empty() {
            return now;
        }
        let m = self.last_grant.len() as u64;
        let round = m * self.slot_ps;
        waiting
            .iter()
            .map(|w| {
                let slot_start = now - now % round + w.core as u64 * self.slot_ps;
                if now < slot_start + self.slot_ps && now >= slot_start {
                    now
                } else if now < slot_start {
                    slot_start
                } else {
                    slot_start + round
                }
            })
            .min()
            .unwrap()
    }

    /// Index into `waiting` of the request granted at `now` (≥ `earliest`).
    pub fn pick(&mut self, now: u64, waiting: &[Waiting]) -> Option<usize> {
        let key = |w: &Waiting| -> (i64, i64, i64) {
            match self.kind {
                // Larger key wins.
                Arbiter::RoundRobin => (0, -(self.last_grant[w.core] as i64), -(w.core as i64)),
                Arbiter::Fcfs => (0, -(w.since as i64), -(w.core as i64)),
                Arbiter::FixedPriority => (self.priority[w.core] as i64, -(w.since as i64), -(w.core as i64)),
                Arbiter::Aging => (self.priority[w.core] as i64 + ((now - w.since.min(now)) / self.aging_ps) as i64, -(w.since as i64), -(w.core as i64)),
                Arbiter::Tdma => {
                    let m = self.last_grant.len() as u64;
                    let owner = ((now / self.slot_ps) % m) as usize;
                    ((w.core == owner) as i64, 0, 0)
                }
            }
        };
        let i = (0..waiting.len()).max_by_key(|&i| key(&waiting[i]))?;
        if self.kind == Arbiter::Tdma && key(&waiting[i]).0 == 0 {
            return None;
        }
        self.grants += 1;
        self.last_grant[waiting[i].core] = self.grants;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(core: usize, since: u64) -> Waiting {
        Waiting { core, since }
    }

    #[test]
    fn round_robin_grants_the_least_recently_granted() {
        let mut a = BusArbiter::new(Arbiter::RoundRobin, 3, 10);
        let all = [w(0, 0), w(1, 0), w(2, 0)];
        let order: Vec<usize> = (0..6).map(|_| all[a.pick(0, &all).unwrap()].core).collect();
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2]);
        // Core 2 waited since earlier but core 0 was granted longest ago.
        let mut a = BusArbiter::new(Arbiter::RoundRobin, 3, 10);
        a.pick(0, &[w(2, 0)]);
        a.pick(0, &[w(1, 0)]);
        assert_eq!(a.pick(5, &[w(1, 0), w(2, 0), w(0, 4)]), Some(2));
    }

    #[test]
    fn fcfs_and_fixed_priority() {
        let mut a = BusArbiter::new(Arbiter::Fcfs, 3, 10);
        assert_eq!(a.pick(9, &[w(0, 5), w(2, 3), w(1, 4)]), Some(1));
        let mut a = BusArbiter::new(Arbiter::FixedPriority, 3, 10);
        a.priority = vec![1, 3, 2];
        assert_eq!(a.pick(9, &[w(0, 0), w(2, 3), w(1, 8)]), Some(2));
    }

    #[test]
    fn aging_serves_a_low_priority_request_after_a_bounded_wait() {
        let mut a = BusArbiter::new(Arbiter::Aging, 2, 10);
        a.priority = vec![0, 2];
        a.aging_ps = 100;
        // Core 0 waited 150: priority 0 + 1 < 2.
        assert_eq!(a.pick(150, &[w(0, 0), w(1, 140)]), Some(1));
        // Waited 300: 0 + 3 > 2.
        assert_eq!(a.pick(300, &[w(0, 0), w(1, 290)]), Some(0));
    }

    #[test]
    fn tdma_grants_only_in_the_owners_slot() {
        let mut a = BusArbiter::new(Arbiter::Tdma, 4, 10);
        // Slot of core 2 is [20, 30) in a 40-long round.
        assert_eq!(a.earliest(0, &[w(2, 0)]), 20);
        assert_eq!(a.earliest(25, &[w(2, 0)]), 25);
        assert_eq!(a.earliest(31, &[w(2, 0)]), 60);
        assert_eq!(a.earliest(31, &[w(2, 0), w(0, 0)]), 40);
        assert_eq!(a.pick(5, &[w(2, 0)]), None);
        assert_eq!(a.pick(22, &[w(0, 0), w(2, 0)]), Some(1));
    }
}
