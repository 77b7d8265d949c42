//! Hardware-partitioning optimizer (mc2-io-ipc-os-isolation §6.1; documented in
//! docs/optimizer.md and docs/study-model.md).
//!
//! Three phases over a task system whose tasks carry cost curves: (1)
//! [`packing`] of Level-A/B tasks onto cores, with IPC groups kept together for
//! CE; (2) [`buffers`]: IPC and I/O buffer placement by [`scheme`]; (3)
//! [`llc_ways`]: an exact split of the LLC ways (the paper solves it as a
//! MILP; the reference is `python/criticore/optimization/milp.py`). [`cost`] turns
//! placements and ways into conditioned PETs; [`framework`] runs the phases.
//! [`labels`] places labels on a scratchpad platform (issue 27, Build 7).
//! Pure functions, no I/O.

pub mod buffers;
pub mod framework;
pub mod labels;
pub mod llc_ways;
pub mod packing;
pub mod scheme;

pub use framework::{optimize, try_optimize, Optimized, Solution, Unschedulable};
pub use scheme::Scheme;
