//! The three-phase optimization framework of mc2-io-ipc-os-isolation §6.1 for
//! one task system under one scheme: (1) pack Level-A/B tasks onto cores,
//! (2) place IPC and I/O buffers, (3) split the LLC ways (per-core A/B
//! regions, Level-C/OS region, lock region) minimizing the total Level-C
//! utilization subject to every level's test.
//!
//! Phase 3 uses the exact solver of [`super::llc_ways`] over tables built
//! from the cost model ([`super::cost`]). Locked buffers: for each lock
//! region size L = 0 … (ways that hold every CL buffer), the CL buffers that
//! fit stay locked and the rest fall back to SBP; the solver splits the
//! remaining N − L ways; the best objective wins (ties: smaller L).

use super::buffers;
use super::cost::CostModel;
use super::llc_ways::{self, CoreTables, LevelCTables, WayProblem};
use super::packing;
use super::scheme::Scheme;
use crate::analysis::{self, Provisioning};
use crate::model::{Allocation, IpcMethod, Level, Partition, TaskSystem};
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

/// Per-task utilizations at one level for w = 0..=n ways (None: task has no PET there).
fn util_row(cost: &CostModel, i: usize, level: Level, n: u32, locked: usize) -> Vec<f64> {
    (0..=n).map(|w| cost.utilization(i, level, w, locked).unwrap_or(0.0)).collect()
}

/// The phase-3 tables for a placed system with `n` ways to split and `locked` buffers locked.
pub fn way_problem(system: &TaskSystem, cost: &CostModel, n: u32, locked: usize) -> WayProblem {
    let m = system.platform.cores;
    let width = n as usize + 1;
    let mut cores = vec![CoreTables { u_a_a: vec![0.0; width], u_ab_b: vec![0.0; width], u_ab_c: vec![0.0; width] }; m];
    let add = |acc: &mut Vec<f64>, row: Vec<f64>| acc.iter_mut().zip(row).for_each(|(a, r)| *a += r);
    let mut level_c_tasks = Vec::new();
    for (i, t) in system.tasks.iter().enumerate() {
        match (t.level, t.core) {
            (Some(Level::A), Some(p)) => {
                add(&mut cores[p].u_a_a, util_row(cost, i, Level::A, n, locked));
                add(&mut cores[p].u_ab_b, util_row(cost, i, Level::B, n, locked));
                add(&mut cores[p].u_ab_c, util_row(cost, i, Level::C, n, locked));
            }
            (Some(Level::B), Some(p)) => {
                add(&mut cores[p].u_ab_b, util_row(cost, i, Level::B, n, locked));
                add(&mut cores[p].u_ab_c, util_row(cost, i, Level::C, n, locked));
            }
            (Some(Level::C), _) => level_c_tasks.push(i),
            _ => {}
        }
    }
    // Level C depends on W_C only; the lock region is fixed outside (rows constant in w_lock).
    let mut u_c = Vec::with_capacity(width);
    let mut u_max = Vec::with_capacity(width);
    let mut u_l = Vec::with_capacity(width);
    let mut utils = Vec::with_capacity(level_c_tasks.len());
    for w in 0..=n {
        utils.clear();
        utils.extend(level_c_tasks.iter().map(|&i| cost.utilization(i, Level::C, w, locked).unwrap_or(0.0)));
        let total: f64 = utils.iter().sum();
        utils.sort_by(|a, b| b.total_cmp(a));
        let largest = utils.first().copied().unwrap_or(0.0);
        let top: f64 = utils.iter().take(m.saturating_sub(1)).sum();
        let len = (n - w) as usize + 1;
        u_c.push(vec![total; len]);
        u_max.push(vec![largest; len]);
        u_l.push(vec![top; len]);
    }
    WayProblem { ways: n, cores, level_c: LevelCTables { u_c, u_max, u_l } }
}

/// Phases 1 and 2: the system with cores and buffers decided, or the task
/// phase 1 could not place. `groups`: pack IPC groups as units (CE).
pub fn place(system: &TaskSystem, scheme: Scheme, groups: bool, seed: u64) -> Result<TaskSystem, (TaskSystem, usize)> {
    let mut placed = system.clone();
    match packing::pack(system, groups) {
        Ok(cores) => {
            for (t, c) in placed.tasks.iter_mut().zip(cores) {
                if c.is_some() {
                    t.core = c;
                }
            }
        }
        Err(task) => return Err((placed, task)),
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    buffers::place(&mut placed, scheme, &mut rng);
    Ok(placed)
}

/// Phase 3 on a placed system: the best way split over the lock-region sizes.
pub fn split_ways(system: &TaskSystem, cost: &CostModel) -> Option<Solution> {
    let n = system.platform.llc.ways;
    let way_bytes = system.platform.llc.size_bytes / n.max(1) as u64;
    let max_lock = cost.lockable_bytes().div_ceil(way_bytes.max(1)).min(n as u64) as u32;
    let mut best: Option<Solution> = None;
    for lock in 0..=max_lock {
        let locked = cost.locked_count(lock as u64 * way_bytes);
        if lock > 0 && locked == 0 {
            continue;
        }
        let problem = way_problem(system, cost, n - lock, locked);
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
    let grouped = optimize_packing(system, scheme, scheme.packs_groups(), seed);
    if !scheme.packs_groups() {
        return grouped;
    }
    let single = optimize_packing(system, scheme, false, seed);
    match (&grouped.outcome, &single.outcome) {
        (Ok(g), Ok(s)) if s.objective < g.objective - llc_ways::TIE_EPS => single,
        (Err(_), Ok(_)) => single,
        _ => grouped,
    }
}

fn optimize_packing(system: &TaskSystem, scheme: Scheme, groups: bool, seed: u64) -> Optimized {
    let mut placed = match place(system, scheme, groups, seed) {
        Ok(placed) => placed,
        Err((placed, task)) => return Optimized { system: placed, outcome: Err(Unschedulable::Packing { task }) },
    };
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
    let mut allocation = system.allocation.clone().unwrap_or_default();
    allocation.llc_ways = s.per_core_ways.iter().enumerate().map(|(p, &w)| (Partition::Core(p), w)).collect();
    allocation.llc_ways.push((Partition::LevelC, s.level_c_ways));
    if s.lock_ways > 0 {
        allocation.llc_ways.push((Partition::Lock, s.lock_ways));
    }
    system.allocation = Some(allocation);
}

/// Ways of a partition in the system's allocation (a partition not listed gets none).
fn ways_of(allocation: &Allocation, part: Partition) -> u32 {
    allocation.llc_ways.iter().find(|(p, _)| *p == part).map_or(0, |&(_, w)| w)
}

/// Where a task stands before its PETs can be conditioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotConditionable {
    /// A Level-A/B task with a cost curve has no core yet.
    Unplaced { task: usize },
    /// Cost curves need an `[allocation]` with `llc_ways`.
    NoWays,
}

/// The system with every cost-curve task's PETs replaced by its conditioned
/// PETs (rounded up to whole ns) under the system's allocation and placements:
/// what `analyze` and `simulate` use. Unchanged if no task has a cost curve.
pub fn conditioned(system: &TaskSystem) -> Result<TaskSystem, NotConditionable> {
    if system.tasks.iter().all(|t| t.cost.is_none()) {
        return Ok(system.clone());
    }
    if let Some(task) = system.tasks.iter().position(|t| matches!(t.level, Some(Level::A | Level::B)) && t.core.is_none()) {
        return Err(NotConditionable::Unplaced { task });
    }
    let allocation = system.allocation.as_ref().filter(|a| !a.llc_ways.is_empty()).ok_or(NotConditionable::NoWays)?;
    let lock_bytes = ways_of(allocation, Partition::Lock) as u64 * (system.platform.llc.size_bytes / system.platform.llc.ways.max(1) as u64);
    let cost = CostModel::new(system);
    let locked = cost.locked_count(lock_bytes);
    let mut out = system.clone();
    for (i, t) in out.tasks.iter_mut().enumerate() {
        if t.cost.is_none() {
            continue;
        }
        let part = match t.level {
            Some(Level::A | Level::B) => Partition::Core(t.core.expect("checked above")),
            _ => Partition::LevelC,
        };
        let ways = ways_of(allocation, part);
        for level in Level::ANALYZED {
            if t.pet_ns.get(level).is_some() {
                let pet = cost.pet_ns(i, level, ways, locked).expect("PET present");
                t.pet_ns.set(level, pet.ceil() as u64);
            }
        }
    }
    Ok(out)
}

/// Whether the analysis module agrees: the conditioned system passes every level's test.
pub fn analysis_schedulable(system: &TaskSystem) -> Option<bool> {
    let conditioned = conditioned(system).ok()?;
    analysis::mc2::analyze(&conditioned, Provisioning::MC2_ISOLATED).map(|r| r.schedulable())
}
