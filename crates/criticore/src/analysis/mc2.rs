//! The whole MC² test of one task system under one provisioning: Level A and B
//! per core, Level C globally, and the total utilization the paper reports for
//! the four configurations of mc2-hardware-management §4.3 ("total Level-C
//! utilization across all levels": every A, B and C task at its Level-C PET, or
//! at its most critical PET without MC² analysis).

use super::level_a::{self, CoreTest};
use super::level_b;
use super::level_c::{self, LevelCTest};
use super::Provisioning;
use crate::error::FieldError;
use crate::model::{Level, TaskSystem};
use crate::policy::SchedulerKind;

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

/// Tasks the MC² test would leave out of a system: it bounds each task at its
/// level, Levels A and B per core, C globally, D not at all
/// (mc2-hardware-management §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncovered {
    /// No task has an MC² level: nothing would be analyzed.
    NoLevel,
    /// Every task is Level D (best effort), which MC² does not bound.
    BestEffortOnly,
    /// This task has no level while others have one.
    Unleveled { task: usize },
    /// This Level-A/B task has no core, so no per-core test sees it.
    Unplaced { task: usize },
}

/// The first task the MC² test would leave out, if any; `need_cores`: also
/// Level-A/B tasks without a core (the optimizer places those itself).
pub fn coverage(system: &TaskSystem, need_cores: bool) -> Result<(), Uncovered> {
    let levels = || system.tasks.iter().map(|t| t.level);
    // A file without tasks leaves nothing out; the report covers it vacuously.
    if system.tasks.is_empty() {
        return Ok(());
    }
    if levels().all(|l| l.is_none()) {
        return Err(Uncovered::NoLevel);
    }
    if let Some(task) = levels().position(|l| l.is_none()) {
        return Err(Uncovered::Unleveled { task });
    }
    if levels().all(|l| l == Some(Level::D)) {
        return Err(Uncovered::BestEffortOnly);
    }
    match system.tasks.iter().position(|t| t.level.is_some_and(Level::is_partitioned) && t.core.is_none()) {
        Some(task) if need_cores => Err(Uncovered::Unplaced { task }),
        _ => Ok(()),
    }
}

impl Uncovered {
    /// The refusal as one line; `what` is the request ("the mc2 analysis").
    pub fn error(self, system: &TaskSystem, what: &str) -> FieldError {
        let name = |i: usize| &system.tasks[i].name;
        match self {
            Uncovered::NoLevel => FieldError::new(
                "task.level",
                format!("{what} works on MC² levels (A–D) and no task has one; the file implies {}", SchedulerKind::implied_by(system).name()),
            ),
            Uncovered::BestEffortOnly => FieldError::new("task.level", format!("every task is Level D (best effort), which {what} does not bound: nothing to do")),
            Uncovered::Unleveled { task } => FieldError::new(
                format!("task[{task}].level"),
                format!("\"{}\" has no MC² level (A–D) while other tasks have one; {what} would leave it out", name(task)),
            ),
            Uncovered::Unplaced { task } => FieldError::new(
                format!("task[{task}].core"),
                format!("Level-A/B task \"{}\" has no core, so {what} would leave it out; run `criticore optimize FILE -o OUT` to place it", name(task)),
            ),
        }
    }
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
