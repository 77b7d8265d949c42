//! What an idling periodic server is sure of below the servers above it on
//! its core (fixed priority, MRS §III rule 2), when its whole budget is not
//! sure within each of its periods (its response time as a task of C = Q,
//! T = P exceeds P).
//!
//! Its budget is renewed at each period's start and what is left is lost
//! (rule 1), and every server above it runs at most its own budget in each
//! of its own periods, so two bounds hold, each for any phasing:
//! - per period, the largest C ≤ Q whose response time is at most P (the
//!   synchronous release is the critical instant for the server's first C),
//!   served within that response time ([`per_period`]);
//! - per K consecutive periods, G_K: in a window of K·P the servers above
//!   run at most W_h(K·P) each (a job at the end of its span, the first
//!   R_h of its period, R_h its response where it is sure within its period,
//!   else P_h; then one as early as possible per period), so at least
//!   X = K·P − Σ W_h is left;
//!   the server takes at most Q of it per period, so at least
//!   ⌊X/P⌋·Q + min(Q, X mod P) ([`per_block`]).
//!
//! [`guarantee`] keeps the per-period bound where its share is the best,
//! else every per-block one with the per-period one beside them (the supply
//! takes the best at each length: the per-period one serves sooner, before
//! a window holds a whole block).

use super::fp_rta::{self, FpTask};
use super::gfp_rta;
use super::supply::{best_block, Supply, BLOCKS};
use crate::model::validate::{gcd, lcm};

/// What a server's tasks are sure of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarantee {
    /// `budget_ns` within `within_ns` of each period's start.
    PerPeriod { budget_ns: u64, within_ns: u64 },
    /// `budgets[K − 1]` in every K consecutive periods (0: none known), and
    /// C within R of each period's start where known (`per_period`).
    Blocks { budgets: [u64; BLOCKS], per_period: Option<(u64, u64)> },
}

impl Guarantee {
    /// The supply it makes for a server of period `period_ns`, in any
    /// window, or in one that opens at one of its periods' starts (`from_start`).
    pub fn supply(&self, period_ns: u64, from_start: bool) -> Supply {
        match *self {
            Guarantee::PerPeriod { budget_ns, within_ns } => Supply::per_period(period_ns, budget_ns, within_ns, from_start),
            Guarantee::Blocks { budgets, per_period } => Supply::Blocks { period_ns, budgets, per_period, from_start },
        }
    }
}

/// The most work a server of budget `q` per period `p` (each period's at most
/// q run within its first `within`) can run in any window of `l`: one job at
/// the very end of its span from the window's start, the rest as early as
/// possible (Bertogna and Cirinei's workload with response `within`).
pub fn workload(q: u64, p: u64, within: u64, l: u64) -> u128 {
    let q = q.min(p);
    gfp_rta::workload(q, p, within.clamp(q, p), l).min(l as u128)
}

/// The per-period bound: the largest C ≤ Q with response time ≤ P (it grows
/// with C), by bisection, and that response time; None if not even 1 ns.
pub fn per_period(server: FpTask, higher: &[FpTask]) -> Option<(u64, u64)> {
    let within = |c: u64| match fp_rta::response_time(FpTask { pet_ns: c, ..server }, higher, Supply::Dedicated) {
        Ok(Some(r)) if r <= server.period_ns => Some(r),
        _ => None,
    };
    // within(lo) holds (or lo = 0); within(hi + 1) does not.
    let (mut lo, mut hi) = (0u64, server.pet_ns);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if within(mid).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo > 0).then(|| (lo, within(lo).expect("found so")))
}

/// The bound per `k` consecutive periods (0 if nothing is sure), each server
/// above serving its budget within `within` of its periods' starts.
pub fn per_block(server: FpTask, higher: &[FpTask], within: &[u64], k: u64) -> u64 {
    let (q, p) = (server.pet_ns as u128, server.period_ns as u128);
    let left = (k as u128 * p).saturating_sub(higher.iter().zip(within).map(|(h, &r)| workload(h.pet_ns, h.period_ns, r, k * server.period_ns)).sum());
    ((left / p) * q + q.min(left % p)) as u64
}

/// Most periods of the server, and most jobs of the servers above, in the
/// hyperperiod [`on_grid`] lays out.
const GRID_PERIODS: u64 = 4_096;
const GRID_JOBS: u64 = 100_000;

/// A periodic server on the common grid from 0: served only within
/// [j·P + earliest, j·P + within] of each of its periods j.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServiceSpan {
    pub period_ns: u64,
    pub earliest_ns: u64,
    pub within_ns: u64,
}

/// Whether two servers on the grid (on different cores) can ever be served
/// at once: j·P_a + e_a < i·P_b + l_b and i·P_b + e_b < j·P_a + l_a for some
/// i, j, i.e. some multiple of gcd(P_a, P_b) (every value j·P_a − i·P_b
/// takes) lies strictly between e_b − l_a and l_b − e_a.
pub fn services_meet(a: ServiceSpan, b: ServiceSpan) -> bool {
    let g = gcd(a.period_ns, b.period_ns) as i128;
    let (lo, hi) = (b.earliest_ns as i128 - a.within_ns as i128, b.within_ns as i128 - a.earliest_ns as i128);
    // The largest multiple of g below hi.
    g == 0 || (hi - 1).div_euclid(g) * g > lo
}

/// The bound per K consecutive periods where every server's first period
/// starts at 0 (the simulator and the runtime start them so; a file gives a
/// server no offset) and every server above is sure of its whole budget
/// within each of its periods. Those then run as periodic tasks C = Q,
/// T = P released together at 0, none dropping any of its budget, and the
/// backlog of such a schedule grows with every execution time (Lindley's
/// recursion), so their idle time in any interval is least when each runs
/// its whole budget: period j of this server is sure of c_j = min(Q, that
/// schedule's idle time in it), and G_K = the least c_j + … + c_{j+K−1}
/// over one hyperperiod (the pattern repeats). None where the hyperperiod
/// holds more than `GRID_PERIODS` of its periods or `GRID_JOBS` jobs above.
pub fn on_grid(server: FpTask, higher: &[FpTask]) -> Option<[u64; BLOCKS]> {
    let p = server.period_ns;
    let h = higher.iter().map(|x| x.period_ns).try_fold(p, |a, b| {
        let l = lcm(a, b);
        (l < u64::MAX && l / p <= GRID_PERIODS).then_some(l)
    })?;
    if higher.iter().map(|x| h / x.period_ns).sum::<u64>() > GRID_JOBS {
        return None;
    }
    let n = (h / p) as usize;
    let mut idle = vec![0u64; n];
    let mut left = vec![0u64; higher.len()];
    let mut t = 0;
    while t < h {
        for (l, x) in left.iter_mut().zip(higher) {
            if t % x.period_ns == 0 {
                *l += x.pet_ns;
            }
        }
        let next = higher.iter().map(|x| (t / x.period_ns + 1) * x.period_ns).fold((t / p + 1) * p, u64::min);
        match left.iter().position(|&l| l > 0) {
            Some(k) => {
                let run = left[k].min(next - t);
                left[k] -= run;
                t += run;
            }
            None => {
                idle[(t / p) as usize] += next - t;
                t = next;
            }
        }
    }
    let c: Vec<u64> = idle.iter().map(|&i| i.min(server.pet_ns)).collect();
    let mut budgets = [0; BLOCKS];
    for (k, g) in budgets.iter_mut().enumerate() {
        *g = (0..n).map(|j| (j..=j + k).map(|x| c[x % n]).sum::<u64>()).min().unwrap_or(0);
    }
    Some(budgets)
}

/// What a server (budget as `pet_ns`) below `higher` (each serving its
/// budget within `within` of its periods' starts) is sure of, with its
/// blocks on the common grid where known ([`on_grid`]); None if nothing.
pub fn guarantee(server: FpTask, higher: &[FpTask], within: &[u64], grid: Option<[u64; BLOCKS]>) -> Option<Guarantee> {
    let mut budgets = [0; BLOCKS];
    for (k, g) in budgets.iter_mut().enumerate() {
        *g = per_block(server, higher, within, k as u64 + 1).max(grid.map_or(0, |b| b[k]));
    }
    let blocks = best_block(&budgets);
    match (per_period(server, higher), blocks) {
        // Its share at least the blocks' best: Q'/1 ≥ G/K.
        (Some((q, r)), best) if best.is_none_or(|(k, g)| q as u128 * k as u128 >= g as u128) => Some(Guarantee::PerPeriod { budget_ns: q, within_ns: r }),
        (per_period, Some(_)) => {
            // A per-period bound is a block of one too.
            budgets[0] = budgets[0].max(per_period.map_or(0, |(q, _)| q));
            Some(Guarantee::Blocks { budgets, per_period })
        }
        (_, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(q: u64, p: u64) -> FpTask {
        FpTask { pet_ns: q, period_ns: p }
    }

    #[test]
    fn two_servers_on_the_grid_meet_only_where_their_spans_overlap() {
        let span = |period_ns, earliest_ns, within_ns| ServiceSpan { period_ns, earliest_ns, within_ns };
        // [2, 8] of every 10 and [0, 1] of every 10: never; of every 15 ([15,
        // 16] against [12, 18]): yes; [0, 2] of every 10 touches [2, 8] only
        // at a point: no time served at once.
        assert!(!services_meet(span(10, 2, 8), span(10, 0, 1)));
        assert!(services_meet(span(10, 2, 8), span(15, 0, 1)));
        assert!(!services_meet(span(10, 2, 8), span(10, 0, 2)));
        assert!(services_meet(span(10, 2, 8), span(10, 0, 3)));
        // By a second method: every pair of periods over the hyperperiod, on
        // small grids.
        let brute = |a: ServiceSpan, b: ServiceSpan| {
            let h = lcm(a.period_ns, b.period_ns);
            (0..h / a.period_ns).any(|j| {
                (0..=h / b.period_ns).any(|i| {
                    let (a0, a1) = (j * a.period_ns + a.earliest_ns, j * a.period_ns + a.within_ns);
                    let (b0, b1) = (i * b.period_ns + b.earliest_ns, i * b.period_ns + b.within_ns);
                    a0.max(b0) < a1.min(b1)
                })
            }) || (0..h / b.period_ns).any(|i| (0..=h / a.period_ns).any(|j| {
                let (a0, a1) = (j * a.period_ns + a.earliest_ns, j * a.period_ns + a.within_ns);
                let (b0, b1) = (i * b.period_ns + b.earliest_ns, i * b.period_ns + b.within_ns);
                a0.max(b0) < a1.min(b1)
            }))
        };
        for (pa, pb) in [(10, 10), (10, 15), (6, 9), (7, 5), (12, 8)] {
            for ea in 0..pa {
                for la in ea + 1..=pa {
                    for eb in 0..pb {
                        for lb in eb + 1..=pb {
                            let (a, b) = (span(pa, ea, la), span(pb, eb, lb));
                            assert_eq!(services_meet(a, b), brute(a, b), "{a:?} {b:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_servers_most_work_in_a_window_by_hand() {
        // Q = 6, P = 10, the window from a job's start at the end of its period
        // ([0, 6), [6, 12), [16, 22), [26, 32)): 3 in 3, 6 in 6, 10 in 10, 12 in
        // 16, 16 in 20, 18 in 26.
        let got: Vec<u128> = [0, 3, 6, 10, 16, 20, 26].iter().map(|&l| workload(6, 10, 10, l)).collect();
        assert_eq!(got, vec![0, 3, 6, 10, 12, 16, 18]);
        // By a second method: every placement of one job per period (each at an
        // integer start of its period from which its 6 end within the span),
        // every window start 0-9; spans of 10 (starts 0-4) and 8 (starts 0-2).
        let most = |within: u64, l: u64| -> u64 {
            let starts = within - 6 + 1;
            let mut most = 0;
            for placing in 0..starts.pow(5) {
                let at = |j: u64| 10 * j + placing / starts.pow(j as u32) % starts;
                for x in 0..10u64 {
                    most = most.max((0..5u64).map(|j| (at(j) + 6).min(x + l).saturating_sub(at(j).max(x))).sum());
                }
            }
            most
        };
        for within in [10, 8] {
            for l in 0..=30u64 {
                assert_eq!(most(within, l) as u128, workload(6, 10, within, l), "window {l}, within {within}");
            }
        }
    }

    #[test]
    fn a_server_below_a_longer_budget_is_sure_of_nothing_per_period_but_of_some_per_block() {
        // Q = 2 ms, P = 5 ms below (6 ms, 10 ms): synchronously the one above takes
        // [0, 6), so the first period serves nothing: no per-period bound.
        let (s, above) = (task(2, 5), [task(6, 10)]);
        assert_eq!(per_period(s, &above), None);
        // One or two periods (5, 10): the one above may run all of it: nothing.
        // Four, 20: at most W = 6 + 6 + min(6, 4) = 16, 4 left, at most 2 of it
        // per period: G = 0·2 + min(2, 4) = 2; five, 25: W = 18, 7 left:
        // 2·2 + min(2, 2) = 4, the best share of 1-8 (3: 2 of 3, 6: 4 of 6,
        // 7: 5 of 7, 8: W = 28, 12 left, 6 of 8).
        let got: Vec<u64> = (1..=8).map(|k| per_block(s, &above, &[10], k)).collect();
        assert_eq!(got, vec![0, 0, 2, 2, 4, 4, 5, 6]);
        let Some(Guarantee::Blocks { budgets, per_period: None }) = guarantee(s, &above, &[10], None) else { panic!() };
        assert_eq!(budgets[..8], got[..]);
        assert_eq!(best_block(&budgets), Some((5, 4)));
    }

    #[test]
    fn a_server_keeps_its_per_period_bound_beside_better_blocks() {
        // Q = 4, P = 10 below (8, 20) served within 8: synchronously the one
        // above takes [0, 8), so 2 is sure within 10 (share 0.2). Its most work
        // in 10 is 8 (2 left: G_1 = 2), in 20 N = ⌊(20 + 8 − 8)/20⌋ = 1 job and
        // min(8, 0): 8, 12 left, 4 + min(4, 2) = 6 (share 0.3); in 30, 16 and
        // 8; in 40, 16 and 12. The blocks' best (2, 6) beats 2 per period, and
        // the per-period bound stays beside them for windows shorter than a block.
        let (s, above) = (task(4, 10), [task(8, 20)]);
        assert_eq!(per_period(s, &above), Some((2, 10)));
        let Some(Guarantee::Blocks { budgets, per_period: Some((2, 10)) }) = guarantee(s, &above, &[8], None) else { panic!() };
        assert_eq!(budgets[..4], [2, 6, 8, 12]);
        assert_eq!(best_block(&budgets), Some((2, 6)));
        // 1 within its first period's blackout (10 − 2) + (10 − 2) + 1 = 17;
        // the blocks alone would take (1 + 1)·10 = 20.
        let supply = Guarantee::Blocks { budgets, per_period: Some((2, 10)) }.supply(10, false);
        assert_eq!(supply.time_for(1), 17);
        assert_eq!(Guarantee::Blocks { budgets, per_period: None }.supply(10, false).time_for(1), 20);
    }

    #[test]
    fn a_server_sure_of_part_of_its_budget_per_period_by_hand() {
        // Q = 4, P = 10 below (5, 10) and (3, 20): C + 5 + 3 ≤ 10 for C ≤ 2, within 10.
        let (s, above) = (task(4, 10), [task(5, 10), task(3, 20)]);
        assert_eq!(per_period(s, &above), Some((2, 10)));
        // With carry-in, one period (10) may hold 10 of the first and 6 of the
        // second: nothing; two (20): 15 + 6 > 20, nothing; three (30): 20 + 9,
        // 1 left: 1 in 3 periods, a smaller share than 2 in 1.
        let got: Vec<u64> = (1..=3).map(|k| per_block(s, &above, &[10, 20], k)).collect();
        assert_eq!(got, vec![0, 0, 1]);
        assert_eq!(guarantee(s, &above, &[10, 20], None), Some(Guarantee::PerPeriod { budget_ns: 2, within_ns: 10 }));
        // The servers above serve theirs within their responses, 5 and 8: one
        // period holds at most 5 + min(3, 10 + 8 − 3) = 8 of theirs, 2 left; two
        // (20) 10 + 3 + min(3, 5) = 16, 4 left; three (30) 15 + 6, 9 left, 4 of it.
        let got: Vec<u64> = (1..=3).map(|k| per_block(s, &above, &[5, 8], k)).collect();
        assert_eq!(got, vec![2, 4, 4]);
    }

    #[test]
    fn a_server_on_the_common_grid_is_sure_of_each_periods_idle_time() {
        // Q = 5 of P = 10 below A (3 every 10) and B (3 every 15), all from 0,
        // hyperperiod 30: A [0, 3), B [3, 6), idle [6, 10): 4; A [10, 13), B
        // [15, 18), idle 4; A [20, 23), idle [23, 30): 5 of 7. G_1 = 4, G_2 =
        // 4 + 4, G_3 = 13, G_4 = 4 + 4 + 5 + 4 = 17 (from any period).
        let (s, above) = (task(5, 10), [task(3, 10), task(3, 15)]);
        let grid = on_grid(s, &above).expect("a short hyperperiod");
        assert_eq!(grid[..4], [4, 8, 13, 17]);
        // For any phasing only 4, 5 and 7 (20 − W_A − W_B = 8 of 20, 30 − 9 − 9
        // = 12 of 30): per period 4 within 10 is the best share. On the grid
        // 13 in every 3 periods is better.
        assert_eq!(guarantee(s, &above, &[3, 6], None), Some(Guarantee::PerPeriod { budget_ns: 4, within_ns: 10 }));
        let Some(Guarantee::Blocks { budgets, per_period: Some((4, 10)) }) = guarantee(s, &above, &[3, 6], Some(grid)) else { panic!() };
        assert_eq!(budgets[..4], [4, 8, 13, 17]);
        // A hyperperiod of more than 4,096 of its periods is not laid out.
        assert_eq!(on_grid(task(5, 10), &[task(3, 4_099 * 10 + 1)]), None);
    }
}
