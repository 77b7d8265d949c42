//! SCHED_DEADLINE reservations (kernel Documentation/scheduler/sched-deadline.rst,
//! sched_setattr(2); docs/references.md, Regulation: "Linux SCHED_DEADLINE",
//! and Runtime §2).
//!
//! There is no libc wrapper for `sched_setattr`, so it is called through
//! `syscall` with a `struct sched_attr` zeroed in full and `size` = 56 (the
//! layout since Linux 4.18 with the utilisation clamps; every field we do not
//! set must be 0, and an older kernel answers a size it does not know with
//! E2BIG). Parameters are checked here first so the common mistakes get a
//! precise message instead of the kernel's bare EINVAL; EBUSY (admission
//! control) and EPERM (affinity, capability) are explained in plain words.

use std::fmt;
use std::io;

/// `SCHED_DEADLINE` policy number.
pub const SCHED_DEADLINE: i32 = 6;
/// Children of the task start as SCHED_OTHER (a DL task may fork only with it; EAGAIN otherwise).
pub const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;
/// GRUB: reclaim bandwidth other DL tasks leave unused.
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;
/// SIGXCPU when the task overruns its runtime.
pub const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;

/// The kernel's smallest runtime (2^DL_SCALE ns).
pub const MIN_RUNTIME_NS: u64 = 1024;

/// `struct sched_attr` (include/uapi/linux/sched/types.h), 56 bytes.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

const SCHED_ATTR_SIZE: u32 = 56;
const _: () = assert!(std::mem::size_of::<SchedAttr>() == SCHED_ATTR_SIZE as usize);

/// Why a reservation was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadlineErrorKind {
    /// Parameters rejected (by our checks or the kernel's EINVAL).
    Invalid,
    /// EBUSY: admission control.
    Admission,
    /// EPERM: affinity narrower than the root domain, no CAP_SYS_NICE, or a bandwidth limit of 0.
    Permission,
    /// ESRCH.
    NoSuchProcess,
    /// Anything else (the errno).
    Os(i32),
}

/// `Display` is the one line the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlineError {
    pub pid: i32,
    pub kind: DeadlineErrorKind,
    pub reason: String,
}

impl fmt::Display for DeadlineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SCHED_DEADLINE for pid {}: {}", self.pid, self.reason)
    }
}

impl std::error::Error for DeadlineError {}

fn read_sysctl(name: &str) -> Option<i64> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).ok()?.trim().parse().ok()
}

/// The per-CPU share of SCHED_DEADLINE (and RT) bandwidth admission control
/// allows: sched_rt_runtime_us / sched_rt_period_us (0.95 by default), None
/// when unlimited (runtime -1) or unreadable.
pub fn admission_limit() -> Option<f64> {
    let rt = read_sysctl("sched_rt_runtime_us")?;
    let period = read_sysctl("sched_rt_period_us")?;
    if rt < 0 || period <= 0 {
        return None;
    }
    Some(rt as f64 / period as f64)
}

/// The checks the kernel makes (`__checkparam_dl`), with our words:
/// runtime >= 1024 ns, runtime <= deadline <= period (period 0 means
/// period = deadline), below 2^63, and the period within
/// /proc/sys/kernel/sched_deadline_period_{min,max}_us.
pub fn validate(runtime_ns: u64, deadline_ns: u64, period_ns: u64) -> Result<(), String> {
    if runtime_ns < MIN_RUNTIME_NS {
        return Err(format!("runtime {runtime_ns} ns is below the kernel's minimum of {MIN_RUNTIME_NS} ns"));
    }
    if deadline_ns >> 63 != 0 || period_ns >> 63 != 0 {
        return Err("deadline and period must be below 2^63 ns".into());
    }
    if deadline_ns < runtime_ns {
        return Err(format!("runtime {runtime_ns} ns exceeds the deadline {deadline_ns} ns (need runtime <= deadline <= period)"));
    }
    if period_ns != 0 && period_ns < deadline_ns {
        return Err(format!("deadline {deadline_ns} ns exceeds the period {period_ns} ns (need runtime <= deadline <= period)"));
    }
    let period = if period_ns == 0 { deadline_ns } else { period_ns };
    if let Some(max) = read_sysctl("sched_deadline_period_max_us") {
        if period > (max.max(0) as u64).saturating_mul(1000) {
            return Err(format!("period {period} ns exceeds /proc/sys/kernel/sched_deadline_period_max_us ({max} us)"));
        }
    }
    if let Some(min) = read_sysctl("sched_deadline_period_min_us") {
        if period < (min.max(0) as u64).saturating_mul(1000) {
            return Err(format!("period {period} ns is below /proc/sys/kernel/sched_deadline_period_min_us ({min} us)"));
        }
    }
    Ok(())
}

/// Make `pid` (0 = the calling thread) a SCHED_DEADLINE task. `flags` are
/// `SCHED_FLAG_*`; `period_ns` 0 means period = deadline.
pub fn set_deadline(pid: i32, runtime_ns: u64, deadline_ns: u64, period_ns: u64, flags: u64) -> Result<(), DeadlineError> {
    validate(runtime_ns, deadline_ns, period_ns).map_err(|reason| DeadlineError { pid, kind: DeadlineErrorKind::Invalid, reason })?;
    let attr = SchedAttr {
        size: SCHED_ATTR_SIZE,
        sched_policy: SCHED_DEADLINE as u32,
        sched_flags: flags,
        sched_runtime: runtime_ns,
        sched_deadline: deadline_ns,
        sched_period: period_ns,
        ..SchedAttr::default()
    };
    // SAFETY: attr is a fully initialised sched_attr of the size we announce.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, pid as libc::c_long, &attr as *const SchedAttr, 0 as libc::c_long) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    let errno = e.raw_os_error().unwrap_or(0);
    let period = if period_ns == 0 { deadline_ns } else { period_ns };
    let (kind, reason) = match errno {
        libc::EBUSY => (DeadlineErrorKind::Admission, ebusy_reason(runtime_ns, period)),
        libc::EPERM => (DeadlineErrorKind::Permission, eperm_reason(pid)),
        libc::ESRCH => (DeadlineErrorKind::NoSuchProcess, "no such process".to_string()),
        libc::EINVAL => (
            DeadlineErrorKind::Invalid,
            format!("the kernel rejected runtime {runtime_ns} ns, deadline {deadline_ns} ns, period {period_ns} ns, flags {flags:#x} (EINVAL)"),
        ),
        libc::E2BIG => (DeadlineErrorKind::Os(errno), "this kernel does not know the 56-byte sched_attr (E2BIG; Linux 4.18 or later needed)".to_string()),
        libc::ENOSYS => (DeadlineErrorKind::Os(errno), "sched_setattr is not supported by this kernel".to_string()),
        _ => (DeadlineErrorKind::Os(errno), e.to_string()),
    };
    Err(DeadlineError { pid, kind, reason })
}

fn ebusy_reason(runtime_ns: u64, period_ns: u64) -> String {
    let asked = 100.0 * runtime_ns as f64 / period_ns.max(1) as f64;
    let limit = match admission_limit() {
        Some(l) => format!("{}%", fmt_pct(100.0 * l)),
        None => "the configured share".to_string(),
    };
    format!(
        "admission control refused: the total SCHED_DEADLINE bandwidth would exceed the limit of {limit} per CPU set by \
         /proc/sys/kernel/sched_rt_runtime_us / sched_rt_period_us (this task asks for {}% of a CPU; other deadline tasks \
         and the kernel's own deadline servers already hold part of the limit)",
        fmt_pct(asked)
    )
}

fn fmt_pct(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn eperm_reason(pid: i32) -> String {
    if read_sysctl("sched_rt_runtime_us") == Some(0) {
        return "not permitted: the SCHED_DEADLINE bandwidth limit is 0 (/proc/sys/kernel/sched_rt_runtime_us = 0)".into();
    }
    if let (Ok(mask), Some(online)) = (get_affinity(pid), online_cpus()) {
        if online.iter().any(|c| !mask.contains(c)) {
            return format!(
                "not permitted: the task's CPU affinity (cpus {}) must cover all CPUs of its root domain (cpus {}); \
                 to confine it, give it an exclusive cpuset partition instead of pinning it",
                cpu_list(&mask),
                cpu_list(&online)
            );
        }
    }
    "not permitted: setting SCHED_DEADLINE needs CAP_SYS_NICE (run as root or grant the capability), and the \
     task's CPU affinity must cover all CPUs of its root domain"
        .into()
}

/// The CPUs a task may run on (`sched_getaffinity`).
pub fn get_affinity(pid: i32) -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; the kernel fills at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect())
    }
}

/// /sys/devices/system/cpu/online ("0-3,6").
pub fn online_cpus() -> Option<Vec<usize>> {
    parse_cpu_list(std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?.trim())
}

/// "0-3,6" -> [0, 1, 2, 3, 6].
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => v.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse::<usize>().ok()?),
            None => v.push(part.trim().parse().ok()?),
        }
    }
    Some(v)
}

/// [0, 1, 2, 5] -> "0-2,5".
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    out.join(",")
}

/// The scheduling policy of `pid` (`sched_getscheduler`, without the
/// SCHED_RESET_ON_FORK bit): 0 OTHER, 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE.
pub fn get_policy(pid: i32) -> io::Result<i32> {
    // SAFETY: plain syscall.
    let p = unsafe { libc::sched_getscheduler(pid) };
    if p < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(p & !libc::SCHED_RESET_ON_FORK)
}

/// A task's deadline parameters as the kernel holds them (`sched_getattr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlineParams {
    pub policy: i32,
    pub flags: u64,
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

/// Read back policy and deadline parameters of `pid`.
pub fn get_deadline(pid: i32) -> io::Result<DeadlineParams> {
    let mut attr = SchedAttr::default();
    // SAFETY: the kernel writes at most SCHED_ATTR_SIZE bytes into attr.
    let r = unsafe {
        libc::syscall(libc::SYS_sched_getattr, pid as libc::c_long, &mut attr as *mut SchedAttr, SCHED_ATTR_SIZE as libc::c_long, 0 as libc::c_long)
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(DeadlineParams {
        policy: attr.sched_policy as i32,
        flags: attr.sched_flags,
        runtime_ns: attr.sched_runtime,
        deadline_ns: attr.sched_deadline,
        period_ns: attr.sched_period,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_before_the_syscall() {
        assert!(validate(1000, 1_000_000, 1_000_000).unwrap_err().contains("minimum of 1024"));
        assert!(validate(2_000_000, 1_000_000, 10_000_000).unwrap_err().contains("exceeds the deadline"));
        assert!(validate(1_000_000, 20_000_000, 10_000_000).unwrap_err().contains("exceeds the period"));
        assert!(validate(1_000_000, 10_000_000, 0).is_ok());
        assert!(validate(1_000_000, 10_000_000, 10_000_000).is_ok());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(fmt_pct(95.0), "95");
        assert_eq!(fmt_pct(12.5), "12.5");
    }
}
