//! criticore's Linux runtime: everything that touches the OS, and nothing else.
//! The regulators' rules live in the engine (`criticore::regulate`); this crate
//! feeds them real counts and times and carries out their decisions.
//!
//! - [`os`]: the OS's side, no policy: counter sources ([`os::counter`]),
//!   throttling ([`os::throttle`]), launching commands ([`os::launch`]),
//!   SCHED_DEADLINE ([`os::deadline`]), the watchdog process
//!   ([`os::watchdog`]), the counter page instrumented programs write
//!   ([`os::counter_page`]), signals and clocks ([`os::signals`], [`os::clock`]).
//! - [`loops`]: the regulation loops, which carry out the engine's rules:
//!   MemGuard/MCTI ([`loops::regulator`]), the Multi-Resource Server
//!   ([`loops::server`]), the bandwidth monitor ([`loops::monitor`]), and
//!   what they share (period accounting, [`loops::period`]; the stop lag, [`loops::lead`]).
//! - [`workload`]: programs criticore runs: the load generator
//!   ([`workload::load`]), loaded latency ([`workload::chase`]), a task as a
//!   periodic process ([`workload::periodic`]), a profiling point ([`workload::profile`]).
//! - [`session`]: one `criticore regulate` run, from the file to the loop and
//!   back: plans the groups, launches and attaches, starts the watchdog and
//!   the throttler, runs one loop, undoes everything on every path out. It
//!   sits above both `os` and `loops` (it is the only module that uses all
//!   of them), so it stays at the top rather than in `loops/`, which it
//!   would otherwise make depend on launching processes.

pub mod loops;
pub mod os;
pub mod session;
pub mod workload;
