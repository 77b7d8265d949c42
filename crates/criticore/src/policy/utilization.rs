//! Exact uniprocessor utilization test, Σ eᵢ/Tᵢ ≤ 1, in the exact sums of
//! `exact.rs` (integers over the hyperperiod where it fits u128, else big
//! rationals), so no rounding can flip a verdict at the boundary.

use super::provisioning::Charged;
use super::exact;
use std::cmp::Ordering;

/// Tolerance for floating-point comparisons of utilization sums. PETs are whole
/// nanoseconds, so a real difference is at least 1 ns over the longest period
/// (≥ 1e-11 for periods up to 100 s); summing 10⁴ terms errs by about 1e-12.
pub const UTILIZATION_EPS: f64 = 1e-12;

/// Sum of utilizations (0.0, not −0.0, when empty).
pub fn total(items: &[Charged]) -> f64 {
    items.iter().map(Charged::utilization).fold(0.0, |a, u| a + u)
}

/// Compare Σ eᵢ/Tᵢ with 1 exactly (`exact::cmp_sum`: over the lcm of the
/// periods in u128 where it fits, else in big rationals; never a tolerance).
pub fn cmp_one(items: &[Charged]) -> Ordering {
    let fracs = exact::utilizations(items.iter().map(|c| (c.pet_ns, c.period_ns)));
    exact::cmp_sum(&fracs, exact::Frac::new(1, 1))
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
