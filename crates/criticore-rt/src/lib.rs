//! criticore's Linux runtime: everything that touches the OS, and nothing else.
//! The regulators' rules live in the engine (`criticore::regulate`); this crate
//! feeds them real counts and times and carries out their decisions.
//!
//! - [`counter`]: counter sources behind one trait (perf_event hardware and
//!   software events, shared-memory counter pages).
//! - [`throttle`]: stopping and resuming groups of processes (pidfd signals,
//!   cgroup v1/v2 freezer).
//! - [`deadline`]: SCHED_DEADLINE reservations.
//! - [`launch`]: starting regulated commands (affinity, policy, parent-death signal).
//! - [`watchdog`]: the process that resumes everything if the regulator dies.
//! - [`counter_page`]: the shared-memory page instrumented programs write.
//! - [`load`]: the load generator's hot loop.
//! - [`periodic`]: a task of the file as a periodic real process (like rt-app).
//! - [`chase`]: loaded latency, a pointer-chasing victim against loads.
//! - [`profile`]: one point of `criticore profile`: a real-time program against constant loads.
//! - [`lead`]: arming counters early by the lag between a stop decision and the stop.
//! - [`regulator`]: the regulation loop (MemGuard, MCTI).
//! - [`server`]: the Multi-Resource Server's loop (mrs-multi-resource-server §III).
//! - [`monitor`]: the bandwidth monitor's loop (blin-bandwidth-monitor §3.3).

pub mod chase;
pub mod counter;
pub mod counter_page;
pub mod deadline;
pub mod launch;
pub mod lead;
pub mod load;
pub mod monitor;
pub mod periodic;
pub mod profile;
pub mod regulator;
pub mod server;
pub mod session;
pub mod throttle;
pub mod watchdog;
