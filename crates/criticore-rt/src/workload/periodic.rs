//! A task of the task-system file as a real periodic process, like rt-app: a
//! job every period, each job the task's work phase by phase (its memory
//! profile walked with the load generator's loops, `load::Walker`), with per-job
//! release, start, finish and deadline in the simulator's job-record terms.
//! Jobs and phases are marked on the counter page, so the monitor mode and
//! the profiler see them.
//!
//! A phase of `work` ns at `accesses_per_ms` and `read_fraction` becomes
//! `lines = accesses_per_ms × work / 1 ms` line accesses, `read_fraction × 10`
//! of every 10 lines read, and after every 10 lines a delay of running time
//! (`spin.rs`) sized so that the phase takes `work` alone on this machine
//! (the lines calibrated at start, then the phase measured with its delay and
//! corrected: `fit_phase`). If its lines alone
//! take longer than `work`, the delay is 0 and the phase runs longer than the
//! file says (reported). A task without a memory profile spins for its PET.
//! The lines are walked over the task's working set in address order
//! (`stream`: the hardware prefetchers help) or in a fixed random order
//! (`random`: each line once per pass, like the µB task of
//! mc2-hardware-management §4.1), as its memory profile's pattern says.
//! A background task (`arrival = "background"`) has no jobs: its phases run
//! over and over from its offset to the end, the open last phase in rounds of
//! `BACKGROUND_ROUND_NS`, with no job marks.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::os::counter_page::{now_ns, CounterPage, EventKind};
use criticore::error::FieldError;
use criticore::model::{AccessPattern, TaskSystem};
use criticore::policy::activation::ActivationLimit;
use criticore::policy::pet;
use crate::workload::load::{Walker, LINES_PER_ITERATION};
use crate::workload::sizing_cache::{PhaseKey, SizingCache};

// Below both this file and the sizing store that remembers it.
pub use super::phase::PhaseWork;

/// A background task's open last phase, per round: short enough that a stop
/// or the end is seen within it.
pub const BACKGROUND_ROUND_NS: u64 = 10_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicSpec {
    /// No jobs: the phases over and over (a background task).
    pub background: bool,
    pub period_ns: u64,
    pub deadline_ns: u64,
    pub offset_ns: u64,
    pub phases: Vec<PhaseWork>,
    pub buffer_bytes: usize,
    pub line_bytes: usize,
    /// Stop after this many jobs, or this long (the earlier).
    pub jobs: Option<u64>,
    pub duration_ns: Option<u64>,
    /// OSEK's multiple-activation limit (`criticore::policy::activation`):
    /// a release that finds this many jobs active is lost, no job of its own
    /// (job numbers count releases, so a lost one leaves a gap).
    pub activation_limit: Option<u32>,
}

/// What a task of the file does per job, before this machine's costs size
/// it: the PET it runs at (the engine's, `criticore::policy::pet`: a
/// cost-curve task's conditioned PET under the allocation, at `RUN_LEVEL`)
/// split into its memory profile's phases.
#[derive(Debug, Clone, PartialEq)]
pub struct JobPlan {
    pub pet_ns: u64,
    /// Per phase: (work ns, line accesses, reads of every 10 lines); the last
    /// phase without a `work` lasts to the end of the PET.
    pub phases: Vec<(u64, u64, u32)>,
    pub buffer_bytes: usize,
    pub line_bytes: usize,
    /// Walk the lines in a fixed random order (else in address order).
    pub random: bool,
    pub background: bool,
    pub period_ns: u64,
    pub deadline_ns: u64,
    pub offset_ns: u64,
    pub activation_limit: Option<u32>,
}

/// A cooperative or non-preemptive task, or one with non-preemptive copies,
/// is not run on a machine: Linux may preempt a process anywhere, so it
/// would run preemptively, unlike the simulator and the analysis
/// (docs/format.md, `preemption`, `copy_in`).
pub fn refuse_limited_preemption(system: &TaskSystem, task: usize) -> Result<(), FieldError> {
    let t = &system.tasks[task];
    let linux = "simulated and analyzed, not run on a machine (Linux may preempt a process anywhere)";
    match t.preemption {
        criticore::model::Preemption::Preemptive if t.copy_in_ns + t.copy_out_ns == 0 => Ok(()),
        criticore::model::Preemption::Preemptive => {
            let key = if t.copy_in_ns > 0 { "copy_in" } else { "copy_out" };
            Err(FieldError::new(format!("task[{task}].{key}"), format!("non-preemptive copies are {linux}")))
        }
        p => Err(FieldError::new(format!("task[{task}].preemption"), format!("{} tasks are {linux}", p.name()))),
    }
}

impl JobPlan {
    /// Task `task` of `system` as the periodic worker runs it.
    pub fn of(system: &TaskSystem, task: usize) -> Result<JobPlan, FieldError> {
        refuse_limited_preemption(system, task)?;
        let system = pet::conditioned(system).map_err(|e| e.field_error())?;
        let t = &system.tasks[task];
        let line_bytes = system.platform.llc.line_bytes as usize;
        let background = t.is_background();
        let pet_ns = match &t.memory {
            // A round: the phases with their own work, then the open one for a round's time.
            Some(m) if background => m.phases.iter().filter_map(|p| p.work_ns).sum::<u64>() + BACKGROUND_ROUND_NS,
            None if background => BACKGROUND_ROUND_NS,
            _ => pet::run_pet_ns(&system, task, pet::RUN_LEVEL),
        };
        let mut phases = Vec::new();
        let mut buffer_bytes = LINES_PER_ITERATION as usize * line_bytes;
        match &t.memory {
            None => phases.push((pet_ns, 0, 0)),
            Some(m) => {
                buffer_bytes = buffer_bytes.max(m.wss_bytes as usize);
                let mut used = 0u64;
                for p in &m.phases {
                    let work = p.work_ns.unwrap_or(pet_ns.saturating_sub(used));
                    used += work;
                    phases.push((work, (p.accesses_per_ms * work as f64 / 1e6).round() as u64, (p.read_fraction * 10.0).round() as u32));
                }
            }
        }
        let random = t.memory.as_ref().is_some_and(|m| m.pattern == AccessPattern::Random);
        Ok(JobPlan { pet_ns, phases, buffer_bytes, line_bytes, random, background, period_ns: t.period_ns, deadline_ns: t.deadline_ns, offset_ns: t.offset_ns, activation_limit: t.activation_limit })
    }
}

impl JobPlan {
    /// Size every phase on this machine (calibrated, then measured: `fit_phase`),
    /// or take a sizing `cache` remembers, into the spec `run` takes; notes for
    /// phases whose lines alone outlast their work.
    pub fn prepare(&self, walker: &mut Walker, jobs: Option<u64>, duration_ns: Option<u64>, cache: &mut SizingCache) -> (PeriodicSpec, Vec<String>) {
        let mut notes = Vec::new();
        let mut cals = std::collections::HashMap::new();
        let mut phases = Vec::new();
        for (i, &(work, lines, read_nb)) in self.phases.iter().enumerate() {
            let key = PhaseKey { buffer_bytes: self.buffer_bytes, line_bytes: self.line_bytes, random: self.random, work_ns: work, lines, read_nb };
            let (w, ns_per_iteration) = cache.get(&key).unwrap_or_else(|| {
                let cal = *cals.entry(read_nb).or_insert_with(|| calibrate(walker, read_nb));
                let w = fit_phase(walker, work, lines, read_nb, &cal);
                cache.put(&key, &w, cal.ns_per_iteration);
                (w, cal.ns_per_iteration)
            });
            let alone = w.iterations as f64 * ns_per_iteration;
            if w.iterations > 0 && w.delay_ns == 0 && alone > work as f64 * 1.02 {
                notes.push(format!("phase {i}: {lines} line accesses take {:.0} µs alone here, more than its {:.0} µs of work", alone / 1e3, work as f64 / 1e3));
            }
            phases.push(w);
        }
        cache.save();
        let spec = PeriodicSpec {
            background: self.background,
            period_ns: self.period_ns,
            deadline_ns: self.deadline_ns,
            offset_ns: self.offset_ns,
            phases,
            buffer_bytes: self.buffer_bytes,
            line_bytes: self.line_bytes,
            jobs,
            duration_ns,
            activation_limit: self.activation_limit,
        };
        (spec, notes)
    }

    /// The walker this plan's jobs walk.
    pub fn walker(&self) -> io::Result<Walker> {
        Walker::new(self.buffer_bytes, self.line_bytes, false, self.random)
    }
}

/// One job; times relative to the first release's origin (the run's start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobRecord {
    pub job: u32,
    pub release_ns: u64,
    pub start_ns: u64,
    pub finish_ns: u64,
    pub deadline_ns: u64,
    /// CPU time the job used.
    pub exec_ns: u64,
    pub memory_requests: u64,
}

/// This machine's cost, measured once: ns per iteration of 10 lines for
/// `read_nb` reads with no delay (the delay is in time: `spin.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub ns_per_iteration: f64,
}

pub fn calibrate(walker: &mut Walker, read_nb: u32) -> Calibration {
    // The least of several trials: the cost undisturbed by the machine, so a
    // job alone takes its PET and interference shows as a longer job.
    let best = |walker: &mut Walker| trials(walker, LINES_PER_ITERATION - read_nb, read_nb, 0, 20_000, 7)[0];
    best(walker); // warm-up
    Calibration { ns_per_iteration: best(walker) }
}

/// CPU ns per iteration over `n` iterations with `delay_ns` after each,
/// `count` times, sorted. In this thread's CPU time: a task calibrates inside
/// its server, often stopped mid-trial, and neither that nor preemption may
/// count.
fn trials(walker: &mut Walker, write_nb: u32, read_nb: u32, delay_ns: u64, n: u64, count: usize) -> Vec<f64> {
    let cpu_ns = crate::os::clock::thread_cpu_ns;
    let mut t: Vec<f64> = (0..count)
        .map(|_| {
            let start = cpu_ns();
            for _ in 0..n {
                walker.iteration_for(write_nb, read_nb, delay_ns);
            }
            (cpu_ns() - start) as f64 / n as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t
}

/// Size a phase: `lines` accesses with `read_nb` of 10 read, to take `work_ns` alone.
pub fn phase_work(work_ns: u64, lines: u64, read_nb: u32, cal: &Calibration) -> PhaseWork {
    let iterations = lines.div_ceil(LINES_PER_ITERATION as u64);
    if iterations == 0 {
        return PhaseWork { iterations: 0, read_nb, delay_ns: work_ns, work_ns };
    }
    let spare = work_ns as f64 / iterations as f64 - cal.ns_per_iteration;
    PhaseWork { iterations, read_nb, delay_ns: spare.max(0.0) as u64, work_ns }
}

/// Size a phase by measuring it: start from [`phase_work`], then run the
/// phase's own iterations (its delay included) and correct the delay until
/// one iteration costs `work / iterations` within 2%. The calibration's
/// iterations run back to back, so a random walk overlaps their misses; with
/// the delay loop after each iteration (it depends on the lines read, as in
/// Fig. 4) they cannot, and the phase alone would run long.
pub fn fit_phase(walker: &mut Walker, work_ns: u64, lines: u64, read_nb: u32, cal: &Calibration) -> PhaseWork {
    let mut w = phase_work(work_ns, lines, read_nb, cal);
    if w.iterations == 0 || w.delay_ns == 0 {
        return w;
    }
    let target = work_ns as f64 / w.iterations as f64;
    let n = w.iterations.clamp(1, 10_000);
    for _ in 0..6 {
        // The median of 5: the phase as it will run, not its best case.
        let cost = trials(walker, LINES_PER_ITERATION - read_nb, read_nb, w.delay_ns, n, 5)[2];
        let error = cost - target;
        if error.abs() <= 0.02 * target {
            break;
        }
        w.delay_ns = (w.delay_ns as f64 - error).max(0.0) as u64;
        if w.delay_ns == 0 {
            break;
        }
    }
    w
}

fn sleep_until(t: u64) {
    let ts = libc::timespec { tv_sec: (t / 1_000_000_000) as i64, tv_nsec: (t % 1_000_000_000) as i64 };
    // SAFETY: plain absolute sleep on CLOCK_MONOTONIC; EINTR just returns early.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// Run jobs until the count, the duration or `stop`; `on_job` sees each record.
/// Time 0 (the first release less the offset) is the reader's common start
/// when it holds one (counter_page.rs), else now. A background spec runs its
/// phases until the duration or `stop` ([`run_background`]) and returns no records.
pub fn run(spec: &PeriodicSpec, walker: &mut Walker, page: Option<&CounterPage>, stop: &AtomicBool, mut on_job: impl FnMut(&JobRecord)) -> io::Result<Vec<JobRecord>> {
    let t0 = page.and_then(|p| p.wait_start(stop)).unwrap_or_else(now_ns);
    let end = spec.duration_ns.map_or(u64::MAX, |d| t0 + d);
    if spec.background {
        run_background(spec, walker, page, stop, t0 + spec.offset_ns, end);
        return Ok(Vec::new());
    }
    let mut records = Vec::new();
    let mut limit = spec.activation_limit.map(ActivationLimit::new);
    for k in 0u64.. {
        if spec.jobs.is_some_and(|n| k >= n) || stop.load(Ordering::Relaxed) {
            break;
        }
        let release = t0 + spec.offset_ns + k * spec.period_ns;
        if release >= end || !sleep_to(release, stop) {
            break;
        }
        // Jobs run one after another: none is in flight while a release is decided.
        if limit.as_ref().is_some_and(|l| l.lost(release, 0)) {
            continue;
        }
        let start = now_ns();
        let cpu = crate::os::clock::thread_cpu_ns();
        let job = k as u32;
        if let Some(p) = page {
            p.mark_at(EventKind::JobBegin, job, start);
        }
        let lines = walk_phases(spec, walker, page, || false);
        let finish = now_ns();
        if let Some(p) = page {
            p.mark_at(EventKind::JobEnd, job, finish);
        }
        let r = JobRecord {
            job,
            release_ns: release - t0,
            start_ns: start - t0,
            finish_ns: finish - t0,
            deadline_ns: release - t0 + spec.deadline_ns,
            exec_ns: crate::os::clock::thread_cpu_ns() - cpu,
            memory_requests: lines,
        };
        if let Some(l) = &mut limit {
            l.completed(finish);
        }
        on_job(&r);
        records.push(r);
    }
    Ok(records)
}

/// Sleep until `t` (absolute); false if `stop` came first.
fn sleep_to(t: u64, stop: &AtomicBool) -> bool {
    while now_ns() < t && !stop.load(Ordering::Relaxed) {
        sleep_until(t);
    }
    !stop.load(Ordering::Relaxed)
}

/// A background task: from `start` its phases round after round (at most
/// `spec.jobs` rounds), until `end` or `stop`, no job marks.
fn run_background(spec: &PeriodicSpec, walker: &mut Walker, page: Option<&CounterPage>, stop: &AtomicBool, start: u64, end: u64) {
    let done = || stop.load(Ordering::Relaxed) || now_ns() >= end;
    if start >= end || !sleep_to(start, stop) {
        return;
    }
    for _ in 0..spec.jobs.unwrap_or(u64::MAX) {
        walk_phases(spec, walker, page, done);
        if done() {
            break;
        }
    }
}

/// The phases once, publishing lines as they go; stops early when `cut` says
/// so (checked every batch). Returns the lines walked.
fn walk_phases(spec: &PeriodicSpec, walker: &mut Walker, page: Option<&CounterPage>, cut: impl Fn() -> bool) -> u64 {
    let mut lines = 0u64;
    for (i, ph) in spec.phases.iter().enumerate() {
        if let Some(p) = page {
            p.mark(EventKind::Phase, i as u32);
        }
        if ph.iterations == 0 {
            walker.iteration_for(0, 0, ph.delay_ns);
            continue;
        }
        let (writes, reads) = (LINES_PER_ITERATION - ph.read_nb, ph.read_nb);
        let mut done = 0u64;
        while done < ph.iterations {
            // Publish every 64 iterations, as the load publishes every ~64 lines' worth.
            let batch = (ph.iterations - done).min(64);
            for _ in 0..batch {
                walker.iteration_for(writes, reads, ph.delay_ns);
            }
            done += batch;
            if let Some(p) = page {
                p.count(batch * reads as u64, batch * writes as u64);
            }
            lines += batch * LINES_PER_ITERATION as u64;
            if cut() {
                return lines;
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_is_sized_to_its_work() {
        let cal = Calibration { ns_per_iteration: 100.0 };
        // 1 ms of work, 5,000 lines = 500 iterations: 2,000 ns each, 1,900 ns of delay.
        let p = phase_work(1_000_000, 5_000, 3, &cal);
        assert_eq!((p.iterations, p.read_nb, p.delay_ns), (500, 3, 1_900));
        // Lines that alone take longer than the work: no delay.
        assert_eq!(phase_work(1_000, 5_000, 3, &cal).delay_ns, 0);
        // No lines: compute only, the whole work as delay.
        assert_eq!(phase_work(1_000_000, 0, 0, &cal).delay_ns, 1_000_000);
    }

    #[test]
    fn jobs_are_released_periodically_and_marked_on_the_page() {
        let path = std::env::temp_dir().join(format!("criticore-periodic-test-{}", std::process::id()));
        let page = CounterPage::create(&path).unwrap();
        let mut walker = Walker::new(1 << 20, 64, false, false).unwrap();
        let spec = PeriodicSpec {
            background: false,
            period_ns: 5_000_000,
            deadline_ns: 5_000_000,
            offset_ns: 0,
            phases: vec![PhaseWork { iterations: 100, read_nb: 4, delay_ns: 0, work_ns: 0 }, PhaseWork { iterations: 0, read_nb: 0, delay_ns: 1000, work_ns: 0 }],
            buffer_bytes: 1 << 20,
            line_bytes: 64,
            jobs: Some(4),
            duration_ns: None,
            activation_limit: None,
        };
        let stop = AtomicBool::new(false);
        let jobs = run(&spec, &mut walker, Some(&page), &stop, |_| {}).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(jobs.len(), 4);
        for (k, j) in jobs.iter().enumerate() {
            assert_eq!(j.release_ns, k as u64 * 5_000_000);
            assert_eq!(j.deadline_ns, j.release_ns + 5_000_000);
            assert!(j.start_ns >= j.release_ns && j.finish_ns >= j.start_ns);
            assert_eq!(j.memory_requests, 1_000);
        }
        // 100 iterations × 4 reads and 6 writes per job, 4 jobs.
        assert_eq!(page.counts(), (1_600, 2_400));
        let mut events = Vec::new();
        crate::os::counter_page::EventReader::default().poll(&page, &mut events);
        let kinds: Vec<(EventKind, u32)> = events.iter().map(|e| (e.kind, e.arg)).collect();
        let one = |j| vec![(EventKind::JobBegin, j), (EventKind::Phase, 0), (EventKind::Phase, 1), (EventKind::JobEnd, j)];
        assert_eq!(kinds, [one(0), one(1), one(2), one(3)].concat());
    }

    #[test]
    fn releases_that_find_the_limit_s_jobs_active_are_lost() {
        // Releases every µs and jobs of 10,000 line accesses (longer than 2 µs
        // on any machine), limit 2: the third release finds jobs 0 and 1
        // active and is lost. Every decision is checked against the kept
        // jobs' own finishing times, worked out again here.
        let mut walker = Walker::new(1 << 20, 64, false, false).unwrap();
        let spec = PeriodicSpec {
            background: false,
            period_ns: 1_000,
            deadline_ns: 1_000,
            offset_ns: 0,
            phases: vec![PhaseWork { iterations: 1_000, read_nb: 4, delay_ns: 0, work_ns: 0 }],
            buffer_bytes: 1 << 20,
            line_bytes: 64,
            jobs: Some(2_000),
            duration_ns: None,
            activation_limit: Some(2),
        };
        let stop = AtomicBool::new(false);
        let jobs = run(&spec, &mut walker, None, &stop, |_| {}).unwrap();
        // Every one of the 2,000 releases is decided, those after the last kept
        // job too (a host that delays the worker long can lose all of them).
        assert!(jobs.len() < 2_000, "no release was lost");
        let mut kept: Vec<&JobRecord> = Vec::new();
        for k in 0..2_000u32 {
            let release = k as u64 * 1_000;
            let active = kept.iter().filter(|j| j.finish_ns > release).count();
            let ran = jobs.iter().find(|j| j.job == k);
            assert_eq!(ran.is_some(), active < 2, "release {k}: {active} jobs active");
            if let Some(j) = ran {
                assert_eq!(j.release_ns, release);
                kept.push(j);
            }
        }
    }

    #[test]
    fn a_cooperative_task_is_not_run_on_a_machine() {
        let text = "[platform]\ncores = 1\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"10ms\"\npet = \"1ms\"\npreemption = \"cooperative\"\n";
        let system = criticore::model::parse_task_system(text, criticore::model::Format::Toml, "t.toml").unwrap();
        let e = JobPlan::of(&system, 0).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("task[0].preemption", "cooperative tasks are simulated and analyzed, not run on a machine (Linux may preempt a process anywhere)"));
        let preemptive = text.replace("preemption = \"cooperative\"\n", "");
        assert!(JobPlan::of(&criticore::model::parse_task_system(&preemptive, criticore::model::Format::Toml, "t.toml").unwrap(), 0).is_ok());
        // Non-preemptive copies neither.
        let copies = criticore::model::parse_task_system(&format!("{preemptive}copy_out = \"10us\"\n"), criticore::model::Format::Toml, "t.toml").unwrap();
        let e = JobPlan::of(&copies, 0).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("task[0].copy_out", "non-preemptive copies are simulated and analyzed, not run on a machine (Linux may preempt a process anywhere)"));
    }

    #[test]
    fn a_background_task_s_plan_is_a_round_of_its_profile() {
        // mrs-tables' Task3: 375,000 write-only lines per ms, in rounds of 10 ms.
        let text = include_str!("../../../../examples/regulate/mrs-tables.toml");
        let system = criticore::model::parse_task_system(text, criticore::model::Format::Toml, "mrs-tables.toml").unwrap();
        let i = system.tasks.iter().position(|t| t.name == "Task3").unwrap();
        let plan = JobPlan::of(&system, i).unwrap();
        assert!(plan.background);
        assert_eq!(plan.pet_ns, BACKGROUND_ROUND_NS);
        assert_eq!(plan.phases, vec![(10_000_000, 3_750_000, 0)]);
        assert_eq!(plan.buffer_bytes, 256 << 20);
    }

    #[test]
    fn a_background_task_walks_its_phases_round_after_round_without_jobs() {
        let path = std::env::temp_dir().join(format!("criticore-background-test-{}", std::process::id()));
        let page = CounterPage::create(&path).unwrap();
        let mut walker = Walker::new(1 << 20, 64, false, false).unwrap();
        // Rounds of 64 iterations (one batch), 3 reads and 7 writes each, for
        // 3 rounds: the count stops it, as the duration or a stop would.
        let spec = PeriodicSpec {
            background: true,
            period_ns: u64::MAX,
            deadline_ns: u64::MAX,
            offset_ns: 0,
            phases: vec![PhaseWork { iterations: 64, read_nb: 3, delay_ns: 0, work_ns: 0 }],
            buffer_bytes: 1 << 20,
            line_bytes: 64,
            jobs: Some(3),
            duration_ns: Some(10_000_000_000),
            activation_limit: None,
        };
        let stop = AtomicBool::new(false);
        let jobs = run(&spec, &mut walker, Some(&page), &stop, |_| panic!("a background task has no jobs")).unwrap();
        assert!(jobs.is_empty());
        assert_eq!(page.counts(), (3 * 64 * 3, 3 * 64 * 7));
        let mut events = Vec::new();
        crate::os::counter_page::EventReader::default().poll(&page, &mut events);
        let _ = std::fs::remove_file(&path);
        assert!(events.iter().all(|e| e.kind == EventKind::Phase), "job marks: {events:?}");
        // Without a count, the duration ends it (100 ms here).
        let t = now_ns();
        assert!(run(&PeriodicSpec { jobs: None, duration_ns: Some(100_000_000), ..spec.clone() }, &mut walker, None, &stop, |_| {}).unwrap().is_empty());
        assert!(now_ns() - t >= 100_000_000);
        // A stop already set: nothing runs at all.
        stop.store(true, Ordering::Relaxed);
        assert!(run(&PeriodicSpec { jobs: None, ..spec }, &mut walker, None, &stop, |_| {}).unwrap().is_empty());
    }
}
