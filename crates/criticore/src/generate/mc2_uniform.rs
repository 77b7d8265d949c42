//! A simple generator of valid MC² task systems, for benchmarks and property
//! tests of the analysis (the study generator of mc2-io-ipc-os-isolation §6.1
//! is a separate module). Levels A/B/C in proportion 1:1:2; Level-A periods from
//! {25, 50, 100} ms and Level-B periods from {100, 200, 400} ms (so every core's
//! A/B periods are harmonic and B periods are multiples of the A hyperperiod);
//! Level-C periods uniform in 10–100 ms; PETs follow Vestal's ordering with
//! Level-A PETs 1.5× Level-B PETs (mc2-io-ipc-os-isolation §2).

use crate::model::{Level, LevelPets, Platform, Task, TaskSystem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone, Copy)]
pub struct Mc2UniformParams {
    pub cores: usize,
    pub min_tasks: usize,
    pub max_tasks: usize,
    /// Per-task Level-C utilization is drawn uniformly in [0, 2·mean].
    pub mean_task_utilization: f64,
}

impl Default for Mc2UniformParams {
    fn default() -> Self {
        Mc2UniformParams { cores: 4, min_tasks: 20, max_tasks: 60, mean_task_utilization: 0.05 }
    }
}

const MS: u64 = 1_000_000;

/// Generate one system from `seed`.
pub fn mc2_uniform(params: Mc2UniformParams, seed: u64) -> TaskSystem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.random_range(params.min_tasks..=params.max_tasks);
    let tasks = (0..n)
        .map(|i| {
            let level = match rng.random_range(0..4) {
                0 => Level::A,
                1 => Level::B,
                _ => Level::C,
            };
            let period_ns = match level {
                Level::A => [25, 50, 100][rng.random_range(0..3)] * MS,
                Level::B => [100, 200, 400][rng.random_range(0..3)] * MS,
                _ => rng.random_range(10..=100) * MS,
            };
            let u_c: f64 = rng.random_range(0.0..=2.0 * params.mean_task_utilization);
            let pet_c = ((u_c * period_ns as f64) as u64).max(1);
            let pet_b = ((pet_c as f64 * rng.random_range(1.0..=2.0)) as u64).max(pet_c);
            let pet_a = ((pet_b as f64 * 1.5) as u64).max(pet_b);
            let mut pets = LevelPets::default();
            let mut unmanaged = LevelPets::default();
            let inflation: f64 = rng.random_range(1.0..=1.5);
            for (l, pet) in [(Level::A, pet_a), (Level::B, pet_b), (Level::C, pet_c)] {
                pets.set(l, pet);
                unmanaged.set(l, (pet as f64 * inflation) as u64);
            }
            let core = level.is_partitioned().then(|| rng.random_range(0..params.cores));
            Task { pet_unmanaged_ns: Some(unmanaged), ..Task::mc2(format!("T{i}"), level, core, period_ns, pets) }
        })
        .collect();
    TaskSystem {
        platform: Platform { cores: params.cores, ..Platform::preset("imx6").expect("built-in preset") },
        tasks,
        servers: Vec::new(),
        allocation: None,
        regulation: None,
        devices: Vec::new(),
        chains: Vec::new(),
        labels: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::validate::validate;

    #[test]
    fn same_seed_gives_the_same_system() {
        let p = Mc2UniformParams::default();
        assert_eq!(mc2_uniform(p, 7), mc2_uniform(p, 7));
        assert_ne!(mc2_uniform(p, 7), mc2_uniform(p, 8));
    }

    #[test]
    fn generated_systems_pass_validation() {
        for seed in 0..200 {
            let s = mc2_uniform(Mc2UniformParams::default(), seed);
            assert!((20..=60).contains(&s.tasks.len()));
            validate(&s).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        }
    }
}
