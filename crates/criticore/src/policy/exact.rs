//! Exact arithmetic for verdicts. Every test decides in integers or rationals
//! over nanoseconds, never in floating point with a tolerance: a sum of
//! fractions with different denominators can differ from a bound by 1/lcm,
//! far below any fixed tolerance (issue 26; docs/analysis.md, "Exact
//! arithmetic").
//!
//! Sums of fractions are taken in u128 over the lcm of the denominators when
//! it fits, else in big rationals (num-rational), so the common case stays
//! cheap.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::cmp::Ordering;

/// A non-negative fraction n/d (d > 0) of two integers, e.g. C/T.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frac {
    pub num: u128,
    pub den: u128,
}

impl Frac {
    pub const fn new(num: u128, den: u128) -> Frac {
        Frac { num, den }
    }

    pub fn big(&self) -> BigRational {
        BigRational::new(BigInt::from(self.num), BigInt::from(self.den))
    }
}

impl PartialOrd for Frac {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Frac {
    /// a/b against c/d by a·d against c·b, widened where u128 could overflow.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.num.checked_mul(other.den), other.num.checked_mul(self.den)) {
            (Some(l), Some(r)) => l.cmp(&r),
            _ => self.big().cmp(&other.big()),
        }
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Σ terms exactly.
pub fn sum(terms: &[Frac]) -> BigRational {
    match small_sum(terms) {
        Some((n, d)) => BigRational::new(BigInt::from(n), BigInt::from(d)),
        None => terms.iter().fold(BigRational::zero(), |acc, t| acc + t.big()),
    }
}

/// Σ terms as (numerator, lcm of denominators) if both fit u128.
pub fn small_sum(terms: &[Frac]) -> Option<(u128, u128)> {
    let mut den = 1u128;
    for t in terms {
        // Periods repeat: most denominators already divide the lcm.
        if den % t.den != 0 {
            den = (den / gcd(den, t.den)).checked_mul(t.den)?;
        }
    }
    let mut num = 0u128;
    for t in terms {
        num = num.checked_add(t.num.checked_mul(den / t.den)?)?;
    }
    Some((num, den))
}

/// Σ terms against `rhs`, exactly.
pub fn cmp_sum(terms: &[Frac], rhs: Frac) -> Ordering {
    if let Some((n, d)) = small_sum(terms) {
        return Frac::new(n, d).cmp(&rhs);
    }
    sum(terms).cmp(&rhs.big())
}

/// ⌈q⌉ of a non-negative rational, saturated at u64::MAX.
pub fn ceil_u64(q: &BigRational) -> u64 {
    q.ceil().to_integer().to_u64().unwrap_or(u64::MAX)
}

/// ⌊q⌋ of a non-negative rational, saturated at u64::MAX.
pub fn floor_u64(q: &BigRational) -> u64 {
    q.floor().to_integer().to_u64().unwrap_or(u64::MAX)
}

/// Nearest f64, for reports only (never for a verdict).
pub fn to_f64(q: &BigRational) -> f64 {
    q.to_f64().unwrap_or(f64::INFINITY)
}

/// C/T utilizations of (pet, period) pairs.
pub fn utilizations(tasks: impl IntoIterator<Item = (u64, u64)>) -> Vec<Frac> {
    tasks.into_iter().map(|(c, t)| Frac::new(c as u128, t as u128)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(n: u128, d: u128) -> Frac {
        Frac::new(n, d)
    }

    #[test]
    fn thirds_sum_to_one_exactly() {
        assert_eq!(cmp_sum(&[f(1, 3), f(1, 3), f(1, 3)], f(1, 1)), Ordering::Equal);
        // 0.7 + 0.2 + 0.1 is 0.9999999999999999 in f64.
        assert_eq!(cmp_sum(&[f(7, 10), f(2, 10), f(1, 10)], f(1, 1)), Ordering::Equal);
    }

    #[test]
    fn one_over_the_lcm_is_seen() {
        // Coprime periods near 1e9: the lcm of five is ~1e45, past u128, and
        // the sum differs from 1 by 1/lcm. Build Σ = 1 + 1/(p1·…·p5) from
        // fractions: k/p1 + … chosen so the whole is 1 exactly, then 1 ns more
        // on one term over its period gives 1/p.
        let p = [999_999_937u128, 999_999_929, 999_999_893, 999_999_883, 999_999_797];
        let mut terms: Vec<Frac> = p.iter().map(|&q| f(q / 5, q)).collect();
        // Σ q/5 / q ≈ 1 − small; compare against the exact big sum.
        let exact = terms.iter().fold(BigRational::zero(), |a, t| a + t.big());
        assert_eq!(cmp_sum(&terms, f(1, 1)), exact.cmp(&BigRational::from_integer(1.into())));
        assert!(small_sum(&terms).is_none(), "this case must take the big path");
        terms[0].num += 1;
        let more = terms.iter().fold(BigRational::zero(), |a, t| a + t.big());
        assert!(more > exact);
        assert_eq!(sum(&terms), more);
    }

    #[test]
    fn fractions_compare_by_cross_multiplication_even_near_u128() {
        let big = u64::MAX as u128;
        assert_eq!(f(big, big - 1).cmp(&f(big - 1, big - 2)), Ordering::Less);
        assert_eq!(f(u128::MAX, 3).cmp(&f(u128::MAX - 1, 3)), Ordering::Greater);
        assert_eq!(f(2, 4).cmp(&f(1, 2)), Ordering::Equal);
    }

    #[test]
    fn ceil_and_floor() {
        let q = BigRational::new(7.into(), 2.into());
        assert_eq!((floor_u64(&q), ceil_u64(&q)), (3, 4));
        let w = BigRational::from_integer(5.into());
        assert_eq!((floor_u64(&w), ceil_u64(&w)), (5, 5));
    }
}
