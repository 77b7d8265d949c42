//! Per-task response bounds under MC² (issue 26, Build 4), so `analyze
//! --check-sim` can set each beside the simulator's MC² scheduler
//! (docs/analysis.md, "MC² per-task bounds"):
//!
//! - Level A: the cyclic-executive table (mc2-hardware-management §2): a job
//!   ends by the end of its last slot, so its response is at most that end
//!   less its release; the worst over the hyperperiod's jobs.
//! - Level B: rate-monotonic on the core below Level A. Response-time
//!   analysis with Level-B PETs: Rᵢ = Cᵢ + Σ_hp ⌈R/Tⱼ⌉·Cⱼ + A(R), where A(w)
//!   is the most time Level A can take in any window of length w: its table's
//!   slots, each job's cut to its Level-B PET (a job runs in its slots from
//!   the first and gives the rest of them away once done, as the simulator's
//!   scheduler does). Only the first job of a busy period is bounded; a task
//!   whose response passes its period gets no bound.
//! - Level C: global EDF on what A and B leave: the deadline plus the
//!   tardiness bound x + eᵢ of the Level-C test (bounded tardiness is MC²'s
//!   guarantee for Level C; the verdict says bounded, not "within deadline").
//! - Level D: best effort, no bound.
//!
//! Each level's bound holds when jobs run at most their PET at that level
//! (`--exec-level` C, the default, or B for Levels A and B). Levels A and B
//! split their bounds for `--explain` (`Split`): own time, higher Level-B
//! PETs, and Level A's table time (`BoundTerms::supply_wait_ns`).

use super::classic::{BoundTerms, TaskBound};
use super::level_a::{self, CyclicTable};
use super::level_b;
use super::mc2::Mc2Result;
use super::Provisioning;
use crate::model::{Level, TaskSystem};
use crate::policy::provisioning::Charged;

/// One row per task of `system` (file order), from the MC² test `main` under `prov`.
pub fn task_bounds(system: &TaskSystem, prov: Provisioning, main: &Mc2Result) -> Vec<TaskBound> {
    let tables: Vec<Option<CyclicTable>> = (0..system.platform.cores).map(|p| level_a::table(system, p, prov).ok()).collect();
    task_bounds_with(system, prov, main, &tables)
}

/// As [`task_bounds`], with each core's Level-A table already made (the report's).
pub fn task_bounds_with(system: &TaskSystem, prov: Provisioning, main: &Mc2Result, tables: &[Option<CyclicTable>]) -> Vec<TaskBound> {
    // Per core: its A and B tasks at Level-B PETs, and Level A's busy intervals at them.
    let per_core: Vec<Option<(Vec<Charged>, Vec<(u64, u64)>)>> = tables
        .iter()
        .enumerate()
        .map(|(core, table)| {
            let table = table.as_ref()?;
            let charged = level_b::charged(system, core, prov)?;
            let busy = a_busy(table, |i| charged.iter().find(|c| c.task == i).map_or(0, |c| c.pet_ns));
            Some((charged, busy))
        })
        .collect();
    // A Level-C task's tardiness bound ⌈x + e⌉ and its e.
    let c_tardiness = |i: usize| {
        let c = &main.level_c;
        c.tasks.iter().position(|&t| t == i).and_then(|k| c.tardiness_bounds_ns[k].map(|x| (x, c.pets_ns[k])))
    };
    (0..system.tasks.len())
        .map(|i| {
            let t = &system.tasks[i];
            let level = t.level.unwrap_or(Level::D);
            let row = |on: String, bound: Option<u64>, schedulable: Option<bool>, note: Option<String>, terms: Option<BoundTerms>| TaskBound {
                task: t.name.clone(),
                on,
                // A background Level-D task has no jobs: nothing per job to show.
                pet_ns: if t.is_background() { 0 } else { t.pet_at(level) },
                period_ns: if t.is_background() { 0 } else { t.period_ns },
                deadline_ns: if t.is_background() { 0 } else { t.deadline_ns },
                bound_ns: bound,
                schedulable,
                note,
                terms,
                background: t.is_background(),
            };
            let core = t.core.unwrap_or(0);
            let on = || format!("core {core}");
            match level {
                Level::A => match &tables[core] {
                    Some(table) => {
                        let worst = level_a_bound(table, i, t.period_ns);
                        let b = worst.map(|w| w.response_ns);
                        row(on(), b, Some(b.is_some_and(|b| b <= t.deadline_ns)), Some("Level A: the end of its last table slot".into()), worst.map(Split::terms))
                    }
                    None => row(on(), None, Some(false), Some("Level A: no table for this core".into()), None),
                },
                Level::B => {
                    let w = tables[core].as_ref().zip(per_core[core].as_ref()).and_then(|(table, (charged, busy))| level_b_bound(system, charged, busy, table.hyperperiod_ns, i));
                    let b = w.map(|w| w.response_ns);
                    let note = if b.is_some() { "Level B: rate-monotonic below the Level-A table" } else { "Level B: the response passes its period (or Level A has no table): no bound" };
                    row(on(), b, Some(b.is_some_and(|b| b <= t.deadline_ns)), Some(note.into()), w.map(Split::terms))
                }
                Level::C => {
                    let tard = c_tardiness(i);
                    let b = tard.map(|(x, _)| t.deadline_ns.saturating_add(x));
                    let note = match b {
                        Some(_) => "Level C: deadline + tardiness bound x + e (bounded tardiness, MC²'s Level-C guarantee)",
                        None => "Level C: no tardiness bound (the Level-C test fails)",
                    };
                    // D + ⌈x⌉ + e: its deadline, the bound's x and its PET as charged.
                    let terms = tard.filter(|_| b != Some(u64::MAX)).map(|(x, e)| BoundTerms { jobs: 1, own_pet_ns: e, deadline_ns: t.deadline_ns, tardiness_ns: x - e, ..BoundTerms::default() });
                    row("global".into(), b, Some(b.is_some()), Some(note.into()), terms)
                }
                Level::D => row("global".into(), None, None, Some("Level D: best effort, not analyzed".into()), None),
            }
        })
        .collect()
}

/// A Level-A or Level-B bound split (`--explain`): the job's own time, the
/// higher-priority Level-B jobs', and the Level-A table's time (for a
/// Level-A job: the table's time not in its own slots, other tasks' slots
/// and idle); they sum to the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    response_ns: u64,
    own_ns: u64,
    higher_ns: u64,
    level_a_ns: u64,
}

impl Split {
    /// As `--explain` shows it: Level A's time is what the table does not give the job.
    fn terms(self) -> BoundTerms {
        BoundTerms { jobs: 1, own_pet_ns: self.own_ns, higher_pet_ns: self.higher_ns, supply_wait_ns: self.level_a_ns, ..BoundTerms::default() }
    }
}

/// Level A: the worst (end of a job's last slot − its release) over the
/// table, with that job's slots' time.
fn level_a_bound(table: &CyclicTable, task: usize, period_ns: u64) -> Option<Split> {
    let mut worst: Option<Split> = None;
    for s in table.slots.iter().filter(|s| s.task == task) {
        let release = (s.job - 1) * period_ns;
        let response = (s.start_ns + s.length_ns).saturating_sub(release);
        if worst.is_none_or(|w| response > w.response_ns) {
            // The job's slots up to this one (a job's slots come in order).
            let own: u64 = table.slots.iter().filter(|x| x.task == task && x.job == s.job && x.start_ns <= s.start_ns).map(|x| x.length_ns).sum();
            worst = Some(Split { response_ns: response, own_ns: own.min(response), higher_ns: 0, level_a_ns: response - own.min(response) });
        }
    }
    worst
}

/// Level B's first-job response (None past its period), over the core's
/// A and B tasks `charged` at Level-B PETs and Level A's `busy` intervals
/// (hyperperiod `h`), split at the fixed point w = C + Σ ⌈w/T⌉·C + A(w).
fn level_b_bound(system: &TaskSystem, charged: &[Charged], busy: &[(u64, u64)], h: u64, task: usize) -> Option<Split> {
    let own = charged.iter().find(|c| c.task == task)?;
    // Rate-monotonic, ties by file order (the simulator's key).
    let higher: Vec<_> = charged
        .iter()
        .filter(|c| system.tasks[c.task].level == Some(Level::B) && (c.period_ns, c.task) < (own.period_ns, own.task))
        .collect();
    let mut w = own.pet_ns;
    loop {
        let higher_ns = higher.iter().map(|h| w.div_ceil(h.period_ns) * h.pet_ns).sum::<u64>();
        let level_a_ns = max_in_window(busy, h, w);
        let next = own.pet_ns + higher_ns + level_a_ns;
        if next > own.period_ns {
            return None;
        }
        if next == w {
            return Some(Split { response_ns: w, own_ns: own.pet_ns, higher_ns, level_a_ns });
        }
        w = next;
    }
}

/// Level A's busy intervals over one hyperperiod: each job's slots from the
/// first, cut to `pet(task)` (its Level-B PET) in total.
fn a_busy(table: &CyclicTable, pet: impl Fn(usize) -> u64) -> Vec<(u64, u64)> {
    // (task, job, time left): a job's slots are few and come in order.
    let mut left: Vec<(usize, u64, u64)> = Vec::new();
    let mut busy = Vec::new();
    for s in &table.slots {
        let k = match left.iter().position(|&(t, j, _)| (t, j) == (s.task, s.job)) {
            Some(k) => k,
            None => {
                left.push((s.task, s.job, pet(s.task)));
                left.len() - 1
            }
        };
        let rest = &mut left[k].2;
        let len = s.length_ns.min(*rest);
        *rest -= len;
        if len > 0 {
            busy.push((s.start_ns, s.start_ns + len));
        }
    }
    busy
}

/// The most busy time in any window of length `w` of the cyclic schedule
/// `busy` (period `h`): a window that starts at some interval's start.
fn max_in_window(busy: &[(u64, u64)], h: u64, w: u64) -> u64 {
    if busy.is_empty() || h == 0 {
        return 0;
    }
    let per_period: u64 = busy.iter().map(|(a, b)| b - a).sum();
    let (whole, rest) = (w / h, w % h);
    // Whole hyperperiods hold the same; the rest starts at an interval's start.
    let overlap = |t0: u64| -> u64 {
        let end = t0 + rest;
        busy.iter()
            .flat_map(|&(a, b)| [(a, b), (a + h, b + h)])
            .map(|(a, b)| b.min(end).saturating_sub(a.max(t0)))
            .sum()
    };
    whole * per_period + busy.iter().map(|&(a, _)| overlap(a)).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::cyclic_executive::Slot;

    #[test]
    fn level_a_window_occupancy_by_hand() {
        // Slots [0, 4) and [10, 12) every 20: in 6 ns at most 4 + 0 (from 0)
        // or 2 + 0 (from 10) -> 4; in 13 ns from 0: 4 + 2 = 6; from 10: 2 +
        // 4 (wrapping to 20..24 = [0, 4)) = 6; in 45: two whole periods (12)
        // + the most in 5 (4) = 16.
        let busy = vec![(0, 4), (10, 12)];
        assert_eq!(max_in_window(&busy, 20, 6), 4);
        assert_eq!(max_in_window(&busy, 20, 13), 6);
        assert_eq!(max_in_window(&busy, 20, 45), 16);
        // A job's slots cut to its Level-B PET, from the first.
        let table = CyclicTable {
            core: 0,
            hyperperiod_ns: 20,
            slots: vec![Slot { task: 0, job: 1, start_ns: 0, length_ns: 4 }, Slot { task: 0, job: 1, start_ns: 10, length_ns: 2 }],
        };
        assert_eq!(a_busy(&table, |_| 5), vec![(0, 4), (10, 11)]);
        // Its one job ends at 12: 4 + 2 in its slots, 6 of the table's time between.
        assert_eq!(level_a_bound(&table, 0, 20), Some(Split { response_ns: 12, own_ns: 6, higher_ns: 0, level_a_ns: 6 }));
    }
}
