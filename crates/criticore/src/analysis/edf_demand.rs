//! Processor demand test for EDF on one processor (Baruah, Rosier & Howell,
//! RTS 1990): a synchronous periodic task set is schedulable if and only if
//! U ≤ 1 and, at every absolute deadline t in the testing interval,
//!   dbf(t) = Σᵢ max(0, ⌊(t − Dᵢ)/Tᵢ⌋ + 1)·Cᵢ ≤ t.
//! Offsets and sporadic separation only lower the demand, so "schedulable"
//! holds for them too; a job then responds within its relative deadline.
//!
//! Decided exactly, and without a cap that could pass for a verdict:
//! - U is compared with 1 in exact arithmetic; with every Dᵢ ≥ Tᵢ, U ≤ 1 is
//!   the whole test (Liu & Layland 1973 for D = T; Baruah et al. 1990).
//! - Otherwise the deadlines up to L are enough: L_b, the synchronous busy
//!   period, or where it is not found within [`MAX_STEPS`] and U < 1,
//!   L_a = max(D_max, Σ (Tᵢ − Dᵢ)·Uᵢ / (1 − U)) (George, Rivierre & Spuri
//!   1996; Zhang & Burns 2009).
//! - They are walked backwards by Quick convergence Processor-demand Analysis
//!   (QPA, Zhang & Burns, IEEE TC 2009): from the last deadline before L,
//!   t ← dbf(t) while dbf(t) < t, else the deadline before t; schedulable iff
//!   it reaches dbf(t) ≤ min Dᵢ without meeting dbf(t) > t.
//! Only a system at U = 1 exactly with some Dᵢ < Tᵢ and an astronomically
//! long busy period, or a QPA walk longer than [`MAX_STEPS`], can end "not
//! decided".
//!
//! [`schedulable_with_stalls`] is the same walk with MemGuard's stalls of the
//! jobs due added to the demand (docs/analysis.md, "pedf under MemGuard").

pub use super::Sporadic as EdfTask;
use super::exact::{ceil_u64, cmp_sum, utilizations, Frac};
use super::NotDecided;
use num_bigint::BigInt;
use num_rational::BigRational;
use std::cmp::Ordering;

/// Most steps of the busy-period iteration, and of the QPA walk, before
/// saying "not decided".
pub const MAX_STEPS: u64 = 10_000_000;

/// Demand of jobs with release and deadline in [0, t].
pub fn dbf(tasks: &[EdfTask], t: u64) -> u128 {
    tasks
        .iter()
        .filter(|k| t >= k.deadline_ns)
        .map(|k| ((t - k.deadline_ns) / k.period_ns + 1) as u128 * k.pet_ns as u128)
        .sum()
}

/// Length of the synchronous busy period: the least L > 0 with
/// Σ ⌈L/Tᵢ⌉·Cᵢ + extra(L) = L (`extra`: what else the jobs released in
/// [0, L) cost, such as stalls); None if not found within [`MAX_STEPS`] or past u64.
fn busy_period(tasks: &[EdfTask], extra: impl Fn(u64) -> u128) -> Option<u64> {
    let mut l: u128 = tasks.iter().map(|k| k.pet_ns as u128).sum();
    for _ in 0..MAX_STEPS {
        let next: u128 = tasks.iter().map(|k| l.div_ceil(k.period_ns as u128) * k.pet_ns as u128).sum::<u128>() + extra(l as u64);
        if next == l {
            return u64::try_from(l).ok();
        }
        if next > u64::MAX as u128 {
            return None;
        }
        l = next;
    }
    None
}

/// L_a = max(D_max, ⌈Σ (Tᵢ − Dᵢ)·Uᵢ / (1 − U)⌉) for U < 1, exactly.
fn l_a(tasks: &[EdfTask]) -> u64 {
    let one = BigRational::from_integer(BigInt::from(1));
    let u: BigRational = tasks.iter().map(|k| Frac::new(k.pet_ns as u128, k.period_ns as u128).big()).sum();
    let num: BigRational = tasks
        .iter()
        .map(|k| BigRational::new(BigInt::from(k.period_ns as i128 - k.deadline_ns as i128) * BigInt::from(k.pet_ns), BigInt::from(k.period_ns)))
        .sum();
    let bound = num / (one - u);
    let d_max = tasks.iter().map(|k| k.deadline_ns).max().unwrap_or(0);
    if bound.numer() <= &BigInt::from(0) { d_max } else { d_max.max(ceil_u64(&bound)) }
}

/// The latest absolute deadline ≤ t, if any.
fn deadline_at_or_before(tasks: &[EdfTask], t: u64) -> Option<u64> {
    tasks
        .iter()
        .filter(|k| t >= k.deadline_ns)
        .map(|k| k.deadline_ns + (t - k.deadline_ns) / k.period_ns * k.period_ns)
        .max()
}

/// Whether EDF meets every deadline of `tasks` on one processor.
pub fn schedulable(tasks: &[EdfTask]) -> Result<bool, NotDecided> {
    if tasks.is_empty() {
        return Ok(true);
    }
    let u = cmp_sum(&utilizations(tasks.iter().map(|k| (k.pet_ns, k.period_ns))), Frac::new(1, 1));
    if u == Ordering::Greater {
        return Ok(false);
    }
    if tasks.iter().all(|k| k.deadline_ns >= k.period_ns) {
        return Ok(true);
    }
    // L_b alone bounds the interval; L_a (big rationals) only where L_b was
    // not found within the limit.
    let busy = busy_period(tasks, |_| 0);
    let l = match (u, busy) {
        (_, Some(b)) => b,
        (Ordering::Less, None) => l_a(tasks),
        (_, None) => return Err(NotDecided { limit: MAX_STEPS, of: "steps of the busy period at U = 1" }),
    };
    qpa(tasks, l, |t| dbf(tasks, t))
}

/// QPA's walk (Zhang & Burns 2009) over the deadlines up to `l` with the
/// demand `h` (non-decreasing, constant between deadlines): schedulable iff
/// it reaches h(t) ≤ min Dᵢ without meeting h(t) > t.
fn qpa(tasks: &[EdfTask], l: u64, h: impl Fn(u64) -> u128) -> Result<bool, NotDecided> {
    let d_min = tasks.iter().map(|k| k.deadline_ns).min().expect("not empty");
    let Some(mut t) = deadline_at_or_before(tasks, l) else { return Ok(true) };
    for _ in 0..MAX_STEPS {
        let d = h(t);
        if d > t as u128 {
            return Ok(false);
        }
        if d <= d_min as u128 {
            return Ok(true);
        }
        t = if d < t as u128 {
            d as u64
        } else {
            // h = t > d_min: the deadline before t.
            deadline_at_or_before(tasks, t - 1).expect("d_min < t")
        };
    }
    Err(NotDecided { limit: MAX_STEPS, of: "steps of the processor demand walk" })
}

/// MemGuard's stalls on the core, per-core budget Q per synchronous period P
/// (docs/analysis.md, "pedf under MemGuard"): in a busy interval [t0, t)
/// ending at a missed deadline t only jobs with deadlines ≤ t run, and each
/// stalled period but the first spent Q of their requests, so the interval
/// holds at most ⌊N(t)/Q⌋ + 1 stalls, P each (and, under reclaim, a
/// throttle error every other period besides).
#[derive(Debug, Clone, PartialEq)]
pub struct Stalls {
    /// Most requests of one job of each task (as `tasks`).
    pub requests: Vec<f64>,
    pub budget: u64,
    pub period_ns: u64,
    /// MemGuard's reclaim: ⌈(⌈t/P⌉ + 1)/2⌉ throttle errors more.
    pub reclaim: bool,
    /// The least time the core needs to issue Q (`memory::issue_ns`): each
    /// stalled period but the first is that much shorter than P.
    pub issue_ns: u64,
}

impl Stalls {
    /// Stalls of an interval of `t` whose jobs issue `requests`.
    fn of(&self, requests: f64, t: u64) -> u128 {
        if self.budget == 0 {
            return u64::MAX as u128;
        }
        let stalls = super::memory::memguard_stall_ns(requests, self.budget, self.period_ns, self.issue_ns) as u128;
        let errors = if self.reclaim { (t.div_ceil(self.period_ns) as u128 + 1).div_ceil(2) } else { 0 };
        stalls + errors.saturating_mul(self.period_ns as u128)
    }

    /// Long-run share of the time stalled.
    pub fn rate(&self, tasks: &[EdfTask]) -> f64 {
        let per_ns: f64 = tasks.iter().zip(&self.requests).map(|(k, &n)| n / k.period_ns as f64).sum();
        per_ns * (self.period_ns - self.issue_ns.min(self.period_ns)) as f64 / self.budget.max(1) as f64 + if self.reclaim { 0.5 } else { 0.0 }
    }
}

/// [`schedulable`] on a core whose jobs also wait for MemGuard's `stalls`:
/// at every absolute deadline t up to the synchronous busy period with
/// stalls, dbf(t) + stalls of the jobs due by t ≤ t (QPA: both terms only
/// grow with t). With a long-run demand of 1 or more, false.
pub fn schedulable_with_stalls(tasks: &[EdfTask], stalls: &Stalls) -> Result<bool, NotDecided> {
    if tasks.is_empty() {
        return Ok(true);
    }
    let u: f64 = tasks.iter().map(|k| k.pet_ns as f64 / k.period_ns as f64).sum();
    if u + stalls.rate(tasks) >= 1.0 {
        return Ok(false);
    }
    // The synchronous busy period, stalls of the jobs released in it included.
    let released = |l: u64| -> f64 { tasks.iter().zip(&stalls.requests).map(|(k, &n)| l.div_ceil(k.period_ns) as f64 * n).sum() };
    let l = busy_period(tasks, |l| stalls.of(released(l), l)).ok_or(NotDecided { limit: MAX_STEPS, of: "steps of the busy period with stalls" })?;
    // At a deadline t: the jobs due by t and their stalls up to t; between
    // deadlines the same as at the last one, so QPA's steps hold.
    let due = |t: u64| -> f64 { tasks.iter().zip(&stalls.requests).filter(|(k, _)| t >= k.deadline_ns).map(|(k, &n)| ((t - k.deadline_ns) / k.period_ns + 1) as f64 * n).sum() };
    qpa(tasks, l, |t| deadline_at_or_before(tasks, t).map_or(0, |d| dbf(tasks, d) + stalls.of(due(d), d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(c: u64, t: u64, d: u64) -> EdfTask {
        EdfTask { pet_ns: c, period_ns: t, deadline_ns: d }
    }

    #[test]
    fn implicit_deadlines_are_schedulable_up_to_full_utilization() {
        assert_eq!(schedulable(&[k(2, 4, 4), k(3, 6, 6)]), Ok(true));
        assert_eq!(schedulable(&[k(2, 4, 4), k(3, 5, 5)]), Ok(false));
    }

    #[test]
    fn constrained_deadlines_by_hand() {
        // (1, 4, 2), (2, 6, 3): dbf(2) = 1, dbf(3) = 3, dbf(6) = 2 + 2 = 4 ≤ 6, … schedulable.
        assert_eq!(schedulable(&[k(1, 4, 2), k(2, 6, 3)]), Ok(true));
        // (2, 4, 2), (1, 6, 3): dbf(3) = 2 + 1 = 3 ≤ 3, dbf(6) = 2·2 + 1 = 5 ≤ 6, dbf(9) = 3·2 + 2 = 8 ≤ 9 … holds;
        // (2, 4, 2), (2, 6, 3): dbf(3) = 4 > 3 although U = 0.83.
        assert_eq!(schedulable(&[k(2, 4, 2), k(1, 6, 3)]), Ok(true));
        assert_eq!(schedulable(&[k(2, 4, 2), k(2, 6, 3)]), Ok(false));
        assert_eq!(dbf(&[k(2, 4, 2), k(2, 6, 3)], 3), 4);
    }

    #[test]
    fn u_one_minus_epsilon_with_large_coprime_periods_is_schedulable() {
        // Implicit deadlines, periods near 2·10⁹ that share no factor, U = 1 − 1/(T₁T₂):
        // EDF's exact test is U ≤ 1 (the old walk stopped at 2,000,000 deadlines and
        // said the core fails). C₁T₂ + C₂T₁ = T₁T₂ − 1 by construction.
        let (t1, t2) = (1_999_993u64, 1_999_999u64);
        let (c1, c2) = (333_332u64, 1_666_666u64);
        assert_eq!(c1 as u128 * t2 as u128 + c2 as u128 * t1 as u128, t1 as u128 * t2 as u128 - 1);
        assert_eq!(schedulable(&[k(c1, t1, t1), k(c2, t2, t2)]), Ok(true));
        // One more ns of PET: U = 1 + (T₂ − 1)/(T₁T₂) > 1.
        assert_eq!(schedulable(&[k(c1 + 1, t1, t1), k(c2, t2, t2)]), Ok(false));
    }

    /// Every absolute deadline up to the hyperperiod, one by one: a second
    /// method for small periods (U ≤ 1 and dbf(t) ≤ t for all t ≤ H + D_max
    /// decide a synchronous system exactly).
    fn brute(tasks: &[EdfTask]) -> bool {
        let u: u128 = tasks.iter().map(|t| t.pet_ns as u128 * (5_040 / t.period_ns as u128)).sum();
        if u > 5_040 {
            return false;
        }
        let horizon = 5_040 + tasks.iter().map(|t| t.deadline_ns).max().unwrap();
        (1..=horizon).all(|t| dbf(tasks, t) <= t as u128)
    }

    #[test]
    fn quick_processor_demand_agrees_with_every_deadline_checked() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(26);
        // Periods dividing 5,040 keep the hyperperiod small.
        let periods = [8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 24, 28, 30, 35, 36, 40, 42, 45, 48];
        let (mut yes, mut no) = (0, 0);
        for _ in 0..3_000 {
            let n = rng.random_range(1..=5);
            let tasks: Vec<EdfTask> = (0..n)
                .map(|_| {
                    let t = periods[rng.random_range(0..periods.len())];
                    let d = rng.random_range(1..=t + t / 2);
                    k(rng.random_range(1..=t.min(d).max(1)).min(t / 2).max(1), t, d)
                })
                .collect();
            let expect = brute(&tasks);
            assert_eq!(schedulable(&tasks), Ok(expect), "{tasks:?}");
            if expect { yes += 1 } else { no += 1 }
        }
        assert!(yes > 300 && no > 300, "both sides of the boundary: {yes} / {no}");
    }
}
