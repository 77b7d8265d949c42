//! SignalThrottler against children this test starts: stop -> state T,
//! resume -> not T, resume_all, and the refusals of `add`.

mod throttle_common;

use criticore_rt::os::throttle::signal::SignalThrottler;
use criticore_rt::os::throttle::Throttler;
use throttle_common::*;

#[test]
fn stop_and_resume_a_group() {
    let a = Kid::busy();
    let b = Kid::sleeper();
    let mut t = SignalThrottler::new();
    t.add(0, a.pid).unwrap();
    t.add(1, b.pid).unwrap();
    assert_eq!(t.undo_list().pids, vec![a.pid, b.pid]);

    t.stop(0).unwrap();
    assert!(t.is_stopped(0) && !t.is_stopped(1));
    assert!(wait_state(a.pid, WAIT, |s| s == 'T').is_some(), "group 0 not stopped: {:?}", proc_state(a.pid));
    assert_ne!(proc_state(b.pid), Some('T'), "group 1 must not be stopped");

    t.resume(0).unwrap();
    assert!(!t.is_stopped(0));
    assert!(wait_state(a.pid, WAIT, |s| s != 'T').is_some(), "group 0 not resumed");
}

#[test]
fn resume_all_and_drop_resume_everything() {
    let a = Kid::busy();
    let b = Kid::sleeper();
    let mut t = SignalThrottler::new();
    t.add(0, a.pid).unwrap();
    t.add(1, b.pid).unwrap();
    t.stop(0).unwrap();
    t.stop(1).unwrap();
    assert!(wait_state(a.pid, WAIT, |s| s == 'T').is_some());
    assert!(wait_state(b.pid, WAIT, |s| s == 'T').is_some());
    t.resume_all();
    assert!(wait_state(a.pid, WAIT, |s| s != 'T').is_some());
    assert!(wait_state(b.pid, WAIT, |s| s != 'T').is_some());
    assert!(t.undo_list().pids.is_empty(), "resume_all forgets the groups");

    let mut t = SignalThrottler::new();
    t.add(0, a.pid).unwrap();
    t.stop(0).unwrap();
    assert!(wait_state(a.pid, WAIT, |s| s == 'T').is_some());
    drop(t);
    assert!(wait_state(a.pid, WAIT, |s| s != 'T').is_some(), "drop must resume");
}

#[test]
fn adding_to_a_stopped_group_stops_the_process() {
    let a = Kid::sleeper();
    let b = Kid::sleeper();
    let mut t = SignalThrottler::new();
    t.add(0, a.pid).unwrap();
    t.stop(0).unwrap();
    t.add(0, b.pid).unwrap();
    assert!(wait_state(b.pid, WAIT, |s| s == 'T').is_some());
    t.resume_all();
    assert!(wait_state(b.pid, WAIT, |s| s != 'T').is_some());
}

#[test]
fn a_member_that_exited_is_dropped_not_an_error() {
    let mut k = Kid::sleeper();
    let mut t = SignalThrottler::new();
    t.add(0, k.pid).unwrap();
    k.child.kill().unwrap();
    k.child.wait().unwrap();
    t.stop(0).unwrap();
    t.resume(0).unwrap();
    assert!(t.pids(0).is_empty());
}

#[test]
fn refusals() {
    let mut t = SignalThrottler::new();
    let p = free_pid();
    let e = t.add(0, p).unwrap_err();
    assert_eq!(e.to_string(), format!("pid {p}: no such process"));

    let me = std::process::id() as i32;
    let e = t.add(0, me).unwrap_err();
    assert_eq!(e.what, format!("pid {me}"));
    assert!(e.reason.contains("regulator itself"), "{e}");

    // SAFETY: cannot fail.
    let parent = unsafe { libc::getppid() };
    let e = t.add(0, parent).unwrap_err();
    assert!(e.reason.contains("parent"), "{e}");

    let k = Kid::sleeper();
    t.add(0, k.pid).unwrap();
    t.add(0, k.pid).unwrap(); // same group again: fine
    let e = t.add(1, k.pid).unwrap_err();
    assert_eq!(e.reason, "already in group 0");

    let e = t.stop(7).unwrap_err();
    assert!(e.to_string().starts_with("group 7: no such group"), "{e}");
    assert!(t.undo_list().pids == vec![k.pid]);
}

#[test]
fn init_is_refused() {
    let mut t = SignalThrottler::new();
    let e = t.add(0, 1).unwrap_err();
    assert!(e.reason.contains("init"), "{e}");
    assert!(t.add(0, 0).is_err() && t.add(0, -5).is_err());
}
