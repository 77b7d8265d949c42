//! Clocks: the monotonic time every loop and counter page uses, and the CPU
//! time of a thread or a process.

/// CLOCK_MONOTONIC in ns: the time base of the loops and of the counter page
/// (the C header and the Python API read the same clock).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time of the calling thread.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// User + system CPU time of a process, from /proc (None if gone).
pub fn process_cpu_ns(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may contain spaces: utime is field 14.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(ticks * 1_000_000_000 / hz)
}

/// The shortest period or interval a regulation loop may be given: the
/// median lateness of its timer wake-ups (below it, most periods would
/// begin only after they should have ended), and never below
/// [`MIN_PERIOD_NS`]. Not more: the regulator is measured at 50 µs
/// (benches/regulator_cpu.py), where its median lateness is 19–34 µs here.
pub fn period_floor_ns(median_lateness_ns: u64) -> u64 {
    median_lateness_ns.max(MIN_PERIOD_NS)
}

/// No user-space loop acts within less (a signal and a wake-up alone take
/// about that on the development VM, docs/references.md, Runtime §2).
pub const MIN_PERIOD_NS: u64 = 10_000;

/// Wake-ups measured for [`timer_lateness_ns`], and the sleep before each.
pub const LATENESS_SAMPLES: usize = 31;
pub const LATENESS_SLEEP_NS: u64 = 50_000;

/// The median lateness of [`LATENESS_SAMPLES`] timer wake-ups
/// ([`LATENESS_SLEEP_NS`] absolute sleeps on CLOCK_MONOTONIC) in a thread
/// of its own that runs as the regulation loop will: at SCHED_FIFO `fifo`
/// with 1 ns timer slack when given, on `cpu` when given. About 2 ms.
pub fn timer_lateness_ns(fifo: Option<u8>, cpu: Option<usize>) -> u64 {
    let probe = std::thread::spawn(move || {
        if let Some(c) = cpu {
            let _ = crate::os::launch::pin_current_thread(&[c]);
        }
        if let Some(p) = fifo {
            let param = libc::sched_param { sched_priority: p as i32 };
            // SAFETY: this thread's own policy and slack; it ends below.
            unsafe {
                libc::sched_setscheduler(0, libc::SCHED_FIFO, &param);
                libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
            }
        }
        let mut late = Vec::with_capacity(LATENESS_SAMPLES);
        for _ in 0..LATENESS_SAMPLES {
            let wake = now_ns() + LATENESS_SLEEP_NS;
            let ts = libc::timespec { tv_sec: (wake / 1_000_000_000) as i64, tv_nsec: (wake % 1_000_000_000) as i64 };
            // SAFETY: an absolute sleep on a valid timespec.
            while unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) } == libc::EINTR {}
            late.push(now_ns().saturating_sub(wake));
        }
        late.sort_unstable();
        late[late.len() / 2]
    });
    probe.join().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_the_median_lateness_and_at_least_10_us() {
        assert_eq!(period_floor_ns(0), 10_000);
        assert_eq!(period_floor_ns(9_999), 10_000);
        assert_eq!(period_floor_ns(34_225), 34_225);
        assert_eq!(period_floor_ns(u64::MAX), u64::MAX);
    }

    #[test]
    fn process_cpu_time_of_a_busy_self_grows() {
        let pid = std::process::id() as i32;
        let before = process_cpu_ns(pid).unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 60 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(process_cpu_ns(pid).unwrap() > before);
        assert_eq!(process_cpu_ns(i32::MAX), None);
    }
}
