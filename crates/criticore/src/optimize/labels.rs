//! Label placement on a scratchpad platform (issue 27, Build 7, the WATERS
//! 2017 challenge's third question; docs/optimizer.md "Label placement"):
//! move labels between the memories, within their sizes, to lower the worst
//! normalized response time (bound / deadline) under pfp, or the worst
//! chain's reaction time bound.
//!
//! The analysis (`analysis::classic`, pfp with the crossbar's port waits)
//! judges every placement; the moves it tries come from a cheap estimate:
//! per label, the memory with the least latency-weighted access rate of the
//! tasks that access it (accesses per ns × cycles from their cores; an
//! implicit task's copies, not its runnables, touch the label's memory).
//! The labels are tried in order of that estimate's saving, in batches
//! that halve when a batch does not improve the analysis's score, down to
//! one label; a placement is kept only if it scores better, so the result
//! is never worse than the file's.

use crate::analysis::classic::{analyze, TaskAnalysis};
use crate::error::FieldError;
use crate::model::scratchpad::{copies_labels, set_copies, used_bytes};
use crate::model::TaskSystem;
use crate::policy::SchedulerKind;
use serde::Serialize;

/// What the placement minimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// The worst bound / deadline over the tasks.
    Response,
    /// The worst reaction time bound over the chains.
    Chain,
}

/// A placement's score: tasks (or chains) without a bound first, then the
/// worst, then the sum (a move that helps others without hurting the
/// worst still counts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score {
    pub unbounded: usize,
    /// Normalized response (Response) or ns (Chain), of the bounded.
    pub worst: f64,
    pub sum: f64,
}

impl Score {
    fn better_than(&self, other: &Score) -> bool {
        let eps = |x: f64| 1e-12 * x.abs().max(1.0);
        if self.unbounded != other.unbounded {
            return self.unbounded < other.unbounded;
        }
        if (self.worst - other.worst).abs() > eps(other.worst) {
            return self.worst < other.worst;
        }
        self.sum < other.sum - eps(other.sum)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    pub label: String,
    pub from: String,
    pub to: String,
}

pub struct Placement {
    pub system: TaskSystem,
    pub before: Score,
    pub after: Score,
    pub moves: Vec<Move>,
    /// Placements the analysis judged.
    pub analyses: usize,
}

fn score(system: &TaskSystem, objective: Objective) -> Result<Score, FieldError> {
    let a: TaskAnalysis = analyze(system, SchedulerKind::Pfp)?;
    let values: Vec<Option<f64>> = match objective {
        Objective::Response => a.tasks.iter().map(|t| t.bound_ns.map(|b| b as f64 / t.deadline_ns as f64)).collect(),
        Objective::Chain => a.chains.iter().map(|c| c.reaction_ns.map(|r| r as f64)).collect(),
    };
    let bounded: Vec<f64> = values.iter().flatten().copied().collect();
    Ok(Score { unbounded: values.len() - bounded.len(), worst: bounded.iter().copied().fold(0.0, f64::max), sum: bounded.iter().sum() })
}

/// Each label's users: (task, reads, writes) summed over the task's
/// runnables, background tasks left out; one pass over the accesses.
fn users(system: &TaskSystem) -> Vec<Vec<(usize, u64, u64)>> {
    let mut users: Vec<Vec<(usize, u64, u64)>> = vec![Vec::new(); system.labels.len()];
    for (i, t) in system.tasks.iter().enumerate().filter(|(_, t)| !t.is_background()) {
        for a in t.runnables.iter().flat_map(|r| &r.accesses) {
            let of_label = &mut users[a.label];
            match of_label.last_mut() {
                Some(u) if u.0 == i => (u.1, u.2) = (u.1.saturating_add(a.reads), u.2.saturating_add(a.writes)),
                _ => of_label.push((i, a.reads, a.writes)),
            }
        }
    }
    users
}

/// Cycles per ns label `l`'s `users` spend on its accesses if it sat in memory `m`.
fn weighted_cost(system: &TaskSystem, l: usize, users: &[(usize, u64, u64)], m: usize) -> f64 {
    let memory = &system.platform.memories[m];
    let per_access = memory.accesses_of(system.labels[l].size_bytes) as f64;
    let mut cost = 0.0;
    for &(i, reads, writes) in users.iter().filter(|u| u.1 + u.2 > 0) {
        let t = &system.tasks[i];
        // An implicit task's copies touch the label once per job each way.
        let n = if copies_labels(&system.platform, t) { (reads > 0) as u64 + (writes > 0) as u64 } else { reads + writes };
        let latency = match t.core {
            Some(c) => memory.latency_cycles[c],
            None => memory.latency_cycles.iter().copied().max().unwrap_or(0),
        };
        cost += n as f64 * per_access * latency as f64 / t.period_ns as f64;
    }
    cost
}

/// Move labels of `system` (a scratchpad platform, analyzed under pfp) to
/// lower `objective`, judging at most `budget` placements; `go_on(done,
/// budget)` may stop the search early (the best so far is kept).
pub fn place_labels(system: &TaskSystem, objective: Objective, budget: usize, go_on: &mut dyn FnMut(usize, usize) -> bool) -> Result<Placement, FieldError> {
    if system.platform.memories.is_empty() {
        return Err(FieldError::new("platform.memory", "label placement needs a scratchpad platform ([[platform.memory]] and [[label]]s)"));
    }
    if objective == Objective::Chain && system.chains.is_empty() {
        return Err(FieldError::new("chain", "no [[chain]] to minimize the reaction time of (use the response objective)"));
    }
    let before = score(system, objective)?;
    let mut analyses = 1;
    // Each label's best memory by the estimate, most saving first.
    let users = users(system);
    let mut candidates: Vec<(f64, usize, usize)> = (0..system.labels.len())
        .filter_map(|l| {
            let here = weighted_cost(system, l, &users[l], system.labels[l].memory);
            let (best, m) = (0..system.platform.memories.len()).map(|m| (weighted_cost(system, l, &users[l], m), m)).min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))?;
            (best < here && m != system.labels[l].memory).then_some((here - best, l, m))
        })
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let (mut current, mut best, mut moves) = (system.clone(), before, Vec::new());
    let (mut i, mut batch) = (0, candidates.len().max(1));
    while i < candidates.len() && analyses < budget && go_on(analyses, budget) {
        let mut trial = current.clone();
        let Ok(mut room) = used_bytes(&trial) else { break }; // the file's fit; moves keep them fitting
        let mut tried = Vec::new();
        for &(_, l, m) in &candidates[i..(i + batch).min(candidates.len())] {
            let size = trial.labels[l].size_bytes;
            if room[m] + size <= trial.platform.memories[m].size_bytes {
                room[trial.labels[l].memory] -= size;
                room[m] += size;
                tried.push(Move { label: trial.labels[l].name.clone(), from: trial.platform.memories[trial.labels[l].memory].name.clone(), to: trial.platform.memories[m].name.clone() });
                trial.labels[l].memory = m;
            }
        }
        let taken = batch.min(candidates.len() - i);
        if tried.is_empty() {
            i += taken;
            continue;
        }
        set_copies(&mut trial);
        let s = score(&trial, objective)?;
        analyses += 1;
        if s.better_than(&best) {
            (current, best) = (trial, s);
            moves.extend(tried);
            i += taken;
        } else if batch > 1 {
            batch /= 2;
        } else {
            i += 1;
        }
    }
    Ok(Placement { system: current, before, after: best, moves, analyses })
}
