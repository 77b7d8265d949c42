//! perf_event counters through one code path: hardware PMU events per CPU or
//! per task (LLC misses by default; raw events, reads and write-backs counted
//! separately like MemGuard) and kernel software events (page faults, …),
//! which exist on every machine, so this path runs even without a PMU.
//!
//! Overflow: a counter armed with n events left gets `sample_period = n`
//! (MemGuard's `sample_period = budget`, notes/runtime-anchors.md §1); the
//! overflow is delivered as a queued real-time signal to the arming thread
//! (`F_SETOWN_EX` + `F_SETSIG`, §2: real-time signals queue instead of
//! coalescing) and names the event's fd in `si_fd`.

use super::{overflow_signal, Counter, CounterError, Counts, Notification};
use std::path::Path;

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_TYPE_HW_CACHE: u32 = 3;
const PERF_TYPE_RAW: u32 = 4;
// Cache event: LL (2) | op << 8 | result << 16; op read 0, write 1; result miss 1.
const LL_READ_MISS: u64 = 2 | (1 << 16);
const LL_WRITE_MISS: u64 = 2 | (1 << 8) | (1 << 16);
const PERF_EVENT_IOC_ENABLE: u64 = 0x2400;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
// fcntl(2), Linux values (not in every libc binding).
const F_SETSIG: i32 = 10;
const F_SETOWN_EX: i32 = 15;
const PERF_EVENT_IOC_PERIOD: u64 = 0x4008_2404;
/// A period no workload reaches: "no more overflows this period" (MemGuard's 0xfffffff idea).
const NEVER: u64 = 1 << 62;

/// What to count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    pub text: String,
    /// (type, config) of the read event and of the optional write-back event.
    pub read: (u32, u64),
    pub write: Option<(u32, u64)>,
}

impl EventSpec {
    fn hardware(&self) -> bool {
        self.read.0 != PERF_TYPE_SOFTWARE
    }
}

const SOFTWARE: [(&str, u64); 6] =
    [("cpu-clock", 0), ("task-clock", 1), ("page-faults", 2), ("context-switches", 3), ("minor-faults", 5), ("major-faults", 6)];

pub fn parse_event(text: &str) -> Result<EventSpec, CounterError> {
    let unknown = |reason: &str| CounterError::UnknownEvent {
        event: text.to_string(),
        reason: format!("{reason} (expected llc-misses, raw:R or raw:R,W in hex, or sw:page-faults, sw:minor-faults, sw:major-faults, sw:context-switches, sw:cpu-clock, sw:task-clock)"),
    };
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).map_err(|_| unknown("not a hexadecimal event number"));
    if text == "llc-misses" {
        return Ok(EventSpec { text: text.into(), read: (PERF_TYPE_HW_CACHE, LL_READ_MISS), write: Some((PERF_TYPE_HW_CACHE, LL_WRITE_MISS)) });
    }
    if let Some(raw) = text.strip_prefix("raw:") {
        let mut parts = raw.split(',');
        let read = hex(parts.next().unwrap_or(""))?;
        let write = parts.next().map(hex).transpose()?;
        if parts.next().is_some() {
            return Err(unknown("at most two raw events"));
        }
        return Ok(EventSpec { text: text.into(), read: (PERF_TYPE_RAW, read), write: write.map(|w| (PERF_TYPE_RAW, w)) });
    }
    if let Some(name) = text.strip_prefix("sw:") {
        let config = SOFTWARE.iter().find(|(n, _)| *n == name).map(|(_, c)| *c).ok_or_else(|| unknown("unknown software event"))?;
        return Ok(EventSpec { text: text.into(), read: (PERF_TYPE_SOFTWARE, config), write: None });
    }
    Err(unknown("unknown event"))
}

/// A hardware PMU exists: an event source whose type is PERF_TYPE_RAW (the
/// `cpu` device on x86, `armv8_pmuv3*` and the like on ARM).
pub fn pmu_present() -> bool {
    let Ok(dir) = std::fs::read_dir("/sys/bus/event_source/devices") else { return false };
    dir.flatten().any(|d| std::fs::read_to_string(d.path().join("type")).is_ok_and(|t| t.trim() == "4"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Everything on one CPU (MemGuard's per-core counters).
    Cpu(usize),
    /// One process and the threads it creates.
    Task(i32),
}

pub struct PerfCounter {
    fds: Vec<i32>,
    describe: String,
    notify: bool,
}

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
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    _reserved: u16,
    aux_sample_size: u32,
    _reserved3: u32,
    sig_data: u64,
    config3: u64,
}

// attr.flags bits (perf_event_attr bitfield order).
const DISABLED: u64 = 1 << 0;
const INHERIT: u64 = 1 << 1;
const PINNED: u64 = 1 << 2;
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;

fn open_one(spec: &EventSpec, event: (u32, u64), target: Target, notify: bool) -> Result<i32, CounterError> {
    let hardware = spec.hardware();
    let mut attr = Attr { kind: event.0, size: std::mem::size_of::<Attr>() as u32, config: event.1, ..Default::default() };
    attr.flags = DISABLED | EXCLUDE_HV;
    if hardware {
        // User traffic only, like MemGuard; pinned so a PMU conflict shows as an error state.
        attr.flags |= EXCLUDE_KERNEL | PINNED;
    }
    if matches!(target, Target::Task(_)) {
        attr.flags |= INHERIT;
    }
    if notify {
        attr.sample_period = NEVER;
        attr.wakeup_events = 1;
    }
    let (pid, cpu) = match target {
        Target::Cpu(c) => (-1, c as i32),
        Target::Task(p) => (p, -1),
    };
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, &attr as *const Attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC) } as i32;
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let errno = e.raw_os_error().unwrap_or(0);
        return Err(match errno {
            _ if hardware && !pmu_present() => CounterError::NoPmu { fallback: "--counter shm (instrumented programs) or --counter sw:page-faults".into() },
            libc::ENOENT | libc::EINVAL | libc::EOPNOTSUPP => CounterError::UnknownEvent { event: spec.text.clone(), reason: format!("the kernel refused it ({e})") },
            libc::EACCES | libc::EPERM => CounterError::Permission {
                event: spec.text.clone(),
                reason: format!("{e}; run as root or lower /proc/sys/kernel/perf_event_paranoid"),
            },
            libc::ESRCH => CounterError::Os { what: format!("pid {pid}"), reason: "no such process".into() },
            _ => CounterError::Os { what: format!("perf_event_open {}", spec.text), reason: e.to_string() },
        });
    }
    if notify {
        // Deliver overflows to this thread as a queued real-time signal naming the fd.
        #[repr(C)]
        struct Owner {
            kind: i32,
            pid: i32,
        }
        let owner = Owner { kind: 0 /* F_OWNER_TID */, pid: unsafe { libc::gettid() } };
        unsafe {
            libc::fcntl(fd, F_SETOWN_EX, &owner as *const Owner);
            libc::fcntl(fd, F_SETSIG, overflow_signal());
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_ASYNC | libc::O_NONBLOCK);
        }
    }
    unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ENABLE as _, 0) };
    Ok(fd)
}

pub fn open(spec: &EventSpec, target: Target, notify: bool) -> Result<PerfCounter, CounterError> {
    if spec.hardware() && !pmu_present() && !Path::new("/sys/bus/event_source/devices/cpu").exists() {
        return Err(CounterError::NoPmu { fallback: "--counter shm (instrumented programs) or --counter sw:page-faults".into() });
    }
    let mut fds = vec![open_one(spec, spec.read, target, notify)?];
    let mut describe = format!("perf {} ({})", spec.text, if spec.hardware() { "hardware" } else { "software" });
    if let Some(w) = spec.write {
        match open_one(spec, w, target, notify) {
            Ok(fd) => fds.push(fd),
            Err(_) => describe.push_str(", reads only: this CPU does not count write-backs"),
        }
    }
    describe.push_str(&match target {
        Target::Cpu(c) => format!(", cpu {c}"),
        Target::Task(p) => format!(", pid {p}"),
    });
    Ok(PerfCounter { fds, describe, notify })
}

impl Counter for PerfCounter {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn read(&mut self) -> Result<Counts, CounterError> {
        let mut values = [0u64; 2];
        for (i, &fd) in self.fds.iter().enumerate() {
            let mut v = 0u64;
            let n = unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
            if n == 0 {
                // notes/runtime-anchors.md §2: a pinned event that cannot be scheduled reads 0 bytes.
                return Err(CounterError::PinnedError { event: self.describe.clone() });
            }
            if n < 0 {
                return Err(CounterError::Os { what: self.describe.clone(), reason: std::io::Error::last_os_error().to_string() });
            }
            values[i] = v;
        }
        Ok(Counts { reads: values[0], writes: values[1] })
    }

    /// Each event gets the whole `after` as its period: with two events the
    /// first to overflow notifies early (conservative); the regulator re-reads
    /// and re-arms.
    fn arm(&mut self, after: Option<u64>) -> Result<bool, CounterError> {
        if !self.notify {
            return Ok(false);
        }
        let period = after.unwrap_or(NEVER).max(1);
        for &fd in &self.fds {
            // Since 3.14 the new period applies at once: the next overflow comes after `period` more events.
            unsafe { libc::ioctl(fd, PERF_EVENT_IOC_PERIOD as _, &period as *const u64) };
        }
        Ok(true)
    }

    fn notification(&self) -> Option<Notification> {
        self.notify.then(|| Notification::Fd { signal: overflow_signal(), fd: self.fds[0] })
    }
}

impl Drop for PerfCounter {
    fn drop(&mut self) {
        for &fd in &self.fds {
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_forms() {
        assert_eq!(parse_event("raw:0x17,0x18").unwrap().write, Some((PERF_TYPE_RAW, 0x18)));
        assert_eq!(parse_event("sw:page-faults").unwrap().read, (PERF_TYPE_SOFTWARE, 2));
        assert!(parse_event("llc-misses").unwrap().hardware());
        for bad in ["sw:nope", "raw:xyz", "raw:1,2,3", "cache-misses"] {
            assert!(matches!(parse_event(bad), Err(CounterError::UnknownEvent { .. })), "{bad}");
        }
    }

    #[test]
    fn hardware_events_without_a_pmu_name_the_fallback() {
        let r = open(&parse_event("llc-misses").unwrap(), Target::Task(std::process::id() as i32), false);
        if pmu_present() {
            assert!(r.is_ok());
        } else {
            let e = r.err().unwrap();
            assert!(matches!(e, CounterError::NoPmu { .. }));
            assert!(e.to_string().contains("--counter sw:page-faults"));
        }
    }

    #[test]
    fn software_page_faults_count_fresh_pages() {
        // Count this thread's faults while touching 256 fresh pages.
        let mut c = open(&parse_event("sw:page-faults").unwrap(), Target::Task(0), false).unwrap();
        let before = c.read().unwrap().reads;
        let pages = 256;
        let p = unsafe { libc::mmap(std::ptr::null_mut(), pages * 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        unsafe { libc::madvise(p, pages * 4096, libc::MADV_NOHUGEPAGE) };
        for i in 0..pages {
            unsafe { std::ptr::write_volatile((p as *mut u8).add(i * 4096), 1) };
        }
        let delta = c.read().unwrap().reads - before;
        unsafe { libc::munmap(p, pages * 4096) };
        // One fault per fresh page, plus a few from the test harness itself.
        assert!(delta >= pages as u64 && delta < pages as u64 + 64, "{delta}");
    }
}
