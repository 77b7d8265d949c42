//! Counter sources against the real kernel: perf_event software counters,
//! overflow signals, PMU detection, and counter-page signals.
//!
//! Signals: overflow_signal() is a real-time signal whose default action
//! terminates the process. It is blocked in the main thread before `main`
//! (an `.init_array` constructor), so every test thread libtest starts
//! inherits the mask; perf signals go to the test's own thread (F_OWNER_TID),
//! counter-page signals to the process (sigqueue), and the waiting test takes
//! them with sigtimedwait. The tests hold one lock so that a process-directed
//! signal is never taken by another test. Every wait is bounded.

use criticore_rt::os::counter::perf::{self, parse_event, Event, EventSpec, Target, PERF_TYPE_SOFTWARE};
use criticore_rt::os::counter::shm::{self, ShmCounter};
use criticore_rt::os::counter::{overflow_signal, Counter, CounterError, Notification};
use criticore_rt::os::counter_page::{CounterPage, EventKind};
use std::time::Duration;

mod common;
use common::{ensure_blocked, serial, take_signal};


/// All signals that arrive within `quiet` of each other (after the first within `first`).
fn take_all(first: Duration, quiet: Duration) -> Vec<libc::siginfo_t> {
    let mut out = Vec::new();
    let mut wait = first;
    while let Some(i) = take_signal(wait) {
        out.push(i);
        wait = quiet;
    }
    out
}

fn drain() {
    while take_signal(Duration::ZERO).is_some() {}
}

const PAGE: usize = 4096;

/// Touch `k` fresh anonymous pages, one write each: k page faults (THP, also
/// multi-size THP, off for the range so one fault maps one page).
fn touch_pages(k: usize) {
    if k == 0 {
        return;
    }
    unsafe {
        let len = k * PAGE;
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        assert_ne!(p, libc::MAP_FAILED);
        assert_eq!(libc::madvise(p, len, libc::MADV_NOHUGEPAGE), 0);
        let p = p as *mut u8;
        for i in 0..k {
            std::ptr::write_volatile(p.add(i * PAGE), 1);
        }
        libc::munmap(p as *mut libc::c_void, len);
    }
}

fn gettid() -> i32 {
    unsafe { libc::gettid() }
}

fn page_faults() -> EventSpec {
    parse_event("sw:page-faults").unwrap()
}

/// Faults between two reads of a warmed-up counter on this thread, beyond the
/// pages touched: the code and stack between the reads were used by the
/// warm-up already, so nothing else should fault; 4 allows for a page of
/// text, data or stack the warm-up did not reach (e.g. a branch not taken).
const OWN_SLACK: u64 = 4;

#[test]
fn page_faults_of_this_thread_are_counted() {
    let _g = serial();
    let mut c = perf::open(&page_faults(), Target::Task(gettid()), false).unwrap();
    assert!(c.describe().contains("sw:page-faults") && c.describe().contains("polled"), "{}", c.describe());
    assert!(!c.arm(Some(10)).unwrap(), "opened without notification");
    assert_eq!(c.notification(), None);
    for k in [0usize, 1, 512] {
        touch_pages(3); // warm-up: same code path
        let before = c.read().unwrap();
        touch_pages(k);
        let after = c.read().unwrap();
        let delta = after.reads - before.reads;
        assert!(k as u64 <= delta && delta <= k as u64 + OWN_SLACK, "touched {k} pages, counted {delta} faults");
        assert_eq!(after.writes, 0);
    }
    // Software events are never multiplexed (no counter limit).
    assert!(!c.multiplexed());
}

#[test]
fn page_faults_on_one_cpu_include_this_thread_pinned_there() {
    let _g = serial();
    let mut c = perf::open(&page_faults(), Target::Cpu(0), false).unwrap();
    assert!(c.describe().contains("cpu 0"), "{}", c.describe());
    // Pin this thread to CPU 0, touch K pages, restore the mask. Other tasks
    // on CPU 0 fault too, so only the lower bound is known.
    const K: usize = 200;
    let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut old) }, 0);
    let mut only0: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(0, &mut only0) };
    assert_eq!(unsafe { libc::sched_setaffinity(0, size, &only0) }, 0);
    let before = c.read().unwrap().reads;
    touch_pages(K);
    let after = c.read().unwrap().reads;
    assert_eq!(unsafe { libc::sched_setaffinity(0, size, &old) }, 0);
    assert!(after - before >= K as u64, "{} faults on cpu 0", after - before);
}

#[test]
fn page_faults_of_a_thread_started_later_are_inherited() {
    let _g = serial();
    let mut c = perf::open(&page_faults(), Target::Task(gettid()), false).unwrap();
    // A thread that touches nothing: what starting and joining a thread costs.
    let t0 = c.read().unwrap().reads;
    std::thread::spawn(|| touch_pages(0)).join().unwrap();
    let idle = c.read().unwrap().reads - t0;
    const K: usize = 300;
    let t1 = c.read().unwrap().reads;
    std::thread::spawn(|| touch_pages(K)).join().unwrap();
    let busy = c.read().unwrap().reads - t1;
    // The second thread reuses what the first set up (stack cache, malloc
    // arena), so it faults at most as much for its start as the idle one did;
    // OWN_SLACK for pages its code path touches that the idle one's did not.
    assert!(K as u64 <= busy && busy <= K as u64 + idle + OWN_SLACK, "thread touched {K} pages: counted {busy} (an idle thread: {idle})");
}

fn assert_from_counter(info: &libc::siginfo_t, fd: i32) {
    assert_eq!(info.si_signo, overflow_signal());
    assert_eq!(info.si_code, 1, "overflow signal code POLL_IN (siginfo.h)");
    assert_eq!(perf::siginfo_fd(info), fd, "si_fd names the counter");
}

#[test]
fn overflow_signals_once_after_n_events_and_rearms() {
    let _g = serial();
    ensure_blocked();
    let mut c = perf::open(&page_faults(), Target::Task(gettid()), true).unwrap();
    let Some(Notification::Fd { signal, fd }) = c.notification() else { panic!("{:?}", c.notification()) };
    assert_eq!(signal, overflow_signal());
    drain();
    const N: u64 = 64;
    // touched pages after arming -> signals expected: floor(faults / N),
    // faults counted independently by reading the counter.
    for (round, touched) in [(1, N as usize + 16), (2, N as usize + 40), (3, N as usize - 1)] {
        touch_pages(2); // warm-up
        assert!(c.arm(Some(N)).unwrap());
        let c0 = c.read().unwrap().reads;
        touch_pages(touched);
        let faults = c.read().unwrap().reads - c0;
        assert!(faults >= touched as u64 && faults <= touched as u64 + OWN_SLACK, "round {round}: {faults}");
        let got = take_all(Duration::from_secs(if faults >= N { 5 } else { 0 }), Duration::from_millis(200));
        assert_eq!(got.len() as u64, faults / N, "round {round}: {faults} faults after arming with {N}");
        for i in &got {
            assert_from_counter(i, fd);
        }
        if faults < N {
            // The remaining events up to N bring exactly one.
            touch_pages((N - faults) as usize);
            let got = take_all(Duration::from_secs(5), Duration::from_millis(200));
            assert_eq!(got.len(), 1, "round {round}: the N-th event");
            assert_from_counter(&got[0], fd);
        }
    }
    // Disarmed: no signal within a bounded wait.
    assert!(c.arm(None).unwrap());
    touch_pages(3 * N as usize);
    assert!(take_signal(Duration::from_millis(300)).is_none(), "signal after arm(None)");
    drop(c);
    drain();
}

/// The end-to-end reaction's start on a perf counter: the overflow's own
/// time, from the sample the kernel writes in the event's ring (perf_ring.rs),
/// on CLOCK_MONOTONIC: after the arming and before the signal is taken, and
/// the latest of several overflows.
#[test]
fn an_overflow_time_is_read_from_the_ring_on_the_monotonic_clock() {
    let _g = serial();
    ensure_blocked();
    let now = || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let mut c = perf::open(&page_faults(), Target::Task(gettid()), true).unwrap();
    drain();
    assert_eq!(c.crossed_ns(), None, "no overflow yet");
    const N: u64 = 16;
    touch_pages(2);
    let armed = now();
    assert!(c.arm(Some(N)).unwrap());
    touch_pages(N as usize + 4);
    let got = take_all(Duration::from_secs(5), Duration::from_millis(100));
    let taken = now();
    assert_eq!(got.len(), 1);
    let first = c.crossed_ns().unwrap_or_else(|| panic!("the overflow's time: {}", c.describe()));
    assert!(armed < first && first < taken, "armed {armed}, overflow {first}, signal taken {taken}");
    // Three more overflows: the latest is reported.
    touch_pages(3 * N as usize);
    let got = take_all(Duration::from_secs(5), Duration::from_millis(100));
    let later = now();
    assert!(!got.is_empty());
    let last = c.crossed_ns().unwrap();
    assert!(first < last && last < later, "first {first}, last {last}, now {later}");
    drop(c);
    drain();
}

/// A thread started while the counter is armed keeps the period of that
/// moment (its inherited copy is out of reach of re-arming): armed at 1, its
/// every fault signals, even after the parent is re-armed far away. `mute`
/// silences every copy while the count goes on; the regulator mutes and polls
/// a group whose counter signals before the armed count (regulator.rs).
#[test]
fn a_thread_started_while_armed_keeps_its_period_until_muted() {
    let _g = serial();
    ensure_blocked();
    let mut c = perf::open(&page_faults(), Target::Task(gettid()), true).unwrap();
    let Some(Notification::Fd { fd, .. }) = c.notification() else { panic!() };
    drain();
    assert!(c.arm(Some(1)).unwrap());
    let (go_tx, go_rx) = std::sync::mpsc::channel::<usize>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        while let Ok(k) = go_rx.recv() {
            if k == 0 {
                break;
            }
            touch_pages(k);
            done_tx.send(()).unwrap();
        }
    });
    std::thread::sleep(Duration::from_millis(20));
    assert!(c.arm(Some(1_000_000)).unwrap());
    drain();
    let c0 = c.read().unwrap().reads;
    go_tx.send(40).unwrap();
    done_rx.recv().unwrap();
    let counted = c.read().unwrap().reads - c0;
    let got = take_all(Duration::from_secs(5), Duration::from_millis(200));
    assert!(counted >= 40, "{counted}");
    // One per fault of the worker, give or take the faults of its own stack and code.
    assert!(got.len() >= 40 && got.len() as u64 <= counted, "{} signals for {counted} faults", got.len());
    for i in &got {
        assert_from_counter(i, fd);
    }
    c.mute().unwrap();
    assert_eq!(c.notification(), None);
    let c1 = c.read().unwrap().reads;
    go_tx.send(40).unwrap();
    done_rx.recv().unwrap();
    assert!(c.read().unwrap().reads - c1 >= 40, "muted counters still count");
    assert!(take_signal(Duration::from_millis(300)).is_none(), "signal after mute");
    go_tx.send(0).unwrap();
    worker.join().unwrap();
    drop(c);
    drain();
}

#[test]
fn two_events_notify_under_one_fd_and_never_late() {
    let _g = serial();
    ensure_blocked();
    // Two software events standing in for reads and write-backs: every fresh
    // anonymous page write is a page fault and a minor fault.
    let spec = EventSpec {
        name: "test:faults+minor-faults".into(),
        reads: Event { kind: PERF_TYPE_SOFTWARE, config: 2 },
        writes: Some(Event { kind: PERF_TYPE_SOFTWARE, config: 5 }),
        writes_optional: false,
    };
    let mut c = perf::open(&spec, Target::Task(gettid()), true).unwrap();
    let Some(Notification::Fd { fd, .. }) = c.notification() else { panic!() };
    drain();
    const N: u64 = 64;
    touch_pages(2);
    c.arm(Some(N)).unwrap();
    let c0 = c.read().unwrap();
    // Reads + writes grow by 2 per page: N/2 + 4 pages = N + 8 in total
    // (each event armed with N/2 = 32 overflows once at its 32nd).
    touch_pages(N as usize / 2 + 4);
    let c1 = c.read().unwrap();
    let (dr, dw) = (c1.reads - c0.reads, c1.writes - c0.writes);
    assert!(dr >= N / 2 + 4 && dw >= N / 2 + 4, "{dr} {dw}");
    let got = take_all(Duration::from_secs(5), Duration::from_millis(200));
    assert_eq!(got.len() as u64, dr / (N / 2) + dw / (N / 2), "one per event per N/2");
    for i in &got {
        assert_from_counter(i, fd);
    }
    drop(c);
    drain();
}

#[test]
fn no_pmu_is_said_plainly_and_pmu_detection_agrees_with_the_kernel() {
    let _g = serial();
    // Second opinion: does the kernel open a hardware event (instructions, user
    // mode) on CPU 0? ENOENT/ENODEV/EOPNOTSUPP mean no PMU for it.
    #[repr(C)]
    #[derive(Default)]
    struct Attr {
        kind: u32,
        size: u32,
        config: u64,
        rest: [u64; 6],
    }
    let attr = Attr { kind: 0, size: 64, config: 1, rest: [0, 0, 0, 1 << 5, 0, 0] };
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, &attr as *const Attr, -1 as libc::c_long, 0 as libc::c_long, -1 as libc::c_long, 8 as libc::c_ulong) };
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    if fd >= 0 {
        unsafe { libc::close(fd as i32) };
    }
    let kernel_has_pmu = fd >= 0 || !matches!(errno, libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP);
    assert_eq!(perf::pmu_present(), kernel_has_pmu, "sysfs detection vs the kernel (errno {errno})");

    for spec in ["llc-misses", "raw:0x17,0x18"] {
        for target in [Target::Cpu(0), Target::Task(gettid())] {
            let r = perf::open(&parse_event(spec).unwrap(), target, true);
            if kernel_has_pmu {
                assert!(!matches!(r, Err(CounterError::NoPmu { .. })), "{spec} {target:?}");
            } else {
                match r {
                    Err(e @ CounterError::NoPmu { .. }) => {
                        let msg = e.to_string();
                        assert!(msg.contains("--counter shm") && msg.contains("sw:page-faults"), "{msg}");
                    }
                    other => panic!("{spec} on {target:?}: {:?}", other.map(|c| c.describe())),
                }
            }
        }
    }
}

#[test]
fn unknown_events_and_missing_tasks_are_one_line_errors() {
    let _g = serial();
    assert!(matches!(parse_event("cache-misses"), Err(CounterError::UnknownEvent { .. })));
    // A software event number the kernel does not have.
    let bogus = EventSpec { name: "sw:bogus".into(), reads: Event { kind: PERF_TYPE_SOFTWARE, config: 999 }, writes: None, writes_optional: false };
    match perf::open(&bogus, Target::Task(gettid()), false) {
        Err(CounterError::UnknownEvent { event, .. }) => assert_eq!(event, "sw:bogus"),
        other => panic!("{:?}", other.map(|c| c.describe())),
    }
    // A CPU this machine does not have.
    match perf::open(&page_faults(), Target::Cpu(100_000), false) {
        Err(e @ CounterError::Os { .. }) => assert!(e.to_string().contains("cpu 100000"), "{e}"),
        other => panic!("{:?}", other.map(|c| c.describe())),
    }
    // Above any pid_max (at most 2^22): no such process.
    let pid = i32::MAX;
    match perf::open(&page_faults(), Target::Task(pid), false) {
        Err(e @ CounterError::Os { .. }) => assert!(e.to_string().contains(&pid.to_string()), "{e}"),
        other => panic!("{:?}", other.map(|c| c.describe())),
    }
}

fn shm_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new("/dev/shm").join(format!("criticore-test-{}-{name}", std::process::id()))
}

fn assert_cookie(info: &libc::siginfo_t, cookie: u64, job_end: bool) {
    assert_eq!(info.si_signo, overflow_signal());
    assert_eq!(shm::siginfo_cookie(info), Some((cookie, job_end)));
    assert_eq!(unsafe { info.si_pid() }, std::process::id() as i32, "sent by the writer (this process)");
}

#[test]
fn counter_page_crossing_signals_once_with_the_cookie() {
    let _g = serial();
    ensure_blocked();
    drain();
    let path = shm_path("cross");
    const COOKIE: u64 = 0x1234;
    let mut c = ShmCounter::create(&path, COOKIE).unwrap();
    let writer = CounterPage::open(&path).unwrap();
    let wait = Duration::from_secs(2);
    let quiet = Duration::from_millis(100);

    // Armed at 100 more: 60 do nothing, 30 + 20 cross, later counts do not repeat it.
    assert!(c.arm(Some(100)).unwrap());
    writer.count(60, 0);
    assert!(take_signal(quiet).is_none());
    writer.count(30, 20);
    writer.count(5, 5);
    let got = take_all(wait, quiet);
    assert_eq!(got.len(), 1);
    assert_cookie(&got[0], COOKIE, false);
    assert_eq!(c.read().unwrap().total(), 120);

    // Re-armed: the next crossing is 50 after the current total of 120.
    c.arm(Some(50)).unwrap();
    writer.count(0, 49);
    assert!(take_signal(quiet).is_none());
    writer.count(1, 0);
    let got = take_all(wait, quiet);
    assert_eq!(got.len(), 1);
    assert_cookie(&got[0], COOKIE, false);

    // Already there when armed (0 more): arm itself makes the one signal.
    c.arm(Some(0)).unwrap();
    writer.count(1, 1);
    let got = take_all(wait, quiet);
    assert_eq!(got.len(), 1);
    assert_cookie(&got[0], COOKIE, false);

    // Disarmed: nothing.
    c.arm(None).unwrap();
    writer.count(1000, 1000);
    assert!(take_signal(quiet).is_none());

    // Job ends, when asked for, carry the low bit.
    c.notify_job_end(true);
    writer.mark(EventKind::JobEnd, 3);
    let got = take_all(wait, quiet);
    assert_eq!(got.len(), 1);
    assert_cookie(&got[0], COOKIE, true);

    drop(writer);
    drop(c);
    assert!(!path.exists(), "the created page is removed");
    drain();
}

#[test]
fn a_child_process_writing_the_page_signals_the_reader() {
    let _g = serial();
    ensure_blocked();
    drain();
    let path = shm_path("child");
    const COOKIE: u64 = 77;
    let mut c = ShmCounter::create(&path, COOKIE).unwrap();
    c.arm(Some(10)).unwrap();
    // The writer is another process. The mapping is made before fork and
    // shared with the child, which then only does atomics and sigqueue
    // (async-signal-safe; no allocation in the child of a threaded process).
    let writer = CounterPage::open(&path).unwrap();
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        writer.count(6, 6);
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child status {status}");
    let got = take_all(Duration::from_secs(2), Duration::from_millis(100));
    assert_eq!(got.len(), 1);
    assert_eq!(shm::siginfo_cookie(&got[0]), Some((COOKIE, false)));
    assert_eq!(unsafe { got[0].si_pid() }, pid, "sent by the child");
    assert_eq!(c.read().unwrap().total(), 12);
    drop(writer);
    drop(c);
    assert!(!path.exists());
}

