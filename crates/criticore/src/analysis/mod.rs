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

// The policies the tests bound, where the simulator also reads them (crate::policy).
pub use crate::policy::provisioning::{charge, Charged, Provisioning};
pub use crate::policy::utilization::{self, UTILIZATION_EPS};

/// A task as the classic tests charge it: PET C, period (least inter-arrival
/// time) T, relative deadline D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sporadic {
    pub pet_ns: u64,
    pub period_ns: u64,
    pub deadline_ns: u64,
}
