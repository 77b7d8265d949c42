//! Exact decimal numbers, below the model (files and imports both read
//! them): Amalthea writes clocks as `2.0E8` and times as `6660` with a unit,
//! `--scale 0.7` must scale exactly, and a file's `instructions_per_cycle =
//! 0.85` must be 85/100, so that a PET is rounded once, at the end, and never
//! off by one from binary floating point.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use serde::{Serialize, Serializer};

/// A rational number read from decimal text. Serialized as the nearest f64.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Exact(pub BigRational);

impl Exact {
    /// `[+-]digits[.digits][(e|E)[+-]digits]`, or None.
    pub fn parse(text: &str) -> Option<Exact> {
        let t = text.trim();
        let (mantissa, exponent) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
            None => (t, 0),
        };
        let (negative, digits) = match mantissa.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if int.is_empty() && frac.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) || exponent.unsigned_abs() > 400 {
            return None;
        }
        let whole: BigInt = format!("{int}{frac}").trim_start_matches('0').parse().unwrap_or_else(|_| BigInt::zero());
        let shift = exponent - frac.len() as i32;
        let ten = BigInt::from(10);
        let mut value = if shift >= 0 {
            BigRational::from_integer(whole * num_traits::pow(ten, shift as usize))
        } else {
            BigRational::new(whole, num_traits::pow(ten, shift.unsigned_abs() as usize))
        };
        if negative {
            value = -value;
        }
        Some(Exact(value))
    }

    pub fn integer(n: u64) -> Exact {
        Exact(BigRational::from_integer(BigInt::from(n)))
    }

    pub fn one() -> Exact {
        Exact(BigRational::one())
    }

    pub fn is_positive(&self) -> bool {
        self.0.is_positive()
    }

    pub fn to_f64(&self) -> f64 {
        self.0.to_f64().unwrap_or(f64::NAN)
    }

    pub fn mul(&self, other: &Exact) -> Exact {
        Exact(&self.0 * &other.0)
    }

    pub fn div(&self, other: &Exact) -> Exact {
        Exact(&self.0 / &other.0)
    }

    /// The value as a u64 if it is a whole number that fits.
    pub fn whole(&self) -> Option<u64> {
        if self.0.is_integer() { self.0.to_integer().to_u64() } else { None }
    }

    /// The reduced (numerator, denominator) if both fit a u64 (None: negative or too large).
    pub fn fraction_u64(&self) -> Option<(u64, u64)> {
        Some((self.0.numer().to_u64()?, self.0.denom().to_u64()?))
    }

    /// The smallest whole number at least this value (None: negative or too large).
    pub fn ceil(&self) -> Option<u64> {
        let (q, r) = self.0.numer().div_mod_floor(self.0.denom());
        (if r.is_zero() { q } else { q + 1 }).to_u64()
    }
}

impl Serialize for Exact {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.to_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_decimals_are_exact() {
        let e = |t| Exact::parse(t).unwrap();
        assert_eq!(e("2.0E8").whole(), Some(200_000_000));
        assert_eq!(e("6660").whole(), Some(6660));
        assert_eq!(e("0.7").mul(&e("10")).whole(), Some(7));
        assert_eq!(e("1.5e-3").mul(&e("1000")).0, BigRational::new(3.into(), 2.into()));
        assert_eq!(e(".5").ceil(), Some(1));
        assert_eq!(e("-2").ceil(), None);
        assert_eq!(e("3").ceil(), Some(3));
        // 6156 cycles at 200 MHz are 30,780 ns exactly; f64 would give 30780.000000000004.
        assert_eq!(e("6156").mul(&e("1e9")).div(&e("2.0E8")).ceil(), Some(30_780));
        for bad in ["", ".", "1e", "abc", "1.2.3", "1e999", "nan", "inf", "0x10"] {
            assert!(Exact::parse(bad).is_none(), "{bad}");
        }
    }
}
