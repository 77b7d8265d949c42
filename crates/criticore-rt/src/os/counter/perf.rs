//! perf_event counters: hardware (LLC misses, raw PMU events) and software
//! events (page faults, context switches, clocks), per CPU or per task, all
//! through one `perf_event_open` code path and one [`PerfCounter`] type.
//!
//! Hardware and raw events are what MemGuard counts (docs/references.md,
//! Regulation: MemGuard: LLC refills plus write-backs, user mode only,
//! pinned); software events are the
//! fallback on machines without a PMU, such as VMs (docs/references.md, Runtime §2:
//! this development machine has no `cpu` event source).
//!
//! # Overflow notification (measured on kernel 6.18, 2-vCPU VM, no PMU)
//!
//! With `notify`, every event is opened as a sampling event (the overflow
//! period is the budget, as MemGuard's `sample_period = budget`) with
//! signal-driven I/O: `F_SETOWN_EX {F_OWNER_TID, gettid()}`, `F_SETSIG
//! overflow_signal()`, `O_ASYNC` (docs/references.md, Runtime §2). Found with a
//! software page-fault event:
//! - No mmap ring buffer is needed: every overflow queues one signal with
//!   `si_code = POLL_IN` and `si_fd` = the event's fd.
//! - `PERF_EVENT_IOC_PERIOD` alone on an *active software* event is wrong: it
//!   zeroes the remaining period, so the very next event overflows (a spurious
//!   signal at once) and the countdown after it still uses the *old* period.
//!   Disable, set the period, enable (what [`Counter::arm`] does for software
//!   events) restarts the countdown: exactly one signal at the n-th event after
//!   arming (n - 1 events: none; n: one), then one every n events until
//!   re-armed. The price: events of *other* threads or CPUs during those two
//!   ioctls are not counted. The clock events (`sw:cpu-clock`,
//!   `sw:task-clock`, period in ns, hrtimer based) behave correctly either way.
//!   For hardware events `PERF_EVENT_IOC_PERIOD` alone reloads the counter with
//!   the new period (the PMU's start with reload), so no disable window is
//!   opened there (not testable on this machine).
//! - `PERF_EVENT_IOC_REFRESH` is unusable here: when its overflow budget runs
//!   out the event is disabled, i.e. it stops counting. `PERF_EVENT_IOC_RESET`
//!   zeroes the count, not the period, so it is not used either (counts stay
//!   cumulative).
//! - Cost (release build, overflow at every page fault, median of 15 runs of
//!   5000, faulting thread = receiving thread): ~11 µs per notification
//!   (overflow + real-time signal + taking it with `sigtimedwait`) on top of
//!   ~1.6 µs per fault; an overflow with no signal attached (no O_ASYNC)
//!   costs ~0.05 µs. VM exits for the self-IPI that delivers the signal likely
//!   dominate (docs/references.md, Runtime §2: 27-30 µs with an hrtimer event).
//!   Reproduce: `cargo test --release -p criticore-rt --test
//!   counter_sources overflow_cost -- --ignored --nocapture`.
//!
//! Disarming sets a period no run can reach ([`DISARMED`], MemGuard uses
//! 0xfffffff events); a signal queued before that still arrives, so the
//! regulator must treat every notification as a hint and re-read.
//!
//! # Per-task counters and threads
//!
//! `Target::Task` opens the event with `inherit = 1`: threads and child
//! processes the task creates *after* the open are counted too (the count read
//! includes them; this works with the `TOTAL_TIME_*` read format). Threads that
//! already existed are not: open the counter before the program starts threads
//! (e.g. right after fork, before exec). Measured on 6.18: inheritance and
//! sampling conflict in one way: `PERF_EVENT_IOC_PERIOD` changes only the event
//! opened here, not the inherited copies, and each copy counts its own period.
//! So [`Counter::arm`] is exact for the opened thread; a thread created later
//! notifies on its own countdown, with the period in force when it was created.
//! The notification can therefore be late for a multi-threaded program (the
//! count is always right): the regulator must also poll `read()` every period, which it
//! does anyway. We keep `inherit` (correct counts matter more than exact
//! notification).
//!
//! Worse, a copy created while the counter was armed with a small period
//! signals at every few counts for good; and the kernel may *swap* the perf
//! contexts of two threads of one program at a context switch (an optimisation
//! for inherited contexts), after which the thread we armed counts on a copy.
//! Found on 6.18 with a one-thread load plus pyarrow's jemalloc thread: in one
//! run of four, a load signalled at every page fault, the regulator spent 88%
//! of a core in IPIs re-reading it, and loads got a quarter of their budgets.
//! So events that inherit are opened with `PERF_SAMPLE_READ | PERF_SAMPLE_TID`,
//! which since 6.11 makes the kernel switch such contexts the slow way (no
//! swap; older kernels refuse the flag and we open without it), and the
//! regulator [`Counter::mute`]s a counter that signals before its armed count
//! several times in one period, and polls it instead.

use super::perf_ring::{Ring, SAMPLE_TID, SAMPLE_TIME};
use super::{overflow_signal, Counter, CounterError, Counts, Notification};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

// ---- perf_event ABI (include/uapi/linux/perf_event.h) ----

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_HW_CACHE: u32 = 3;
pub const PERF_TYPE_RAW: u32 = 4;

const SW_CPU_CLOCK: u64 = 0;
const SW_TASK_CLOCK: u64 = 1;
const SW_PAGE_FAULTS: u64 = 2;
const SW_CONTEXT_SWITCHES: u64 = 3;
const SW_PAGE_FAULTS_MIN: u64 = 5;
const SW_PAGE_FAULTS_MAJ: u64 = 6;

// PERF_TYPE_HW_CACHE config = cache | op << 8 | result << 16.
const CACHE_LL: u64 = 2;
const CACHE_OP_READ: u64 = 0;
const CACHE_OP_WRITE: u64 = 1;
const CACHE_RESULT_MISS: u64 = 1;
const LL_READ_MISS: u64 = CACHE_LL | (CACHE_OP_READ << 8) | (CACHE_RESULT_MISS << 16);
const LL_WRITE_MISS: u64 = CACHE_LL | (CACHE_OP_WRITE << 8) | (CACHE_RESULT_MISS << 16);

const FORMAT_TOTAL_TIME_ENABLED: u64 = 1;
const FORMAT_TOTAL_TIME_RUNNING: u64 = 2;
const SAMPLE_READ: u64 = 1 << 4;

// Bits of the attr flag word.
const ATTR_INHERIT: u64 = 1 << 1;
const ATTR_PINNED: u64 = 1 << 2;
const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;
/// Sample times on `clockid` (CLOCK_MONOTONIC here) instead of perf's clock.
const ATTR_USE_CLOCKID: u64 = 1 << 25;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
// _IOW('$', 4, u64) with the generic ioctl encoding (x86, arm, riscv).
const IOC_PERIOD: libc::c_ulong = (1 << 30) | (8 << 16) | 0x2400 | 4;

// fcntl(2) commands missing from the libc crate for glibc (asm-generic values).
const F_SETSIG: libc::c_int = 10;
const F_SETOWN_EX: libc::c_int = 15;
const F_OWNER_TID: libc::c_int = 0;

#[repr(C)]
struct FOwnerEx {
    kind: libc::c_int,
    pid: libc::pid_t,
}

/// `struct perf_event_attr` up to `clockid` (PERF_ATTR_SIZE_VER3, 96 bytes,
/// Linux 4.1): every field used here lives in this part.
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
}

const _: () = assert!(std::mem::size_of::<Attr>() == 96);

/// The overflow period of a disarmed event: never reached (2^62 events or ns).
/// The kernel clamps it to the PMU's counter width and re-arms silently.
pub const DISARMED: u64 = 1 << 62;

// ---- event specs ----

/// One perf event: `type` and `config` of `perf_event_attr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub kind: u32,
    pub config: u64,
}

impl Event {
    pub fn is_software(&self) -> bool {
        self.kind == PERF_TYPE_SOFTWARE
    }
}

/// What to count: a reads event and, for hardware specs, a write-back event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// The spec in its normal form (`llc-misses`, `raw:0x17,0x18`, `sw:page-faults`).
    pub name: String,
    /// Cache lines read (refills), or the single event of a software spec.
    pub reads: Event,
    /// Write-backs, if the spec names them.
    pub writes: Option<Event>,
    /// `llc-misses` only: a missing write event degrades to reads only
    /// (said in `describe()`); an explicit raw write event must open.
    pub writes_optional: bool,
}

impl EventSpec {
    /// Hardware and raw events need a PMU; software events do not.
    pub fn is_hardware(&self) -> bool {
        !self.reads.is_software()
    }
}

const ACCEPTED: &str = "accepted: llc-misses, raw:0xEV or raw:0xREADS,0xWRITES (hex PMU event numbers, e.g. raw:0x17,0x18 on ARMv8), \
sw:page-faults, sw:minor-faults, sw:major-faults, sw:context-switches, sw:cpu-clock, sw:task-clock";

const SOFTWARE: [(&str, u64); 6] = [
    ("page-faults", SW_PAGE_FAULTS),
    ("minor-faults", SW_PAGE_FAULTS_MIN),
    ("major-faults", SW_PAGE_FAULTS_MAJ),
    ("context-switches", SW_CONTEXT_SWITCHES),
    ("cpu-clock", SW_CPU_CLOCK),
    ("task-clock", SW_TASK_CLOCK),
];

fn unknown(text: &str, why: &str) -> CounterError {
    CounterError::UnknownEvent { event: text.to_string(), reason: format!("{why}; {ACCEPTED}") }
}

fn parse_hex(text: &str, part: &str) -> Result<u64, CounterError> {
    let digits = part.trim();
    let digits = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")).unwrap_or(digits);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(unknown(text, &format!("{:?} is not a hex event number", part.trim())));
    }
    Ok(u64::from_str_radix(digits, 16).expect("checked hex digits"))
}

/// Parse a `--counter` event spec; an unknown one is an `UnknownEvent`
/// error that lists the accepted forms.
pub fn parse_event(text: &str) -> Result<EventSpec, CounterError> {
    let t = text.trim();
    if t == "llc-misses" {
        return Ok(EventSpec {
            name: t.to_string(),
            reads: Event { kind: PERF_TYPE_HW_CACHE, config: LL_READ_MISS },
            writes: Some(Event { kind: PERF_TYPE_HW_CACHE, config: LL_WRITE_MISS }),
            writes_optional: true,
        });
    }
    if let Some(list) = t.strip_prefix("raw:") {
        let parts: Vec<&str> = list.split(',').collect();
        if parts.len() > 2 {
            return Err(unknown(text, "at most two raw events (reads, writes)"));
        }
        let codes = parts.iter().map(|p| parse_hex(text, p)).collect::<Result<Vec<_>, _>>()?;
        let name = format!("raw:{}", codes.iter().map(|c| format!("{c:#x}")).collect::<Vec<_>>().join(","));
        return Ok(EventSpec {
            name,
            reads: Event { kind: PERF_TYPE_RAW, config: codes[0] },
            writes: codes.get(1).map(|&c| Event { kind: PERF_TYPE_RAW, config: c }),
            writes_optional: false,
        });
    }
    if let Some(sw) = t.strip_prefix("sw:") {
        if let Some(&(name, config)) = SOFTWARE.iter().find(|(n, _)| *n == sw) {
            return Ok(EventSpec {
                name: format!("sw:{name}"),
                reads: Event { kind: PERF_TYPE_SOFTWARE, config },
                writes: None,
                writes_optional: false,
            });
        }
        return Err(unknown(text, "unknown software event"));
    }
    Err(unknown(text, "unknown event"))
}

// ---- PMU detection ----

/// Where the kernel lists its event sources (perf_event_open(2)).
pub const EVENT_SOURCES: &str = "/sys/bus/event_source/devices";

/// A hardware PMU exists: see [`pmu_present_in`].
pub fn pmu_present() -> bool {
    pmu_present_in(Path::new(EVENT_SOURCES))
}

/// Whether `dir` (a copy of [`EVENT_SOURCES`]) lists a CPU PMU: `cpu` (x86,
/// RISC-V), `cpu_core`/`cpu_atom` (Intel hybrid), `armv*` (`armv8_pmuv3_0`,
/// `armv8_cortex_a53`, `armv7_cortex_a15`), `apple_*_pmu`, or any source whose
/// `type` is 4 = PERF_TYPE_RAW (the core PMU that owns raw events on x86).
/// Uncore and software sources (`software`, `tracepoint`, `breakpoint`,
/// `uprobe`, `msr`, `kprobe`) do not count.
pub fn pmu_present_in(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else { return false };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let by_name = matches!(name.as_str(), "cpu" | "cpu_core" | "cpu_atom")
            || name.starts_with("armv")
            || (name.starts_with("apple_") && name.ends_with("_pmu"));
        let by_type = fs::read_to_string(e.path().join("type")).ok().and_then(|t| t.trim().parse::<u32>().ok()) == Some(PERF_TYPE_RAW);
        by_name || by_type
    })
}

// ---- targets and counters ----

/// What one counter watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Every task on CPU c (pid = -1, cpu = c), as MemGuard counts per core.
    Cpu(usize),
    /// Task (thread id) `pid` and the threads and processes it creates after
    /// the open (pid, cpu = -1, inherit = 1).
    Task(i32),
}

impl Target {
    /// The calling thread.
    pub fn this_thread() -> Target {
        Target::Task(unsafe { libc::gettid() })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Cpu(c) => write!(f, "cpu {c}"),
            Target::Task(p) => write!(f, "pid {p} (and the threads/children it starts)"),
        }
    }
}

/// An open perf counter: one fd for reads, one for write-backs if any.
/// Dropping it closes the fds (and with them the events).
pub struct PerfCounter {
    spec: EventSpec,
    target: Target,
    reads: OwnedFd,
    writes: Option<OwnedFd>,
    /// Overflow signals are set up (false: `arm` returns false, poll instead).
    notify: bool,
    /// Said in `describe()`: degradations chosen at open time.
    notes: Vec<String>,
    /// Seen time_running < time_enabled: the PMU was shared (multiplexed).
    multiplexed: bool,
    /// The writes event is a sampling event too (it notifies and is armed).
    writes_notify: bool,
    /// Per notifying event, its timer: when it overflowed (`perf_ring.rs`).
    timers: Vec<Timer>,
}

/// A copy of a notifying event that only records when it overflows: armed
/// with the same period, not inherited (the kernel maps no ring buffer for
/// an inherited per-task event), no signal, a sample with the time
/// (CLOCK_MONOTONIC) in its ring at each overflow. For a per-task counter it
/// counts the task's first thread only: its overflow is the crossing of a
/// one-thread program (the loads, the periodic workers), and later than the
/// group's for a program whose other threads count too.
struct Timer {
    fd: OwnedFd,
    ring: Ring,
}

fn open_timer(event: &Event, target: Target) -> io::Result<Timer> {
    let mut attr = Attr {
        kind: event.kind,
        size: std::mem::size_of::<Attr>() as u32,
        config: event.config,
        sample_period: DISARMED,
        sample_type: SAMPLE_TIME,
        flags: ATTR_USE_CLOCKID,
        clockid: libc::CLOCK_MONOTONIC,
        ..Attr::default()
    };
    if !event.is_software() {
        attr.flags |= ATTR_EXCLUDE_KERNEL | ATTR_PINNED;
    }
    let fd = sys_open(&attr, target).or_else(|e| {
        // As the counted event: user-mode only where the kernel asks.
        if event.is_software() && matches!(errno_of(&e), libc::EACCES | libc::EPERM) {
            attr.flags |= ATTR_EXCLUDE_KERNEL;
            sys_open(&attr, target)
        } else {
            Err(e)
        }
    })?;
    let ring = Ring::map(fd.as_raw_fd(), SAMPLE_TIME)?;
    Ok(Timer { fd, ring })
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

fn paranoid() -> String {
    fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

fn sys_open(attr: &Attr, target: Target) -> io::Result<OwnedFd> {
    let (pid, cpu) = match target {
        Target::Cpu(c) => (-1, c as libc::c_int),
        Target::Task(p) => (p, -1),
    };
    let fd = unsafe {
        libc::syscall(libc::SYS_perf_event_open, attr as *const Attr, pid as libc::c_long, cpu as libc::c_long, -1 as libc::c_long, PERF_FLAG_FD_CLOEXEC)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn os(what: String, e: &io::Error) -> CounterError {
    CounterError::Os { what, reason: e.to_string() }
}

/// Map a failed perf_event_open to the one line the user sees.
fn open_error(spec: &EventSpec, event: &str, target: Target, e: &io::Error) -> CounterError {
    let errno = errno_of(e);
    let unsupported = matches!(errno, libc::ENOENT | libc::EINVAL | libc::EOPNOTSUPP | libc::ENODEV);
    if unsupported && spec.is_hardware() && !pmu_present() {
        return CounterError::NoPmu { fallback: "--counter shm (instrumented programs) or --counter sw:page-faults".into() };
    }
    match errno {
        libc::EACCES | libc::EPERM => CounterError::Permission {
            event: event.to_string(),
            reason: format!(
                "{e}; /proc/sys/kernel/perf_event_paranoid is {}: run as root or with CAP_PERFMON, or lower it",
                paranoid()
            ),
        },
        libc::ESRCH => CounterError::Os { what: format!("perf counter for pid {}", pid_of(target)), reason: "no such process (it has exited?)".into() },
        libc::ENODEV if matches!(target, Target::Cpu(_)) => {
            CounterError::Os { what: format!("perf counter on {target}"), reason: "no such CPU, or it is offline".into() }
        }
        libc::EBUSY => CounterError::PinnedError { event: event.to_string() },
        _ if unsupported => {
            CounterError::UnknownEvent { event: event.to_string(), reason: format!("the CPU or kernel does not support it ({e})") }
        }
        _ => os(format!("perf_event_open {event} on {target}"), e),
    }
}

fn pid_of(target: Target) -> i32 {
    match target {
        Target::Task(p) => p,
        Target::Cpu(_) => -1,
    }
}

fn fcntl_ok(r: libc::c_int, what: &str) -> Result<(), CounterError> {
    if r < 0 {
        return Err(os(format!("fcntl {what} on a perf fd"), &io::Error::last_os_error()));
    }
    Ok(())
}

/// Send this file's overflows to the calling thread as `overflow_signal()`.
/// docs/references.md, Runtime §2: F_OWNER_TID targets one thread; F_SETSIG with a
/// real-time signal queues overflows instead of coalescing and fills `si_fd`.
fn set_owner(fd: RawFd) -> Result<(), CounterError> {
    let owner = FOwnerEx { kind: F_OWNER_TID, pid: unsafe { libc::gettid() } };
    fcntl_ok(unsafe { libc::fcntl(fd, F_SETOWN_EX, &owner as *const FOwnerEx) }, "F_SETOWN_EX")?;
    fcntl_ok(unsafe { libc::fcntl(fd, F_SETSIG, overflow_signal()) }, "F_SETSIG")
}

/// Turn on O_ASYNC for the file at `fd`.
fn set_async(fd: RawFd) -> Result<(), CounterError> {
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fcntl_ok(flags, "F_GETFL")?;
    fcntl_ok(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_ASYNC) }, "F_SETFL O_ASYNC")
}

/// Turn on O_ASYNC for the file at `file` so that its signals carry
/// `si_fd = report_as`. The kernel records, when O_ASYNC is set, the fd number
/// the fcntl came through and reports that number as `si_fd` for the file's
/// life (fs/fcntl.c fasync entries; they are removed when the file's last
/// reference closes, not per fd). So a counter's second (writes) event is
/// registered through the reads fd's number: both events notify with one
/// `si_fd` and [`Notification::Fd`] names the counter, not one of its events.
fn set_async_as(file: RawFd, report_as: RawFd) -> Result<(), CounterError> {
    if file == report_as {
        return set_async(file);
    }
    unsafe {
        // Keep the reads file alive elsewhere, put the writes file at the
        // reads number, register, put the reads file back.
        let saved = libc::fcntl(report_as, libc::F_DUPFD_CLOEXEC, 0);
        fcntl_ok(saved, "F_DUPFD_CLOEXEC")?;
        let mut result = if libc::dup3(file, report_as, libc::O_CLOEXEC) < 0 {
            Err(os("dup3 of a perf fd".into(), &io::Error::last_os_error()))
        } else {
            set_async(report_as)
        };
        if libc::dup3(saved, report_as, libc::O_CLOEXEC) < 0 && result.is_ok() {
            result = Err(os("dup3 restoring a perf fd".into(), &io::Error::last_os_error()));
        }
        libc::close(saved);
        result
    }
}

/// Open `spec` on `target`. With `notify`, overflows signal the calling thread
/// (`overflow_signal()`, `si_fd` = [`Notification::Fd`]'s fd): call `open`
/// (or [`PerfCounter::notify_this_thread`]) from the thread that waits.
pub fn open(spec: &EventSpec, target: Target, notify: bool) -> Result<PerfCounter, CounterError> {
    if let Target::Cpu(c) = target {
        // The kernel says EINVAL for a CPU number beyond the machine, which
        // would read as an unsupported event.
        if !Path::new(&format!("/sys/devices/system/cpu/cpu{c}")).exists() {
            return Err(CounterError::Os { what: format!("perf counter on cpu {c}"), reason: "no such CPU".into() });
        }
    }
    let mut notes = Vec::new();
    let mut notify = notify;
    let reads_name = if spec.writes.is_some() { format!("{} (reads)", spec.name) } else { spec.name.clone() };
    let reads = open_one(spec, &spec.reads, &reads_name, target, &mut notify, &mut notes)?;
    let mut writes = None;
    let mut writes_notify = false;
    if let Some(w) = &spec.writes {
        let name = format!("{} (writes)", spec.name);
        let mut notify_w = notify;
        match open_one(spec, w, &name, target, &mut notify_w, &mut notes) {
            Ok(fd) if notify_w == notify => {
                writes = Some(fd);
                writes_notify = notify;
            }
            // The writes event lost its overflow interrupt but reads kept it:
            // not expected on one PMU; count it without notification.
            Ok(fd) => {
                notes.push("writes are counted without overflow notification".into());
                writes = Some(fd);
            }
            Err(CounterError::UnknownEvent { .. }) if spec.writes_optional => {
                notes.push("the write-back event is not supported here: counting reads only".into());
            }
            Err(e) => return Err(e),
        }
    }
    let mut counter = PerfCounter { spec: spec.clone(), target, reads, writes, notify, notes, multiplexed: false, writes_notify, timers: Vec::new() };
    if counter.notify {
        // The overflows' times (the end-to-end reaction's start), where the kernel gives them.
        for event in std::iter::once(&spec.reads).chain(spec.writes.as_ref().filter(|_| counter.writes_notify)) {
            match open_timer(event, target) {
                Ok(t) => counter.timers.push(t),
                Err(e) => {
                    counter.notes.push(format!("overflow times not read ({e}): end-to-end reaction not measured"));
                    counter.timers.clear();
                    break;
                }
            }
        }
    }
    if counter.notify {
        counter.notify_this_thread()?;
        set_async(counter.reads.as_raw_fd())?;
        if let Some(w) = counter.notifying_writes() {
            set_async_as(w, counter.reads.as_raw_fd())?;
        }
    }
    // A pinned event that cannot get the PMU is in error state at once.
    counter.read()?;
    Ok(counter)
}

/// Open one event; may clear `notify` (PMU without overflow interrupt) and
/// add a note (user-mode only software counting).
fn open_one(spec: &EventSpec, event: &Event, name: &str, target: Target, notify: &mut bool, notes: &mut Vec<String>) -> Result<OwnedFd, CounterError> {
    let mut attr = Attr {
        kind: event.kind,
        size: std::mem::size_of::<Attr>() as u32,
        config: event.config,
        read_format: FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING,
        ..Attr::default()
    };
    if matches!(target, Target::Task(_)) {
        attr.flags |= ATTR_INHERIT;
    }
    if !event.is_software() {
        // User traffic only, like MemGuard; pinned: never multiplexed, error
        // state instead (docs/references.md, Runtime §2).
        attr.flags |= ATTR_EXCLUDE_KERNEL | ATTR_PINNED;
    }
    if *notify {
        attr.sample_period = DISARMED;
        attr.wakeup_events = 1;
        if attr.flags & ATTR_INHERIT != 0 {
            // No swapped contexts (module doc, "Per-task counters and
            // threads"); the kernel asks for PERF_SAMPLE_TID with it. No ring
            // buffer is mapped, so no sample is ever written.
            attr.sample_type |= SAMPLE_READ | SAMPLE_TID;
        }
    }
    let opened = match sys_open(&attr, target) {
        // Kernels before 6.11 refuse inherit + PERF_SAMPLE_READ: open without it.
        Err(e) if attr.sample_type & SAMPLE_READ != 0 && errno_of(&e) == libc::EINVAL => {
            attr.sample_type &= !(SAMPLE_READ | SAMPLE_TID);
            sys_open(&attr, target)
        }
        r => r,
    };
    match opened {
        Ok(fd) => Ok(fd),
        // Page faults are counted in the kernel but with the faulting user
        // registers, so user-mode-only counting still sees user faults; an
        // unprivileged user under perf_event_paranoid >= 2 may only do that.
        Err(e) if event.is_software() && matches!(errno_of(&e), libc::EACCES | libc::EPERM) => {
            attr.flags |= ATTR_EXCLUDE_KERNEL;
            if let Ok(fd) = sys_open(&attr, target) {
                notes.push(format!("user-mode events only (perf_event_paranoid {})", paranoid()));
                return Ok(fd);
            }
            Err(open_error(spec, name, target, &e))
        }
        // A PMU without an overflow interrupt rejects sampling events
        // (MemGuard issues #5/#6: boards whose PMU IRQ is not declared).
        Err(e) if *notify && !event.is_software() && errno_of(&e) == libc::EOPNOTSUPP => {
            attr.sample_period = 0;
            attr.wakeup_events = 0;
            if let Ok(fd) = sys_open(&attr, target) {
                *notify = false;
                notes.push("no PMU overflow interrupt: polled, not notified".into());
                return Ok(fd);
            }
            Err(open_error(spec, name, target, &e))
        }
        Err(e) => Err(open_error(spec, name, target, &e)),
    }
}

impl PerfCounter {
    pub fn spec(&self) -> &EventSpec {
        &self.spec
    }

    pub fn target(&self) -> Target {
        self.target
    }

    /// Overflow signals are set up (`arm` can notify).
    pub fn notifies(&self) -> bool {
        self.notify
    }

    /// A read saw the event run for less time than it was enabled.
    pub fn multiplexed(&self) -> bool {
        self.multiplexed
    }

    /// Direct this counter's overflow signals to the calling thread (they go
    /// to the thread that opened it otherwise; a thread that has exited gets
    /// nothing). No-op without notification.
    pub fn notify_this_thread(&self) -> Result<(), CounterError> {
        if !self.notify {
            return Ok(());
        }
        set_owner(self.reads.as_raw_fd())?;
        if let Some(w) = self.notifying_writes() {
            set_owner(w)?;
        }
        Ok(())
    }

    /// The writes fd, if it notifies too.
    fn notifying_writes(&self) -> Option<RawFd> {
        self.writes.as_ref().filter(|_| self.writes_notify).map(|f| f.as_raw_fd())
    }

    fn read_fd(&mut self, fd: RawFd, which: &str) -> Result<u64, CounterError> {
        // read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING: value, enabled, running.
        let mut buf = [0u64; 3];
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, std::mem::size_of_val(&buf)) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return Err(os(format!("reading perf counter {} ({which}) on {}", self.spec.name, self.target), &e));
        }
        if n == 0 {
            // perf_event_open(2): a pinned event in error state reads 0 bytes.
            return Err(CounterError::PinnedError { event: self.spec.name.clone() });
        }
        // Unscaled on purpose: the regulator budgets what was counted. Pinned
        // events are never multiplexed, so this is a diagnostic only.
        if buf[2] < buf[1] {
            self.multiplexed = true;
        }
        Ok(buf[0])
    }

    /// Set the overflow period of one event to `period` from now.
    fn set_period(&self, fd: RawFd, period: u64) -> Result<(), CounterError> {
        let ioctl = |req: libc::c_ulong, arg: *const u64| -> Result<(), CounterError> {
            if unsafe { libc::ioctl(fd, req as _, arg) } < 0 {
                return Err(os(format!("arming perf counter {}", self.spec.name), &io::Error::last_os_error()));
            }
            Ok(())
        };
        if self.spec.reads.is_software() {
            // See the module doc: IOC_PERIOD on an active software event fires
            // at the next event; disabled -> period -> enabled restarts the
            // countdown at `period`. Events in that window (other threads or
            // CPUs) are not counted.
            ioctl(IOC_DISABLE, std::ptr::null())?;
            let r = ioctl(IOC_PERIOD, &period);
            ioctl(IOC_ENABLE, std::ptr::null())?;
            r
        } else {
            // The PMU reloads the new period at once (no counting gap).
            ioctl(IOC_PERIOD, &period)
        }
    }
}

impl Counter for PerfCounter {
    fn describe(&self) -> String {
        let events = match (&self.spec.writes, &self.writes) {
            (Some(_), Some(_)) => " (reads + write-backs)",
            _ => "",
        };
        let mut s = format!("perf {}{events}, {}", self.spec.name, self.target);
        if !self.notify {
            s.push_str(", polled");
        }
        for n in &self.notes {
            s.push_str("; ");
            s.push_str(n);
        }
        if self.multiplexed {
            s.push_str("; multiplexed: counted only part of the time (another tool shares the PMU)");
        }
        s
    }

    fn read(&mut self) -> Result<Counts, CounterError> {
        let reads = self.read_fd(self.reads.as_raw_fd(), "reads")?;
        let writes = match self.writes.as_ref().map(|f| f.as_raw_fd()) {
            Some(fd) => self.read_fd(fd, "writes")?,
            None => 0,
        };
        Ok(Counts { reads, writes })
    }

    /// `Some(n)`: the next signal comes after n more events (n = 0 is taken as
    /// 1: the next event), then one every n events until re-armed. With two
    /// events (reads, writes) each is armed with ceil(n/2): if reads + writes
    /// grew by n, one of them grew by at least n/2, so the signal is never late
    /// and at most n/2 early; the regulator re-reads and re-arms with what is
    /// left (MemGuard likewise treats an overflow below budget as spurious).
    /// Inherited threads keep their own period (module doc).
    fn arm(&mut self, after: Option<u64>) -> Result<bool, CounterError> {
        if !self.notify {
            return Ok(false);
        }
        let writes = self.notifying_writes();
        let per_event = |n: u64| if writes.is_some() { n.div_ceil(2) } else { n };
        let period = after.map_or(DISARMED, |n| per_event(n).clamp(1, DISARMED));
        self.set_period(self.reads.as_raw_fd(), period)?;
        if let Some(fd) = writes {
            self.set_period(fd, period)?;
        }
        // Then the timers, so they never delay the arming the budget rests on
        // (a software event's disable/enable window; its overflow time may be
        // a few events late); their rings drained so they never fill.
        for t in &self.timers {
            t.ring.drain();
            self.set_period(t.fd.as_raw_fd(), period)?;
        }
        Ok(true)
    }

    fn notification(&self) -> Option<Notification> {
        self.notify.then(|| Notification::Fd { signal: overflow_signal(), fd: self.reads.as_raw_fd() })
    }

    fn crossed_ns(&self) -> Option<u64> {
        self.timers.iter().map(|t| t.ring.drain()).max().filter(|&t| t > 0)
    }

    fn mute(&mut self) -> Result<(), CounterError> {
        if !self.notify {
            return Ok(());
        }
        self.arm(None)?;
        // Without O_ASYNC no copy of the event (inherited ones included) queues a signal.
        for fd in std::iter::once(self.reads.as_raw_fd()).chain(self.notifying_writes()) {
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            fcntl_ok(flags, "F_GETFL")?;
            fcntl_ok(unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_ASYNC) }, "F_SETFL")?;
        }
        self.notify = false;
        Ok(())
    }
}

/// `si_fd` of a signal from a perf event (the SIGPOLL member of siginfo_t,
/// filled for F_SETSIG signals: int signo, errno, code; long band; int fd).
pub fn siginfo_fd(info: &libc::siginfo_t) -> RawFd {
    #[repr(C)]
    struct SigPoll {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        band: libc::c_long,
        fd: libc::c_int,
    }
    const _: () = assert!(std::mem::size_of::<SigPoll>() <= std::mem::size_of::<libc::siginfo_t>());
    unsafe { (*(info as *const libc::siginfo_t as *const SigPoll)).fd }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_accepted_forms() {
        let llc = parse_event("llc-misses").unwrap();
        assert_eq!(llc.reads, Event { kind: 3, config: 0x10002 });
        assert_eq!(llc.writes, Some(Event { kind: 3, config: 0x10102 }));
        assert!(llc.is_hardware() && llc.writes_optional);

        let one = parse_event("raw:0x17").unwrap();
        assert_eq!((one.reads, one.writes), (Event { kind: 4, config: 0x17 }, None));
        let two = parse_event(" raw:0x17, 0x18 ").unwrap();
        assert_eq!((two.reads, two.writes), (Event { kind: 4, config: 0x17 }, Some(Event { kind: 4, config: 0x18 })));
        assert_eq!(two.name, "raw:0x17,0x18");
        assert!(!two.writes_optional);
        let x86 = parse_event("raw:0x08B0,40b0").unwrap();
        assert_eq!((x86.reads.config, x86.writes.unwrap().config), (0x08b0, 0x40b0));

        let expect = [
            ("sw:page-faults", 2),
            ("sw:minor-faults", 5),
            ("sw:major-faults", 6),
            ("sw:context-switches", 3),
            ("sw:cpu-clock", 0),
            ("sw:task-clock", 1),
        ];
        for (text, config) in expect {
            let s = parse_event(text).unwrap();
            assert_eq!((s.reads, s.writes, s.is_hardware()), (Event { kind: 1, config }, None, false), "{text}");
            assert_eq!(s.name, text);
        }
    }

    #[test]
    fn rejects_other_forms_listing_the_accepted_ones() {
        for bad in ["", "cache-misses", "llc", "raw:", "raw:0xzz", "raw:0x17,0x18,0x19", "raw:0x11111111111111111", "sw:", "sw:faults", "hw:cycles"] {
            match parse_event(bad) {
                Err(CounterError::UnknownEvent { event, reason }) => {
                    assert_eq!(event, bad);
                    assert!(reason.contains("llc-misses") && reason.contains("sw:page-faults") && reason.contains("raw:"), "{reason}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    fn fake_sources(name: &str, entries: &[(&str, &str)]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("criticore-test-{}-sources-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for (dev, ty) in entries {
            fs::create_dir_all(dir.join(dev)).unwrap();
            fs::write(dir.join(dev).join("type"), format!("{ty}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn pmu_detection_by_name_and_type() {
        let none = [("breakpoint", "5"), ("msr", "9"), ("software", "1"), ("tracepoint", "2"), ("uprobe", "8")];
        type Sources<'a> = Vec<(&'a str, &'a str)>;
        let cases: [(&str, Sources, bool); 5] = [
            ("vm", none.to_vec(), false),
            ("x86", [none.as_slice(), &[("cpu", "4")]].concat(), true),
            ("arm", [none.as_slice(), &[("armv8_pmuv3_0", "10")]].concat(), true),
            ("hybrid", [none.as_slice(), &[("cpu_core", "4"), ("cpu_atom", "10")]].concat(), true),
            ("raw-type", [none.as_slice(), &[("some_core_pmu", "4")]].concat(), true),
        ];
        for (name, entries, want) in cases {
            let dir = fake_sources(name, &entries);
            assert_eq!(pmu_present_in(&dir), want, "{name}");
            fs::remove_dir_all(&dir).unwrap();
        }
        assert!(!pmu_present_in(Path::new("/nonexistent/criticore")));
    }

    #[test]
    fn ioctl_numbers_match_the_uapi_encoding() {
        // _IOW('$', 4, __u64) on x86_64/arm64 as printed by the kernel headers.
        assert_eq!(IOC_PERIOD, 0x4008_2404);
    }
}
