//! The whole MC² test of one task system under one provisioning: Level A and B
//! per core, Level C globally, and the total utilization the paper reports for
//! the four configurations of mc2-hardware-management §4.3 ("total Level-C
//! utilization across all levels": every A, B and C task at its Level-C PET, or
//! at its most critical PET without MC² analysis).

use super::level_a::{self, CoreTest};
use super::level_b;
use super::level_c::{self, LevelCTest};
use super::Provisioning;
use crate::model::{Level, TaskSystem};

#[derive(Debug, Clone, PartialEq)]
pub struct Mc2Result {
    pub level_a: Vec<CoreTest>,
    pub level_b: Vec<CoreTest>,
    pub level_c: LevelCTest,
    pub total_utilization: f64,
}

impl Mc2Result {
    pub fn level_schedulable(&self, level: Level) -> bool {
        match level {
            Level::A => self.level_a.iter().all(|t| t.schedulable),
            Level::B => self.level_b.iter().all(|t| t.schedulable),
            Level::C => self.level_c.schedulable(),
            Level::D => true,
        }
    }

    /// Schedulable at every analyzed level (A and B hard, C bounded tardiness).
    pub fn schedulable(&self) -> bool {
        Level::ANALYZED.iter().all(|&l| self.level_schedulable(l))
    }
}

/// Total utilization of the analyzed tasks (A, B, C) charged as in the Level-C test.
pub fn total_utilization(system: &TaskSystem, prov: Provisioning) -> Option<f64> {
    system
        .tasks
        .iter()
        .filter(|t| matches!(t.level, Some(Level::A | Level::B | Level::C)))
        .try_fold(0.0, |total, t| prov.pet_ns(t, Level::C).map(|pet| total + t.utilization(pet)))
}

/// Run every level's test; None when the provisioning needs a PET the file lacks.
pub fn analyze(system: &TaskSystem, prov: Provisioning) -> Option<Mc2Result> {
    let cores = 0..system.platform.cores;
    Some(Mc2Result {
        level_a: cores.clone().map(|p| level_a::test(system, p, prov)).collect::<Option<_>>()?,
        level_b: cores.map(|p| level_b::test(system, p, prov)).collect::<Option<_>>()?,
        level_c: level_c::test(system, prov)?,
        total_utilization: total_utilization(system, prov)?,
    })
}
