//! Counter sources: where the regulator's counts come from. One trait,
//! [`Counter`], for a perf_event counter (hardware or software, per CPU or per
//! task; [`perf`]) and for a shared-memory counter page an instrumented program
//! writes ([`shm`]). Overflow notification, where a source has it, arrives as a
//! real-time signal to the regulator thread: the regulator waits for it with
//! `sigtimedwait` and otherwise polls.

pub mod perf;
pub mod perf_ring;
pub mod shm;

use std::fmt;

/// Cumulative counts since the counter was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cache lines read (LLC refills), or the events of a single-event source.
    pub reads: u64,
    /// Cache lines written back (0 where the source counts one event only).
    pub writes: u64,
}

impl Counts {
    pub fn total(&self) -> u64 {
        self.reads + self.writes
    }
}

/// Why a counter cannot be used; `Display` is the one line the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterError {
    /// The machine has no hardware PMU (`fallback` names what to use instead).
    NoPmu { fallback: String },
    /// The CPU (or kernel) does not know this event.
    UnknownEvent { event: String, reason: String },
    /// A pinned event is in error state: another tool holds the PMU.
    PinnedError { event: String },
    /// Not allowed (perf_event_paranoid, capabilities).
    Permission { event: String, reason: String },
    /// The process or page is gone, or another OS error.
    Os { what: String, reason: String },
}

impl fmt::Display for CounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CounterError::NoPmu { fallback } => write!(f, "this machine has no hardware PMU (no perf 'cpu' event source); use {fallback}"),
            CounterError::UnknownEvent { event, reason } => write!(f, "event {event:?} is not available here: {reason}"),
            CounterError::PinnedError { event } => {
                write!(f, "pinned event {event:?} is in error state: another tool (perf, PCM, MemGuard) holds the PMU")
            }
            CounterError::Permission { event, reason } => write!(f, "not allowed to count {event:?}: {reason}"),
            CounterError::Os { what, reason } => write!(f, "{what}: {reason}"),
        }
    }
}

impl std::error::Error for CounterError {}

/// One counter of one regulated thing (a CPU, a process, a counter page).
pub trait Counter: Send {
    /// What is counted, for the run's log (e.g. "perf software page-faults, pid 1234").
    fn describe(&self) -> String;
    /// Cumulative counts now.
    fn read(&mut self) -> Result<Counts, CounterError>;
    /// Ask for an overflow notification once `total()` has grown by `after`
    /// events from now (None: no notification). Returns false when the
    /// source cannot notify (the regulator then polls).
    fn arm(&mut self, after: Option<u64>) -> Result<bool, CounterError>;
    /// The notification this counter sends the regulator thread, if any:
    /// the signal number and the value that identifies this counter
    /// (`si_fd` for perf events, the cookie for counter pages).
    fn notification(&self) -> Option<Notification> {
        None
    }
    /// Stop notifying for good (the regulator polls this counter instead).
    fn mute(&mut self) -> Result<(), CounterError> {
        Ok(())
    }
    /// When the count last crossed the armed threshold, as the counted
    /// program saw it (CLOCK_MONOTONIC ns), if the source records it: the
    /// start of the end-to-end reaction (counter pages: the program's
    /// timestamp; perf events: the overflow sample's time, `perf_ring.rs`).
    fn crossed_ns(&self) -> Option<u64> {
        None
    }
}

/// How an overflow of one counter reaches the regulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notification {
    /// A perf event's fd, reported as `si_fd` of the signal.
    Fd { signal: i32, fd: i32 },
    /// A counter page's cookie, reported in `si_value` (cookie << 1 | job-end bit).
    Cookie { signal: i32, cookie: u64 },
}

/// The real-time signal overflow notifications use (blocked in the regulator thread).
pub fn overflow_signal() -> i32 {
    libc::SIGRTMIN() + 3
}
