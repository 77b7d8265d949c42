//! The classic tests against a second implementation written here, in exact
//! arithmetic and without work limits (issue 26): bound for bound on random
//! pfp, pedf, gedf (GFB and the tardiness bound) and gfp systems, and on
//! systems built to lie exactly on each test's boundary and 1 ns beside it.
//!
//! The references: pfp by simulating the synchronous schedule job by job;
//! pedf by checking dbf(t) ≤ t at every t up to H + D_max; gedf's GFB and
//! tardiness bound in big rationals straight from the formulas; gfp by the
//! paper's iteration R ← f(R), a nanosecond at a time where it must.

use criticore::analysis::classic::{analyze, TaskAnalysis};
use criticore::{parse_task_system, Format};
use criticore::sim::sched::SchedulerKind;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// (C, T, D) in ns, most important first.
type Task = (u64, u64, u64);

/// Periods dividing 5,040: hyperperiods stay short for the brute-force references.
const PERIODS: [u64; 23] = [4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 24, 28, 30, 35, 36, 40, 42, 45, 48];
const H: u64 = 5_040;

fn q(n: u64, d: u64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}

/// The file: every task on core 0 (partitioned) or none (global), priorities
/// in list order (distinct, so no tie rule is involved).
fn file(cores: usize, tasks: &[Task], partitioned: bool) -> String {
    let mut text = format!("[platform]\ncores = {cores}\n");
    for (i, &(c, t, d)) in tasks.iter().enumerate() {
        text += &format!("[[task]]\nname = \"t{i}\"\nperiod = \"{t}ns\"\ndeadline = \"{d}ns\"\npet = \"{c}ns\"\npriority = {}\n", tasks.len() - i);
        if partitioned {
            text += "core = 0\n";
        }
    }
    text
}

fn engine(cores: usize, tasks: &[Task], kind: SchedulerKind) -> TaskAnalysis {
    let partitioned = matches!(kind, SchedulerKind::Pfp | SchedulerKind::Pedf);
    let text = file(cores, tasks, partitioned);
    let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
    analyze(&system, kind).unwrap()
}

fn bounds(a: &TaskAnalysis) -> Vec<Option<u64>> {
    a.tasks.iter().map(|t| t.bound_ns).collect()
}

// ---- pfp: the schedule itself ----

/// Worst response of the last task over its level's synchronous busy period;
/// None if U > 1 (no busy period ends; at U = 1 it ends at the hyperperiod,
/// a multiple of which `hyper` is).
fn pfp_reference(tasks: &[Task], hyper: u64) -> Option<u64> {
    if tasks.iter().map(|&(c, t, _)| q(c, t)).sum::<BigRational>() > BigRational::one() {
        return None;
    }
    let n = tasks.len();
    let mut next = vec![0u64; n];
    let mut pending: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); n];
    let (mut now, mut worst) = (0u64, 0u64);
    loop {
        for (i, &(c, t, _)) in tasks.iter().enumerate() {
            while next[i] <= now {
                pending[i].push_back((next[i], c));
                next[i] += t;
            }
        }
        // At U = 1 the level never idles: its busy period ends at the
        // hyperperiod (U < 1 ends it earlier, idle).
        let idle = (0..n).all(|i| pending[i].iter().all(|&(r, _)| r >= hyper) && now >= hyper || pending[i].is_empty());
        let Some(i) = (0..n).find(|&i| !pending[i].is_empty()).filter(|_| !idle) else { return Some(worst) };
        let until = *next.iter().min().unwrap();
        let (release, left) = pending[i][0];
        let run = left.min(until - now);
        now += run;
        if run == left {
            pending[i].pop_front();
            if i == n - 1 {
                worst = worst.max(now - release);
            }
        } else {
            pending[i][0].1 -= run;
        }
    }
}

fn pfp_references(tasks: &[Task]) -> Vec<Option<u64>> {
    (1..=tasks.len()).map(|k| pfp_reference(&tasks[..k], H)).collect()
}

fn random_pfp(rng: &mut ChaCha8Rng) -> Vec<Task> {
    let n = rng.random_range(1..=5);
    (0..n)
        .map(|_| {
            let t = PERIODS[rng.random_range(0..PERIODS.len())];
            (rng.random_range(1..=t / 2), t, t)
        })
        .collect()
}

#[test]
fn pfp_bounds_equal_the_simulated_schedule() {
    let mut rng = ChaCha8Rng::seed_from_u64(2601);
    let mut both = [0usize; 2];
    for _ in 0..2_000 {
        let tasks = random_pfp(&mut rng);
        let want = pfp_references(&tasks);
        let a = engine(1, &tasks, SchedulerKind::Pfp);
        assert_eq!(bounds(&a), want, "{tasks:?}");
        both[a.schedulable.unwrap() as usize] += 1;
    }
    assert!(both[0] > 100 && both[1] > 100, "{both:?}");
}

#[test]
fn pfp_on_the_boundary_and_one_ns_beside() {
    let mut rng = ChaCha8Rng::seed_from_u64(2602);
    let mut checked = 0;
    while checked < 500 {
        let mut tasks = random_pfp(&mut rng);
        let last = tasks.len() - 1;
        let Some(r) = pfp_reference(&tasks, H) else { continue };
        if r > tasks[last].1 {
            continue;
        }
        // Deadline exactly the bound: schedulable; 1 ns less: not.
        tasks[last].2 = r;
        let a = engine(1, &tasks, SchedulerKind::Pfp);
        assert_eq!((a.tasks[last].bound_ns, a.tasks[last].schedulable), (Some(r), Some(true)), "{tasks:?}");
        tasks[last].2 = r - 1;
        if r > 1 {
            let a = engine(1, &tasks, SchedulerKind::Pfp);
            assert_eq!((a.tasks[last].bound_ns, a.tasks[last].schedulable), (Some(r), Some(false)), "{tasks:?}");
        }
        checked += 1;
    }
}

#[test]
fn pfp_a_busy_period_of_over_100000_jobs_is_decided() {
    // U = 1 − 637/1,000,003,000: 121,001 jobs of the lower task in one busy period.
    let tasks = [(879_002, 1_000_003, 1_000_003), (121, 1_000, 1_000)];
    assert_eq!(pfp_reference(&tasks, 1_000_003_000), Some(879_363));
    let a = engine(1, &tasks, SchedulerKind::Pfp);
    assert_eq!(bounds(&a), vec![Some(879_002), Some(879_363)]);
    assert_eq!(a.schedulable, Some(false));
    assert_eq!(a.tasks[1].schedulable, Some(false));
    assert_eq!(a.tasks[1].note, None, "a bound, so no reason to give");
}

// ---- pedf: every instant up to H + D_max ----

fn pedf_reference(tasks: &[Task]) -> bool {
    let u: BigRational = tasks.iter().map(|&(c, t, _)| q(c, t)).sum();
    if u > BigRational::one() {
        return false;
    }
    let horizon = H + tasks.iter().map(|t| t.2).max().unwrap();
    (1..=horizon).all(|x| {
        let demand: u64 = tasks.iter().filter(|t| x >= t.2).map(|&(c, t, d)| ((x - d) / t + 1) * c).sum();
        demand <= x
    })
}

fn random_pedf(rng: &mut ChaCha8Rng) -> Vec<Task> {
    let n = rng.random_range(1..=5);
    (0..n)
        .map(|_| {
            let t = PERIODS[rng.random_range(0..PERIODS.len())];
            let c = rng.random_range(1..=(t / 2).max(1));
            (c, t, rng.random_range(c..=t + t / 2))
        })
        .collect()
}

#[test]
fn pedf_verdicts_equal_every_instant_checked() {
    let mut rng = ChaCha8Rng::seed_from_u64(2603);
    let mut both = [0usize; 2];
    for _ in 0..1_500 {
        let tasks = random_pedf(&mut rng);
        let want = pedf_reference(&tasks);
        let a = engine(1, &tasks, SchedulerKind::Pedf);
        assert_eq!(a.schedulable, Some(want), "{tasks:?}");
        both[want as usize] += 1;
    }
    assert!(both[0] > 100 && both[1] > 100, "{both:?}");
}

#[test]
fn pedf_on_the_boundary_and_one_ns_beside() {
    // The least deadline of the last task that the reference accepts: on it,
    // schedulable; 1 ns shorter, not.
    let mut rng = ChaCha8Rng::seed_from_u64(2604);
    let mut checked = 0;
    while checked < 300 {
        let mut tasks = random_pedf(&mut rng);
        let last = tasks.len() - 1;
        let (c, t, _) = tasks[last];
        tasks[last].2 = t * 3;
        if !pedf_reference(&tasks) {
            continue;
        }
        let (mut lo, mut hi) = (c, t * 3);
        while lo < hi {
            let mid = (lo + hi) / 2;
            tasks[last].2 = mid;
            if pedf_reference(&tasks) { hi = mid } else { lo = mid + 1 }
        }
        tasks[last].2 = lo;
        assert_eq!(engine(1, &tasks, SchedulerKind::Pedf).schedulable, Some(true), "{tasks:?}");
        if lo > c {
            tasks[last].2 = lo - 1;
            assert_eq!(engine(1, &tasks, SchedulerKind::Pedf).schedulable, Some(false), "{tasks:?}");
        }
        checked += 1;
    }
}

#[test]
fn pedf_one_over_the_lcm_either_side_of_full_utilization() {
    // Implicit deadlines, coprime periods near 2·10⁹: C₁T₂ + C₂T₁ = T₁T₂ ∓ 1, so
    // U = 1 ∓ 1/(T₁T₂) (the old test walked 2,000,000 deadlines and gave up).
    let (t1, t2) = (1_999_993u64, 1_999_999u64);
    let below = [(333_332, t1, t1), (1_666_666, t2, t2)];
    let above = [(1_666_661, t1, t1), (333_333, t2, t2)];
    assert_eq!(333_332u128 * t2 as u128 + 1_666_666 * t1 as u128, t1 as u128 * t2 as u128 - 1);
    assert_eq!(1_666_661u128 * t2 as u128 + 333_333 * t1 as u128, t1 as u128 * t2 as u128 + 1);
    assert_eq!(engine(1, &below, SchedulerKind::Pedf).schedulable, Some(true));
    assert_eq!(engine(1, &above, SchedulerKind::Pedf).schedulable, Some(false));
}

#[test]
fn pedf_a_busy_period_of_500_million_deadlines_is_decided() {
    // (1, 2) and (499,999,999, 1,000,000,007): U = 1 − 15/2,000,000,014 < 1. The
    // synchronous busy period is 999,999,998 ns and holds 499,999,999 deadlines of
    // the first task: the old walk stopped after 2,000,000 and said the core fails.
    let implicit = [(1, 2, 2), (499_999_999, 1_000_000_007, 1_000_000_007)];
    assert_eq!(engine(1, &implicit, SchedulerKind::Pedf).schedulable, Some(true));
    // Constrained, the demand walk (QPA) decides it in a few dozen steps:
    // dbf(D₂) = 500,000,003 + 499,999,999 = 1,000,000,002 ≤ D₂ = 1,000,000,006.
    let constrained = [(1, 2, 2), (499_999_999, 1_000_000_007, 1_000_000_006)];
    assert_eq!(engine(1, &constrained, SchedulerKind::Pedf).schedulable, Some(true));
    // On the boundary: D₂ = 999,999,997 gives dbf(D₂) = 499,999,998 + 499,999,999 = D₂
    // exactly (schedulable); 1 ns less, dbf = 999,999,997 > 999,999,996.
    let on = [(1, 2, 2), (499_999_999, 1_000_000_007, 999_999_997)];
    assert_eq!(engine(1, &on, SchedulerKind::Pedf).schedulable, Some(true));
    let beside = [(1, 2, 2), (499_999_999, 1_000_000_007, 999_999_996)];
    assert_eq!(engine(1, &beside, SchedulerKind::Pedf).schedulable, Some(false));
}

// ---- gedf: GFB and the tardiness bound from the formulas ----

/// Per task the bound: D if Σδ + (m−1)·δ_max ≤ m; else, with implicit
/// deadlines, D + x + C with x = E_L(m−1) / (m − (m−1)·u_max − U_L(m−1)) if
/// U ≤ m and that denominator is positive; else none.
fn gedf_reference(m: usize, tasks: &[Task]) -> Vec<Option<u64>> {
    let mm = BigRational::from_integer(BigInt::from(m));
    let k = BigRational::from_integer(BigInt::from(m - 1));
    let dens: Vec<BigRational> = tasks.iter().map(|&(c, t, d)| q(c, d.min(t))).collect();
    let dmax = dens.iter().max().cloned().unwrap_or_else(BigRational::zero);
    let sum: BigRational = dens.iter().cloned().sum();
    if sum + &k * &dmax <= mm {
        return tasks.iter().map(|t| Some(t.2)).collect();
    }
    if tasks.iter().any(|t| t.2 != t.1) {
        return vec![None; tasks.len()];
    }
    let mut us: Vec<BigRational> = tasks.iter().map(|&(c, t, _)| q(c, t)).collect();
    let total: BigRational = us.iter().cloned().sum();
    us.sort();
    us.reverse();
    let umax = us[0].clone();
    let ul: BigRational = us.iter().take(m - 1).cloned().sum();
    let mut pets: Vec<u64> = tasks.iter().map(|t| t.0).collect();
    pets.sort_unstable_by(|a, b| b.cmp(a));
    let el: u64 = pets.iter().take(m - 1).sum();
    let slack = mm.clone() - k * umax - ul;
    if total > mm || slack <= BigRational::zero() {
        return vec![None; tasks.len()];
    }
    let x = BigRational::from_integer(BigInt::from(el)) / slack;
    tasks
        .iter()
        .map(|&(c, _, d)| {
            let b = (x.clone() + BigRational::from_integer(BigInt::from(c))).ceil().to_integer();
            Some(d + u64::try_from(b).unwrap())
        })
        .collect()
}

fn random_global(rng: &mut ChaCha8Rng, implicit: bool) -> (usize, Vec<Task>) {
    let m = rng.random_range(1..=4);
    let n = rng.random_range(1..=3 * m + 1);
    let tasks = (0..n)
        .map(|_| {
            let t = rng.random_range(1_000..=100_000_000);
            let d = if implicit { t } else { rng.random_range(t / 2..=t) };
            (rng.random_range(1..=d), t, d)
        })
        .collect();
    (m, tasks)
}

#[test]
fn gedf_bounds_equal_the_formulas() {
    let mut rng = ChaCha8Rng::seed_from_u64(2605);
    let mut kinds = [0usize; 3];
    for i in 0..3_000 {
        let (m, tasks) = random_global(&mut rng, i % 3 != 0);
        let want = gedf_reference(m, &tasks);
        let a = engine(m, &tasks, SchedulerKind::Gedf);
        assert_eq!(bounds(&a), want, "m = {m}: {tasks:?}");
        kinds[match (&want[0], a.test) {
            (None, _) => 0,
            (Some(_), "Goossens-Funk-Baruah density test") => 1,
            _ => 2,
        }] += 1;
    }
    assert!(kinds.iter().all(|&k| k > 100), "none / GFB / tardiness: {kinds:?}");
}

#[test]
fn gedf_gfb_on_the_boundary_and_one_ns_beside() {
    // k = m(q − 1) + 1 tasks of density 1/q: Σδ + (m−1)/q = m exactly.
    let mut rng = ChaCha8Rng::seed_from_u64(2606);
    for _ in 0..200 {
        let m = rng.random_range(2..=4);
        let qd = rng.random_range(2..=6u64);
        let c = rng.random_range(1_000..=1_000_000u64);
        let k = m as u64 * (qd - 1) + 1;
        let mut tasks: Vec<Task> = (0..k).map(|_| (c, c * qd, c * qd)).collect();
        let a = engine(m, &tasks, SchedulerKind::Gedf);
        assert_eq!(a.test, "Goossens-Funk-Baruah density test", "m = {m}: {tasks:?}");
        assert_eq!(a.schedulable, Some(true));
        tasks[0].0 += 1;
        let a = engine(m, &tasks, SchedulerKind::Gedf);
        assert_eq!(a.test, "Goossens-Funk-Baruah, else bounded tardiness", "m = {m}: {tasks:?}");
        assert_eq!(bounds(&a), gedf_reference(m, &tasks));
    }
}

#[test]
fn gedf_tardiness_on_the_boundary_and_one_ns_beside() {
    let mut rng = ChaCha8Rng::seed_from_u64(2607);
    for _ in 0..200 {
        let m = rng.random_range(2..=4usize);
        let t = rng.random_range(1_000..=1_000_000u64) * 2;
        // 2m tasks of u = 1/2: U = m exactly (the capacity condition at equality),
        // (m−1)/2 + (m−1)/2 = m − 1 < m: bounded. One more ns: U > m, no bound.
        let mut tasks: Vec<Task> = (0..2 * m).map(|_| (t / 2, t, t)).collect();
        let a = engine(m, &tasks, SchedulerKind::Gedf);
        let want = gedf_reference(m, &tasks);
        assert!(want.iter().all(Option::is_some));
        assert_eq!(bounds(&a), want);
        tasks[0].0 += 1;
        let a = engine(m, &tasks, SchedulerKind::Gedf);
        assert!(bounds(&a).iter().all(Option::is_none), "m = {m}: {:?}", a.tasks);
    }
    // The tardiness condition at equality: m = 2, two tasks of u = 1:
    // (m−1)·u_max + U_L(1) = 2 = m, not below it: no bound; 1 ns less PET: bounded.
    for t in [1_000u64, 999_999, 1_000_000_000] {
        let at = [(t, t, t), (t, t, t)];
        assert!(bounds(&engine(2, &at, SchedulerKind::Gedf)).iter().all(Option::is_none));
        let below = [(t - 1, t, t), (t - 1, t, t)];
        let want = gedf_reference(2, &below);
        assert!(want.iter().all(Option::is_some));
        assert_eq!(bounds(&engine(2, &below, SchedulerKind::Gedf)), want);
    }
}

#[test]
fn gedf_one_over_the_lcm_above_gfb_is_not_accepted() {
    // One core, U = 1 + 1/(T₁T₂) ≈ 1 + 2.5e-13: the old 1e-12 margin accepted it
    // (and the simulation missed); above m no tardiness is bounded either.
    let (t1, t2) = (1_999_993u64, 1_999_999u64);
    let over = [(1_666_661, t1, t1), (333_333, t2, t2)];
    assert_eq!(gedf_reference(1, &over), vec![None, None]);
    let a = engine(1, &over, SchedulerKind::Gedf);
    assert_eq!((bounds(&a), a.schedulable), (vec![None, None], Some(false)));
}

#[test]
fn gedf_tardiness_with_an_integral_x_is_not_rounded_up() {
    // 2 cores, (8, 10), (8, 10), (1, 10) ms: x = 8 ms / 0.4 = 20 ms exactly (f64 gave x a hair above).
    let tasks = [(8_000_000, 10_000_000, 10_000_000), (8_000_000, 10_000_000, 10_000_000), (1_000_000, 10_000_000, 10_000_000)];
    let want = vec![Some(38_000_000), Some(38_000_000), Some(31_000_000)];
    assert_eq!(gedf_reference(2, &tasks), want);
    assert_eq!(bounds(&engine(2, &tasks, SchedulerKind::Gedf)), want);
}

// ---- gfp: the iteration R ← f(R) ----

fn gfp_reference(m: usize, tasks: &[Task]) -> Vec<Option<u64>> {
    let mut out: Vec<Option<u64>> = Vec::new();
    for (k, &(c, t, d)) in tasks.iter().enumerate() {
        if out.iter().any(Option::is_none) || d > t || c > d {
            out.push(None);
            continue;
        }
        let work = |(ch, th, _): Task, rh: u64, l: u64| -> u64 {
            let n = (l + rh - ch) / th;
            n * ch + ch.min(l + rh - ch - n * th)
        };
        let f = |r: u64| c + tasks[..k].iter().zip(&out).map(|(&h, rh)| work(h, rh.unwrap(), r).min(r - c + 1)).sum::<u64>() / m as u64;
        let mut r = c;
        out.push(loop {
            let next = f(r);
            if next <= r {
                break Some(r);
            }
            if next > d {
                break None;
            }
            r = next;
        });
    }
    out
}

#[test]
fn gfp_bounds_equal_the_iteration() {
    let mut rng = ChaCha8Rng::seed_from_u64(2608);
    let mut both = [0usize; 2];
    for _ in 0..2_000 {
        let m = rng.random_range(1..=4);
        let n = rng.random_range(1..=2 * m + 2);
        let tasks: Vec<Task> = (0..n)
            .map(|_| {
                let t = rng.random_range(10..=20_000);
                let d = rng.random_range(t / 2..=t);
                (rng.random_range(1..=d / 2 + 1), t, d)
            })
            .collect();
        let want = gfp_reference(m, &tasks);
        let a = engine(m, &tasks, SchedulerKind::Gfp);
        assert_eq!(bounds(&a), want, "m = {m}: {tasks:?}");
        both[want.iter().all(Option::is_some) as usize] += 1;
    }
    assert!(both[0] > 100 && both[1] > 100, "{both:?}");
}

#[test]
fn gfp_on_the_boundary_and_one_ns_beside() {
    let mut rng = ChaCha8Rng::seed_from_u64(2609);
    let mut checked = 0;
    while checked < 300 {
        let m = rng.random_range(1..=3);
        let n = rng.random_range(2..=2 * m + 1);
        let mut tasks: Vec<Task> = (0..n)
            .map(|_| {
                let t = rng.random_range(1_000..=200_000u64);
                (rng.random_range(1..=t / 3), t, t)
            })
            .collect();
        let last = n - 1;
        let Some(r) = gfp_reference(m, &tasks)[last] else { continue };
        tasks[last].2 = r;
        let a = engine(m, &tasks, SchedulerKind::Gfp);
        assert_eq!((a.tasks[last].bound_ns, a.tasks[last].schedulable), (Some(r), Some(true)), "m = {m}: {tasks:?}");
        if r > tasks[last].0 {
            tasks[last].2 = r - 1;
            let a = engine(m, &tasks, SchedulerKind::Gfp);
            assert_eq!(a.tasks[last].bound_ns, None, "m = {m}: {tasks:?}");
        }
        checked += 1;
    }
}
