//! Supply bound functions: the least processor time a task set is sure to get
//! in any window of length t (docs/analysis.md, "Servers").
//!
//! - A dedicated core supplies t.
//! - A periodic resource Γ(P, Q) (Shin & Lee, RTSS 2003; the idling periodic
//!   server of mrs-multi-resource-server §III and a hard CBS reservation)
//!   supplies Q somewhere in every period P. Its worst case is a blackout of
//!   2(P − Q): the budget served at the very start of one period and at the
//!   very end of the next, then Q every P:
//!     sbf(t) = t − (k+1)(P − Q)   for t ∈ [(k+1)P − 2Q, (k+1)P − Q],
//!              (k − 1)Q           otherwise,   k = max(⌈(t − (P − Q))/P⌉, 1).
//! - When the budget is known to be served within R ≤ P of each period's
//!   start (a server under fixed priority whose own response time is R), the
//!   worst case serves it at the start of one period and as late as R in the
//!   next: the blackout shrinks to (P − Q) + (R − Q), then again Q every P.
//!   R = P is Shin & Lee's case; R = Q (the highest-priority server) is exact.
//! - A window that opens at a period's start (every release of its tasks
//!   falls on one: server_memory.rs) has no blackout before the first
//!   service: Q within R of each period's start from the window's, so
//!     sbf(t) = ⌊t/P⌋·Q + min(Q, max(0, (t mod P) − (R − Q))),
//!   and x takes (⌈x/Q⌉ − 1)·P + R − Q + the last chunk.
//! - A server sure of G_K only in every K consecutive periods of its own
//!   (`server_supply.rs`, K = 1..=BLOCKS): a window of t holds at least
//!   n = ⌊t/P⌋ − 1 whole periods, so ⌊n/K⌋ disjoint blocks of K, each with
//!   G_K somewhere in it:
//!     sbf(t) = max_K G_K·⌊n/K⌋,   and x takes (min_K K·⌈x/G_K⌉ + 1)·P at most;
//!   where it is also sure of C within R of each period's start (a smaller
//!   share than the blocks' best), the larger of that periodic supply and
//!   the blocks' at each length (both hold in every window). From a
//!   period's start the window holds ⌊t/P⌋ whole periods, and the periodic
//!   part is the one from a period's start above.

/// Where a task's processor time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Supply {
    Dedicated,
    /// Budget `budget_ns` in every `period_ns`, served within `within_ns` of
    /// each period's start (0 < Q ≤ R ≤ P).
    Periodic { period_ns: u64, budget_ns: u64, within_ns: u64 },
    /// As `Periodic`, in a window that opens at one of its periods' starts.
    PeriodStarts { period_ns: u64, budget_ns: u64, within_ns: u64 },
    /// `budgets[K − 1]` in every K consecutive periods of `period_ns` (each
    /// block from one of the periods' starts; 0 where none is known, one at
    /// least not), and, where known, C within R of each period's start.
    /// `from_start`: in a window that opens at one of its periods' starts.
    Blocks { period_ns: u64, budgets: [u64; BLOCKS], per_period: Option<(u64, u64)>, from_start: bool },
}

/// The longest block of [`Supply::Blocks`], in periods.
pub const BLOCKS: usize = 16;

/// The blocks (K, G_K) known.
fn blocks(budgets: &[u64; BLOCKS]) -> impl Iterator<Item = (u64, u64)> + '_ {
    budgets.iter().enumerate().filter(|(_, &g)| g > 0).map(|(k, &g)| (k as u64 + 1, g))
}

/// The block of the largest share G_K/K (the shortest among equals), exactly.
pub fn best_block(budgets: &[u64; BLOCKS]) -> Option<(u64, u64)> {
    blocks(budgets).fold(None, |best, (k, g)| match best {
        Some((bk, bg)) if g as u128 * bk as u128 <= bg as u128 * k as u128 => Some((bk, bg)),
        _ => Some((k, g)),
    })
}

impl Supply {
    /// Q within R of each period's start, in any window or in one that
    /// opens at a period's start.
    pub fn per_period(period_ns: u64, budget_ns: u64, within_ns: u64, from_start: bool) -> Supply {
        if from_start { Supply::PeriodStarts { period_ns, budget_ns, within_ns } } else { Supply::Periodic { period_ns, budget_ns, within_ns } }
    }

    /// sbf(t): the least supply in any window of length `t`.
    pub fn sbf(&self, t: u64) -> u64 {
        match *self {
            Supply::Dedicated => t,
            Supply::Periodic { period_ns: p, budget_ns: q, within_ns: r } => {
                let blackout = (p - q) + (r - q);
                if t <= blackout {
                    return 0;
                }
                // After the blackout: whole periods of (Q served, P − Q idle).
                let into = t - blackout;
                (into / p) * q + (into % p).min(q)
            }
            Supply::PeriodStarts { period_ns: p, budget_ns: q, within_ns: r } => (t / p) * q + ((t % p).saturating_sub(r - q)).min(q),
            Supply::Blocks { period_ns: p, budgets, per_period, from_start } => {
                let n = (t / p).saturating_sub(!from_start as u64);
                let by_blocks = blocks(&budgets).map(|(k, g)| g.saturating_mul(n / k)).max().unwrap_or(0);
                by_blocks.max(per_period.map_or(0, |(c, r)| Supply::per_period(p, c, r, from_start).sbf(t)))
            }
        }
    }

    /// The shortest window sure to supply `x`: min { t : sbf(t) ≥ x }.
    pub fn time_for(&self, x: u64) -> u64 {
        match *self {
            Supply::Dedicated => x,
            Supply::Periodic { period_ns: p, budget_ns: q, within_ns: r } => {
                if x == 0 {
                    return 0;
                }
                // ⌈x/Q⌉ chunks of Q: all but the last are whole periods.
                let chunks = x.div_ceil(q);
                let rest = x - (chunks - 1) * q;
                (p - q) + (r - q) + (chunks - 1) * p + rest
            }
            Supply::PeriodStarts { period_ns: p, budget_ns: q, within_ns: r } => {
                if x == 0 {
                    return 0;
                }
                let chunks = x.div_ceil(q);
                (chunks - 1) * p + (r - q) + (x - (chunks - 1) * q)
            }
            Supply::Blocks { period_ns: p, budgets, per_period, from_start } => {
                if x == 0 {
                    return 0;
                }
                let n = blocks(&budgets).map(|(k, g)| k.saturating_mul(x.div_ceil(g))).min().unwrap_or(u64::MAX);
                // Each sbf grows with t, so the larger reaches x at the lesser of the two.
                let by_blocks = n.saturating_add(!from_start as u64).saturating_mul(p);
                by_blocks.min(per_period.map_or(u64::MAX, |(c, r)| Supply::per_period(p, c, r, from_start).time_for(x)))
            }
        }
    }

    /// Long-run share of a core.
    pub fn rate(&self) -> f64 {
        match *self {
            Supply::Dedicated => 1.0,
            Supply::Periodic { period_ns, budget_ns, .. } | Supply::PeriodStarts { period_ns, budget_ns, .. } => budget_ns as f64 / period_ns as f64,
            Supply::Blocks { period_ns, budgets, per_period, .. } => best_block(&budgets).map_or(0.0, |(k, g)| g as f64 / (k * period_ns) as f64).max(per_period.map_or(0.0, |(c, _)| c as f64 / period_ns as f64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shin & Lee's closed form, as written in docs/references.md, Runtime §6(c).
    fn shin_lee(p: u64, q: u64, t: u64) -> u64 {
        let (p, q, t) = (p as i128, q as i128, t as i128);
        let k = (((t - (p - q)) as f64 / p as f64).ceil() as i128).max(1);
        if t >= (k + 1) * p - 2 * q && t <= (k + 1) * p - q {
            (t - (k + 1) * (p - q)).max(0) as u64
        } else {
            ((k - 1) * q).max(0) as u64
        }
    }

    #[test]
    fn periodic_supply_matches_shin_and_lees_formula() {
        for (p, q) in [(10, 4), (7, 7), (5, 1), (24, 8), (40, 39)] {
            let s = Supply::Periodic { period_ns: p, budget_ns: q, within_ns: p };
            for t in 0..8 * p {
                assert_eq!(s.sbf(t), shin_lee(p, q, t), "P={p} Q={q} t={t}");
            }
        }
    }

    #[test]
    fn periodic_supply_by_hand() {
        // P = 10, Q = 4: nothing for 12, then 4 over [12, 16], flat to 22, 8 at 26.
        let s = Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 10 };
        let got: Vec<u64> = [0, 12, 13, 16, 20, 22, 26, 30].iter().map(|&t| s.sbf(t)).collect();
        assert_eq!(got, vec![0, 0, 1, 4, 4, 4, 8, 8]);
        assert_eq!(Supply::Dedicated.sbf(17), 17);
        // Served within 4 of each start (the top server): the budget is [0, 4] of
        // every period, so the longest gap is 6: 0 at 6, 4 at 10, 4 until 16, 8 at 20.
        let top = Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 4 };
        let got: Vec<u64> = [6, 8, 10, 16, 18, 20].iter().map(|&t| top.sbf(t)).collect();
        assert_eq!(got, vec![0, 2, 4, 4, 6, 8]);
        // Within 7: blackout 6 + 3 = 9.
        let mid = Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 7 };
        assert_eq!((mid.sbf(9), mid.sbf(13), mid.sbf(19), mid.sbf(23)), (0, 4, 4, 8));
    }

    #[test]
    fn time_for_is_the_least_window_that_supplies() {
        for s in [
            Supply::Dedicated,
            Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 10 },
            Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 5 },
            Supply::Periodic { period_ns: 9, budget_ns: 9, within_ns: 9 },
            Supply::PeriodStarts { period_ns: 10, budget_ns: 4, within_ns: 10 },
            Supply::PeriodStarts { period_ns: 10, budget_ns: 4, within_ns: 4 },
        ] {
            for x in 0..40 {
                let t = s.time_for(x);
                assert!(s.sbf(t) >= x, "{s:?} x={x} t={t}");
                assert!(t == 0 || s.sbf(t - 1) < x, "{s:?} x={x}: {} also supplies it", t - 1);
            }
        }
    }

    #[test]
    fn from_a_period_start_the_first_budget_comes_within_r() {
        // P = 10, Q = 4 within 7, from a period's start: the budget at its
        // latest, [3, 7] of each period: 0 until 3, 4 at 7, flat to 13, 8 at 17.
        let s = Supply::PeriodStarts { period_ns: 10, budget_ns: 4, within_ns: 7 };
        let got: Vec<u64> = [0, 3, 5, 7, 10, 13, 15, 17, 20].iter().map(|&t| s.sbf(t)).collect();
        assert_eq!(got, vec![0, 0, 2, 4, 4, 4, 6, 8, 8]);
        // 1 by 4, 4 by 7, 5 by 14 (anywhere: the blackout 6 + 3 first, 10, 13, 20).
        assert_eq!([1, 4, 5].map(|x| s.time_for(x)), [4, 7, 14]);
        let anywhere = Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 7 };
        assert_eq!([1, 4, 5].map(|x| anywhere.time_for(x)), [10, 13, 20]);
        // Never less than anywhere's, at every length.
        for t in 0..60 {
            assert!(s.sbf(t) >= anywhere.sbf(t), "t = {t}");
        }
    }

    #[test]
    fn blocks_by_hand_and_time_for_inverts_sbf() {
        // G = 4 in every 5 periods of 5: a window of 29 holds 4 whole periods (none
        // of 5), of 30 five: 4; of 55 ten: 8.
        let mut budgets = [0; BLOCKS];
        budgets[4] = 4;
        let s = Supply::Blocks { period_ns: 5, budgets, per_period: None, from_start: false };
        let got: Vec<u64> = [0, 29, 30, 54, 55].iter().map(|&t| s.sbf(t)).collect();
        assert_eq!(got, vec![0, 0, 4, 4, 8]);
        assert_eq!((s.time_for(1), s.time_for(4), s.time_for(5)), (30, 30, 55));
        // From a period's start a window of 25 holds 5 whole periods: 4.
        let from_start = Supply::Blocks { period_ns: 5, budgets, per_period: None, from_start: true };
        assert_eq!((from_start.sbf(24), from_start.sbf(25), from_start.sbf(50)), (0, 4, 8));
        assert_eq!((from_start.time_for(1), from_start.time_for(5)), (25, 50));
        // And 2 in every 3: 2 from 20 (3 whole periods), 4 from 30 (5: a block of
        // 5), 6 at 50 (9: three of 3), 8 at 55 (10: two of 5).
        budgets[2] = 2;
        let s = Supply::Blocks { period_ns: 5, budgets, per_period: None, from_start: false };
        let got: Vec<u64> = [19, 20, 29, 30, 50, 55].iter().map(|&t| s.sbf(t)).collect();
        assert_eq!(got, vec![0, 2, 2, 4, 6, 8]);
        assert_eq!(best_block(&budgets), Some((5, 4)));
        for x in 1..20 {
            let t = s.time_for(x);
            assert!(s.sbf(t) >= x && s.sbf(t - 1) < x, "x = {x}");
        }
    }

    #[test]
    fn blocks_beside_a_per_period_bound_take_the_larger_supply() {
        // 9 in every 3 periods of 10 (share 0.3), and 2 within 6 of each
        // period's start (0.2). The periodic one alone: blackout (10 − 2) +
        // (6 − 2) = 12, 2 by 14, 4 by 24, 6 by 34; the blocks nothing before a
        // window holds 3 whole periods (40), then 9; at 54 the periodic one's
        // 10 (four periods after the blackout, and 2 of the fifth) passes the
        // blocks' 9, at 70 the blocks' 18 (two blocks) passes its 12.
        let mut budgets = [0; BLOCKS];
        budgets[2] = 9;
        let s = Supply::Blocks { period_ns: 10, budgets, per_period: Some((2, 6)), from_start: false };
        let got: Vec<u64> = [12, 13, 14, 24, 34, 39, 40, 53, 54, 70].iter().map(|&t| s.sbf(t)).collect();
        assert_eq!(got, vec![0, 1, 2, 4, 6, 6, 9, 9, 10, 18]);
        // 1 by 13 and 5 by 33 (the periodic one), 9 at 40 (the blocks), 10 at 54.
        assert_eq!([1, 5, 9, 10].map(|x| s.time_for(x)), [13, 33, 40, 54]);
        assert_eq!(Supply::Blocks { period_ns: 10, budgets, per_period: None, from_start: false }.time_for(5), 40);
        // From a period's start: 2 within 6 of each start, 1 by 5, 5 by 25 and
        // 10 by 46 (8 in four periods, the last 2 by 6 into the fifth); the blocks 9 at 30.
        let from_start = Supply::Blocks { period_ns: 10, budgets, per_period: Some((2, 6)), from_start: true };
        assert_eq!([1, 5, 9, 10].map(|x| from_start.time_for(x)), [5, 25, 30, 46]);
        for s in [s, from_start] {
            for x in 1..40 {
                let t = s.time_for(x);
                assert!(s.sbf(t) >= x && s.sbf(t - 1) < x, "{s:?} x = {x}");
            }
        }
        assert_eq!(s.rate(), 0.3);
    }
}
