//! Global fixed priority on m identical cores: the response-time test of
//! Bertogna & Cirinei (RTSS 2007), sufficient for constrained deadlines.
//! Task k's response is at most the least fixed point of
//!   R = Cₖ + ⌊ (1/m) · Σ_{i ∈ hp(k)} min(Wᵢ(R), R − Cₖ + 1) ⌋
//! where Wᵢ(L) = Nᵢ(L)·Cᵢ + min(Cᵢ, L + Rᵢ − Cᵢ − Nᵢ(L)·Tᵢ) bounds i's work in
//! a window of length L with its own response bound Rᵢ as the carry-in
//! slack, Nᵢ(L) = ⌊(L + Rᵢ − Cᵢ)/Tᵢ⌋. Time is in whole nanoseconds (the
//! paper's discrete time unit). A task whose fixed point passes its deadline
//! has no bound here, and nor has any task below it (their carry-in assumes
//! it met its deadlines).
//!
//! Any R with f(R) ≤ R bounds the response (the paper's argument: a job
//! unfinished at R would need more than R − Cₖ of interference); the bound is
//! the least such R, which for this monotone f is its least fixed point. The
//! iteration R ← f(R) from Cₖ can crawl a nanosecond at a time (m higher
//! tasks each adding R − Cₖ + 1), so between breakpoints, where every
//! min(Wᵢ(R), R − Cₖ + 1) is linear in R with slope 0 or 1, the least R that
//! satisfies f(R) ≤ R is solved for in closed form (exact, integers only).

/// A task as charged (deadline D ≤ T, or it gets no bound).
pub use super::Sporadic as GfpTask;

/// Bertogna and Cirinei's workload (RTSS 2007): the most a task of `c` per
/// period `t` whose jobs finish within `r` (≥ c) of their release runs in a
/// window of length `l`: N = ⌊(l + r − c)/t⌋ whole jobs and at most c of the
/// one before them, N·c + min(c, l + r − c − N·t). Exact (the other
/// analyses that need it call this one).
pub fn workload(c: u64, t: u64, r: u64, l: u64) -> u128 {
    let (c, t) = (c as u128, t as u128);
    let span = l as u128 + r as u128 - c;
    let n = span / t;
    n * c + c.min(span - n * t)
}

/// One interference term min(Wᵢ(R), R − Cₖ + 1) at `r`: its value, its slope
/// (0 or 1) to the right of `r`, and for how many nanoseconds that holds.
fn term(h: &GfpTask, rh: u64, c: u128, r: u128) -> (u128, u128, u128) {
    let (ch, th) = (h.pet_ns as u128, h.period_ns as u128);
    let rem = (r + rh as u128 - ch) % th;
    let w = workload(h.pet_ns, h.period_ns, rh, r as u64);
    let cap = r - c + 1;
    if cap < w {
        // The cap climbs 1 per ns and W never falls: the cap stays the
        // minimum at least until it reaches today's W.
        (cap, 1, w - cap)
    } else if rem < ch {
        // W climbs (the carried-in job's last part) and the cap with it.
        (w, 1, ch - rem)
    } else {
        (w, 0, th - rem)
    }
}

/// The least R ≥ Cₖ with Cₖ + ⌊Σ min(Wᵢ(R), R − Cₖ + 1) / m⌋ ≤ R, if it is ≤ D.
fn least_fixed_point(task: &GfpTask, higher: &[(GfpTask, u64)], m: usize) -> Option<u64> {
    let (c, d, m) = (task.pet_ns as u128, task.deadline_ns as u128, m as u128);
    let mut r = c;
    while r <= d {
        let mut sum = 0u128;
        let mut slope = 0u128;
        let mut run = u128::MAX;
        for (h, rh) in higher {
            let (v, s, len) = term(h, *rh, c, r);
            sum += v;
            slope += s;
            run = run.min(len);
        }
        let f = c + sum / m;
        if f <= r {
            return Some(r as u64);
        }
        // On [r, r + run] the sum is sum + slope·x: f(r + x) ≤ r + x
        // ⟺ sum − m·(r − c + 1) < (m − slope)·x.
        // Here sum ≥ m·(r − c + 1), as f(r) > r.
        if slope < m {
            let x = (sum - m * (r - c + 1)) / (m - slope) + 1;
            if x <= run {
                let at = r + x;
                return (at <= d).then_some(at as u64);
            }
        }
        // No R in [r, r + run] closes; nor any below f(r) (f is monotone).
        r = f.max(r + run + 1);
    }
    None
}

/// Response-time bounds of `tasks` (most important first) on `m` cores.
pub fn response_times(tasks: &[GfpTask], m: usize) -> Vec<Option<u64>> {
    let mut bounds: Vec<Option<u64>> = Vec::with_capacity(tasks.len());
    for (k, task) in tasks.iter().enumerate() {
        if bounds.iter().any(Option::is_none) || task.deadline_ns > task.period_ns || task.pet_ns > task.deadline_ns {
            bounds.push(None);
            continue;
        }
        let higher: Vec<(GfpTask, u64)> = tasks[..k].iter().zip(&bounds).map(|(h, b)| (*h, b.expect("checked above"))).collect();
        bounds.push(least_fixed_point(task, &higher, m));
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(c: u64, t: u64, d: u64) -> GfpTask {
        GfpTask { pet_ns: c, period_ns: t, deadline_ns: d }
    }

    #[test]
    fn by_hand_on_two_cores() {
        // m = 2: (2, 5, 5), (3, 7, 7), (4, 10, 10). The first two have at most
        // one higher task each, and ⌊min(W, R − C + 1)/2⌋ with R = C:
        // task 1: ⌊min(W₀(3), 1)/2⌋ = 0 → R₁ = 3.
        // task 2: R = 4: W₀(4) = ⌊(4+2−2)/5⌋·2 + min(2, 4 − 0) = 2 → min(2, 1) = 1;
        //         W₁(4) = ⌊(4+3−3)/7⌋·3 + min(3, 4) = 3 → min(3, 1) = 1; ⌊2/2⌋ = 1 → R = 5;
        //         R = 5: min(W₀(5) = 2, 2) = 2, min(W₁(5) = 3, 2) = 2 → 4 + 2 = 6;
        //         R = 6: W₀(6) = ⌊6/5⌋·2 + min(2, 6 − 5) = 3, min(3, 3) = 3; W₁(6) = 3, min(3, 3) = 3 → 4 + 3 = 7;
        //         R = 7: W₀(7) = 2 + min(2, 2) = 4, min(4, 4) = 4; W₁(7) = ⌊7/7⌋·3 + min(3, 0) = 3 → 4 + ⌊7/2⌋ = 7. R₂ = 7.
        assert_eq!(response_times(&[g(2, 5, 5), g(3, 7, 7), g(4, 10, 10)], 2), vec![Some(2), Some(3), Some(7)]);
    }

    #[test]
    fn a_missed_deadline_leaves_the_lower_tasks_without_bound() {
        // One core: (3, 4, 4) then (2, 4, 4): 2 + min(W, 1)… R = 2: min(W₀(2) = 3, 1) = 1 → 3, then
        // min(W₀(3) = 3, 2) = 2 → 4, then min(W₀(4), 3) = 3 → 5 > 4: no bound; the third neither.
        assert_eq!(response_times(&[g(3, 4, 4), g(2, 4, 4), g(1, 100, 100)], 1), vec![Some(3), None, None]);
    }

    /// The paper's iteration R ← f(R) from Cₖ, a nanosecond at a time if need
    /// be: a second method that reaches the least fixed point exactly.
    fn crawl(tasks: &[GfpTask], m: usize) -> Vec<Option<u64>> {
        let mut bounds: Vec<Option<u64>> = Vec::new();
        for (k, task) in tasks.iter().enumerate() {
            if bounds.iter().any(Option::is_none) || task.deadline_ns > task.period_ns || task.pet_ns > task.deadline_ns {
                bounds.push(None);
                continue;
            }
            let (c, d) = (task.pet_ns as u128, task.deadline_ns as u128);
            let f = |r: u128| c + tasks[..k].iter().zip(&bounds).map(|(h, rh)| workload(h.pet_ns, h.period_ns, rh.unwrap(), r as u64).min(r - c + 1)).sum::<u128>() / m as u128;
            let mut r = c;
            let bound = loop {
                let next = f(r);
                if next <= r {
                    break Some(r as u64);
                }
                if next > d {
                    break None;
                }
                r = next;
            };
            bounds.push(bound);
        }
        bounds
    }

    #[test]
    fn the_least_fixed_point_equals_the_crawl_on_random_systems() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(26);
        for _ in 0..2_000 {
            let m = rng.random_range(1..=4);
            let n = rng.random_range(1..=7);
            let tasks: Vec<GfpTask> = (0..n)
                .map(|_| {
                    let t = rng.random_range(5..=400);
                    let d = rng.random_range(1..=t);
                    g(rng.random_range(1..=d), t, d)
                })
                .collect();
            assert_eq!(response_times(&tasks, m), crawl(&tasks, m), "{tasks:?} on {m}");
        }
    }

    #[test]
    fn a_bound_equal_to_the_deadline_is_schedulable_at_nanosecond_scale() {
        // Milliseconds in ns, where stepping by D/1000 overshot. The crawl
        // (R ← f(R)) gives the third task's least fixed point; with its
        // deadline set to exactly that, the task is bounded at its deadline,
        // and 1 ns less has no bound.
        let mut tasks = vec![g(2_000_000, 5_000_000, 5_000_000), g(3_000_000, 7_000_000, 7_000_000), g(4_000_000, 10_000_000, 10_000_000)];
        let r = crawl(&tasks, 2)[2].expect("bounded");
        assert!(r > 4_000_000 && r < 10_000_000, "{r}");
        tasks[2].deadline_ns = r;
        assert_eq!(response_times(&tasks, 2)[2], Some(r));
        tasks[2].deadline_ns = r - 1;
        assert_eq!(response_times(&tasks, 2)[2], None);
    }

    #[test]
    fn a_crawl_of_half_a_billion_steps_is_solved_in_closed_form() {
        // One core, a higher task (1, 3, 3) with bound 1, and (C = 10⁹, D = T = 10¹²).
        // From R = C the cap R − C + 1 is below W(R) ≈ R/3, so R ← f(R) = C + (R − C + 1)
        // moves 1 ns per step. By hand: W(R) = ⌊R/3⌋ + [R mod 3 ≠ 0] (carry-in
        // slack r − C = 0), and the least R with W(R) ≤ R − 10⁹ is 1.5·10⁹
        // (W = 5·10⁸); at R − 1, W = 5·10⁸ > 499,999,999.
        let tasks = [g(1, 3, 3), g(1_000_000_000, 1_000_000_000_000, 1_000_000_000_000)];
        let got = response_times(&tasks, 1);
        assert_eq!(got, vec![Some(1), Some(1_500_000_000)]);
    }
}
