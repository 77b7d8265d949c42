//! Memory interference: how co-running tasks slow one another through the
//! shared LLC, bus and DRAM banks (mc2-hardware-management §3;
//! mc2-io-ipc-os-isolation §3–4). The equations live here once; the
//! simulator solves them for who runs now (`sim::memory`) and the analysis
//! bounds them for whatever may run (`analysis::memory`).
//!
//! - [`fluid`]: the fluid model's per-request equations and their worst case.
//! - [`crossbar`]: scratchpad memories behind a crossbar, a port each.

pub mod crossbar;
pub mod fluid;
