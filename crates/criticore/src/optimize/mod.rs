//! Hardware-partitioning optimizer (mc2-io-ipc-os-isolation §6.1; documented in
//! docs/optimizer.md).
//!
//! The paper's framework has three phases: (1) partition Level-A/B tasks onto
//! cores, (2) place Level-A/B I/O buffers in Level-A/B or Level-C banks, (3)
//! partition the LLC ways. Only phase 3 is here so far: [`llc_ways`], an exact
//! solver over utilization tables (the paper solves it as a MILP; the MILP
//! reference is `python/criticore/milp.py`). Pure functions, no I/O.

pub mod llc_ways;
