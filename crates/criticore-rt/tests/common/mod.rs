//! Helpers shared by the integration tests that take overflow signals
//! (counter_sources.rs, c_header.rs): the signal blocked before `main` in
//! every thread, one lock so that a process-directed signal is never taken
//! by another test, and bounded waits.
#![allow(dead_code)]

use criticore_rt::os::counter::overflow_signal;
use std::sync::Mutex;
use std::time::Duration;

extern "C" fn block_overflow_signal() {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGRTMIN() + 3);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[used]
#[link_section = ".init_array"]
pub static BLOCK_EARLY: extern "C" fn() = block_overflow_signal;

static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn sigset() -> libc::sigset_t {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, overflow_signal());
        set
    }
}

/// Block the signal in this thread too (no-op if the constructor ran) and
/// check that every thread of the process blocks it, so a process-directed
/// signal cannot kill the test binary.
pub fn ensure_blocked() {
    let set = sigset();
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    let bit = 1u64 << (overflow_signal() - 1);
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue }; // thread just exited
        let blk = status.lines().find_map(|l| l.strip_prefix("SigBlk:")).unwrap().trim();
        let mask = u64::from_str_radix(blk, 16).unwrap();
        assert!(mask & bit != 0, "thread {:?} does not block the overflow signal", task.file_name());
    }
}

/// Wait at most `wait` for one overflow signal.
pub fn take_signal(wait: Duration) -> Option<libc::siginfo_t> {
    let set = sigset();
    let ts = libc::timespec { tv_sec: wait.as_secs() as libc::time_t, tv_nsec: wait.subsec_nanos() as libc::c_long };
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::sigtimedwait(&set, &mut info, &ts) };
        if r == overflow_signal() {
            return Some(info);
        }
        let e = std::io::Error::last_os_error().raw_os_error();
        if e == Some(libc::EINTR) {
            continue;
        }
        assert_eq!(e, Some(libc::EAGAIN), "sigtimedwait");
        return None;
    }
}
