//! The schedulability study of mc2-io-ipc-os-isolation §6: for one utilization
//! point of one scenario, generate systems and evaluate every scheme on each
//! until the schedulability estimate of every scheme is within ±half-width at
//! the chosen confidence (Wilson score interval). Points are independent and
//! every system's seed depends only on (seed, scenario, point, index), so any
//! grouping of points (local rayon, Dask chunks) gives the same rows.

use crate::generate::mc2_io::{generate_on, system_seed, Scenario};
use crate::model::Platform;
use crate::optimize::framework::optimize_all;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// One utilization point to evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub scenario: Scenario,
    pub point: u32,
    pub utilization: f64,
}

/// Stopping rule for the number of systems per point (§6.1: ±0.05 at 95%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    pub half_width: f64,
    /// z of the confidence level (1.96 for 95%).
    pub z: f64,
    /// Systems generated between two checks of the rule.
    pub batch: u32,
    pub max_systems: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { half_width: 0.05, z: 1.96, batch: 50, max_systems: 400 }
    }
}

/// Half-width of the Wilson score interval for `k` successes in `n` trials.
pub fn wilson_half_width(k: u32, n: u32, z: f64) -> f64 {
    if n == 0 {
        return f64::INFINITY;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()
}

/// One system × scheme result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub system: u32,
    pub scheme: u8,
    pub schedulable: bool,
    /// Optimized total Level-C utilization; NaN when unschedulable.
    pub objective: f64,
}

/// Every scheme on one generated system (R schemes draw from the system's seed).
pub fn evaluate_system(platform: &Platform, scenario: Scenario, utilization: f64, seed: u64) -> [(bool, f64); 9] {
    let (system, _) = generate_on(platform, scenario, utilization, seed);
    let mut out = [(false, f64::NAN); 9];
    for (k, o) in optimize_all(&system, seed ^ 0x5EED_0F_B4_4B5).into_iter().enumerate() {
        if let Ok(s) = o.outcome {
            out[k] = (true, s.objective);
        }
    }
    out
}

/// All rows of one point, systems in order, stopping by `sampling`.
pub fn evaluate_point(platform: &Platform, p: &Point, seed: u64, sampling: Sampling) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut ok = [0u32; 9];
    let mut n = 0u32;
    let batch = sampling.batch.max(1);
    while n < sampling.max_systems {
        let count = batch.min(sampling.max_systems - n);
        for index in n..n + count {
            let s = system_seed(seed, p.scenario.id() as u64, p.point as u64, index as u64);
            for (k, (schedulable, objective)) in evaluate_system(platform, p.scenario, p.utilization, s).into_iter().enumerate() {
                ok[k] += schedulable as u32;
                rows.push(Row { system: index, scheme: k as u8, schedulable, objective });
            }
        }
        n += count;
        if ok.iter().all(|&k| wilson_half_width(k, n, sampling.z) <= sampling.half_width) {
            break;
        }
    }
    rows
}

/// Many points in parallel (rayon); results in input order.
/// `platform`: the study's board (`imx6`, or `imx6-transaction` for the calibrated costs).
pub fn evaluate_points(platform: &Platform, points: &[Point], seed: u64, sampling: Sampling) -> Vec<Vec<Row>> {
    points.par_iter().map(|p| evaluate_point(platform, p, seed, sampling)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_half_width_matches_hand_values() {
        // p = 0.5, n = 400, z = 1.96: 1.96/(1+3.8416/400)·sqrt(0.25/400 + 3.8416/640000)
        // = 1.96/1.009604·sqrt(0.000625 + 0.0000060025) = 1.941355·0.0251197 = 0.048766.
        assert!((wilson_half_width(200, 400, 1.96) - 0.048766).abs() < 1e-5);
        // k = 0, n = 50: z²/(2(n+z²)) = 3.8416/107.6832 = 0.035675.
        assert!((wilson_half_width(0, 50, 1.96) - 0.035675).abs() < 1e-5);
    }
}
