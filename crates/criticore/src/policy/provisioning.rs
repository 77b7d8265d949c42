//! The PETs a configuration provisions tasks with (mc2-hardware-management
//! §4.3): its analysis tests charge them, and the simulator's Level-A table
//! allots them.

use crate::model::{Level, Task, TaskSystem};

/// Which PETs a configuration provisions tasks with (mc2-hardware-management §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provisioning {
    /// PETs measured without hardware isolation (`pet_unmanaged`).
    pub unmanaged: bool,
    /// MC² analysis: the Level-ℓ test uses Level-ℓ PETs. Without it every task
    /// is provisioned at its most critical PET in every test.
    pub mc_analysis: bool,
}

impl Provisioning {
    /// Configuration (i): MC² analysis with all isolation features.
    pub const MC2_ISOLATED: Provisioning = Provisioning { unmanaged: false, mc_analysis: true };
    /// Configuration (ii): MC² analysis, no isolation.
    pub const MC2_UNMANAGED: Provisioning = Provisioning { unmanaged: true, mc_analysis: true };
    /// Configuration (iii): isolation, no MC² analysis.
    pub const ISOLATED_ONLY: Provisioning = Provisioning { unmanaged: false, mc_analysis: false };
    /// Configuration (iv): neither.
    pub const NEITHER: Provisioning = Provisioning { unmanaged: true, mc_analysis: false };

    /// The PET `task` is charged in the Level-`level` test, if the file gives it.
    pub fn pet_ns(&self, task: &Task, level: Level) -> Option<u64> {
        let pets = if self.unmanaged { task.pet_unmanaged_ns.as_ref()? } else { &task.pet_ns };
        if self.mc_analysis {
            pets.get(level)
        } else {
            pets.highest()
        }
    }
}

/// A task's (PET, period) pair as charged in one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charged {
    pub task: usize,
    pub pet_ns: u64,
    pub period_ns: u64,
}

impl Charged {
    pub fn utilization(&self) -> f64 {
        self.pet_ns as f64 / self.period_ns as f64
    }
}

/// Charge `tasks` (indices) with the PET of the Level-`level` test; None if one is missing.
pub fn charge(
    system: &TaskSystem,
    tasks: impl Iterator<Item = usize>,
    level: Level,
    prov: Provisioning,
) -> Option<Vec<Charged>> {
    tasks
        .map(|i| {
            let t = &system.tasks[i];
            prov.pet_ns(t, level).map(|pet_ns| Charged { task: i, pet_ns, period_ns: t.period_ns })
        })
        .collect()
}

