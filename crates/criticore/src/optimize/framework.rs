//! The three-phase optimization framework of mc2-io-ipc-os-isolation §6.1 for
//! one task system under one scheme: (1) pack Level-A/B tasks onto cores,
//! (2) place IPC and I/O buffers, (3) split the LLC ways (per-core A/B
//! regions, Level-C/OS region, lock region) minimizing the total Level-C
//! utilization subject to every level's test.
//!
//! Phase 3 uses the exact solver of [`super::llc_ways`] over tables built
//! from the cost model ([`crate::policy::cost`]). Locked buffers: for each lock
//! region size L = 0 … (ways that hold every CL buffer), the CL buffers that
//! fit stay locked and the rest fall back to SBP; the solver splits the
//! remaining N − L ways; the best objective wins (ties: smaller L).

use super::buffers;
use crate::policy::cost::CostModel;
use crate::policy::pet::conditioned;
use super::llc_ways::{self, CoreTables, LevelCTables, WayProblem};
use super::packing;
use super::scheme::Scheme;
use crate::analysis::mc2::Uncovered;
use crate::analysis::{self, Provisioning};
use crate::error::FieldError;
use crate::policy::SchedulerKind;
use crate::model::{IpcMethod, Level, Partition, TaskSystem};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Why a system is not schedulable under a scheme.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "phase", rename_all = "kebab-case")]
pub enum Unschedulable {
    /// Phase 1: this task fits on no core even with the whole LLC.
    Packing { task: usize },
    /// Phase 3: no way split passes every level's test.
    Ways,
}

/// The optimizer's answer for one system and scheme.
#[derive(Debug, Clone)]
pub struct Optimized {
    /// The system with cores, buffer placements and (if schedulable) the allocation written in.
    pub system: TaskSystem,
    pub outcome: Result<Solution, Unschedulable>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Solution {
    /// W_p of each core.
    pub per_core_ways: Vec<u32>,
    pub level_c_ways: u32,
    pub lock_ways: u32,
    /// CL buffers that fit in the lock region (the others use SBP).
    pub locked_buffers: usize,
    /// Σ_p U_A^C(p) + U_B^C(p) + U_C: the minimized total Level-C utilization.
    pub objective: f64,
}

/// The phase-3 tables for a placed system with `n` ways to split and `locked` buffers locked.
pub fn way_problem(system: &TaskSystem, cost: &CostModel, n: u32, locked: usize) -> WayProblem {
    let mut cores = core_tables(system, cost, n, locked, |_| true);
    let level_c = level_c_tables(system, cost, n, locked);
    cores.truncate(system.platform.cores);
    WayProblem { ways: n, cores, level_c }
}

/// Per-core tables over w = 0..=n from the Level-A/B tasks `include` selects.
fn core_tables(system: &TaskSystem, cost: &CostModel, n: u32, locked: usize, include: impl Fn(usize) -> bool) -> Vec<CoreTables> {
    let width = n as usize + 1;
    let mut cores = vec![CoreTables { u_a_a: vec![0.0; width], u_ab_b: vec![0.0; width], u_ab_c: vec![0.0; width] }; system.platform.cores];
    for (i, t) in system.tasks.iter().enumerate() {
        if let (Some(level @ (Level::A | Level::B)), Some(p)) = (t.level, t.core) {
            if !include(i) {
                continue;
            }
            let c = &mut cores[p];
            for w in 0..=n {
                let [a, b, cc] = cost.utilizations(i, w, locked);
                if level == Level::A {
                    c.u_a_a[w as usize] += a;
                }
                c.u_ab_b[w as usize] += b;
                c.u_ab_c[w as usize] += cc;
            }
        }
    }
    cores
}

/// Level-C tables over W_C = 0..=n with `locked` CL buffers locked (Level-C
/// buffers are never locked, but unlocked A/B ones sit in Level-C banks);
/// rows are constant in w_lock, which the caller fixes.
fn level_c_tables(system: &TaskSystem, cost: &CostModel, n: u32, locked: usize) -> LevelCTables {
    let m = system.platform.cores;
    let width = n as usize + 1;
    let level_c_tasks: Vec<usize> = system.at_level(Level::C).collect();
    let mut u_c = Vec::with_capacity(width);
    let mut u_max = Vec::with_capacity(width);
    let mut u_l = Vec::with_capacity(width);
    let mut utils = Vec::with_capacity(level_c_tasks.len());
    for w in 0..=n {
        utils.clear();
        utils.extend(level_c_tasks.iter().map(|&i| cost.utilizations(i, w, locked)[2]));
        let total: f64 = utils.iter().sum();
        utils.sort_by(|a, b| b.total_cmp(a));
        let largest = utils.first().copied().unwrap_or(0.0);
        let top: f64 = utils.iter().take(m.saturating_sub(1)).sum();
        let len = (n - w) as usize + 1;
        u_c.push(vec![total; len]);
        u_max.push(vec![largest; len]);
        u_l.push(vec![top; len]);
    }
    LevelCTables { u_c, u_max, u_l }
}

/// Phase 1's result: a core per task, or the task that fit nowhere.
pub type Packing = Result<Vec<Option<usize>>, usize>;

/// Phase 2 on a packed system: cores written in, buffers placed under `scheme`.
pub fn place(system: &TaskSystem, cores: &[Option<usize>], scheme: Scheme, seed: u64) -> TaskSystem {
    let mut placed = system.clone();
    for (t, &c) in placed.tasks.iter_mut().zip(cores) {
        if c.is_some() {
            t.core = c;
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    buffers::place(&mut placed, scheme, &mut rng);
    placed
}

/// Phase 3 on a placed system: the best way split over the lock-region sizes.
pub fn split_ways(system: &TaskSystem, cost: &CostModel) -> Option<Solution> {
    let n = system.platform.llc.ways;
    let way_bytes = system.platform.llc.size_bytes / n.max(1) as u64;
    let max_lock = cost.lockable_bytes().div_ceil(way_bytes.max(1)).min(n as u64) as u32;
    // Tables of the tasks the lock region does not affect are built once for
    // N ways; a lock region of L ways keeps their first N − L + 1 entries.
    let fixed = core_tables(system, cost, n, 0, |i| !cost.has_lock_savings(i));
    let mut level_c_unlocked: Option<LevelCTables> = None;
    let mut level_c_all: Option<LevelCTables> = None;
    let mut best: Option<Solution> = None;
    for lock in 0..=max_lock {
        let locked = cost.locked_count(lock as u64 * way_bytes);
        if lock > 0 && locked == 0 {
            continue;
        }
        let ways = n - lock;
        let width = ways as usize + 1;
        let extra = core_tables(system, cost, ways, locked, |i| cost.has_lock_savings(i));
        let cores = fixed
            .iter()
            .zip(extra)
            .map(|(f, e)| {
                let sum = |a: &[f64], b: Vec<f64>| a[..width].iter().zip(b).map(|(x, y)| x + y).collect();
                CoreTables { u_a_a: sum(&f.u_a_a, e.u_a_a), u_ab_b: sum(&f.u_ab_b, e.u_ab_b), u_ab_c: sum(&f.u_ab_c, e.u_ab_c) }
            })
            .collect();
        // Level C only changes between "some CL buffer unlocked" and "all locked".
        let level_c_full = if locked < cost.lockable_count() {
            level_c_unlocked.get_or_insert_with(|| level_c_tables(system, cost, n, 0))
        } else {
            level_c_all.get_or_insert_with(|| level_c_tables(system, cost, n, locked))
        };
        let rows = |t: &[Vec<f64>]| t[..width].iter().enumerate().map(|(w, r)| r[..width - w].to_vec()).collect();
        let level_c = LevelCTables { u_c: rows(&level_c_full.u_c), u_max: rows(&level_c_full.u_max), u_l: rows(&level_c_full.u_l) };
        let problem = WayProblem { ways, cores, level_c };
        let Ok(Some(a)) = llc_ways::solve(&problem) else { continue };
        if best.as_ref().is_none_or(|b| a.objective < b.objective - llc_ways::TIE_EPS) {
            best = Some(Solution { per_core_ways: a.per_core, level_c_ways: a.level_c, lock_ways: lock, locked_buffers: locked, objective: a.objective });
        }
    }
    best
}

/// All three phases. `seed` drives the random placements of R schemes.
///
/// Scheme O packs IPC groups together for CE, but CE packed too eagerly costs
/// schedulability (§6.1: the heuristic "applies CE less aggressively as
/// capacity diminishes"). Beyond splitting groups that fit nowhere, O also
/// evaluates the packing without groups and keeps the better of the two
/// (lower objective; ties to the grouped one). docs/optimizer.md.
pub fn optimize(system: &TaskSystem, scheme: Scheme, seed: u64) -> Optimized {
    let single = packing::pack(system, false);
    let grouped = scheme.packs_groups().then(|| packing::pack(system, true));
    optimize_packed(system, scheme, seed, &single, grouped.as_ref())
}

/// [`optimize`] on a user's system: refused, as an input error, where the
/// optimizer would test no task or leave some out. It packs Level-A/B tasks,
/// places buffers and splits the LLC ways for MC²'s tests
/// (mc2-io-ipc-os-isolation §6.1); its verdict speaks for the MC² tasks only,
/// so a file whose tasks are not all MC² tasks is not one it can answer for.
pub fn try_optimize(system: &TaskSystem, scheme: Scheme, seed: u64) -> Result<Optimized, FieldError> {
    analysis::mc2::coverage(system, false).map_err(|why| match why {
        Uncovered::NoLevel => FieldError::new(
            "task.level",
            format!(
                "no task has an MC² level (A–D), and the optimizer places MC² tasks for MC²'s tests (mc2-io-ipc-os-isolation §6.1); the file implies {}: `criticore analyze` gives its verdict",
                SchedulerKind::implied_by(system).name()
            ),
        ),
        why => why.error(system, "the optimizer"),
    })?;
    Ok(optimize(system, scheme, seed))
}

/// Every scheme of [`Scheme::ALL`] on one system, packing once per kind.
pub fn optimize_all(system: &TaskSystem, seed: u64) -> Vec<Optimized> {
    let single = packing::pack(system, false);
    let grouped = packing::pack(system, true);
    Scheme::ALL.iter().map(|&s| optimize_packed(system, s, seed, &single, s.packs_groups().then_some(&grouped))).collect()
}

/// Phases 2 and 3 given phase 1's packings (`grouped` only for O schemes).
pub fn optimize_packed(system: &TaskSystem, scheme: Scheme, seed: u64, single: &Packing, grouped: Option<&Packing>) -> Optimized {
    let Some(grouped) = grouped else {
        return phases_2_3(system, single, scheme, seed);
    };
    let with_groups = phases_2_3(system, grouped, scheme, seed);
    let without = phases_2_3(system, single, scheme, seed);
    match (&with_groups.outcome, &without.outcome) {
        (Ok(g), Ok(s)) if s.objective < g.objective - llc_ways::TIE_EPS => without,
        (Err(_), Ok(_)) => without,
        _ => with_groups,
    }
}

fn phases_2_3(system: &TaskSystem, packing: &Packing, scheme: Scheme, seed: u64) -> Optimized {
    let cores = match packing {
        Ok(cores) => cores,
        Err(task) => return Optimized { system: system.clone(), outcome: Err(Unschedulable::Packing { task: *task }) },
    };
    let mut placed = place(system, cores, scheme, seed);
    let cost = CostModel::new(&placed);
    let Some(solution) = split_ways(&placed, &cost) else {
        return Optimized { system: placed, outcome: Err(Unschedulable::Ways) };
    };
    write_solution(&mut placed, &solution);
    Optimized { system: placed, outcome: Ok(solution) }
}

/// Write the way split into the allocation, and SBP for CL buffers that did not fit.
fn write_solution(system: &mut TaskSystem, s: &Solution) {
    let mut cl_seen = 0usize;
    for t in system.tasks.iter_mut() {
        if let Some(link) = t.ipc.as_mut() {
            if link.method == Some(IpcMethod::Cl) && matches!(t.level, Some(Level::A | Level::B)) && t.cost.is_some() {
                if cl_seen >= s.locked_buffers {
                    link.method = Some(IpcMethod::Sbp);
                }
                cl_seen += 1;
            }
        }
    }
    if system.tasks.iter().all(|t| t.cost.is_none()) {
        // No PET depends on the ways, so any split is as good: keep the file's
        // allocation rather than write the tie rule's (no ways at all), which
        // the simulator's memory models would take literally.
        return;
    }
    let mut allocation = system.allocation.clone().unwrap_or_default();
    allocation.llc_ways = s.per_core_ways.iter().enumerate().map(|(p, &w)| (Partition::Core(p), w)).collect();
    allocation.llc_ways.push((Partition::LevelC, s.level_c_ways));
    if s.lock_ways > 0 {
        allocation.llc_ways.push((Partition::Lock, s.lock_ways));
    }
    system.allocation = Some(allocation);
}

/// Whether the analysis module agrees: the conditioned system passes every level's test.
pub fn analysis_schedulable(system: &TaskSystem) -> Option<bool> {
    let conditioned = conditioned(system).ok()?;
    analysis::mc2::analyze(&conditioned, Provisioning::MC2_ISOLATED).map(|r| r.schedulable())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{parse_task_system, Format};

    fn system(tasks: &str) -> TaskSystem {
        parse_task_system(&format!("[platform]\ncores = 2\n{tasks}"), Format::Toml, "t.toml").unwrap()
    }

    fn refused(text: &str) -> FieldError {
        match try_optimize(&system(text), Scheme::parse("O|C+A/B-ALL").unwrap(), 0) {
            Err(e) => e,
            Ok(o) => panic!("optimized: {:?}", o.outcome),
        }
    }

    #[test]
    fn an_overloaded_pfp_system_is_refused_not_called_schedulable() {
        // 8 ms + 8 ms every 10 ms on core 0, no MC² level: nothing for the optimizer to test.
        let e = refused(
            "[[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"8ms\"\n\
             [[task]]\nname = \"b\"\ncore = 0\nperiod = \"10ms\"\npet = \"8ms\"\n",
        );
        assert_eq!(e.field, "task.level");
        assert!(e.reason.starts_with("no task has an MC² level") && e.reason.contains("the file implies pfp:"), "{}", e.reason);
    }

    #[test]
    fn a_task_without_level_beside_mc2_tasks_is_refused() {
        let e = refused(
            "[[task]]\nname = \"lc\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n\
             [[task]]\nname = \"x\"\ncore = 1\nperiod = \"10ms\"\npet = \"9ms\"\n",
        );
        assert_eq!(e.field, "task[1].level");
        assert!(e.reason.contains("the optimizer would leave it out"), "{}", e.reason);
    }

    #[test]
    fn best_effort_tasks_only_are_refused() {
        let e = refused("[[task]]\nname = \"d\"\nlevel = \"D\"\nperiod = \"10ms\"\npet = { D = \"20ms\" }\n");
        assert_eq!(e.field, "task.level");
    }

    #[test]
    fn an_unplaced_level_b_task_is_the_optimizers_to_place() {
        // b (0.9 of a core at any ways: a slowdown of 1) cannot share a core with
        // a (0.2), so phase 1 (which packs every Level-A/B task) splits them.
        let text = "[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\npet = { A = \"2ms\", B = \"2ms\", C = \"2ms\" }\n\
            [[task]]\nname = \"b\"\nlevel = \"B\"\nperiod = \"10ms\"\npet = { B = \"9ms\", C = \"9ms\" }\n\
            cost = { llc_slowdown = 1.0, wss_ways = 1, reload = 0.0 }\n";
        let o = try_optimize(&system(text), Scheme::parse("O|C+A/B-ALL").unwrap(), 0).unwrap();
        assert!(o.outcome.is_ok(), "{:?}", o.outcome);
        let (a, b) = (o.system.tasks[0].core, o.system.tasks[1].core);
        assert!(a.is_some() && b.is_some() && a != b, "{a:?} {b:?}");
    }
}
