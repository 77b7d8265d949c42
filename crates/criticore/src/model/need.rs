//! A runnable's execution need as a distribution between a least time and
//! its PET (Amalthea's deviations; docs/format.md `runnables`), for the
//! simulator's draws (`simulate --drawn`). The analysis charges the PET, the
//! upper bound, whatever the distribution.
//!
//! - `uniform`: every time in [min, PET] as likely.
//! - `weibull`: Amalthea's Weibull estimators: a Weibull distribution from
//!   min (its location), with the given mean, whose probability of passing
//!   the PET is `p_remain` (the file's pRemainPromille / 1000). The shape k
//!   solves k·ln(r·Γ(1 + 1/k)) = ln(−ln p_remain), r = (PET − min)/(mean −
//!   min) (its largest root: a smaller one is a heavy tail off a spike at
//!   min), and the scale is λ = (mean − min)/Γ(1 + 1/k): then mean = min +
//!   λΓ(1 + 1/k) and P(X > PET) = exp(−((PET − min)/λ)^k) = p_remain. A draw
//!   past the PET (probability p_remain) runs the PET: the bound holds.

/// How a runnable's time is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Draw {
    Uniform,
    Weibull { shape: f64, scale_ns: f64 },
}

/// A runnable's execution need: at least `min_ns`, at most its PET.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Need {
    pub min_ns: u64,
    /// As the file states it (the Weibull estimators' mean).
    pub mean_ns: Option<f64>,
    /// The Weibull estimators' probability of passing the PET.
    pub p_remain: Option<f64>,
    pub draw: Draw,
}

impl Eq for Need {}

impl Need {
    pub fn uniform(min_ns: u64) -> Need {
        Need { min_ns, mean_ns: None, p_remain: None, draw: Draw::Uniform }
    }

    /// The Weibull estimators' distribution, or why there is none.
    pub fn weibull(min_ns: u64, mean_ns: f64, pet_ns: u64, p_remain: f64) -> Result<Need, String> {
        let (min, max) = (min_ns as f64, pet_ns as f64);
        if !(mean_ns > min && mean_ns < max) {
            return Err(format!("the mean must lie strictly between min ({min_ns} ns) and the PET ({pet_ns} ns), not {mean_ns} ns"));
        }
        if !(p_remain > 0.0 && p_remain < 1.0) {
            return Err(format!("p_remain must lie strictly between 0 and 1, not {p_remain}"));
        }
        let r = (max - min) / (mean_ns - min);
        let target = (-p_remain.ln()).ln();
        // f(k) = k·ln(r·Γ(1 + 1/k)) − ln(−ln p) falls, then rises with k (a
        // tiny shape is a heavy tail from a spike at min, which also passes
        // the PET rarely): take the largest root, the shape of an execution
        // time, bracketed from k = 50 down, then bisected.
        let f = |k: f64| k * (r * libm::tgamma(1.0 + 1.0 / k)).ln() - target;
        let mut hi = 50.0f64;
        if f(hi) < 0.0 {
            return Err(format!("no Weibull shape up to 50 puts p_remain = {p_remain} past the PET with mean {mean_ns} ns"));
        }
        let mut lo = hi / 1.25;
        while f(lo) >= 0.0 {
            if lo < 0.05 {
                return Err(format!("no Weibull shape between 0.05 and 50 puts p_remain = {p_remain} past the PET with mean {mean_ns} ns"));
            }
            hi = lo;
            lo /= 1.25;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let shape = 0.5 * (lo + hi);
        let scale_ns = (mean_ns - min) / libm::tgamma(1.0 + 1.0 / shape);
        Ok(Need { min_ns, mean_ns: Some(mean_ns), p_remain: Some(p_remain), draw: Draw::Weibull { shape, scale_ns } })
    }

    /// The time of one run, from `u` uniform in [0, 1): within [min, PET].
    pub fn sample(&self, pet_ns: u64, u: f64) -> u64 {
        let min = self.min_ns.min(pet_ns);
        let x = match self.draw {
            Draw::Uniform => min as f64 + u * (pet_ns - min + 1) as f64,
            // Inverse CDF: F(x) = 1 − exp(−((x − min)/λ)^k).
            Draw::Weibull { shape, scale_ns } => min as f64 + scale_ns * (-(1.0 - u).ln()).powf(1.0 / shape),
        };
        (x.floor() as u64).clamp(min, pet_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weibull_estimators_meet_their_mean_and_tail() {
        // WATERS 2017's first runnable: 427 / 442 / 561 ticks, pRemainPromille
        // 5e-4 (p = 5e-7). Its mean and tail, from the fitted k and λ: the
        // Weibull mean and survival function, Γ here from the reflection-free
        // series of Stirling (independent of libm): Γ(1 + x) for x in (0, 1].
        let n = Need::weibull(427, 442.0, 561, 5e-7).unwrap();
        let Draw::Weibull { shape, scale_ns } = n.draw else { panic!("{n:?}") };
        let stirling = |z: f64| {
            // Γ(z) for z ≥ 1 via Γ(z) = Γ(z + 8)/(z(z+1)…(z+7)) and Stirling at z + 8.
            let w = z + 8.0;
            let lg = (w - 0.5) * w.ln() - w + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * w) - 1.0 / (360.0 * w.powi(3)) + 1.0 / (1260.0 * w.powi(5));
            lg.exp() / (0..8).map(|i| z + i as f64).product::<f64>()
        };
        let mean = 427.0 + scale_ns * stirling(1.0 + 1.0 / shape);
        assert!((mean - 442.0).abs() < 1e-6, "{mean}");
        let tail = (-((561.0 - 427.0) / scale_ns).powf(shape)).exp();
        assert!((tail / 5e-7 - 1.0).abs() < 1e-6, "{tail}");
        // Worked by hand above the root: k ≈ 1.26 (k = 1.2 gives 2.554 < 2.674 = ln(−ln 5e-7), k = 1.3 gives 2.743).
        assert!(shape > 1.2 && shape < 1.3, "{shape}");
        // Draws stay within [min, PET]; u = 0 is min, u near 1 the PET.
        assert_eq!(n.sample(561, 0.0), 427);
        assert_eq!(n.sample(561, 1.0 - 1e-12), 561);
        // Their mean over many draws is the mean (the cut at the PET moves it by < 1e-4 ns).
        let k = 200_000;
        let avg = (0..k).map(|i| n.sample(561, (i as f64 + 0.5) / k as f64) as f64).sum::<f64>() / k as f64;
        // Floors lose 0.5 ns on average.
        assert!((avg + 0.5 - 442.0).abs() < 0.05, "{avg}");
    }

    #[test]
    fn a_uniform_need_draws_every_time_between_min_and_the_pet() {
        let n = Need::uniform(10);
        assert_eq!((n.sample(13, 0.0), n.sample(13, 0.26), n.sample(13, 0.5), n.sample(13, 0.99)), (10, 11, 12, 13));
        assert_eq!(Need::uniform(20).sample(13, 0.5), 13);
    }

    #[test]
    fn the_largest_shape_is_taken() {
        // 100 / 400 / 900, p = 0.001: f(0.05) > 0 (the heavy-tail branch),
        // the root taken near k = 2.2 (f(2) = 2·ln(8/3·Γ(1.5)) < ln(−ln 0.001) < f(2.5)).
        let n = Need::weibull(100, 400.0, 900, 0.001).unwrap();
        let Draw::Weibull { shape, scale_ns } = n.draw else { panic!("{n:?}") };
        assert!(shape > 2.0 && shape < 2.5, "{shape}");
        let tail = (-((900.0 - 100.0) / scale_ns).powf(shape)).exp();
        assert!((tail / 0.001 - 1.0).abs() < 1e-6, "{tail}");
    }

    #[test]
    fn estimators_that_admit_no_weibull_are_refused() {
        assert!(Need::weibull(10, 10.0, 20, 1e-3).unwrap_err().contains("strictly between min"));
        assert!(Need::weibull(10, 15.0, 20, 0.0).unwrap_err().contains("p_remain"));
    }
}
