//! The regulators' rules, once: plain state machines fed by counts and
//! times, with no notion of who feeds them. The simulator drives them with
//! the fluid model's request rates (`sim::regulate`); the Linux runtime
//! (`criticore-rt`) drives them with real counters and real clocks.
//!
//! - [`memguard`]: per-entity budgets per synchronous regulation period
//!   (mcti-task-isolation §4 rules 1–4), with MemGuard's reclaim and spare
//!   sharing as options.
//! - [`mcti`]: the memory-overload rule (mcti-task-isolation §4 rule 5) and
//!   Property 1's bus priorities.
//! - [`mrs`]: the Multi-Resource Server's memory budgets
//!   (mrs-multi-resource-server §III rules 1, 4, 5).
//! - [`mrs_cpu`]: the Multi-Resource Server's CPU budgets and per-core node
//!   schedulers, driven by a clock (mrs-multi-resource-server §III rules 1–3,
//!   5, 6).
//! - [`monitor`]: the bandwidth monitor's sampled overhead sum and
//!   suspension (blin-bandwidth-monitor §3.3).
//!
//! - [`entities`]: who holds a budget (a core, a group, a server, the
//!   monitor's task and best-effort cores) and an entity's criticality and
//!   deadline at time t: decided once for the simulator and the runtime.
//!
//! An "entity" is whatever one budget covers; the simulator runs it as
//! cores, the runtime as groups of processes.

pub mod entities;
pub mod mcti;
pub mod memguard;
pub mod monitor;
pub mod mrs;
pub mod mrs_cpu;
