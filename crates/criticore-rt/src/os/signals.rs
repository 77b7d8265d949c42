//! The signals a regulation loop waits for, and the wait itself: one thread
//! blocks them and takes them with `sigtimedwait`, with a timeout at its next
//! deadline (a period boundary, a poll, a sample).

use super::clock::now_ns;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT or SIGTERM caught in any thread while [`StopHandlers`] live.
static STOP: AtomicBool = AtomicBool::new(false);

/// The signals a regulation loop waits for: `sig` (overflows, job ends),
/// SIGIO, SIGINT, SIGTERM, SIGCHLD; `sig` and SIGIO get a no-op handler.
pub fn signal_set(sig: i32) -> libc::sigset_t {
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        for s in [sig, libc::SIGIO, libc::SIGINT, libc::SIGTERM, libc::SIGCHLD] {
            libc::sigaddset(&mut set, s);
        }
    }
    // A thread that does not block the overflow signal must not die of it
    // (a real-time signal's default action is to terminate): give it a no-op handler.
    extern "C" fn ignore(_: i32) {}
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = ignore as extern "C" fn(i32) as usize;
        libc::sigaction(sig, &action, std::ptr::null_mut());
        // fcntl(2): when the real-time queue is full the kernel sends SIGIO instead.
        libc::sigaction(libc::SIGIO, &action, std::ptr::null_mut());
        // SIGCHLD only for children that end: stopping and continuing them
        // must not wake the loop again (it halves the wake-ups when throttling).
        let mut chld: libc::sigaction = std::mem::zeroed();
        chld.sa_sigaction = ignore as extern "C" fn(i32) as usize;
        chld.sa_flags = libc::SA_NOCLDSTOP;
        libc::sigaction(libc::SIGCHLD, &chld, std::ptr::null_mut());
    }
    set
}

/// Wait for a signal of `set` until the monotonic time `wake`; the signal or -1.
pub fn wait_info(set: &libc::sigset_t, wake: u64, info: &mut libc::siginfo_t) -> i32 {
    let wait = wake.saturating_sub(now_ns());
    let ts = libc::timespec { tv_sec: (wait / 1_000_000_000) as i64, tv_nsec: (wait % 1_000_000_000) as i64 };
    unsafe { libc::sigtimedwait(set, info, &ts) }
}

pub fn wait(set: &libc::sigset_t, wake: u64) -> i32 {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    wait_info(set, wake, &mut info)
}

/// `set` blocked in this thread while it lives; the old mask back on drop.
pub struct Blocked {
    old: libc::sigset_t,
}

impl Blocked {
    pub fn new(set: &libc::sigset_t) -> Self {
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, set, &mut old) };
        Blocked { old }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// SIGINT and SIGTERM caught in every thread of the process while this
/// lives, the old handlers back on drop. A process-directed signal goes to
/// any thread that does not block it: the thread that blocks it and waits
/// in `sigtimedwait` never sees one delivered to another (an interpreter's
/// or a library's helper thread), so the handler leaves a flag it reads
/// with [`take_stop`].
pub struct StopHandlers {
    old: [libc::sigaction; 2],
}

const STOPS: [i32; 2] = [libc::SIGINT, libc::SIGTERM];

impl StopHandlers {
    pub fn install() -> Self {
        extern "C" fn caught(_: i32) {
            STOP.store(true, Ordering::SeqCst);
        }
        STOP.store(false, Ordering::SeqCst);
        let mut old: [libc::sigaction; 2] = unsafe { std::mem::zeroed() };
        for (sig, old) in STOPS.iter().zip(old.iter_mut()) {
            // SAFETY: the handler only stores to an atomic (async-signal-safe).
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = caught as extern "C" fn(i32) as usize;
                libc::sigaction(*sig, &action, old);
            }
        }
        StopHandlers { old }
    }
}

impl Drop for StopHandlers {
    fn drop(&mut self) {
        for (sig, old) in STOPS.iter().zip(self.old.iter()) {
            // SAFETY: restores the action saved by `install`.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// Whether a SIGINT or SIGTERM was caught by [`StopHandlers`] since the last call.
pub fn take_stop() -> bool {
    STOP.swap(false, Ordering::SeqCst)
}
