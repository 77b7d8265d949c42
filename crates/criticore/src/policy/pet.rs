//! The PET a task runs at, decided once for the analysis, the simulator,
//! the runtime and its periodic worker: a task with a cost curve carries
//! idle-system PETs, and runs at its *conditioned* PET under the file's
//! allocation and placements ([`super::cost`], mc2-io-ipc-os-isolation §6.1);
//! any other task at its PET as the file gives it. Jobs run at
//! [`RUN_LEVEL`]'s PET unless a simulation asks for another level.

use super::cost::CostModel;
use crate::error::FieldError;
use crate::model::{Level, Partition, TaskSystem};

/// The level whose PET a job runs at by default (the simulator's `--exec`,
/// the runtime's periodic worker): Level C, provisioned on an average-case
/// basis (mc2-hardware-management §4.3: the mean of average execution times
/// measured in a loaded and an idle system), so a run shows typical
/// behaviour, not the worst case.
pub const RUN_LEVEL: Level = Level::C;

/// Where a task stands before its PETs can be conditioned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotConditionable {
    /// A Level-A/B task with a cost curve has no core yet.
    Unplaced { task: usize },
    /// Cost curves need an `[allocation]` with `llc_ways`.
    NoWays,
}

impl NotConditionable {
    /// The field at fault and what to do, as every front end says it.
    pub fn field_error(&self) -> FieldError {
        match self {
            NotConditionable::Unplaced { task } => {
                FieldError::new(format!("task[{task}].core"), "this Level-A/B task has no core yet; run `criticore optimize FILE -o OUT` first")
            }
            NotConditionable::NoWays => FieldError::new("allocation.llc_ways", "tasks with cost curves need LLC ways per partition; run `criticore optimize FILE -o OUT` first"),
        }
    }
}

/// The system with every cost-curve task's PETs replaced by its conditioned
/// PETs (rounded up to whole ns) under the system's allocation and placements:
/// what `analyze` and `simulate` use. Unchanged if no task has a cost curve.
pub fn conditioned(system: &TaskSystem) -> Result<TaskSystem, NotConditionable> {
    if system.tasks.iter().all(|t| t.cost.is_none()) {
        return Ok(system.clone());
    }
    if let Some(task) = system.tasks.iter().position(|t| matches!(t.level, Some(Level::A | Level::B)) && t.core.is_none()) {
        return Err(NotConditionable::Unplaced { task });
    }
    let allocation = system.allocation.as_ref().filter(|a| !a.llc_ways.is_empty()).ok_or(NotConditionable::NoWays)?;
    let lock_bytes = allocation.ways_of(Partition::Lock).unwrap_or(0) as u64 * (system.platform.llc.size_bytes / system.platform.llc.ways.max(1) as u64);
    let cost = CostModel::new(system);
    let locked = cost.locked_count(lock_bytes);
    let mut out = system.clone();
    for (i, t) in out.tasks.iter_mut().enumerate() {
        if t.cost.is_none() {
            continue;
        }
        let part = match t.level {
            Some(Level::A | Level::B) => Partition::Core(t.core.expect("checked above")),
            _ => Partition::LevelC,
        };
        // A partition not listed gets no ways of its own.
        let ways = allocation.ways_of(part).unwrap_or(0);
        for level in Level::ANALYZED {
            if t.pet_ns.get(level).is_some() {
                let pet = cost.pet_ns(i, level, ways, locked).expect("PET present");
                t.pet_ns.set(level, pet.ceil() as u64);
            }
        }
    }
    Ok(out)
}

/// The PET task `task` of a [`conditioned`] system runs at, at `level`.
pub fn run_pet_ns(conditioned: &TaskSystem, task: usize, level: Level) -> u64 {
    conditioned.tasks[task].pet_at(level)
}
