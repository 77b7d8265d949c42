//! Everything that touches the OS: counters, throttling, starting processes,
//! SCHED_DEADLINE, the watchdog process, the counter page, signals and clocks.
//! No policy here: the loops (`crate::loops`) decide, these carry it out.

pub mod clock;
pub mod counter;
pub mod counter_page;
pub mod deadline;
pub mod launch;
pub mod procs;
pub mod resctrl;
pub mod runstate;
pub mod signals;
pub mod throttle;
pub mod watchdog;
