//! The shared-memory counter page: how an instrumented program (the load
//! generator, or a user's program through `include/criticore.h` or
//! `criticore.instrument`) tells the runtime what it did, where the machine
//! exposes no PMU. One page per process, a file in /dev/shm named by the
//! `CRITICORE_COUNTER` environment variable.
//!
//! The program adds the cache lines it read and wrote, and marks job and phase
//! boundaries in a small event ring (the tiny phase/job API shared by
//! `criticore profile` and the monitor mode of `criticore regulate`). The
//! reader (the regulator or the profiler) arms an overflow threshold: when the
//! program's reads + writes reach `notify_at`, the program itself sends the
//! reader a real-time signal, once, like a PMU counter armed with the budget as
//! its overflow period (MemGuard's `sample_period = budget`).
//!
//! Layout, version 1 (native endianness, all fields naturally aligned; the C
//! header mirrors it byte for byte):
//!
//! | offset | type | field |
//! | --- | --- | --- |
//! | 0 | u32 | magic `0x43525443` ("CRTC") |
//! | 4 | u32 | version (1) |
//! | 8 | u64 | reads: cache lines read, cumulative |
//! | 16 | u64 | writes: cache lines written, cumulative |
//! | 24 | u64 | notify_at: signal the reader when reads + writes >= this (u64::MAX = off) |
//! | 32 | i32 | notify_pid: the reader's pid (0 = nobody) |
//! | 36 | i32 | notify_sig: the signal to send (a real-time signal) |
//! | 40 | u64 | notify_cookie: the reader's id of this page, sent as the signal's value |
//! | 48 | i32 | writer_pid: the program that attached last |
//! | 52 | u32 | flags: bit 0 = also signal at every job end |
//! | 56 | u64 | event_head: events written so far |
//! | 64 | 128 × event | the event ring, slot = index % 128 |
//! | 3136 | u64 | origin_ns: the run's time 0, written by the reader (0 = not yet, u64::MAX = no common start) |
//! | 3144 | u64 | ready_ns: 0 = the program will not wait, 1 = it is setting up and will, else when it got ready |
//! | 3152 | u64 | crossed_ns: when the program's count crossed `notify_at` (CLOCK_MONOTONIC; 0 = not yet), written before the signal |
//!
//! An event is 24 bytes: u64 seq (index + 1, written last), u64 t_ns
//! (CLOCK_MONOTONIC), u32 kind (1 job begin, 2 job end, 3 phase), u32 arg
//! (job number or phase index). A reader more than 128 events behind has lost
//! the oldest and is told so.
//!
//! The signal's value (`si_value.sival_ptr`) is `cookie << 1 | 0` for an
//! overflow and `cookie << 1 | 1` for a job end.
//!
//! Common start (like rt-app's): a reader that wants every program's first
//! job released at one time 0 holds the start (`origin_ns` = 0) before it
//! launches them. A program that takes part says so as it attaches
//! ([`CounterPage::from_env_waiting`]), sets itself up (buffers, calibration), then
//! waits in [`CounterPage::wait_start`] until the reader writes the origin,
//! which it does once every such program is ready.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

pub const MAGIC: u32 = 0x4352_5443;
pub const VERSION: u32 = 1;
pub const PAGE_BYTES: usize = 4096;
pub const RING: usize = 128;
pub const ENV: &str = "CRITICORE_COUNTER";
pub const OFF: u64 = u64::MAX;
pub const FLAG_NOTIFY_JOB_END: u32 = 1;
/// `ready_ns`: the program is setting up and will wait for the origin.
pub const SETTING_UP: u64 = 1;
/// How long a program waits for a held start before it starts alone.
pub const START_WAIT_NS: u64 = 120_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum EventKind {
    JobBegin = 1,
    JobEnd = 2,
    Phase = 3,
}

impl EventKind {
    pub fn from_u32(k: u32) -> Option<Self> {
        match k {
            1 => Some(EventKind::JobBegin),
            2 => Some(EventKind::JobEnd),
            3 => Some(EventKind::Phase),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub t_ns: u64,
    pub kind: EventKind,
    pub arg: u32,
}

#[repr(C)]
struct Slot {
    seq: AtomicU64,
    t_ns: AtomicU64,
    kind: AtomicU32,
    arg: AtomicU32,
}

#[repr(C)]
struct Layout {
    magic: AtomicU32,
    version: AtomicU32,
    reads: AtomicU64,
    writes: AtomicU64,
    notify_at: AtomicU64,
    notify_pid: AtomicI32,
    notify_sig: AtomicI32,
    notify_cookie: AtomicU64,
    writer_pid: AtomicI32,
    flags: AtomicU32,
    event_head: AtomicU64,
    ring: [Slot; RING],
    origin_ns: AtomicU64,
    ready_ns: AtomicU64,
    crossed_ns: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Layout>() == 64 + RING * 24 + 24);
const _: () = assert!(std::mem::size_of::<Layout>() <= PAGE_BYTES);

/// One mapped counter page. Both sides use this type: the program through
/// [`CounterPage::count`], [`CounterPage::mark`]; the reader through
/// [`CounterPage::counts`], [`CounterPage::arm`], [`EventReader`].
pub struct CounterPage {
    ptr: *mut Layout,
    path: PathBuf,
}

// The page is only accessed through atomics.
unsafe impl Send for CounterPage {}
unsafe impl Sync for CounterPage {}

/// The page's times (events, the common start) are on this clock.
pub use super::clock::now_ns;

impl CounterPage {
    /// Create (or truncate) the page at `path` for a program to attach to.
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
        file.set_len(PAGE_BYTES as u64)?;
        let page = Self::map(&file, path)?;
        let l = page.layout();
        l.version.store(VERSION, Ordering::Relaxed);
        l.notify_at.store(OFF, Ordering::Relaxed);
        l.origin_ns.store(OFF, Ordering::Relaxed);
        l.magic.store(MAGIC, Ordering::Release);
        Ok(page)
    }

    /// Attach to an existing page (checks magic and version) and record our pid as the writer.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        if file.metadata()?.len() < PAGE_BYTES as u64 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{} is not a criticore counter page (too short)", path.display())));
        }
        let page = Self::map(&file, path)?;
        let l = page.layout();
        if l.magic.load(Ordering::Acquire) != MAGIC || l.version.load(Ordering::Relaxed) != VERSION {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{} is not a criticore counter page (version {VERSION})", path.display())));
        }
        Ok(page)
    }

    /// The page named by `CRITICORE_COUNTER`, if set.
    pub fn from_env() -> Option<io::Result<Self>> {
        Self::attach_env(false)
    }

    /// As [`CounterPage::from_env`], for a program that will also wait for a
    /// held common start ([`CounterPage::wait_start`]) once it is set up.
    pub fn from_env_waiting() -> Option<io::Result<Self>> {
        Self::attach_env(true)
    }

    /// Record this process as the page's writer (after [`CounterPage::will_start`]:
    /// a reader that sees the writer also sees that it will wait).
    pub fn attach_writer(&self) {
        self.layout().writer_pid.store(std::process::id() as i32, Ordering::Release);
    }

    fn attach_env(waiting: bool) -> Option<io::Result<Self>> {
        std::env::var_os(ENV).map(|p| {
            let page = Self::open(Path::new(&p))?;
            if waiting {
                page.will_start();
            }
            // Release: a reader that sees the writer also sees that it will wait.
            page.layout().writer_pid.store(std::process::id() as i32, Ordering::Release);
            Ok(page)
        })
    }

    fn map(file: &std::fs::File, path: &Path) -> io::Result<Self> {
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), PAGE_BYTES, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), 0)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(CounterPage { ptr: ptr as *mut Layout, path: path.to_path_buf() })
    }

    fn layout(&self) -> &Layout {
        unsafe { &*self.ptr }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    // ---- the program's side ----

    /// Add lines read and written; signal the reader if the armed threshold is crossed.
    #[inline]
    pub fn count(&self, reads: u64, writes: u64) {
        let l = self.layout();
        // SeqCst pairs with the reader's arm(): either we see its new threshold
        // or it sees our count (free on x86).
        let r = if reads > 0 { l.reads.fetch_add(reads, Ordering::SeqCst) + reads } else { l.reads.load(Ordering::SeqCst) };
        let w = if writes > 0 { l.writes.fetch_add(writes, Ordering::SeqCst) + writes } else { l.writes.load(Ordering::SeqCst) };
        let at = l.notify_at.load(Ordering::SeqCst);
        if r + w >= at {
            self.crossed(at);
        }
    }

    #[cold]
    fn crossed(&self, at: u64) {
        let l = self.layout();
        // Only one crossing signals: whoever swaps the threshold off.
        if l.notify_at.compare_exchange(at, OFF, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            // When the budget was crossed: the reader's end-to-end reaction starts here.
            l.crossed_ns.store(now_ns(), Ordering::Release);
            self.signal(0);
        }
    }

    fn signal(&self, bit: usize) {
        let l = self.layout();
        let pid = l.notify_pid.load(Ordering::Acquire);
        let sig = l.notify_sig.load(Ordering::Relaxed);
        if pid <= 0 || sig <= 0 {
            return;
        }
        let cookie = l.notify_cookie.load(Ordering::Relaxed) as usize;
        let value = libc::sigval { sival_ptr: ((cookie << 1) | bit) as *mut libc::c_void };
        unsafe { libc::sigqueue(pid, sig, value) };
    }

    /// Mark a job or phase boundary now.
    pub fn mark(&self, kind: EventKind, arg: u32) {
        self.mark_at(kind, arg, now_ns());
    }

    pub fn mark_at(&self, kind: EventKind, arg: u32, t_ns: u64) {
        let l = self.layout();
        let index = l.event_head.fetch_add(1, Ordering::AcqRel);
        let slot = &l.ring[(index % RING as u64) as usize];
        slot.seq.store(0, Ordering::Release);
        // Seqlock: seq = 0 must be visible before the new fields (weakly ordered CPUs).
        std::sync::atomic::fence(Ordering::Release);
        slot.t_ns.store(t_ns, Ordering::Relaxed);
        slot.kind.store(kind as u32, Ordering::Relaxed);
        slot.arg.store(arg, Ordering::Relaxed);
        slot.seq.store(index + 1, Ordering::Release);
        if kind == EventKind::JobEnd && l.flags.load(Ordering::Relaxed) & FLAG_NOTIFY_JOB_END != 0 {
            self.signal(1);
        }
    }

    /// The program will wait for the common start (before it names itself the writer).
    /// The program says it takes part in a held common start (before it sets up).
    pub fn will_start(&self) {
        let l = self.layout();
        if l.origin_ns.load(Ordering::Acquire) != OFF {
            l.ready_ns.store(SETTING_UP, Ordering::Release);
        }
    }

    /// The program is set up: say so and wait for the reader's origin (its
    /// time 0 on CLOCK_MONOTONIC). None when no start is held, when `stop`
    /// is set, when the parent (the reader that launched us) ends, or after
    /// [`START_WAIT_NS`]: start now.
    pub fn wait_start(&self, stop: &std::sync::atomic::AtomicBool) -> Option<u64> {
        let l = self.layout();
        if l.origin_ns.load(Ordering::Acquire) == OFF {
            return None;
        }
        let t0 = now_ns();
        let parent = unsafe { libc::getppid() };
        l.ready_ns.store(t0.max(SETTING_UP + 1), Ordering::Release);
        loop {
            match l.origin_ns.load(Ordering::Acquire) {
                OFF => return None,
                0 => {}
                origin => return Some(origin),
            }
            // The reader launched us: if it is gone, nobody will write the origin.
            if stop.load(Ordering::Relaxed) || now_ns() - t0 > START_WAIT_NS || unsafe { libc::getppid() } != parent {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    // ---- the reader's side ----

    /// Hold the program's start until [`CounterPage::release_start`] (before launching it).
    pub fn hold_start(&self) {
        self.layout().origin_ns.store(0, Ordering::Release);
    }

    /// Start the programs that wait: their time 0 is `origin_ns`.
    pub fn release_start(&self, origin_ns: u64) {
        self.layout().origin_ns.store(origin_ns.max(1), Ordering::Release);
    }

    /// 0: the program did not say it will wait; [`SETTING_UP`]: it will; else when it got ready.
    pub fn ready_ns(&self) -> u64 {
        self.layout().ready_ns.load(Ordering::Acquire)
    }

    /// Cumulative (reads, writes).
    pub fn counts(&self) -> (u64, u64) {
        let l = self.layout();
        (l.reads.load(Ordering::Relaxed), l.writes.load(Ordering::Relaxed))
    }

    /// Who to signal: `pid` with `sig`, value carrying `cookie`.
    pub fn set_notify(&self, pid: i32, sig: i32, cookie: u64, on_job_end: bool) {
        let l = self.layout();
        l.notify_cookie.store(cookie, Ordering::Relaxed);
        l.notify_sig.store(sig, Ordering::Relaxed);
        l.flags.store(if on_job_end { FLAG_NOTIFY_JOB_END } else { 0 }, Ordering::Relaxed);
        l.notify_pid.store(pid, Ordering::Release);
    }

    /// Signal once reads + writes reach `at` (cumulative); None disarms.
    /// Returns true if the count is already there (no signal will come).
    pub fn arm(&self, at: Option<u64>) -> bool {
        let l = self.layout();
        let at = at.unwrap_or(OFF);
        l.notify_at.store(at, Ordering::SeqCst);
        let (r, w) = self.counts();
        at != OFF && r + w >= at
    }

    /// When the count last crossed an armed threshold (CLOCK_MONOTONIC; 0 = never).
    pub fn crossed_ns(&self) -> u64 {
        self.layout().crossed_ns.load(Ordering::Acquire)
    }

    pub fn writer_pid(&self) -> i32 {
        self.layout().writer_pid.load(Ordering::Acquire)
    }

    pub fn event_head(&self) -> u64 {
        self.layout().event_head.load(Ordering::Acquire)
    }

    fn event(&self, index: u64) -> Option<Event> {
        let slot = &self.layout().ring[(index % RING as u64) as usize];
        if slot.seq.load(Ordering::Acquire) != index + 1 {
            return None;
        }
        let e = Event {
            t_ns: slot.t_ns.load(Ordering::Relaxed),
            kind: EventKind::from_u32(slot.kind.load(Ordering::Relaxed))?,
            arg: slot.arg.load(Ordering::Relaxed),
        };
        // Overwritten while we read it? (The fence keeps the field loads before the re-check.)
        std::sync::atomic::fence(Ordering::Acquire);
        (slot.seq.load(Ordering::Relaxed) == index + 1).then_some(e)
    }
}

impl Drop for CounterPage {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, PAGE_BYTES) };
    }
}

/// A reader's position in a page's event ring.
#[derive(Debug, Default, Clone)]
pub struct EventReader {
    next: u64,
    /// Events overwritten before they were read.
    pub lost: u64,
}

impl EventReader {
    /// Append the events written since the last call to `out`.
    pub fn poll(&mut self, page: &CounterPage, out: &mut Vec<Event>) {
        let head = page.event_head();
        if head > self.next + RING as u64 {
            self.lost += head - RING as u64 - self.next;
            self.next = head - RING as u64;
        }
        while self.next < head {
            match page.event(self.next) {
                Some(e) => out.push(e),
                // Reserved but not yet written: read it next time.
                None if page.event_head() == head => break,
                None => self.lost += 1,
            }
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_page(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("criticore-test-{}-{name}", std::process::id()))
    }

    #[test]
    fn counts_and_events_cross_two_mappings() {
        let path = temp_page("a");
        let reader = CounterPage::create(&path).unwrap();
        let writer = CounterPage::open(&path).unwrap();
        writer.count(7, 3);
        writer.count(1, 0);
        assert_eq!(reader.counts(), (8, 3));
        let mut events = Vec::new();
        let mut r = EventReader::default();
        writer.mark_at(EventKind::JobBegin, 0, 10);
        writer.mark_at(EventKind::Phase, 1, 20);
        writer.mark_at(EventKind::JobEnd, 0, 30);
        r.poll(&reader, &mut events);
        assert_eq!(events.iter().map(|e| (e.kind, e.arg, e.t_ns)).collect::<Vec<_>>(), vec![
            (EventKind::JobBegin, 0, 10),
            (EventKind::Phase, 1, 20),
            (EventKind::JobEnd, 0, 30)
        ]);
        // 200 more events: the reader lost the 72 oldest and reads the last 128.
        events.clear();
        for i in 0..200 {
            writer.mark_at(EventKind::Phase, i, i as u64);
        }
        r.poll(&reader, &mut events);
        assert_eq!(events.len(), 128);
        assert_eq!(r.lost, 72);
        assert_eq!(events[0].arg, 72);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn arming_reports_a_threshold_already_reached() {
        let path = temp_page("b");
        let reader = CounterPage::create(&path).unwrap();
        let writer = CounterPage::open(&path).unwrap();
        writer.count(5, 5);
        assert!(reader.arm(Some(10)));
        assert!(!reader.arm(Some(11)));
        // Crossing disarms (no pid to signal: nothing is sent) and is timestamped.
        assert_eq!(reader.crossed_ns(), 0);
        let before = now_ns();
        writer.count(1, 0);
        let crossed = reader.crossed_ns();
        assert!(crossed >= before && crossed <= now_ns(), "{crossed}");
        assert!(!reader.arm(None));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_held_start_releases_the_program_at_the_readers_origin() {
        let path = temp_page("d");
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Not held: the program starts at once and says nothing.
        let reader = CounterPage::create(&path).unwrap();
        let writer = CounterPage::open(&path).unwrap();
        writer.will_start();
        assert_eq!((writer.wait_start(&stop), reader.ready_ns()), (None, 0));
        // Held: setting up, then ready and waiting until the origin is written.
        reader.hold_start();
        writer.will_start();
        assert_eq!(reader.ready_ns(), SETTING_UP);
        let got = std::thread::scope(|s| {
            let h = s.spawn(|| writer.wait_start(&stop));
            while reader.ready_ns() == SETTING_UP {
                std::thread::yield_now();
            }
            assert!(!h.is_finished(), "returned before the origin was written");
            reader.release_start(12_345);
            h.join().unwrap()
        });
        assert_eq!(got, Some(12_345));
        assert!(reader.ready_ns() > SETTING_UP);
        // A stop while waiting ends the wait.
        reader.hold_start();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(writer.wait_start(&stop), None);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn rejects_a_file_that_is_not_a_page() {
        let path = temp_page("c");
        std::fs::write(&path, vec![0u8; PAGE_BYTES]).unwrap();
        let e = CounterPage::open(&path).err().unwrap();
        assert!(e.to_string().contains("not a criticore counter page"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }
}
