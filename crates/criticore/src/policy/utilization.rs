//! Exact uniprocessor utilization test, Σ eᵢ/Tᵢ ≤ 1, done in integers over the
//! hyperperiod H: Σ eᵢ·(H/Tᵢ) ≤ H. Level-A/B periods on a core are harmonic
//! (validated), so H is the largest period and no rounding can flip a verdict
//! at the boundary.

use super::provisioning::Charged;
use crate::model::validate::lcm;
use std::cmp::Ordering;

/// Tolerance for floating-point comparisons of utilization sums. PETs are whole
/// nanoseconds, so a real difference is at least 1 ns over the longest period
/// (≥ 1e-11 for periods up to 100 s); summing 10⁴ terms errs by about 1e-12.
pub const UTILIZATION_EPS: f64 = 1e-12;

/// Sum of utilizations (0.0, not −0.0, when empty).
pub fn total(items: &[Charged]) -> f64 {
    items.iter().map(Charged::utilization).fold(0.0, |a, u| a + u)
}

/// Compare Σ eᵢ/Tᵢ with 1 exactly: demand over the hyperperiod against its length.
pub fn cmp_one(items: &[Charged]) -> Ordering {
    let hyper = items.iter().map(|c| c.period_ns).fold(1u64, lcm);
    let exact = (hyper != u64::MAX)
        .then(|| {
            items.iter().try_fold(0u128, |acc, c| {
                acc.checked_add(c.pet_ns as u128 * (hyper / c.period_ns) as u128)
            })
        })
        .flatten();
    match exact {
        Some(demand) => demand.cmp(&(hyper as u128)),
        // Only reachable for non-harmonic periods with an enormous lcm.
        None => {
            let u = total(items);
            if (u - 1.0).abs() <= UTILIZATION_EPS {
                Ordering::Equal
            } else if u < 1.0 {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
    }
}

/// Utilization of a set of charged tasks and whether it is at most 1.
pub fn fits_one_core(items: &[Charged]) -> (f64, bool) {
    (total(items), cmp_one(items) != Ordering::Greater)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(pet_ns: u64, period_ns: u64) -> Charged {
        Charged { task: 0, pet_ns, period_ns }
    }

    #[test]
    fn exactly_full_core_fits_and_one_ns_more_does_not() {
        // 1/3 + 1/3 + 1/3 is not exactly 1.0 in floating point; in integers it is.
        let full = [c(1, 3), c(1, 3), c(1, 3)];
        assert!(fits_one_core(&full).1);
        let full = [c(50_000_000, 100_000_000), c(100_000_000, 200_000_000)];
        assert!(fits_one_core(&full).1);
        let over = [c(50_000_001, 100_000_000), c(100_000_000, 200_000_000)];
        assert!(!fits_one_core(&over).1);
    }

    #[test]
    fn empty_core_fits_with_zero_utilization() {
        let (u, fits) = fits_one_core(&[]);
        assert!(fits);
        assert!(u == 0.0 && u.is_sign_positive());
    }

    #[test]
    fn exactly_full_is_equal_even_when_floats_say_otherwise() {
        // 0.7 + 0.2 + 0.1 sums to 0.9999999999999999 in f64.
        let items = [c(70, 100), c(20, 100), c(10, 100)];
        assert!(total(&items) < 1.0);
        assert_eq!(cmp_one(&items), Ordering::Equal);
    }
}
