//! Fixed-priority response-time analysis on one processor: the level-i busy
//! period of Lehoczky (RTSS 1990), exact for synchronous periodic tasks with
//! any deadlines, over a supply bound function (docs/analysis.md).
//!
//! Job q (from 0) of task i released at the critical instant with every
//! higher-priority task completes by the least w with
//!   sbf(w) ≥ (q+1)·Cᵢ + Σ_{j ∈ hp(i)} ⌈w/Tⱼ⌉·Cⱼ,
//! its response is w − q·Tᵢ, and the busy period ends with the first job
//! that completes by the next release, w ≤ (q+1)·Tᵢ. On a dedicated core this
//! is the classic recurrence; on a periodic resource, the hierarchical form of
//! Shin & Lee (RTSS 2003). Offsets are ignored, and sporadic releases are at
//! least a period apart: either can only shorten the response, so the bound
//! holds for them too. (A caller whose windows can only open at a server's
//! period start passes the supply from one: `Supply::PeriodStarts`.)

use super::exact::{cmp_sum, utilizations, Frac};
use super::supply::Supply;
use super::NotDecided;
use std::cmp::Ordering;

/// A task as charged: PET C and period (least inter-arrival time) T.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpTask {
    pub pet_ns: u64,
    pub period_ns: u64,
}

impl FpTask {
    fn utilization(&self) -> f64 {
        self.pet_ns as f64 / self.period_ns as f64
    }
}

/// Most jobs of one busy period examined before saying "not decided". With
/// U below the supply's rate every busy period ends; this only bounds the work
/// (a 135,757-job busy period is legitimate at U < 1).
pub const MAX_JOBS: u64 = 10_000_000;

/// Σ C/T of `task` and `higher` against the supply's long-run share, exactly.
pub fn cmp_rate(task: FpTask, higher: &[FpTask], supply: Supply) -> Ordering {
    let u = utilizations(std::iter::once(&task).chain(higher).map(|t| (t.pet_ns, t.period_ns)));
    cmp_sum(&u, match supply {
        Supply::Dedicated => Frac::new(1, 1),
        Supply::Periodic { period_ns, budget_ns, .. } | Supply::PeriodStarts { period_ns, budget_ns, .. } => Frac::new(budget_ns as u128, period_ns as u128),
        Supply::Blocks { period_ns, budgets, per_period, .. } => {
            let blocks = super::supply::best_block(&budgets).map_or(Frac::new(0, 1), |(k, g)| Frac::new(g as u128, k as u128 * period_ns as u128));
            let per = Frac::new(per_period.map_or(0, |(c, _)| c) as u128, period_ns as u128);
            if per > blocks { per } else { blocks }
        }
    })
}

/// Worst-case response time of `task` below `higher` over `supply`; Ok(None)
/// if the demand outgrows the supply (no busy period ends).
pub fn response_time(task: FpTask, higher: &[FpTask], supply: Supply) -> Result<Option<u64>, NotDecided> {
    response_time_with(task, higher, supply, 0.0, |_, _| 0)
}

/// As [`response_time`], with `extra(q, w)` more demand in a window of length
/// w that ends with job q (e.g. the stalls of a memory regulator; it must not
/// decrease as w or q grow), whose long-run share of the time is `extra_share`:
/// with it the utilization must stay below the supply's rate, or no window
/// closes. The CPU utilization is compared exactly; `extra_share` comes from
/// the fluid model (real-valued) and only ends the search early.
pub fn response_time_with(task: FpTask, higher: &[FpTask], supply: Supply, extra_share: f64, extra: impl Fn(u64, u64) -> u64) -> Result<Option<u64>, NotDecided> {
    Ok(worst_window(task, higher, supply, extra_share, extra)?.map(|w| w.response_ns))
}

/// The window of the worst job: job `q` of the busy period (from 0) ends the
/// window [0, w), and its response is w − q·T (`analyze --explain` splits w).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub q: u64,
    pub w: u64,
    pub response_ns: u64,
}

/// As [`response_time_with`], with the window its bound comes from.
pub fn worst_window(task: FpTask, higher: &[FpTask], supply: Supply, extra_share: f64, extra: impl Fn(u64, u64) -> u64) -> Result<Option<Window>, NotDecided> {
    if cmp_rate(task, higher, supply) == Ordering::Greater {
        return Ok(None);
    }
    let u: f64 = task.utilization() + higher.iter().map(FpTask::utilization).sum::<f64>();
    if extra_share > 0.0 && u + extra_share >= supply.rate() {
        return Ok(None);
    }
    let demand = |q: u64, w: u64| -> u128 {
        (q as u128 + 1) * task.pet_ns as u128
            + higher.iter().map(|h| (w as u128).div_ceil(h.period_ns as u128) * h.pet_ns as u128).sum::<u128>()
            + extra(q, w) as u128
    };
    worst_window_of(task.period_ns, supply, demand).map(Some)
}

/// As [`worst_window`] for a task with an activation limit of one (OSEK's
/// default): a release that finds a job of the task active is lost, so a
/// job has none of its own before it and job 0 of a level-i busy period is
/// the worst, whatever its own utilization; the higher-priority demand
/// (with `extra`'s share) must stay below the supply's rate.
pub fn first_job_window(task: FpTask, higher: &[FpTask], supply: Supply, extra_share: f64, extra: impl Fn(u64, u64) -> u64) -> Result<Option<Window>, NotDecided> {
    let Some((&top, rest)) = higher.split_first() else {
        // Alone on its level: its PET and the extra demand of one window.
        let one = FpTask { pet_ns: task.pet_ns, period_ns: u64::MAX };
        return worst_window(one, &[], supply, 0.0, extra);
    };
    if cmp_rate(top, rest, supply) != Ordering::Less {
        return Ok(None);
    }
    let u: f64 = higher.iter().map(FpTask::utilization).sum();
    if extra_share > 0.0 && u + extra_share >= supply.rate() {
        return Ok(None);
    }
    let demand = |w: u64| task.pet_ns as u128 + higher.iter().map(|h| (w as u128).div_ceil(h.period_ns as u128) * h.pet_ns as u128).sum::<u128>() + extra(0, w) as u128;
    let mut w = 0u64;
    loop {
        let d = demand(w);
        if d > u64::MAX as u128 / 4 {
            return Err(NotDecided { limit: MAX_JOBS, of: "jobs of the busy period" });
        }
        let next = supply.time_for(d as u64);
        if next <= w {
            return Ok(Some(Window { q: 0, w, response_ns: w }));
        }
        w = next;
    }
}

/// The worst window over `supply` of a task of period `period_ns` whose jobs
/// 0..=q of the busy period, with everything they wait for, need at most
/// `demand(q, w)` in a window of w (nondecreasing in both); the caller has
/// checked that the demand's long-run share stays below the supply's rate.
pub fn worst_window_of(period_ns: u64, supply: Supply, demand: impl Fn(u64, u64) -> u128) -> Result<Window, NotDecided> {
    let not_decided = NotDecided { limit: MAX_JOBS, of: "jobs of the busy period" };
    let mut worst = Window { q: 0, w: 0, response_ns: 0 };
    let mut w = 0u64;
    for q in 0..MAX_JOBS {
        // Start from the previous job's completion: w only grows with q.
        loop {
            let d = demand(q, w);
            if d > u64::MAX as u128 / 4 {
                // Centuries of demand with U ≤ rate: the window did not close in time we can count.
                return Err(not_decided);
            }
            let next = supply.time_for(d as u64);
            if next <= w {
                break;
            }
            w = next;
        }
        let release = q as u128 * period_ns as u128;
        let response = (w as u128 - release) as u64;
        if q == 0 || response > worst.response_ns {
            worst = Window { q, w, response_ns: response };
        }
        if w as u128 <= release + period_ns as u128 {
            return Ok(worst);
        }
    }
    Err(not_decided)
}

/// Limited-preemptive fixed priority with fixed preemption points (OSEK
/// cooperative tasks: preempted only between runnables) on a dedicated core:
/// Bril, Lukkien and Verhaegh (Real-Time Systems 42, 2009) with Yao, Buttazzo
/// and Bertogna's last-region refinement (Real-Time Systems 47, 2011;
/// docs/references.md, "Limited preemption"). Job k (from 0) of the level-i
/// active period starts its last non-preemptive region q_last at the least
///   S = B + (k+1)·C − q_last + Σ_{j ∈ hp} (⌊S/Tⱼ⌋ + 1)·Cⱼ
/// (a higher-priority job released at S, a preemption point, still goes
/// first) and finishes at F = S + q_last; R = max over k of F − k·T, for every
/// job of the active period, the least L = B + Σ_{hep} ⌈L/T⌉·C. B is the
/// blocking by the lower-priority tasks' longest region. Ok(None) if the
/// utilization with the higher-priority tasks exceeds 1, or equals it with
/// blocking (the active period need not end).
pub fn limited_preemptive(task: FpTask, last_region_ns: u64, higher: &[FpTask], blocking_ns: u64) -> Result<Option<Window>, NotDecided> {
    limited_preemptive_with(task, last_region_ns, higher, blocking_ns, 0.0, |_, _| 0)
}

/// As [`limited_preemptive`], with `extra(k, w)` more demand by the end w of
/// job k's last region (nondecreasing in both), of long-run share
/// `extra_share` (as [`response_time_with`]); charged before the last region
/// starts, which only lets more higher-priority jobs in.
pub fn limited_preemptive_with(task: FpTask, last_region_ns: u64, higher: &[FpTask], blocking_ns: u64, extra_share: f64, extra: impl Fn(u64, u64) -> u64) -> Result<Option<Window>, NotDecided> {
    limited(task, last_region_ns, higher, blocking_ns, extra_share, extra, false)
}

/// As [`limited_preemptive_with`] for a task with an activation limit of
/// one: its job 0 alone (no own job before it, as [`first_job_window`]);
/// `blocking_ns` must cover its own earlier job's last non-preemptive
/// region too, which may have delayed the higher-priority jobs pending at
/// the release.
pub fn limited_first_job(task: FpTask, last_region_ns: u64, higher: &[FpTask], blocking_ns: u64, extra_share: f64, extra: impl Fn(u64, u64) -> u64) -> Result<Option<Window>, NotDecided> {
    limited(task, last_region_ns, higher, blocking_ns, extra_share, extra, true)
}

fn limited(task: FpTask, last_region_ns: u64, higher: &[FpTask], blocking_ns: u64, extra_share: f64, extra: impl Fn(u64, u64) -> u64, first_only: bool) -> Result<Option<Window>, NotDecided> {
    let rate = match (first_only, higher.split_first()) {
        (false, _) => cmp_rate(task, higher, Supply::Dedicated),
        (true, Some((&top, rest))) => cmp_rate(top, rest, Supply::Dedicated),
        (true, None) => Ordering::Less,
    };
    match rate {
        Ordering::Greater => return Ok(None),
        Ordering::Equal if first_only || blocking_ns > 0 || extra_share > 0.0 => return Ok(None),
        _ => {}
    }
    let own_u = if first_only { 0.0 } else { task.utilization() };
    let u: f64 = own_u + higher.iter().map(FpTask::utilization).sum::<f64>();
    if extra_share > 0.0 && u + extra_share >= 1.0 {
        return Ok(None);
    }
    let not_decided = NotDecided { limit: MAX_JOBS, of: "jobs of the level active period" };
    let q_last = last_region_ns.min(task.pet_ns);
    // The level-i active period: blocking, then every job of this level.
    let mut l = blocking_ns.saturating_add(task.pet_ns) + higher.iter().map(|h| h.pet_ns).sum::<u64>();
    // The level active period's jobs (one, with an activation limit of one).
    while !first_only {
        let next = blocking_ns as u128
            + std::iter::once(&task).chain(higher).map(|t| (l as u128).div_ceil(t.period_ns as u128) * t.pet_ns as u128).sum::<u128>()
            + extra(l.div_ceil(task.period_ns).max(1) - 1, l) as u128;
        if next > u64::MAX as u128 / 4 {
            return Err(not_decided);
        }
        if next as u64 <= l {
            break;
        }
        l = next as u64;
    }
    let jobs = if first_only { 1 } else { l.div_ceil(task.period_ns).max(1) };
    if jobs > MAX_JOBS {
        return Err(not_decided);
    }
    let mut worst: Option<Window> = None;
    let mut s = 0u64;
    for k in 0..jobs {
        // S only grows with k: start from the last job's.
        loop {
            let next = blocking_ns as u128 + (k as u128 + 1) * task.pet_ns as u128 - q_last as u128
                + higher.iter().map(|h| (s as u128 / h.period_ns as u128 + 1) * h.pet_ns as u128).sum::<u128>()
                + extra(k, s + q_last) as u128;
            if next > u64::MAX as u128 / 4 {
                return Err(not_decided);
            }
            if next as u64 <= s {
                break;
            }
            s = next as u64;
        }
        let finish = s + q_last;
        let response = finish - k * task.period_ns;
        if worst.is_none_or(|w| response > w.response_ns) {
            worst = Some(Window { q: k, w: finish, response_ns: response });
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(c: u64, p: u64) -> FpTask {
        FpTask { pet_ns: c, period_ns: p }
    }

    #[test]
    fn textbook_example() {
        // Buttazzo, Hard Real-Time Computing Systems, RM example: (1,4), (2,6), (3,10):
        // R1 = 1, R2 = 3, R3 = 10 (3 + 2·1 + 1·2 = 7 → 3 + 2 + 4 = 9 → 3 + 3 + 4 = 10 → 10).
        let (a, b, c) = (t(1, 4), t(2, 6), t(3, 10));
        assert_eq!(response_time(a, &[], Supply::Dedicated), Ok(Some(1)));
        assert_eq!(response_time(b, &[a], Supply::Dedicated), Ok(Some(3)));
        assert_eq!(response_time(c, &[a, b], Supply::Dedicated), Ok(Some(10)));
    }

    #[test]
    fn deadlines_beyond_the_period_need_the_busy_period() {
        // (52, 100) above (52, 140): U = 0.891. Job 0 of the lower task:
        // 52 + ⌈w/100⌉·52: 52 → 104 → 156 → 156, after the next release (140),
        // so job 1 counts: 104 + ⌈w/100⌉·52: 208 → 260 → 260, response
        // 260 − 140 = 120, and 260 ≤ 2·140 ends the busy period: R = 156.
        let hi = t(52, 100);
        assert_eq!(response_time(t(52, 140), &[hi], Supply::Dedicated), Ok(Some(156)));
    }

    #[test]
    fn the_worst_job_is_not_the_first() {
        // Lehoczky's example: (62, 100) below (26, 70), U = 0.991. Jobs 0-6 of
        // the lower task complete at 114, 202, 316, 404, 518, 606, 694 (each
        // 62 more, plus 26 per release of the higher one before it): responses
        // 114, 102, 116, 104, 118, 106, 94; 694 ≤ 700 ends the busy period.
        assert_eq!(response_time(t(62, 100), &[t(26, 70)], Supply::Dedicated), Ok(Some(118)));
    }

    #[test]
    fn overload_has_no_bound() {
        assert_eq!(response_time(t(3, 4), &[t(2, 4)], Supply::Dedicated), Ok(None));
        // Full utilization still ends its busy period (at the hyperperiod).
        assert_eq!(response_time(t(2, 4), &[t(2, 4)], Supply::Dedicated), Ok(Some(4)));
    }

    #[test]
    fn on_a_periodic_resource() {
        // Γ(10, 4): blackout 12. One task C = 3, T = 40: sbf(t) ≥ 3 first at 12 + 3 = 15.
        let s = Supply::Periodic { period_ns: 10, budget_ns: 4, within_ns: 10 };
        assert_eq!(response_time(t(3, 40), &[], s), Ok(Some(15)));
        // Below a (2, 20) task: 5 units by ⌈w/20⌉: time_for(5) = 12 + 10 + 1 = 23 → ⌈23/20⌉ = 2 → 7 → 12 + 10 + 3 = 25 → 7 → 25.
        assert_eq!(response_time(t(3, 40), &[t(2, 20)], s), Ok(Some(25)));
        // Demand rate 0.5 > 0.4 supplied: no bound.
        assert_eq!(response_time(t(5, 10), &[], s), Ok(None));
    }

    #[test]
    fn limited_preemption_by_hand() {
        // Non-preemptive (q_last = C) below nothing, blocked 4: S = 4 + 3 − 3 = 4, F = 7.
        assert_eq!(limited_preemptive(t(3, 20), 3, &[], 4).unwrap().map(|w| w.response_ns), Some(7));
        // A cooperative task (C = 6 in regions 4 + 2: q_last = 2) below (2, 5),
        // no blocking: S = 6 − 2 + (⌊S/5⌋ + 1)·2: 4 + 2 = 6 → 4 + 4 = 8 → 8: F = 10.
        // Fully preemptive it would end at 6 + ⌈w/5⌉·2 = 10 too; with q_last = 4
        // (regions 2 + 4): S = 2 + (⌊S/5⌋ + 1)·2: 4 → 4, F = 8 (its last region
        // runs through the release at 5, which waits).
        let hi = t(2, 5);
        assert_eq!(limited_preemptive(t(6, 20), 2, &[hi], 0).unwrap().map(|w| w.response_ns), Some(10));
        assert_eq!(limited_preemptive(t(6, 20), 4, &[hi], 0).unwrap().map(|w| w.response_ns), Some(8));
        // Self-pushing (Bril et al. 2009): a non-preemptive (3, 12) below (2, 6) and
        // (2, 5). Job 0: S = (⌊S/6⌋ + 1)·2 + (⌊S/5⌋ + 1)·2 = 4, F = 7. The active
        // period L = ⌈L/12⌉·3 + ⌈L/6⌉·2 + ⌈L/5⌉·2: 7 → 11 → 13 → 18 → 20 → 22 →
        // 24 holds two jobs; job 1: S = 6 − 3 + …: 7 → 11 → 13 → 15 → 17, F = 20,
        // response 8 > 7 (the simulator's schedule too: tests/cooperative.rs).
        assert_eq!(limited_preemptive(t(3, 12), 3, &[t(2, 6), t(2, 5)], 0), Ok(Some(Window { q: 1, w: 20, response_ns: 8 })));
        // U = 1 with blocking: no bound; U = 1 without: the last region decides.
        assert_eq!(limited_preemptive(t(2, 4), 2, &[t(2, 4)], 1), Ok(None));
        assert_eq!(limited_preemptive(t(2, 4), 2, &[t(2, 4)], 0).unwrap().map(|w| w.response_ns), Some(4));
    }

    #[test]
    fn a_busy_period_of_121001_jobs_is_bounded() {
        // U = 1 − 637/1,000,003,000 < 1: the level busy period is 121,000,363 ns long
        // and holds 121,001 jobs of the lower task (the old limit of 100,000 jobs
        // said "no busy period ends"). 879,363 ns is the schedule's own worst
        // response, simulated job by job in tests/analysis_exact.rs.
        let (lo, hi) = (t(121, 1_000), t(879_002, 1_000_003));
        assert_eq!(response_time(lo, &[hi], Supply::Dedicated), Ok(Some(879_363)));
    }
}
