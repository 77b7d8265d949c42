//! Profiling a real-time program against a constant load
//! (blin-bandwidth-monitor §3.1): one *point* of `criticore profile`.
//!
//! The load instances run `load::run` in threads of this process, pinned to
//! their cores (as `chase` does), and publish their counts to counter pages.
//! Once every instance has moved its first lines, the real-time program is
//! launched on its core with a counter page of its own (`CRITICORE_COUNTER`),
//! through which it marks its jobs and phases (`criticore.h`,
//! `criticore.instrument`) and may count its own lines.
//!
//! The recorder then wakes every `tick_ns` and writes down the time and the
//! global count of lines (every load plus the program), and the program's
//! marks as they come. Phase and job times come from the marks themselves
//! (the program's CLOCK_MONOTONIC, exact); the traffic between two instants
//! is read off the recorded counts by the caller (linear between ticks, exact
//! for a constant load). Where a PMU exists, per-CPU LLC-miss counters on
//! every CPU are recorded beside the software counts.
//!
//! The point ends when the program has ended `jobs` jobs (it is then sent
//! SIGTERM), when it exits, at the time limit, or on SIGINT/SIGTERM to us.
//! Whatever the end, the program is terminated (SIGKILL after a grace
//! period) and reaped, the loads are stopped and joined, and the pages are
//! removed before this returns.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::os::counter::perf::{self, EventSpec, PerfCounter, Target};
use crate::os::counter::shm::ShmCounter;
use crate::os::counter::Counter;
use crate::os::counter_page::{now_ns, Event, EventKind, EventReader, ENV};
use crate::os::launch::{launch, pin_current_thread, LaunchSpec, Launched};
use crate::workload::load::{self, LoadSpec};

/// One load instance: the microbenchmark on `cpu`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadInstance {
    pub cpu: usize,
    pub spec: LoadSpec,
}

#[derive(Debug, Clone)]
pub struct PointSpec {
    /// The real-time program (its CPUs and policy set by the caller).
    pub program: LaunchSpec,
    pub loads: Vec<LoadInstance>,
    /// Record the counts this often.
    pub tick_ns: u64,
    /// Terminate the program once it has ended this many jobs (None: let it exit).
    pub jobs: Option<u32>,
    /// Give up after this long (the program is terminated).
    pub limit_ns: u64,
    /// Per-CPU hardware counters for the global traffic (None: software counts only).
    pub hardware: Option<EventSpec>,
}

/// Why a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointEnd {
    /// The program ended the jobs asked for.
    Jobs,
    /// The program exited by itself.
    Exited,
    /// The time limit.
    Limit,
    /// SIGINT or SIGTERM to us, or the caller's `stop`.
    Interrupted,
}

/// What one point recorded. Times are CLOCK_MONOTONIC ns (the program's
/// marks use the same clock).
#[derive(Debug, Default)]
pub struct Recording {
    pub tick_ns: Vec<u64>,
    /// Global lines (loads + program) at each tick, cumulative.
    pub lines: Vec<u64>,
    /// The program's own lines at each tick, cumulative.
    pub program_lines: Vec<u64>,
    /// Hardware counts summed over CPUs at each tick, when counted.
    pub hardware_lines: Option<Vec<u64>>,
    pub events: Vec<Event>,
    /// Events the ring overwrote before we read them.
    pub lost_events: u64,
    pub program_start_ns: u64,
    pub program_exit_ns: u64,
    /// The program's exit status (None: killed by a signal).
    pub exit_code: Option<i32>,
    pub end: Option<PointEnd>,
    /// Lines each load moved in the whole point.
    pub load_lines: Vec<u64>,
    /// One-line notices (hardware counters that did not open).
    pub notices: Vec<String>,
}

/// A counter page of ours at a fresh path (removed when dropped).
fn page(tag: &str) -> io::Result<ShmCounter> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = PathBuf::from(format!("/dev/shm/criticore-profile-{}-{n}-{tag}", std::process::id()));
    ShmCounter::create(&path, n).map_err(|e| io::Error::other(e.to_string()))
}

fn total(page: &ShmCounter) -> u64 {
    let (r, w) = page.page().counts();
    r + w
}

/// The launched program, terminated and reaped on drop whatever happened.
struct Program(Launched);

impl Program {
    /// SIGTERM, then SIGKILL after `grace_ns`; returns the exit code (None: by a signal).
    fn end(&mut self, grace_ns: u64) -> Option<i32> {
        if let Ok(Some(s)) = self.0.child.try_wait() {
            return s.code();
        }
        let _ = self.0.signal(libc::SIGTERM);
        let until = now_ns() + grace_ns;
        while now_ns() < until {
            if let Ok(Some(s)) = self.0.child.try_wait() {
                return s.code();
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let _ = self.0.signal(libc::SIGKILL);
        self.0.child.wait().ok().and_then(|s| s.code())
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.end(1_000_000_000);
    }
}

/// Per-CPU hardware counters on every online CPU, or why not.
fn open_hardware(spec: &EventSpec) -> Result<Vec<PerfCounter>, String> {
    let cpus = crate::os::deadline::online_cpus().ok_or_else(|| "cannot list the online CPUs".to_string())?;
    cpus.iter().map(|&c| perf::open(spec, Target::Cpu(c), false).map_err(|e| e.to_string())).collect()
}

fn sleep_until(t: u64) {
    let ts = libc::timespec { tv_sec: (t / 1_000_000_000) as i64, tv_nsec: (t % 1_000_000_000) as i64 };
    // SAFETY: absolute sleep on CLOCK_MONOTONIC; EINTR returns early, the loop re-checks.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// How long the loads may take to move their first lines.
const SETTLE_LIMIT_NS: u64 = 2_000_000_000;
/// Between SIGTERM and SIGKILL for the program.
const GRACE_NS: u64 = 1_000_000_000;

/// Run one point: loads, then the program, recording until it ends (see the
/// module's text). `stop` ends it early (set by a signal handler or the
/// caller); `on_job(jobs_ended)` is called after each job end and returns
/// false to stop. Errors: a load or the program could not start.
pub fn run_point(spec: &PointSpec, stop: &AtomicBool, mut on_job: impl FnMut(u32) -> bool) -> io::Result<Recording> {
    for l in &spec.loads {
        if let Err((field, reason)) = l.spec.check() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{field}: {reason}")));
        }
    }
    let program_page = page("program")?;
    let load_pages = spec.loads.iter().map(|_| page("load")).collect::<io::Result<Vec<_>>>()?;
    let mut rec = Recording::default();
    let mut hardware = match &spec.hardware {
        None => None,
        Some(h) => match open_hardware(h) {
            Ok(c) => Some(c),
            Err(e) => {
                rec.notices.push(format!("hardware counters unavailable ({e}): bandwidth from the load generators' and the program's own counts"));
                None
            }
        },
    };
    let loads_stop = AtomicBool::new(false);

    std::thread::scope(|s| -> io::Result<Recording> {
        let handles: Vec<_> = spec
            .loads
            .iter()
            .zip(&load_pages)
            .map(|(l, page)| {
                let (loads_stop, page) = (&loads_stop, page.page());
                s.spawn(move || -> io::Result<u64> {
                    pin_current_thread(&[l.cpu]).map_err(|e| io::Error::other(format!("load on cpu {}: {e}", l.cpu)))?;
                    let spec = LoadSpec { duration_ns: None, ..l.spec.clone() };
                    let r = load::run(&spec, Some(page), loads_stop, |_| {})?;
                    Ok(r.reads + r.writes)
                })
            })
            .collect();
        // Stops and joins the loads whatever happens below.
        let finish_loads = |handles: Vec<std::thread::ScopedJoinHandle<'_, io::Result<u64>>>| -> io::Result<Vec<u64>> {
            loads_stop.store(true, Ordering::Relaxed);
            handles.into_iter().map(|h| h.join().map_err(|_| io::Error::other("a load thread panicked"))?).collect()
        };

        // A constant load from the program's first instruction: wait until every instance runs.
        let settle_until = now_ns() + SETTLE_LIMIT_NS;
        while load_pages.iter().any(|p| total(p) == 0) && !handles.iter().any(|h| h.is_finished()) {
            if now_ns() > settle_until || stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        if let Some(h) = handles.iter().position(|h| h.is_finished()) {
            let r = finish_loads(handles);
            return Err(r.err().unwrap_or_else(|| io::Error::other(format!("load {h} ended before the program started"))));
        }

        let mut program_spec = spec.program.clone();
        program_spec.env.push((ENV.into(), program_page.page().path().display().to_string()));
        let mut program = match launch(&program_spec) {
            Ok(p) => Program(p),
            Err(e) => {
                finish_loads(handles)?;
                return Err(io::Error::new(io::ErrorKind::NotFound, e.to_string()));
            }
        };
        rec.program_start_ns = now_ns();
        let mut reader = EventReader::default();
        let mut ended = 0u32;
        let limit_at = rec.program_start_ns + spec.limit_ns;
        let mut next = rec.program_start_ns;
        let end = loop {
            let t = now_ns();
            let own = total(&program_page);
            rec.tick_ns.push(t);
            rec.program_lines.push(own);
            rec.lines.push(own + load_pages.iter().map(total).sum::<u64>());
            if let Some(hw) = hardware.as_mut() {
                let sum = hw.iter_mut().map(|c| c.read().map(|x| x.total()).unwrap_or(0)).sum();
                rec.hardware_lines.get_or_insert_with(Vec::new).push(sum);
            }
            let before = rec.events.len();
            reader.poll(program_page.page(), &mut rec.events);
            let mut keep = true;
            for e in &rec.events[before..] {
                if e.kind == EventKind::JobEnd {
                    ended += 1;
                    keep &= on_job(ended);
                }
            }
            if spec.jobs.is_some_and(|n| ended >= n) {
                break PointEnd::Jobs;
            }
            if let Ok(Some(status)) = program.0.child.try_wait() {
                rec.exit_code = status.code();
                break PointEnd::Exited;
            }
            if !keep || stop.load(Ordering::Relaxed) {
                break PointEnd::Interrupted;
            }
            if t >= limit_at {
                break PointEnd::Limit;
            }
            next = (next + spec.tick_ns).max(t);
            sleep_until(next.min(limit_at));
        };
        rec.program_exit_ns = now_ns();
        if end != PointEnd::Exited {
            rec.exit_code = program.end(GRACE_NS);
        }
        drop(program);
        // Marks written while it was being terminated.
        reader.poll(program_page.page(), &mut rec.events);
        rec.lost_events = reader.lost;
        rec.end = Some(end);
        rec.load_lines = finish_loads(handles)?;
        Ok(rec)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_load(cpu: usize) -> LoadInstance {
        let mut spec = LoadSpec::new(5, 0);
        spec.buffer_bytes = 4 << 20;
        LoadInstance { cpu, spec }
    }

    fn sh(script: &str) -> LaunchSpec {
        let mut p = LaunchSpec::new(["sh", "-c", script]);
        p.stdout = crate::os::launch::Output::Null;
        p
    }

    fn point(program: LaunchSpec, loads: Vec<LoadInstance>, jobs: Option<u32>, limit_ns: u64) -> PointSpec {
        PointSpec { program, loads, tick_ns: 1_000_000, jobs, limit_ns, hardware: None }
    }

    #[test]
    fn a_program_that_exits_ends_the_point_with_its_code_and_the_loads_counted() {
        let stop = AtomicBool::new(false);
        let rec = run_point(&point(sh("sleep 0.05; exit 3"), vec![small_load(0)], None, 10_000_000_000), &stop, |_| true).unwrap();
        assert_eq!(rec.end, Some(PointEnd::Exited));
        assert_eq!(rec.exit_code, Some(3));
        // The load ran through the whole point: its final count is at least the last tick's.
        assert!(rec.load_lines[0] > 0);
        assert!(rec.lines.windows(2).all(|w| w[0] <= w[1]), "cumulative counts never fall");
        assert!(*rec.lines.last().unwrap() <= rec.load_lines[0]);
        assert!(rec.tick_ns.len() >= 10, "about 50 ticks of 1 ms, got {}", rec.tick_ns.len());
        assert!(rec.events.is_empty());
    }

    #[test]
    fn the_time_limit_terminates_a_program_that_runs_on() {
        let stop = AtomicBool::new(false);
        let t = now_ns();
        let rec = run_point(&point(sh("exec sleep 30"), vec![], None, 100_000_000), &stop, |_| true).unwrap();
        assert_eq!(rec.end, Some(PointEnd::Limit));
        assert_eq!(rec.exit_code, None, "ended by SIGTERM");
        assert!(now_ns() - t < 5_000_000_000);
    }

    #[test]
    fn a_missing_program_is_an_error_and_the_loads_stop() {
        let stop = AtomicBool::new(false);
        let e = run_point(&point(LaunchSpec::new(["/nonexistent/criticore-rt-program"]), vec![small_load(0)], None, 1_000_000_000), &stop, |_| true).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/criticore-rt-program"), "{e}");
    }

    #[test]
    fn a_bad_load_is_refused_before_anything_starts() {
        let stop = AtomicBool::new(false);
        let mut l = small_load(0);
        l.spec.read_nb = 11;
        let e = run_point(&point(sh("exit 0"), vec![l], None, 1_000_000_000), &stop, |_| true).unwrap_err();
        assert!(e.to_string().starts_with("reads:"), "{e}");
    }
}
