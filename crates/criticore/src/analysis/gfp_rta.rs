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
//! unfinished at R would need more than R − Cₖ of interference). The
//! iteration from Cₖ can crawl a nanosecond at a time (e.g. m higher tasks
//! each adding R − Cₖ + 1), so it steps at least a thousandth of the
//! deadline (at least 1 ns), capped at the deadline: the bound is within
//! 0.1% of the deadline above the least fixed point.

/// A task as charged (deadline D ≤ T, or it gets no bound).
pub use super::Sporadic as GfpTask;

/// Work of a higher-priority task in a window of length `l`, given its bound `r`.
fn workload(h: &GfpTask, r: u64, l: u64) -> u128 {
    let (c, t) = (h.pet_ns as u128, h.period_ns as u128);
    let span = l as u128 + r as u128 - c;
    let n = span / t;
    n * c + c.min(span - n * t)
}

/// Response-time bounds of `tasks` (most important first) on `m` cores.
pub fn response_times(tasks: &[GfpTask], m: usize) -> Vec<Option<u64>> {
    let mut bounds: Vec<Option<u64>> = Vec::with_capacity(tasks.len());
    for (k, task) in tasks.iter().enumerate() {
        if bounds.iter().any(Option::is_none) || task.deadline_ns > task.period_ns || task.pet_ns > task.deadline_ns {
            bounds.push(None);
            continue;
        }
        let (c, d) = (task.pet_ns as u128, task.deadline_ns as u128);
        let f = |r: u128| -> u128 {
            let interference: u128 = tasks[..k]
                .iter()
                .zip(&bounds)
                .map(|(h, rh)| workload(h, rh.expect("checked above"), r as u64).min(r - c + 1))
                .sum();
            c + interference / m as u128
        };
        let mut r = c;
        let bound = loop {
            let next = f(r);
            if next <= r {
                break Some(r as u64);
            }
            if r == d {
                break None;
            }
            r = next.max(r + (d / 1_000).max(1)).min(d);
        };
        bounds.push(bound);
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
}
