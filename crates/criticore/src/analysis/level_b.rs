//! Level B: per-core rate-monotonic scheduling of Level-A and -B tasks with
//! Level-B PETs (mc2-hardware-management §2). Periods on a core are harmonic, so
//! RM is schedulable exactly when U_A^B(p) + U_B^B(p) ≤ 1 (Liu & Layland's bound
//! for harmonic task sets; docs/references.md, MC²: Per-level conditions).

use super::level_a::CoreTest;
use super::utilization::fits_one_core;
use super::{charge, Charged, Provisioning};
use crate::model::{Level, TaskSystem};

/// Level-A and -B tasks of `core` charged with their Level-B PETs.
pub fn charged(system: &TaskSystem, core: usize, prov: Provisioning) -> Option<Vec<Charged>> {
    charge(system, system.on_core(core, Level::A).chain(system.on_core(core, Level::B)), Level::B, prov)
}

/// Level-B test of one core.
pub fn test(system: &TaskSystem, core: usize, prov: Provisioning) -> Option<CoreTest> {
    let items = charged(system, core, prov)?;
    let (utilization, schedulable) = fits_one_core(&items);
    Some(CoreTest { core, tasks: items.iter().map(|c| c.task).collect(), utilization, schedulable })
}
