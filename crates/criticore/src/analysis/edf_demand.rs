//! Processor demand test for EDF on one processor (Baruah, Rosier & Howell,
//! RTS 1990): a synchronous periodic task set is schedulable if and only if
//! U ≤ 1 and, at every absolute deadline t up to the synchronous busy period L,
//!   dbf(t) = Σᵢ max(0, ⌊(t − Dᵢ)/Tᵢ⌋ + 1)·Cᵢ ≤ t.
//! Offsets and sporadic separation only lower the demand, so "schedulable"
//! holds for them too; a job then responds within its relative deadline.

pub use super::Sporadic as EdfTask;

/// Most deadlines examined before giving up (then: not shown schedulable).
const MAX_POINTS: usize = 2_000_000;

/// Demand of jobs with release and deadline in [0, t].
pub fn dbf(tasks: &[EdfTask], t: u64) -> u128 {
    tasks
        .iter()
        .filter(|k| t >= k.deadline_ns)
        .map(|k| ((t - k.deadline_ns) / k.period_ns + 1) as u128 * k.pet_ns as u128)
        .sum()
}

/// Length of the synchronous busy period: the least L > 0 with Σ ⌈L/Tᵢ⌉·Cᵢ = L.
fn busy_period(tasks: &[EdfTask]) -> Option<u64> {
    let mut l: u128 = tasks.iter().map(|k| k.pet_ns as u128).sum();
    for _ in 0..MAX_POINTS {
        let next: u128 = tasks.iter().map(|k| l.div_ceil(k.period_ns as u128) * k.pet_ns as u128).sum();
        if next == l {
            return u64::try_from(l).ok();
        }
        l = next;
    }
    None
}

/// Whether EDF meets every deadline of `tasks` on one processor. False when
/// the check would need more than [`MAX_POINTS`] deadlines (reported as not
/// shown schedulable, never as schedulable).
pub fn schedulable(tasks: &[EdfTask]) -> bool {
    if tasks.is_empty() {
        return true;
    }
    // U ≤ 1 exactly: Σ Cᵢ·(H/Tᵢ) ≤ H would need H; compare in f64 with a
    // margin below one nanosecond per period, then let the busy period decide.
    let u: f64 = tasks.iter().map(|k| k.pet_ns as f64 / k.period_ns as f64).sum();
    if u > 1.0 + 1e-12 {
        return false;
    }
    let Some(l) = busy_period(tasks) else { return false };
    // Every absolute deadline in [0, L], in order, merged across tasks.
    let mut next: Vec<u64> = tasks.iter().map(|k| k.deadline_ns).collect();
    for _ in 0..MAX_POINTS {
        let (i, &t) = match next.iter().enumerate().min_by_key(|(_, &t)| t) {
            Some(x) => x,
            None => return true,
        };
        if t > l {
            return true;
        }
        if dbf(tasks, t) > t as u128 {
            return false;
        }
        next[i] = t.saturating_add(tasks[i].period_ns);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(c: u64, t: u64, d: u64) -> EdfTask {
        EdfTask { pet_ns: c, period_ns: t, deadline_ns: d }
    }

    #[test]
    fn implicit_deadlines_are_schedulable_up_to_full_utilization() {
        assert!(schedulable(&[k(2, 4, 4), k(3, 6, 6)]));
        assert!(!schedulable(&[k(2, 4, 4), k(3, 5, 5)]));
    }

    #[test]
    fn constrained_deadlines_by_hand() {
        // (1, 4, 2), (2, 6, 3): dbf(2) = 1, dbf(3) = 3, dbf(6) = 2 + 2 = 4 ≤ 6, … schedulable.
        assert!(schedulable(&[k(1, 4, 2), k(2, 6, 3)]));
        // (2, 4, 2), (1, 6, 3): dbf(3) = 2 + 1 = 3 ≤ 3, dbf(6) = 2·2 + 1 = 5 ≤ 6, dbf(9) = 3·2 + 2 = 8 ≤ 9 … holds;
        // (2, 4, 2), (2, 6, 3): dbf(3) = 4 > 3 although U = 0.83.
        assert!(schedulable(&[k(2, 4, 2), k(1, 6, 3)]));
        assert!(!schedulable(&[k(2, 4, 2), k(2, 6, 3)]));
        assert_eq!(dbf(&[k(2, 4, 2), k(2, 6, 3)], 3), 4);
    }
}
