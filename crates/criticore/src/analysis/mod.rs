//! Schedulability analysis. MC² (mc2-hardware-management §2, mc2-io-ipc-os-isolation §2;
//! conditions collected in shared/notes/mc2-analysis-reference.md, documented in
//! docs/analysis.md).
//!
//! Small pure functions over a [`TaskSystem`]: a per-core utilization test for
//! Level A (cyclic executive) and Level B (rate-monotonic, harmonic periods), a
//! restricted-supply G-EDF test with tardiness bounds for Level C, and the four
//! configurations of mc2-hardware-management §4.3. Results carry task indices;
//! [`report`] turns them into a named, serializable report. Every other
//! scheduler the simulator runs has its classic test in [`classic`], over
//! [`fp_rta`], [`edf_demand`], [`gfp_rta`] and [`supply`].

pub mod classic;
pub mod edf_demand;
pub mod fp_rta;
pub mod gfp_rta;
pub mod level_a;
pub mod level_b;
pub mod level_c;
pub mod mc2;
pub mod memory;
pub mod report;
pub mod server_memory;
pub mod supply;
pub mod utilization;

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

/// A task as the classic tests charge it: PET C, period (least inter-arrival
/// time) T, relative deadline D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sporadic {
    pub pet_ns: u64,
    pub period_ns: u64,
    pub deadline_ns: u64,
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

/// Tolerance for floating-point comparisons of utilization sums. PETs are whole
/// nanoseconds, so a real difference is at least 1 ns over the longest period
/// (≥ 1e-11 for periods up to 100 s); summing 10⁴ terms errs by about 1e-12.
pub const UTILIZATION_EPS: f64 = 1e-12;
