//! MC² Level A: per-core table-driven cyclic executive (mc2-hardware-management §2).
//!
//! Table: preemptive rate-monotonic order over the Level-A hyperperiod, which
//! for harmonic periods and U ≤ 1 meets every deadline; each contiguous run of
//! one job becomes a slot. The simulator's MC² scheduler follows the table;
//! the analysis reports it.

use super::provisioning::{charge, Charged, Provisioning};
use super::utilization::fits_one_core;
use crate::model::validate::lcm;
use crate::model::{Level, TaskSystem};

/// Level-A tasks of `core` charged with their Level-A PETs; None if a PET is missing.
pub fn charged(system: &TaskSystem, core: usize, prov: Provisioning) -> Option<Vec<Charged>> {
    charge(system, system.on_core(core, Level::A), Level::A, prov)
}

/// One entry of a cyclic-executive table: job `job` (1-based, J_{i,job}) of
/// `task` runs from `start_ns` for `length_ns` within the hyperperiod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub task: usize,
    pub job: u64,
    pub start_ns: u64,
    pub length_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CyclicTable {
    pub core: usize,
    pub hyperperiod_ns: u64,
    pub slots: Vec<Slot>,
}

/// Largest number of jobs per hyperperiod a table is synthesized for; a core
/// with periods 1 µs and 100 s would otherwise ask for 10⁸ slots.
pub const MAX_TABLE_JOBS: u64 = 100_000;

/// Why a core has no table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTable {
    /// A PET the provisioning needs is missing.
    MissingPet,
    /// Level A does not fit on the core (utilization above 1).
    Overloaded,
    /// The hyperperiod holds more than [`MAX_TABLE_JOBS`] jobs.
    TooLarge { jobs: u64 },
}

/// Synthesize the cyclic-executive table of one core from charged Level-A tasks.
pub fn synthesize_table(core: usize, items: &[Charged]) -> Result<CyclicTable, NoTable> {
    let hyperperiod_ns = items.iter().map(|c| c.period_ns).fold(1, lcm);
    if items.is_empty() {
        return Ok(CyclicTable { core, hyperperiod_ns: 0, slots: Vec::new() });
    }
    if !fits_one_core(items).1 {
        return Err(NoTable::Overloaded);
    }
    let jobs = items.iter().fold(0u64, |n, c| n.saturating_add(hyperperiod_ns / c.period_ns));
    if jobs > MAX_TABLE_JOBS {
        return Err(NoTable::TooLarge { jobs });
    }
    // Rate-monotonic priority: shorter period first, file order breaks ties.
    let mut order: Vec<&Charged> = items.iter().collect();
    order.sort_by_key(|c| (c.period_ns, c.task));
    let n = order.len();
    let mut remaining = vec![0u64; n];
    let mut job = vec![0u64; n];
    let mut slots: Vec<Slot> = Vec::new();
    let mut now = 0u64;
    while now < hyperperiod_ns {
        // Release every job due now; a job still pending at its next release missed its deadline.
        for k in 0..n {
            if now % order[k].period_ns == 0 {
                if remaining[k] > 0 {
                    return Err(NoTable::Overloaded);
                }
                remaining[k] = order[k].pet_ns;
                job[k] += 1;
            }
        }
        let next_release = order.iter().map(|c| (now / c.period_ns + 1) * c.period_ns).min().unwrap();
        match (0..n).find(|&k| remaining[k] > 0) {
            None => now = next_release.min(hyperperiod_ns),
            Some(k) => {
                let run = remaining[k].min(next_release - now);
                remaining[k] -= run;
                let task = order[k].task;
                match slots.last_mut() {
                    Some(s) if s.task == task && s.job == job[k] && s.start_ns + s.length_ns == now => s.length_ns += run,
                    _ => slots.push(Slot { task, job: job[k], start_ns: now, length_ns: run }),
                }
                now += run;
            }
        }
    }
    if remaining.iter().any(|&r| r > 0) {
        return Err(NoTable::Overloaded);
    }
    Ok(CyclicTable { core, hyperperiod_ns, slots })
}

/// The table of one core under a provisioning.
pub fn table(system: &TaskSystem, core: usize, prov: Provisioning) -> Result<CyclicTable, NoTable> {
    synthesize_table(core, &charged(system, core, prov).ok_or(NoTable::MissingPet)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(task: usize, pet_ms: u64, period_ms: u64) -> Charged {
        Charged { task, pet_ns: pet_ms * 1_000_000, period_ns: period_ms * 1_000_000 }
    }

    fn slot(task: usize, job: u64, start_ms: u64, length_ms: u64) -> Slot {
        Slot { task, job, start_ns: start_ms * 1_000_000, length_ns: length_ms * 1_000_000 }
    }

    #[test]
    fn table_of_two_harmonic_tasks_is_worked_out_by_hand() {
        // T0: 2 ms every 5 ms, T1: 4 ms every 10 ms. Hyperperiod 10 ms.
        // RM: T0 J1 [0,2), T1 J1 [2,5) preempted at 5, T0 J2 [5,7), T1 J1 [7,8), idle [8,10).
        let table = synthesize_table(0, &[c(1, 4, 10), c(0, 2, 5)]).unwrap();
        assert_eq!(table.hyperperiod_ns, 10_000_000);
        assert_eq!(
            table.slots,
            vec![slot(0, 1, 0, 2), slot(1, 1, 2, 3), slot(0, 2, 5, 2), slot(1, 1, 7, 1)]
        );
    }

    #[test]
    fn full_core_table_has_no_idle_time() {
        let table = synthesize_table(0, &[c(0, 5, 10), c(1, 10, 20)]).unwrap();
        let busy: u64 = table.slots.iter().map(|s| s.length_ns).sum();
        assert_eq!(busy, table.hyperperiod_ns);
        assert_eq!(table.slots, vec![slot(0, 1, 0, 5), slot(1, 1, 5, 5), slot(0, 2, 10, 5), slot(1, 1, 15, 5)]);
    }

    #[test]
    fn overloaded_core_has_no_table() {
        assert_eq!(synthesize_table(0, &[c(0, 5, 10), c(1, 11, 20)]), Err(NoTable::Overloaded));
        // One nanosecond over the boundary is enough.
        let over = [Charged { task: 0, pet_ns: 5_000_001, period_ns: 10_000_000 }, c(1, 10, 20)];
        assert_eq!(synthesize_table(0, &over), Err(NoTable::Overloaded));
    }

    #[test]
    fn huge_hyperperiod_is_refused_before_any_work() {
        // 1 µs and 100 s periods: 10⁸ + 1 jobs per hyperperiod.
        let items = [
            Charged { task: 0, pet_ns: 500, period_ns: 1_000 },
            Charged { task: 1, pet_ns: 1, period_ns: 100_000_000_000 },
        ];
        assert_eq!(synthesize_table(0, &items), Err(NoTable::TooLarge { jobs: 100_000_001 }));
    }

    #[test]
    fn every_job_gets_exactly_its_pet_in_the_table() {
        let items = [c(0, 1, 10), c(1, 3, 20), c(2, 7, 40), c(3, 9, 80)];
        let table = synthesize_table(0, &items).unwrap();
        assert_eq!(table.hyperperiod_ns, 80_000_000);
        for item in &items {
            let jobs = table.hyperperiod_ns / item.period_ns;
            for j in 1..=jobs {
                let got: u64 = table.slots.iter().filter(|s| s.task == item.task && s.job == j).map(|s| s.length_ns).sum();
                assert_eq!(got, item.pet_ns, "task {} job {j}", item.task);
                // Every slot of job j lies inside its period window.
                for s in table.slots.iter().filter(|s| s.task == item.task && s.job == j) {
                    assert!(s.start_ns >= (j - 1) * item.period_ns);
                    assert!(s.start_ns + s.length_ns <= j * item.period_ns);
                }
            }
        }
    }
}
