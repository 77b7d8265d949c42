//! Phase 3 of the MC² optimizer (mc2-io-ipc-os-isolation §6.1): split the N
//! LLC ways into one Level-A/B region per core (W_p ways), a Level-C/OS region
//! (W_C) and a locked-buffer region (W_lock), minimizing the total Level-C
//! utilization subject to every level's schedulability test. Exact, over
//! tables; docs/optimizer.md has the full statement, the MILP reference
//! (`python/criticore/optimization/milp.py`) and the benchmark.
//!
//! # Problem
//!
//! Inputs are utilizations tabulated per way count (a [`WayProblem`]): per core
//! p and w = 0..=N, `u_a_a[w]` = U_A^A(p), `u_ab_b[w]` = U_A^B(p) + U_B^B(p),
//! `u_ab_c[w]` = U_A^C(p) + U_B^C(p); for Level C, per (w_c, w_lock),
//! `u_c` = U_C, `u_max` = largest Level-C task utilization and `u_l` = U_L(m−1),
//! the sum of the m−1 largest. With ε = [`UTILIZATION_EPS`] (the analysis'
//! tolerance), an allocation (W_0..W_{m−1}, W_C, W_lock) is *feasible* iff
//!
//! - Σ_p W_p + W_C + W_lock ≤ N;
//! - per core: u_a_a[p][W_p] ≤ 1 + ε and u_ab_b[p][W_p] ≤ 1 + ε (Levels A, B);
//! - Level C, with S = Σ_p û_p = Σ_p (1 − u_ab_c[p][W_p]) and the Level-C
//!   tables read at (W_C, W_lock): S ≥ U_C − ε, and S − (m−1)·u_max − U_L > ε
//!   unless u_max = 0 (no Level-C task: the analysis waives the condition).
//!
//! Objective (minimized): Σ_p u_ab_c[p][W_p] + u_c[W_C][W_lock].
//!
//! û_p is not clamped at 0 here, unlike `analysis::level_c::core_supply`; the
//! two agree whenever u_ab_c ≤ 1 at the chosen W_p (always the case when
//! Level-C PETs do not exceed Level-B PETs, since u_ab_b ≤ 1 is required), and
//! otherwise the unclamped S is smaller, so the test here is the safer one.
//!
//! # Floating point: the canonical evaluation
//!
//! Sums are evaluated in one fixed order, and every statement below is about
//! those f64 values, not about real numbers:
//! `C_AB = cost_0 + (cost_1 + (… + (cost_{m−1} + 0.0)))` (right fold over the
//! cores), `S = m − C_AB`, `objective = C_AB + u_c`. In real arithmetic S is
//! Σ_p û_p; the f64 values differ from the analysis' per-core sum by rounding
//! only (~1e-16), far below ε.
//!
//! # Algorithm and why it is exact
//!
//! Let cost_p(w) = u_ab_c[p][w] if core p passes Levels A and B with w ways,
//! else +∞. Suffix tables, for k = m..0 and budget b = 0..=N:
//! `suf[m][b] = 0`, `suf[k][b] = min_{w ≤ b} cost_k(w) + suf[k+1][b − w]`:
//! the least C_AB of cores k..m−1 using at most b ways (O(m·N²)).
//!
//! 1. *Least C_AB is computed exactly.* f64 addition is monotone
//!    (x ≤ x' ⇒ fl(x + y) ≤ fl(x' + y)), so the minimum of the right fold over
//!    all per-core choices is the right fold of per-level minima: `suf[0][b]`
//!    is exactly the smallest canonical C_AB with Σ_p W_p ≤ b.
//! 2. *Fix (W_C, W_lock); budget B = N − W_C − W_lock.* The Level-C test is a
//!    monotone function of C_AB: S = m − C_AB is non-increasing in C_AB and
//!    both conditions are "S large enough" (again by monotone rounding). The
//!    objective C_AB + u_c is non-decreasing in C_AB. So the allocation of
//!    least C_AB (value `suf[0][B]`) is at once the cheapest and the one with
//!    the most Level-C supply: if it fails the Level-C test, every allocation
//!    with this (W_C, W_lock) fails; if it passes, it is optimal for this pair.
//!    (û_p = 1 − cost_p: minimizing the cost maximizes Σ_p û_p.)
//! 3. Over the (N+1)(N+2)/2 pairs (W_C, W_lock) the least objective is the
//!    optimum OPT; no feasible pair means no feasible allocation (`None`).
//!
//! Total O(m·N² + N²) arithmetic plus the reconstruction below (O(m²·N)):
//! a few thousand operations for N = 16, m = 4.
//!
//! # Which optimum is returned (ties)
//!
//! Among all feasible allocations whose objective is ≤ OPT + [`TIE_EPS`], the
//! lexicographically smallest key (W_C, W_lock, W_0, …, W_{m−1}): the smallest
//! Level-C region, then the smallest lock region, then per core in order the
//! fewest ways. Ways that do not lower the objective by more than TIE_EPS are
//! left unallocated (Σ may be < N). Returned `objective` is the canonical value
//! of the returned allocation, so it can exceed OPT by up to TIE_EPS.
//!
//! Reconstruction: the acceptance test "Level-C test passes and objective ≤
//! OPT + TIE_EPS" is monotone in C_AB (step 2), so the first pair (W_C, W_lock)
//! whose least C_AB passes it is the key's first two entries. Then greedily per
//! core k, the smallest w such that the least C_AB over completions,
//! `cost_0(W_0) + (… + (cost_k(w) + suf[k+1][b − w]))` (exact by step 1),
//! still passes; the invariant "some completion passes" holds from the pair
//! choice on, so a w always exists.

use crate::analysis::UTILIZATION_EPS;
use crate::error::{FieldError, FieldResult};
use serde::{Deserialize, Serialize};

/// Objectives within this of the optimum count as ties (see the module doc).
pub const TIE_EPS: f64 = UTILIZATION_EPS;

/// One core's Level-A/B tables, each indexed by the core's way count w = 0..=N.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreTables {
    /// U_A^A(p): Level-A tasks at Level-A PETs.
    pub u_a_a: Vec<f64>,
    /// U_A^B(p) + U_B^B(p): Level-A and -B tasks at Level-B PETs.
    pub u_ab_b: Vec<f64>,
    /// U_A^C(p) + U_B^C(p): Level-A and -B tasks at Level-C PETs.
    pub u_ab_c: Vec<f64>,
}

/// Level-C tables indexed `[w_c][w_lock]`. Row w_c needs at least N − w_c + 1
/// entries (pairs with w_c + w_lock ≤ N); further entries are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelCTables {
    /// U_C: total Level-C utilization at Level-C PETs.
    pub u_c: Vec<Vec<f64>>,
    /// u_max: the largest Level-C task utilization (0 = no Level-C task).
    pub u_max: Vec<Vec<f64>>,
    /// U_L(m−1): the sum of the m−1 largest Level-C task utilizations.
    pub u_l: Vec<Vec<f64>>,
}

/// Phase-3 input: N ways, per-core tables, Level-C tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WayProblem {
    /// N: LLC ways to split (16 on the i.MX6).
    pub ways: u32,
    pub cores: Vec<CoreTables>,
    pub level_c: LevelCTables,
}

/// An allocation of ways and its objective (total Level-C utilization).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WayAllocation {
    /// W_p, the Level-A/B region of each core.
    pub per_core: Vec<u32>,
    /// W_C, the Level-C/OS region.
    pub level_c: u32,
    /// W_lock, the locked-buffer region.
    pub lock: u32,
    /// Σ_p u_ab_c[p][W_p] + u_c[W_C][W_lock], canonical evaluation.
    pub objective: f64,
}

fn check_values(values: &[f64], field: impl Fn() -> String) -> FieldResult<()> {
    match values.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        None => Ok(()),
        Some(i) => Err(FieldError::new(format!("{}[{i}]", field()), format!("must be a finite utilization ≥ 0, got {}", values[i]))),
    }
}

impl WayProblem {
    fn n(&self) -> usize {
        self.ways as usize
    }

    /// Shapes and values: at least one core, tables of N + 1 entries, every
    /// entry that is read finite and ≥ 0.
    pub fn validate(&self) -> FieldResult<()> {
        let n = self.n();
        if self.cores.is_empty() {
            return Err(FieldError::new("cores", "at least one core is needed"));
        }
        for (p, core) in self.cores.iter().enumerate() {
            for (name, table) in [("u_a_a", &core.u_a_a), ("u_ab_b", &core.u_ab_b), ("u_ab_c", &core.u_ab_c)] {
                if table.len() != n + 1 {
                    return Err(FieldError::new(
                        format!("cores[{p}].{name}"),
                        format!("needs ways + 1 = {} entries (w = 0..={n}), got {}", n + 1, table.len()),
                    ));
                }
                check_values(table, || format!("cores[{p}].{name}"))?;
            }
        }
        let c = &self.level_c;
        for (name, table) in [("u_c", &c.u_c), ("u_max", &c.u_max), ("u_l", &c.u_l)] {
            if table.len() != n + 1 {
                return Err(FieldError::new(
                    format!("level_c.{name}"),
                    format!("needs ways + 1 = {} rows (w_c = 0..={n}), got {}", n + 1, table.len()),
                ));
            }
            for (wc, row) in table.iter().enumerate() {
                let need = n - wc + 1;
                if row.len() < need {
                    return Err(FieldError::new(
                        format!("level_c.{name}[{wc}]"),
                        format!("needs at least {need} entries (w_lock = 0..={}), got {}", n - wc, row.len()),
                    ));
                }
                check_values(&row[..need], || format!("level_c.{name}[{wc}]"))?;
            }
        }
        Ok(())
    }

    /// cost_p(w): u_ab_c if core p passes Levels A and B with w ways, else +∞.
    fn cost(&self, p: usize, w: usize) -> f64 {
        let t = &self.cores[p];
        if t.u_a_a[w] <= 1.0 + UTILIZATION_EPS && t.u_ab_b[w] <= 1.0 + UTILIZATION_EPS {
            t.u_ab_c[w]
        } else {
            f64::INFINITY
        }
    }

    /// The Level-C test at (w_c, w_lock) given the canonical C_AB.
    fn level_c_passes(&self, c_ab: f64, wc: usize, wl: usize) -> bool {
        if !c_ab.is_finite() {
            return false;
        }
        let m = self.cores.len();
        let t = &self.level_c;
        let supply = m as f64 - c_ab;
        let capacity = supply >= t.u_c[wc][wl] - UTILIZATION_EPS;
        let u_max = t.u_max[wc][wl];
        let tardiness = u_max == 0.0 || supply - (m - 1) as f64 * u_max - t.u_l[wc][wl] > UTILIZATION_EPS;
        capacity && tardiness
    }

    /// Canonical C_AB of per-core way counts (right fold), +∞ if a core fails A or B.
    fn c_ab(&self, per_core: &[usize]) -> f64 {
        per_core.iter().enumerate().rev().fold(0.0, |acc, (p, &w)| self.cost(p, w) + acc)
    }

    /// Objective of an allocation if it is feasible (shape assumed valid).
    pub fn evaluate(&self, per_core: &[u32], level_c: u32, lock: u32) -> Option<f64> {
        let n = self.n();
        if per_core.len() != self.cores.len() {
            return None;
        }
        let used = per_core.iter().map(|&w| w as u64).sum::<u64>() + level_c as u64 + lock as u64;
        if used > n as u64 {
            return None;
        }
        let ws: Vec<usize> = per_core.iter().map(|&w| w as usize).collect();
        let (wc, wl) = (level_c as usize, lock as usize);
        let c_ab = self.c_ab(&ws);
        self.level_c_passes(c_ab, wc, wl).then(|| c_ab + self.level_c.u_c[wc][wl])
    }
}

/// Solve phase 3 exactly: the optimal allocation (ties as in the module doc),
/// `Ok(None)` if no allocation passes every level, `Err` for malformed tables.
pub fn solve(problem: &WayProblem) -> FieldResult<Option<WayAllocation>> {
    problem.validate()?;
    Ok(solve_valid(problem))
}

fn solve_valid(pr: &WayProblem) -> Option<WayAllocation> {
    let n = pr.n();
    let m = pr.cores.len();
    let cost: Vec<Vec<f64>> = (0..m).map(|p| (0..=n).map(|w| pr.cost(p, w)).collect()).collect();
    // suf[k][b]: least canonical C_AB of cores k..m−1 with at most b ways.
    let mut suf = vec![vec![0.0f64; n + 1]; m + 1];
    for k in (0..m).rev() {
        for b in 0..=n {
            suf[k][b] = (0..=b).map(|w| cost[k][w] + suf[k + 1][b - w]).fold(f64::INFINITY, f64::min);
        }
    }
    let u_c = &pr.level_c.u_c;
    let pairs = || (0..=n).flat_map(move |wc| (0..=n - wc).map(move |wl| (wc, wl)));
    let best = pairs()
        .filter(|&(wc, wl)| pr.level_c_passes(suf[0][n - wc - wl], wc, wl))
        .map(|(wc, wl)| suf[0][n - wc - wl] + u_c[wc][wl])
        .fold(f64::INFINITY, f64::min);
    if !best.is_finite() {
        return None;
    }
    let bound = best + TIE_EPS;
    let accept = |c_ab: f64, wc: usize, wl: usize| pr.level_c_passes(c_ab, wc, wl) && c_ab + u_c[wc][wl] <= bound;
    let (wc, wl) = pairs()
        .find(|&(wc, wl)| accept(suf[0][n - wc - wl], wc, wl))
        .expect("the pair attaining the optimum passes");
    let mut chosen: Vec<usize> = Vec::with_capacity(m);
    let mut budget = n - wc - wl;
    for k in 0..m {
        let w = (0..=budget)
            .find(|&w| {
                let inner = cost[k][w] + suf[k + 1][budget - w];
                let c_ab = chosen.iter().enumerate().rev().fold(inner, |acc, (j, &wj)| cost[j][wj] + acc);
                accept(c_ab, wc, wl)
            })
            .expect("some completion of the chosen prefix passes (invariant)");
        chosen.push(w);
        budget -= w;
    }
    let objective = pr.c_ab(&chosen) + u_c[wc][wl];
    Some(WayAllocation {
        per_core: chosen.into_iter().map(|w| w as u32).collect(),
        level_c: wc as u32,
        lock: wl as u32,
        objective,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn core(u_a_a: &[f64], u_ab_b: &[f64], u_ab_c: &[f64]) -> CoreTables {
        CoreTables { u_a_a: u_a_a.to_vec(), u_ab_b: u_ab_b.to_vec(), u_ab_c: u_ab_c.to_vec() }
    }

    /// Level-C tables that depend on w_c only (no lock-region effect).
    fn level_c_by_wc(u_c: &[f64], u_max: &[f64], u_l: &[f64]) -> LevelCTables {
        let sq = |v: &[f64]| v.iter().map(|&x| vec![x; v.len()]).collect();
        LevelCTables { u_c: sq(u_c), u_max: sq(u_max), u_l: sq(u_l) }
    }

    fn alloc(per_core: &[u32], level_c: u32, lock: u32, objective: f64) -> WayAllocation {
        WayAllocation { per_core: per_core.to_vec(), level_c, lock, objective }
    }

    // Hand-worked instances use multiples of 1/8 so every sum is exact in f64.

    /// 2 cores, N = 4. Costs (u_ab_c where the core passes A and B):
    /// core 0: w = 0 fails Level A (u_a_a = 1.25); cost(1..4) = 0.5, 0.375, 0.375, 0.375.
    /// core 1: all pass; cost = 0.5, 0.25, 0.25, 0.25, 0.25.
    /// Level C by W_C: U_C = 1, 0.75, 0.5, 0.5, 0.5.
    fn two_cores(u_max: f64) -> WayProblem {
        WayProblem {
            ways: 4,
            cores: vec![
                core(&[1.25, 0.75, 0.5, 0.5, 0.5], &[1.0, 0.75, 0.5, 0.5, 0.5], &[0.75, 0.5, 0.375, 0.375, 0.375]),
                core(&[0.5; 5], &[0.75, 0.5, 0.5, 0.5, 0.5], &[0.5, 0.25, 0.25, 0.25, 0.25]),
            ],
            level_c: level_c_by_wc(&[1.0, 0.75, 0.5, 0.5, 0.5], &[u_max; 5], &[u_max; 5]),
        }
    }

    #[test]
    fn two_cores_loose_level_c_is_worked_out_by_hand() {
        // u_max = U_L = 0.25: the Level-C test needs S ≥ U_C and S > 0.5.
        // Marginal gains: core 0 1→2 ways −0.125; core 1 0→1 −0.25; W_C 0→1 and 1→2 −0.25 each.
        // Core 0 needs ≥ 1 way; the best 3 further ways are core 1's first and W_C's first two:
        // (W_0, W_1, W_C) = (1, 1, 2): 0.5 + 0.25 + 0.5 = 1.25; S = 2 − 0.75 = 1.25 passes.
        // Runner-up (2, 1, 1) or (2, 0, 2): 1.375.
        let a = solve(&two_cores(0.25)).unwrap().unwrap();
        assert_eq!(a, alloc(&[1, 1], 2, 0, 1.25));
    }

    #[test]
    fn two_cores_binding_tardiness_is_worked_out_by_hand() {
        // u_max = U_L = 0.625: S − 0.625 − 0.625 > 0 ⇔ cost_0 + cost_1 < 0.75.
        // (1, 1) gives exactly 0.75: fails (strict). (W_0 ≥ 2, W_1 ≥ 1) gives 0.625, leaving
        // W_C + W_lock ≤ 1: W_C = 1 → 0.625 + 0.75 = 1.375 (S = 1.375 ≥ 0.75 too).
        let a = solve(&two_cores(0.625)).unwrap().unwrap();
        assert_eq!(a, alloc(&[2, 1], 1, 0, 1.375));
        // u_max = U_L = 0.75 needs cost sum < 0.5: impossible (least is 0.625).
        assert_eq!(solve(&two_cores(0.75)).unwrap(), None);
    }

    /// 2 cores, N = 4, flat cores, Level C gains from the lock region.
    #[test]
    fn lock_region_is_worked_out_by_hand() {
        // Cores: cost 0.25 at every w. U_C[w_c][w_lock] = base(w_c) − lock(w_lock),
        // base = 0.5 (w_c = 0), 0.375 (w_c ≥ 1); lock = 0, 0.125, 0.1875, 0.1875, 0.1875.
        // Best: W_C = 1, W_lock = 2 → 0.25 + 0.25 + 0.375 − 0.1875 = 0.6875, one way unused
        // (W_lock = 3 gains nothing; the tie-break keeps the fewest ways).
        let base = [0.5, 0.375, 0.375, 0.375, 0.375];
        let lock = [0.0, 0.125, 0.1875, 0.1875, 0.1875];
        let u_c = base.iter().map(|b| lock.iter().map(|l| b - l).collect()).collect();
        let flat = || core(&[0.5; 5], &[0.5; 5], &[0.25; 5]);
        let p = WayProblem {
            ways: 4,
            cores: vec![flat(), flat()],
            level_c: LevelCTables { u_c, u_max: vec![vec![0.125; 5]; 5], u_l: vec![vec![0.125; 5]; 5] },
        };
        assert_eq!(solve(&p).unwrap().unwrap(), alloc(&[0, 0], 1, 2, 0.6875));
    }

    /// Ties, exact and within TIE_EPS.
    #[test]
    fn ties_return_the_lexicographically_smallest_key() {
        // Core 0 cost 0.5 at w = 0 and 0.25 from w = 1; core 1 flat 0.25; U_C = 0.5, then 0.25.
        // OPT = 0.25 + 0.25 + 0.25 = 0.75 with W_0 ≥ 1, W_C ≥ 1: many optima. Smallest key
        // (W_C, W_lock, W_0, W_1) = (1, 0, 1, 0).
        let mut p = WayProblem {
            ways: 4,
            cores: vec![core(&[0.5; 5], &[0.5; 5], &[0.5, 0.25, 0.25, 0.25, 0.25]), core(&[0.5; 5], &[0.5; 5], &[0.25; 5])],
            level_c: level_c_by_wc(&[0.5, 0.25, 0.25, 0.25, 0.25], &[0.125; 5], &[0.125; 5]),
        };
        assert_eq!(solve(&p).unwrap().unwrap(), alloc(&[1, 0], 1, 0, 0.75));
        // One way on core 1 now saves 1e-13 < TIE_EPS: still a tie, still W_1 = 0.
        p.cores[1].u_ab_c[1] = 0.25 - 1e-13;
        assert_eq!(solve(&p).unwrap().unwrap(), alloc(&[1, 0], 1, 0, 0.75));
        // It saves 1e-11 > TIE_EPS: the way is taken.
        p.cores[1].u_ab_c[1] = 0.25 - 1e-11;
        let a = solve(&p).unwrap().unwrap();
        assert_eq!((a.per_core.as_slice(), a.level_c, a.lock), (&[1u32, 1][..], 1, 0));
        assert!((a.objective - (0.75 - 1e-11)).abs() < 1e-15);
    }

    #[test]
    fn capacity_condition_holds_at_equality_and_level_a_b_fail_the_core() {
        // One core, N = 2, no Level-C ways effect: U_C = 0.5, u_max = 0.5 (m − 1 = 0 so the
        // tardiness condition is S > 0). Core cost 0.5 at w = 0, 0.375 at w ≥ 1; Level B
        // fails at w = 0 (u_ab_b = 1.125). S = 1 − 0.375 = 0.625 ≥ 0.5: W_0 = 1, obj 0.875.
        let p = WayProblem {
            ways: 2,
            cores: vec![core(&[0.5; 3], &[1.125, 1.0, 1.0], &[0.5, 0.375, 0.375])],
            level_c: level_c_by_wc(&[0.5; 3], &[0.5; 3], &[0.0; 3]),
        };
        assert_eq!(solve(&p).unwrap().unwrap(), alloc(&[1], 0, 0, 0.875));
        // U_C = 0.625: S = 0.625 ≥ 0.625 holds at equality.
        let mut q = p.clone();
        q.level_c = level_c_by_wc(&[0.625; 3], &[0.5; 3], &[0.0; 3]);
        assert_eq!(solve(&q).unwrap().unwrap(), alloc(&[1], 0, 0, 1.0));
        // U_C = 0.625 + 1e-9: fails.
        q.level_c = level_c_by_wc(&[0.625 + 1e-9; 3], &[0.5; 3], &[0.0; 3]);
        assert_eq!(solve(&q).unwrap(), None);
    }

    #[test]
    fn no_level_c_task_waives_the_tardiness_condition() {
        // One core that Level-A/B fill at Level-C PETs (S = 0), no Level-C task (all zero):
        // like the analysis (empty Level C is schedulable), this is feasible.
        let p = WayProblem {
            ways: 1,
            cores: vec![core(&[1.0; 2], &[1.0; 2], &[1.0; 2])],
            level_c: level_c_by_wc(&[0.0; 2], &[0.0; 2], &[0.0; 2]),
        };
        assert_eq!(solve(&p).unwrap().unwrap(), alloc(&[0], 0, 0, 1.0));
    }

    #[test]
    fn malformed_tables_are_rejected_with_the_field() {
        let mut p = two_cores(0.25);
        p.cores[1].u_ab_c.pop();
        assert_eq!(solve(&p).unwrap_err().field, "cores[1].u_ab_c");
        let mut p = two_cores(0.25);
        p.level_c.u_l[3] = vec![0.1]; // row 3 needs N − 3 + 1 = 2 entries
        assert_eq!(solve(&p).unwrap_err().field, "level_c.u_l[3]");
        let mut p = two_cores(0.25);
        p.cores[0].u_a_a[2] = f64::NAN;
        assert_eq!(solve(&p).unwrap_err().field, "cores[0].u_a_a[2]");
        let mut p = two_cores(0.25);
        p.cores.clear();
        assert_eq!(solve(&p).unwrap_err().field, "cores");
        // Triangular Level-C tables are enough.
        let mut p = two_cores(0.25);
        for t in [&mut p.level_c.u_c, &mut p.level_c.u_max, &mut p.level_c.u_l] {
            for (wc, row) in t.iter_mut().enumerate() {
                row.truncate(4 - wc + 1);
            }
        }
        assert_eq!(solve(&p).unwrap().unwrap(), alloc(&[1, 1], 2, 0, 1.25));
    }

    /// Reference by enumeration of every allocation, with the documented tie rule.
    fn brute_force(p: &WayProblem) -> Option<WayAllocation> {
        let n = p.ways;
        let m = p.cores.len();
        let mut all = Vec::new();
        for wc in 0..=n {
            for wl in 0..=n - wc {
                let mut ws = vec![0u32; m];
                loop {
                    if let Some(obj) = p.evaluate(&ws, wc, wl) {
                        all.push((wc, wl, ws.clone(), obj));
                    }
                    // Next per-core vector in lexicographic order (odometer, last core fastest).
                    let mut k = m;
                    loop {
                        if k == 0 {
                            break;
                        }
                        k -= 1;
                        if ws[k] < n {
                            ws[k] += 1;
                            break;
                        }
                        ws[k] = 0;
                    }
                    if ws.iter().all(|&w| w == 0) {
                        break;
                    }
                }
            }
        }
        let best = all.iter().map(|a| a.3).fold(f64::INFINITY, f64::min);
        all.into_iter()
            .filter(|a| a.3 <= best + TIE_EPS)
            .min_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)))
            .map(|(wc, wl, ws, obj)| alloc(&ws, wc, wl, obj))
    }

    /// Random non-increasing table from `start`, with plateaus (exact ties).
    fn table(rng: &mut ChaCha8Rng, n: usize, start: f64) -> Vec<f64> {
        let mut v = start;
        (0..=n)
            .map(|_| {
                let x = v;
                if rng.random_bool(0.6) {
                    v -= v * rng.random_range(0.0..0.4);
                }
                x
            })
            .collect()
    }

    fn random_problem(rng: &mut ChaCha8Rng) -> WayProblem {
        let n = rng.random_range(0..=5usize);
        let m = rng.random_range(1..=3usize);
        let cores = (0..m)
            .map(|_| {
                let (sa, sb, sc) = (rng.random_range(0.2..1.6), rng.random_range(0.2..1.6), rng.random_range(0.05..0.9));
                let a = table(rng, n, sa);
                let b = table(rng, n, sb);
                let c = table(rng, n, sc);
                CoreTables { u_a_a: a, u_ab_b: b, u_ab_c: c }
            })
            .collect();
        let lock_effect = rng.random_bool(0.5);
        let scales = [rng.random_range(0.0..(m as f64)), rng.random_range(0.0..0.6), rng.random_range(0.0..=0.6 * (m as f64 - 1.0))];
        let mut grid = |scale: f64| -> Vec<Vec<f64>> {
            let by_c = table(rng, n, scale);
            let by_l = table(rng, n, 1.0);
            by_c.iter().map(|&x| by_l.iter().map(|&f| if lock_effect { x * f } else { x }).collect()).collect()
        };
        let u_c = grid(scales[0]);
        let u_max = grid(scales[1]);
        let u_l = grid(scales[2]);
        WayProblem { ways: n as u32, cores, level_c: LevelCTables { u_c, u_max, u_l } }
    }

    #[test]
    fn equals_enumeration_with_ties_on_random_small_instances() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut feasible, mut infeasible) = (0, 0);
        for _ in 0..3000 {
            let p = random_problem(&mut rng);
            let got = solve(&p).unwrap();
            assert_eq!(got, brute_force(&p), "{p:?}");
            if got.is_some() { feasible += 1 } else { infeasible += 1 }
        }
        // Both outcomes are exercised.
        assert!(feasible > 500 && infeasible > 500, "{feasible} feasible, {infeasible} infeasible");
    }
}
