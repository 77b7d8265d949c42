//! The C API (`include/criticore.h`) against the Rust counter page
//! (counter_page.rs layout v1): tests/c/counter_page_test.c is compiled with
//! the system `cc` (and once with `c++`), run against a page made here with
//! `CounterPage::create`, and the page's bytes, the Rust reader's view and the
//! signals the program sends are checked against values worked out here.
//!
//! A missing compiler fails the test (with a message saying so): the header
//! is part of the product and must be checked wherever these tests run.
//!
//! Signals: this process is the reader. overflow_signal() is blocked in every
//! thread (an `.init_array` constructor blocks it in the main thread before
//! libtest starts its threads, which inherit the mask), the C program
//! sigqueues it to this process, and the test takes it with a bounded
//! sigtimedwait. Tests that expect or rule out signals hold one lock, so that
//! a process-directed signal is never taken by another test. Every wait and
//! every child process is bounded in time; pages and build directories are
//! removed by guards, also when a test fails.

use criticore_rt::os::counter::overflow_signal;
use criticore_rt::os::counter::shm;
use criticore_rt::os::counter_page::{self, now_ns, CounterPage, Event, EventKind, EventReader};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
use common::{ensure_blocked, serial, take_signal};


const COOKIE: u64 = 0x5eed_c0de_1234;
const QUIET: Duration = Duration::from_millis(150);
const CHILD_LIMIT: Duration = Duration::from_secs(30);

// ---- guards ----

/// A file in /dev/shm, removed on drop.
struct ShmFile(PathBuf);

impl ShmFile {
    fn new(name: &str) -> Self {
        let path = PathBuf::from(format!("/dev/shm/criticore-test-c-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        ShmFile(path)
    }
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A build directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("criticore-c-header-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- building and running the C program ----

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run `cmd` for at most `limit` (killing it after that); its pid and output.
fn run_bounded(cmd: &mut Command, what: &str, limit: Duration) -> (i32, Output) {
    let child = match cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("{what}: `{}` was not found on PATH; the C header tests need a C (and C++) compiler, e.g. gcc/g++ or clang", cmd.get_program().to_string_lossy())
        }
        Err(e) => panic!("{what}: cannot start {:?}: {e}", cmd.get_program()),
    };
    let pid = child.id() as i32;
    // Read the pipes in another thread (a compiler's errors can fill them).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out,
        Err(_) => {
            // Not reaped yet (the thread still waits for it), so the pid is still the child's.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = rx.recv();
            panic!("{what}: still running after {limit:?}, killed");
        }
    };
    (pid, out.unwrap())
}

#[derive(Clone, Copy, Debug)]
enum Lang {
    C,
    Cxx,
}

/// Compile tests/c/counter_page_test.c into `dir`.
fn build(lang: Lang, dir: &TempDir) -> PathBuf {
    let out = dir.0.join("counter_page_test");
    let root = repo();
    let mut cmd = match lang {
        Lang::C => {
            let mut c = Command::new("cc");
            c.args(["-std=c11", "-pedantic"]);
            c
        }
        Lang::Cxx => {
            let mut c = Command::new("c++");
            c.args(["-x", "c++", "-std=c++11", "-pedantic"]);
            c
        }
    };
    cmd.args(["-Wall", "-Wextra", "-Werror", "-O2", "-pthread", "-I"])
        .arg(root.join("include"))
        .arg(root.join("tests/c/counter_page_test.c"))
        .arg("-o")
        .arg(&out);
    let (_, o) = run_bounded(&mut cmd, &format!("compiling counter_page_test.c ({lang:?})"), Duration::from_secs(120));
    assert!(o.status.success(), "compiling counter_page_test.c ({lang:?}) failed:\n{}", String::from_utf8_lossy(&o.stderr));
    out
}

struct Run {
    pid: i32,
    stdout: String,
}

/// Run the program with `CRITICORE_COUNTER` set to `page` (unset for None); it must exit 0.
fn run(bin: &Path, page: Option<&Path>, steps: &[&str]) -> Run {
    let mut cmd = Command::new(bin);
    cmd.args(steps);
    match page {
        Some(p) => cmd.env(counter_page::ENV, p),
        None => cmd.env_remove(counter_page::ENV),
    };
    let (pid, o) = run_bounded(&mut cmd, &format!("counter_page_test {steps:?}"), CHILD_LIMIT);
    let status = o.status;
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(status.success(), "counter_page_test {steps:?}: {status}\nstdout:\n{stdout}\nstderr:\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout.lines().last(), Some("done"), "counter_page_test {steps:?} ran every step:\n{stdout}");
    Run { pid, stdout }
}

/// The program's "attach <rc> <errno> <attached>" line.
fn attach_line(r: &Run) -> (i32, i32, i32) {
    let l = r.stdout.lines().next().unwrap();
    let v: Vec<i32> = l.strip_prefix("attach ").unwrap_or_else(|| panic!("first line {l:?}")).split(' ').map(|x| x.parse().unwrap()).collect();
    (v[0], v[1], v[2])
}

// ---- the page's bytes at the documented offsets ----

fn bytes(page: &Path) -> Vec<u8> {
    std::fs::read(page).unwrap()
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes(b[off..off + 4].try_into().unwrap())
}

fn i32_at(b: &[u8], off: usize) -> i32 {
    i32::from_ne_bytes(b[off..off + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_ne_bytes(b[off..off + 8].try_into().unwrap())
}

/// (seq, t_ns, kind, arg) of ring slot `slot`, from the bytes.
fn slot_at(b: &[u8], slot: usize) -> (u64, u64, u32, u32) {
    let o = 64 + slot * 24;
    (u64_at(b, o), u64_at(b, o + 8), u32_at(b, o + 16), u32_at(b, o + 20))
}

// ---- signals ----

/// Every signal already pending, and any arriving within QUIET of the last.
/// The program has exited when this is called, so all it sent is pending.
fn signals() -> Vec<libc::siginfo_t> {
    let mut out = Vec::new();
    while let Some(i) = take_signal(QUIET) {
        out.push(i);
        assert!(out.len() < 10_000, "a flood of signals");
    }
    out
}

fn drain() {
    while take_signal(Duration::ZERO).is_some() {}
}

/// The queued signal's value, si_value.sival_ptr as an integer. Linux's
/// siginfo_t: int signo, errno, code, then the union (pointer-aligned, so at
/// 16 on 64-bit) whose queued-signal member is pid, uid, sigval.
fn sigval_of(info: &libc::siginfo_t) -> usize {
    #[repr(C)]
    struct Rt {
        pid: libc::pid_t,
        uid: libc::uid_t,
        value: *mut libc::c_void,
    }
    #[repr(C)]
    struct Info {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        rt: Rt,
    }
    const _: () = assert!(std::mem::size_of::<Info>() <= std::mem::size_of::<libc::siginfo_t>());
    let i = unsafe { &*(info as *const libc::siginfo_t as *const Info) };
    i.rt.value as usize
}

/// One signal from the C program `pid`: queued, carrying cookie << 1 | bit.
fn assert_signal(info: &libc::siginfo_t, pid: i32, bit: usize) {
    assert_eq!(info.si_signo, overflow_signal());
    assert_eq!(info.si_code, libc::SI_QUEUE, "sent with sigqueue");
    assert_eq!(unsafe { info.si_pid() }, pid, "sent by the C program");
    assert_eq!(sigval_of(info), ((COOKIE as usize) << 1) | bit, "value cookie << 1 | {bit}");
    // And the runtime's own decoder reads the same.
    assert_eq!(shm::siginfo_cookie(info), Some((COOKIE, bit == 1)));
}

fn events(page: &CounterPage, reader: &mut EventReader) -> Vec<Event> {
    let mut out = Vec::new();
    reader.poll(page, &mut out);
    out
}

fn kinds(ev: &[Event]) -> Vec<(EventKind, u32)> {
    ev.iter().map(|e| (e.kind, e.arg)).collect()
}

// ---- the checks, for a binary built as C or as C++ ----

/// The program's offsetof/sizeof values and constants against the table in counter_page.rs.
fn check_layout(bin: &Path) {
    let (_, o) = run_bounded(Command::new(bin).arg("layout").env_remove(counter_page::ENV), "counter_page_test layout", CHILD_LIMIT);
    assert!(o.status.success(), "layout: {}", o.status);
    let text = String::from_utf8(o.stdout).unwrap();
    let got: BTreeMap<&str, Vec<&str>> = text.lines().map(|l| {
        let mut w = l.split(' ');
        (w.next().unwrap(), w.collect())
    }).collect();
    // (field, offset, size) as documented in counter_page.rs, layout v1.
    let table: &[(&str, u64, u64)] = &[
        ("magic", 0, 4),
        ("version", 4, 4),
        ("reads", 8, 8),
        ("writes", 16, 8),
        ("notify_at", 24, 8),
        ("notify_pid", 32, 4),
        ("notify_sig", 36, 4),
        ("notify_cookie", 40, 8),
        ("writer_pid", 48, 4),
        ("flags", 52, 4),
        ("event_head", 56, 8),
        ("ring", 64, 128 * 24),
        ("origin_ns", 64 + 128 * 24, 8),
        ("ready_ns", 72 + 128 * 24, 8),
        ("crossed_ns", 80 + 128 * 24, 8),
        ("seq", 0, 8),
        ("t_ns", 8, 8),
        ("kind", 16, 4),
        ("arg", 20, 4),
    ];
    for &(field, off, size) in table {
        let v = got.get(field).unwrap_or_else(|| panic!("layout lacks {field}:\n{text}"));
        assert_eq!(v.iter().map(|x| x.parse::<u64>().unwrap()).collect::<Vec<_>>(), vec![off, size], "{field} (offset, size)");
    }
    let one = |k: &str| got.get(k).unwrap_or_else(|| panic!("layout lacks {k}:\n{text}"))[0];
    let num = |k: &str| one(k).parse::<u64>().unwrap();
    assert_eq!(num("sizeof_event"), 24);
    assert_eq!(num("sizeof_page"), 88 + 128 * 24);
    assert_eq!(num("MAGIC"), u64::from(counter_page::MAGIC));
    assert_eq!(num("MAGIC"), 0x4352_5443, "\"CRTC\"");
    assert_eq!(num("VERSION"), u64::from(counter_page::VERSION));
    assert_eq!(num("PAGE_BYTES"), counter_page::PAGE_BYTES as u64);
    assert_eq!(num("RING"), counter_page::RING as u64);
    assert_eq!(num("OFF"), counter_page::OFF);
    assert_eq!(num("FLAG_NOTIFY_JOB_END"), u64::from(counter_page::FLAG_NOTIFY_JOB_END));
    assert_eq!(num("EVENT_JOB_BEGIN"), EventKind::JobBegin as u64);
    assert_eq!(num("EVENT_JOB_END"), EventKind::JobEnd as u64);
    assert_eq!(num("EVENT_PHASE"), EventKind::Phase as u64);
    assert_eq!(one("ENV"), counter_page::ENV);
}

/// Counts, events and the writer pid, seen by the Rust reader and in the bytes.
fn check_counts_and_events(bin: &Path, name: &str) {
    let file = ShmFile::new(name);
    let page = CounterPage::create(&file.0).unwrap();
    // A Rust writer counted before the program: the C side adds on top.
    CounterPage::open(&file.0).unwrap().count(10, 5);
    let mut reader = EventReader::default();

    let t0 = now_ns();
    let r = run(bin, Some(&file.0), &["count:100:0", "count:0:7", "count:3:4", "begin:1", "phase:0", "phase:1", "end:1", "begin:2", "end:2"]);
    let t1 = now_ns();
    assert_eq!(attach_line(&r), (0, 0, 1), "attached");
    assert_eq!(page.counts(), (113, 16));
    assert_eq!(page.writer_pid(), r.pid, "attach records the program as the writer");
    let ev = events(&page, &mut reader);
    assert_eq!(kinds(&ev), vec![
        (EventKind::JobBegin, 1),
        (EventKind::Phase, 0),
        (EventKind::Phase, 1),
        (EventKind::JobEnd, 1),
        (EventKind::JobBegin, 2),
        (EventKind::JobEnd, 2),
    ]);
    assert_eq!(reader.lost, 0);
    assert!(ev.windows(2).all(|w| w[0].t_ns <= w[1].t_ns), "times in order: {ev:?}");
    assert!(ev[0].t_ns >= t0 && ev[5].t_ns <= t1, "CLOCK_MONOTONIC ns within the run [{t0}, {t1}]: {ev:?}");

    // The same, read as bytes at the documented offsets.
    let b = bytes(&file.0);
    assert_eq!(b.len(), counter_page::PAGE_BYTES);
    assert_eq!(u32_at(&b, 0), 0x4352_5443);
    assert_eq!(u32_at(&b, 4), 1);
    assert_eq!(u64_at(&b, 8), 113);
    assert_eq!(u64_at(&b, 16), 16);
    assert_eq!(u64_at(&b, 24), u64::MAX, "never armed");
    assert_eq!(i32_at(&b, 32), 0, "no reader to signal");
    assert_eq!(i32_at(&b, 48), r.pid);
    assert_eq!(u32_at(&b, 52), 0);
    assert_eq!(u64_at(&b, 56), 6);
    assert_eq!(slot_at(&b, 0), (1, ev[0].t_ns, 1, 1));
    assert_eq!(slot_at(&b, 2), (3, ev[2].t_ns, 3, 1));
    assert_eq!(slot_at(&b, 5), (6, ev[5].t_ns, 2, 2));
    assert_eq!(slot_at(&b, 6), (0, 0, 0, 0), "untouched");

    // 200 phases (event indices 6..205) wrap the ring: the reader, at 6, lost
    // the 72 oldest (phases 0..71) and reads the last 128 (phases 72..199).
    let r2 = run(bin, Some(&file.0), &["phases:200"]);
    assert_eq!(page.writer_pid(), r2.pid, "the last to attach is the writer");
    let ev = events(&page, &mut reader);
    assert_eq!(reader.lost, 72);
    assert_eq!(kinds(&ev), (72..200).map(|i| (EventKind::Phase, i)).collect::<Vec<_>>());
    let b = bytes(&file.0);
    assert_eq!(u64_at(&b, 56), 206);
    // Event index 205 (phase 199) sits in slot 205 % 128 = 77 with seq 206.
    assert_eq!(slot_at(&b, 77).0, 206);
    assert_eq!((slot_at(&b, 77).2, slot_at(&b, 77).3), (3, 199));
    // Slot 78 holds event 78 (phase 72), slot 0 event 128 (phase 122).
    assert_eq!(slot_at(&b, 78).0, 79);
    assert_eq!((slot_at(&b, 78).2, slot_at(&b, 78).3), (3, 72));
    assert_eq!(slot_at(&b, 0).0, 129);
    assert_eq!((slot_at(&b, 0).2, slot_at(&b, 0).3), (3, 122));
}

/// The armed threshold: exactly once, at the crossing, from the program, with the cookie.
fn check_threshold(bin: &Path, name: &str) {
    let _g = serial();
    ensure_blocked();
    drain();
    let file = ShmFile::new(name);
    let page = CounterPage::create(&file.0).unwrap();
    let me = std::process::id() as i32;
    page.set_notify(me, overflow_signal(), COOKIE, false);
    assert!(!page.arm(Some(100)));

    // 99 lines: one short of the threshold, nothing.
    run(bin, Some(&file.0), &["count:60:0", "count:0:39"]);
    assert!(signals().is_empty(), "no signal below the threshold");
    assert_eq!(page.counts(), (60, 39));
    assert_eq!(u64_at(&bytes(&file.0), 24), 100, "still armed");
    assert_eq!(page.crossed_ns(), 0, "not crossed");

    // The 100th line crosses: one signal, and the crossing's time on the page.
    let before = now_ns();
    let r = run(bin, Some(&file.0), &["count:1:0"]);
    let crossed = page.crossed_ns();
    assert!(crossed >= before && crossed <= now_ns(), "crossed at {crossed}, run from {before}");
    let got = signals();
    assert_eq!(got.len(), 1, "exactly one signal at the crossing");
    assert_signal(&got[0], r.pid, 0);
    assert_eq!(u64_at(&bytes(&file.0), 24), counter_page::OFF, "the crossing disarmed it");

    // Later counts do not signal again.
    run(bin, Some(&file.0), &["count:5:5", "count:0:0", "count:1000:0"]);
    assert!(signals().is_empty(), "no second signal");
    assert_eq!(page.counts(), (1066, 44));

    // Re-armed 200 lines on, 8 threads racing 20,000 lines each past it: still once.
    assert!(!page.arm(Some(1110 + 200)));
    let r = run(bin, Some(&file.0), &["threads:8:20000"]);
    let got = signals();
    assert_eq!(got.len(), 1, "exactly one signal among racing threads");
    assert_signal(&got[0], r.pid, 0);
    assert_eq!(page.counts(), (1066 + 160_000, 44));

    // 1,000 rounds of 4 threads crossing together: one signal per round, never two.
    let r = run(bin, Some(&file.0), &["race:1000:4"]);
    let got = signals();
    assert_eq!(got.len(), 1000, "one signal per round");
    for g in &got {
        assert_signal(g, r.pid, 0);
    }
    assert_eq!(page.counts(), (1066 + 160_000 + 1000 * 4000, 44));

    // Armed at what is already there: arm() says so, and the next count signals.
    assert!(page.arm(Some(0)));
    let r = run(bin, Some(&file.0), &["count:0:1"]);
    let got = signals();
    assert_eq!(got.len(), 1);
    assert_signal(&got[0], r.pid, 0);

    // Disarmed: nothing.
    assert!(!page.arm(None));
    run(bin, Some(&file.0), &["count:1000:1000", "end:1"]);
    assert!(signals().is_empty(), "no signal when disarmed");
}

/// Job ends signal with bit 1 when, and only when, the reader asked for them.
fn check_job_end(bin: &Path, name: &str) {
    let _g = serial();
    ensure_blocked();
    drain();
    let file = ShmFile::new(name);
    let page = CounterPage::create(&file.0).unwrap();
    let me = std::process::id() as i32;

    page.set_notify(me, overflow_signal(), COOKIE, false);
    run(bin, Some(&file.0), &["begin:1", "end:1"]);
    assert!(signals().is_empty(), "job ends not asked for");

    page.set_notify(me, overflow_signal(), COOKIE, true);
    assert_eq!(u32_at(&bytes(&file.0), 52), 1, "flag bit 0");
    let r = run(bin, Some(&file.0), &["begin:2", "phase:0", "end:2", "begin:3", "end:3"]);
    let got = signals();
    assert_eq!(got.len(), 2, "one per job end, none for begin or phase");
    for g in &got {
        assert_signal(g, r.pid, 1);
    }

    // A crossing and a job end in one run: bit 0 then bit 1 (queued in order).
    let (rd, wr) = page.counts();
    assert!(!page.arm(Some(rd + wr + 50)));
    let r = run(bin, Some(&file.0), &["count:0:50", "end:4"]);
    let got = signals();
    assert_eq!(got.len(), 2);
    assert_signal(&got[0], r.pid, 0);
    assert_signal(&got[1], r.pid, 1);
}

// ---- the tests ----

#[test]
fn c_layout_matches_counter_page_rs() {
    let dir = TempDir::new("layout");
    check_layout(&build(Lang::C, &dir));
}

#[test]
fn c_counts_and_events_reach_the_rust_reader() {
    let dir = TempDir::new("counts");
    check_counts_and_events(&build(Lang::C, &dir), "counts");
}

#[test]
fn c_threshold_signals_the_reader_once_with_the_cookie() {
    let dir = TempDir::new("threshold");
    check_threshold(&build(Lang::C, &dir), "threshold");
}

#[test]
fn c_job_end_signals_with_bit_one_when_asked() {
    let dir = TempDir::new("job-end");
    check_job_end(&build(Lang::C, &dir), "job-end");
}

#[test]
fn c_takes_part_in_the_common_start() {
    let dir = TempDir::new("start");
    let bin = build(Lang::C, &dir);
    // No start held (a page as the profiler makes it): time 0 is now, at once,
    // and the program does not say it waits.
    let file = ShmFile::new("start-none");
    let page = CounterPage::create(&file.0).unwrap();
    let before = now_ns();
    let r = run(&bin, Some(&file.0), &["waiting", "start"]);
    let t0: u64 = r.stdout.lines().find_map(|l| l.strip_prefix("start ")).unwrap().parse().unwrap();
    assert!(t0 >= before && t0 <= now_ns(), "{t0} not between {before} and now");
    assert_eq!(page.ready_ns(), 0);
    // A held start, as `criticore regulate` holds it: the program says at
    // attach that it will wait, then waits, ready, until the origin is written.
    let file = ShmFile::new("start-held");
    let page = CounterPage::create(&file.0).unwrap();
    page.hold_start();
    let mut child = Command::new(&bin)
        .args(["waiting", "start"])
        .env(counter_page::ENV, &file.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start counter_page_test");
    let pid = child.id() as i32;
    let ready = (0..5_000).any(|_| {
        std::thread::sleep(Duration::from_millis(2));
        page.ready_ns() > counter_page::SETTING_UP
    });
    let waiting = child.try_wait().unwrap().is_none();
    let origin = now_ns();
    page.release_start(origin);
    let (deadline, mut status) = (std::time::Instant::now() + CHILD_LIMIT, None);
    while status.is_none() && std::time::Instant::now() < deadline {
        status = child.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    if status.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(ready && waiting, "ready {ready}, still waiting {waiting}: {stdout}");
    assert_eq!(i32_at(&bytes(&file.0), 48), pid, "the writer");
    assert_eq!(stdout.lines().find_map(|l| l.strip_prefix("start ")), Some(origin.to_string().as_str()), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("done"));
}

#[test]
fn c_without_the_variable_every_call_is_a_no_op() {
    let dir = TempDir::new("unset");
    let bin = build(Lang::C, &dir);
    let _g = serial();
    ensure_blocked();
    drain();
    // A page armed to signal at the first line and at job ends: untouched.
    let file = ShmFile::new("unset");
    let page = CounterPage::create(&file.0).unwrap();
    page.set_notify(std::process::id() as i32, overflow_signal(), COOKIE, true);
    page.arm(Some(1));
    let before = bytes(&file.0);
    let r = run(&bin, None, &["count:5:5", "begin:1", "phase:2", "end:1", "phases:300", "threads:4:1000", "count:0:0"]);
    assert_eq!(attach_line(&r), (0, 0, 0), "attach succeeds, nothing attached");
    assert!(signals().is_empty());
    assert_eq!(bytes(&file.0), before);
}

#[test]
fn c_attach_errors_set_errno_and_leave_calls_as_no_ops() {
    let dir = TempDir::new("errors");
    let bin = build(Lang::C, &dir);
    let steps = ["count:5:5", "begin:1", "end:1", "phase:0"];

    // No such file.
    let missing = ShmFile::new("missing");
    let r = run(&bin, Some(&missing.0), &steps);
    assert_eq!(attach_line(&r), (-1, libc::ENOENT, 0));
    assert!(!missing.0.exists());

    // A page of zeros: bad magic.
    let zeros = ShmFile::new("zeros");
    std::fs::write(&zeros.0, vec![0u8; counter_page::PAGE_BYTES]).unwrap();
    let r = run(&bin, Some(&zeros.0), &steps);
    assert_eq!(attach_line(&r), (-1, libc::EINVAL, 0));
    assert_eq!(bytes(&zeros.0), vec![0u8; counter_page::PAGE_BYTES], "untouched");

    // A good page's bytes, then spoilt two ways.
    let good = {
        let f = ShmFile::new("good");
        drop(CounterPage::create(&f.0).unwrap());
        bytes(&f.0)
    };

    // Another version.
    let other = ShmFile::new("version");
    let mut b = good.clone();
    b[4..8].copy_from_slice(&2u32.to_ne_bytes());
    std::fs::write(&other.0, &b).unwrap();
    let r = run(&bin, Some(&other.0), &steps);
    assert_eq!(attach_line(&r), (-1, libc::EINVAL, 0));
    assert_eq!(bytes(&other.0), b, "untouched (writer_pid not recorded)");

    // Too short to be a page (mapping it would SIGBUS), though the header is right.
    let short = ShmFile::new("short");
    std::fs::write(&short.0, &good[..64]).unwrap();
    let r = run(&bin, Some(&short.0), &steps);
    assert_eq!(attach_line(&r), (-1, libc::EINVAL, 0));
    assert_eq!(bytes(&short.0), &good[..64]);
}

#[test]
fn c_a_reader_that_is_gone_does_not_disturb_the_program() {
    let dir = TempDir::new("gone");
    let bin = build(Lang::C, &dir);
    let file = ShmFile::new("gone");
    let page = CounterPage::create(&file.0).unwrap();
    // No process has this pid (above any pid_max): sigqueue fails with ESRCH,
    // and the program checks its errno is unchanged (it exits 2 otherwise).
    page.set_notify(i32::MAX, overflow_signal(), COOKIE, true);
    page.arm(Some(1));
    run(&bin, Some(&file.0), &["count:1:0", "begin:1", "end:1"]);
    assert_eq!(page.counts(), (1, 0));
    assert_eq!(u64_at(&bytes(&file.0), 24), counter_page::OFF, "the crossing still disarmed it");
}

/// The same header compiled as C++ (std::atomic instead of _Atomic): same layout, same behaviour.
#[test]
fn cxx_build_has_the_same_layout_and_behaviour() {
    let dir = TempDir::new("cxx");
    let bin = build(Lang::Cxx, &dir);
    check_layout(&bin);
    check_counts_and_events(&bin, "cxx-counts");
    check_threshold(&bin, "cxx-threshold");
    check_job_end(&bin, "cxx-job-end");
}
