//! Level A: per-core table-driven cyclic executive (mc2-hardware-management §2).
//!
//! Test: the core's Level-A tasks with Level-A PETs have utilization ≤ 1
//! (harmonic periods make this exact). The table itself is synthesized in
//! `policy::cyclic_executive`, which the simulator follows.

use super::utilization::fits_one_core;
use super::Provisioning;
use crate::model::TaskSystem;
// The table is the policy the simulator's MC² scheduler follows (crate::policy).
pub use crate::policy::cyclic_executive::{charged, synthesize_table, table, CyclicTable, NoTable, Slot, MAX_TABLE_JOBS};

/// Outcome of one core's Level-A (or Level-B) utilization test.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreTest {
    pub core: usize,
    pub tasks: Vec<usize>,
    pub utilization: f64,
    pub schedulable: bool,
}

/// Level-A test of one core: U_A^A(p) ≤ 1 (docs/references.md, MC²: Per-level conditions).
pub fn test(system: &TaskSystem, core: usize, prov: Provisioning) -> Option<CoreTest> {
    let items = charged(system, core, prov)?;
    let (utilization, schedulable) = fits_one_core(&items);
    Some(CoreTest { core, tasks: items.iter().map(|c| c.task).collect(), utilization, schedulable })
}
