//! A Ctrl-C that lands in another thread of the process still stops a
//! session (`os::signals::StopHandlers`). Its own test binary: the flag is
//! process-wide, and a test sending itself SIGTERM must not reach another
//! test's loop running in the same process.

use criticore_rt::os::signals::{take_stop, wait, Blocked, StopHandlers};

fn set_of(sigs: &[i32]) -> libc::sigset_t {
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        for &s in sigs {
            libc::sigaddset(&mut set, s);
        }
    }
    set
}

// One test: the handlers and the flag are the process's, so two tests
// running at once would see each other's.
#[test]
fn a_stop_signal_caught_in_another_thread_is_taken_once_and_the_old_handlers_come_back() {
    extern "C" fn mine(_: i32) {}
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = mine as extern "C" fn(i32) as usize;
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
    let stops = set_of(&[libc::SIGINT, libc::SIGTERM]);
    let handlers = StopHandlers::install();
    let _blocked = Blocked::new(&stops);
    // A thread that does not block them, and a SIGTERM sent to it alone.
    let (tx, rx) = std::sync::mpsc::channel();
    let other = std::thread::spawn(move || {
        let unblock = set_of(&[libc::SIGINT, libc::SIGTERM]);
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &unblock, std::ptr::null_mut()) };
        tx.send(unsafe { libc::pthread_self() }).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
    });
    let thread = rx.recv().unwrap();
    unsafe { libc::pthread_kill(thread, libc::SIGTERM) };
    other.join().unwrap();
    // This thread's own wait never saw it; the flag did, once.
    assert_eq!(wait(&stops, 0), -1);
    assert!(take_stop());
    assert!(!take_stop());
    // Dropped: the handler from before is back.
    drop(handlers);
    let mut now: libc::sigaction = unsafe { std::mem::zeroed() };
    unsafe { libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut now) };
    assert_eq!(now.sa_sigaction, mine as extern "C" fn(i32) as usize);
}
