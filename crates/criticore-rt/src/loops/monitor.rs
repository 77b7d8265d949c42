//! The bandwidth monitor on real processes (blin-bandwidth-monitor §3.3):
//! while a job of the real-time program is active, sample the global memory
//! traffic every Δ, let the engine's [`MonitorRules`] add the overhead the
//! table gives for it, and stop every best-effort group when the rules say
//! the threshold could be passed; resume them at the end of the job (the
//! program marks it on its counter page, which signals us) or at its deadline.
//!
//! Jobs and phases come from the real-time program's counter page (the tiny
//! phase/job API: `criticore.h`, `criticore.instrument`). Job begins do not
//! signal, so the loop ticks every Δ even between jobs and sees a begin up to
//! Δ after it; samples are aligned to that moment, where the counts were
//! read, so every sample's bytes cover its whole length (aligned to the mark,
//! the first sample would charge a fraction of Δ's traffic as a whole Δ). A
//! sample the loop wakes up late for covers more than Δ and is charged whole
//! (conservative), its true length is logged.

use super::{release, EndReason, Frame, Group, GroupSnapshot, Observer, Snapshot};
use crate::os::counter::CounterError;
use crate::os::counter_page::{now_ns, CounterPage, EventKind, EventReader};
use crate::os::throttle::Throttler;
use criticore::regulate::monitor::MonitorRules;

/// The signal value's cookie of the real-time program's page.
pub const RT_COOKIE: u64 = 1 << 40;

#[derive(Debug, Clone)]
pub struct MonitorConfig {
    pub duration_ns: Option<u64>,
    pub line_bytes: u64,
    /// The real-time task's relative deadline: a job not ended by then ends there.
    pub deadline_ns: u64,
    pub snapshot_ns: u64,
}

/// One sample of a job. Times relative to the run's start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleRecord {
    pub job: u32,
    pub index: u32,
    pub end_ns: u64,
    /// Its true length (Δ unless the loop woke late).
    pub length_ns: u64,
    pub phase: u32,
    /// Global bytes moved in it (all groups).
    pub bytes: u64,
    /// The rules' running sum after it.
    pub sum: f64,
    /// This sample suspended the best-effort groups.
    pub suspends: bool,
}

/// One job of the real-time program.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobRecord {
    pub job: u32,
    pub begin_ns: u64,
    /// When it ended (its job-end mark), or its deadline.
    pub end_ns: u64,
    pub by_deadline: bool,
    /// When the best-effort groups were stopped (0 = never).
    pub suspended_ns: u64,
    pub samples: u32,
    pub sum: f64,
}

#[derive(Debug)]
pub struct MonitorReport {
    pub samples: Vec<SampleRecord>,
    pub jobs: Vec<JobRecord>,
    pub elapsed_ns: u64,
    pub cpu_ns: u64,
    pub end: EndReason,
    pub signals: u64,
    pub warnings: Vec<String>,
}

struct Job {
    record: JobRecord,
    next_sample: u64,
    deadline: u64,
    last_total: u64,
    phase: u32,
}

/// Every group's counts together (a process that ended keeps its last count).
fn total(groups: &mut [Group], last: &mut [Vec<u64>]) -> u64 {
    let mut sum = 0;
    for (g, last) in groups.iter_mut().zip(last.iter_mut()) {
        for (c, l) in g.counters.iter_mut().zip(last.iter_mut()) {
            if let Ok(t) = c.read() {
                *l = t.total();
            }
            sum += *l;
        }
    }
    sum
}

/// Run until the duration, the end of every process, a signal, or the
/// observer says stop. `rt` is the real-time group; every other group is
/// best-effort. The caller resumes everything afterwards as well.
pub fn run(
    config: &MonitorConfig,
    mut rules: MonitorRules,
    rt: usize,
    rt_page: &CounterPage,
    groups: &mut [Group],
    throttler: &mut dyn Throttler,
    observer: &mut dyn Observer,
) -> Result<MonitorReport, CounterError> {
    let mut frame = Frame::block();
    let sig = frame.sig;
    // Job ends signal us; budgets play no part, so no counter is armed.
    for g in groups.iter_mut() {
        for c in g.counters.iter_mut() {
            c.arm(None)?;
        }
    }
    rt_page.set_notify(std::process::id() as i32, sig, RT_COOKIE, true);
    let mut reader = EventReader::default();
    let mut events = Vec::new();
    reader.poll(rt_page, &mut Vec::new()); // events before the run are not jobs of it

    let sample_ns = rules.sample_ns;
    frame.start(config.duration_ns);
    let (t0, end_at) = (frame.t0, frame.end_at);
    let mut last: Vec<Vec<u64>> = groups.iter().map(|g| vec![0; g.counters.len()]).collect();
    total(groups, &mut last);
    let mut report = MonitorReport { samples: Vec::new(), jobs: Vec::new(), elapsed_ns: 0, cpu_ns: 0, end: EndReason::Duration, signals: 0, warnings: Vec::new() };
    let mut job: Option<Job> = None;
    let mut phase_now = 0u32;
    let mut stopped_at: Option<u64> = None;
    let mut throttled_ns = 0u64;
    let mut next_tick = t0 + sample_ns;
    let mut next_snapshot = t0 + config.snapshot_ns;
    let mut ticks = 0u32;

    let end = loop {
        let wake = job.as_ref().map_or(next_tick, |j| j.next_sample.min(j.deadline)).min(end_at);
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let (got, now, end) = frame.wait(wake, &mut info, observer);
        if let Some(end) = end {
            break end;
        }
        if got == sig {
            report.signals += 1;
        }
        events.clear();
        reader.poll(rt_page, &mut events);
        for e in &events {
            match e.kind {
                EventKind::Phase => {
                    phase_now = e.arg;
                }
                EventKind::JobBegin => {
                    if let Some(j) = job.take() {
                        // A new job before the last one's end: that one ends here.
                        finish(j, e.t_ns, false, t0, &mut report, &mut rules);
                    }
                    rules.start_job();
                    let begin = e.t_ns.max(t0);
                    phase_now = 0;
                    let last_total = total(groups, &mut last);
                    job = Some(Job {
                        record: JobRecord { job: e.arg, begin_ns: begin - t0, ..Default::default() },
                        // From now, where last_total was read (see the module's text).
                        next_sample: now.max(begin) + sample_ns,
                        deadline: begin + config.deadline_ns,
                        last_total,
                        phase: 0,
                    });
                }
                EventKind::JobEnd => {
                    if let Some(j) = job.take() {
                        finish(j, e.t_ns, false, t0, &mut report, &mut rules);
                    }
                }
            }
            if let Some(j) = job.as_mut() {
                j.phase = phase_now;
            }
        }
        // Samples due (one per wake-up; a late one covers more than Δ).
        if let Some(j) = job.as_mut() {
            if now >= j.next_sample {
                let t = total(groups, &mut last);
                let bytes = (t - j.last_total) * config.line_bytes;
                let start = j.next_sample - sample_ns;
                j.last_total = t;
                let suspends = rules.sample(j.phase as usize, bytes);
                report.samples.push(SampleRecord {
                    job: j.record.job,
                    index: j.record.samples,
                    end_ns: now - t0,
                    length_ns: now - start,
                    phase: j.phase,
                    bytes,
                    sum: rules.sum(),
                    suspends,
                });
                j.record.samples += 1;
                while j.next_sample <= now {
                    j.next_sample += sample_ns;
                }
                if suspends {
                    for k in (0..groups.len()).filter(|&k| k != rt) {
                        let _ = throttler.stop(k);
                    }
                    stopped_at = Some(now);
                    j.record.suspended_ns = now - t0;
                }
            }
        }
        if job.as_ref().is_some_and(|j| now >= j.deadline) {
            let j = job.take().expect("checked");
            let deadline = j.deadline;
            finish(j, deadline, true, t0, &mut report, &mut rules);
        }
        // Resume at the job's end (or deadline).
        if job.as_ref().is_none_or(|j| j.record.suspended_ns == 0) {
            if let Some(since) = stopped_at.take() {
                for k in (0..groups.len()).filter(|&k| k != rt) {
                    let _ = throttler.resume(k);
                }
                throttled_ns += now.saturating_sub(since);
            }
        }
        if now >= next_tick {
            next_tick = now - (now - t0) % sample_ns + sample_ns;
            ticks += 1;
            if ticks >= 1000 {
                ticks = 0;
                if !observer.any_alive() {
                    break EndReason::AllExited;
                }
            }
        }
        if now >= next_snapshot {
            next_snapshot = now + config.snapshot_ns;
            let snap = Snapshot {
                elapsed_ns: now - t0,
                periods: report.jobs.len() as u64,
                groups: groups
                    .iter()
                    .enumerate()
                    .map(|(k, g)| GroupSnapshot {
                        name: g.name.clone(),
                        stopped: k != rt && stopped_at.is_some(),
                        throttled_ns: if k == rt { 0 } else { throttled_ns },
                        ..Default::default()
                    })
                    .collect(),
            };
            if !observer.snapshot(&snap) {
                break EndReason::Stopped;
            }
        }
        if now >= end_at {
            break EndReason::Duration;
        }
    };
    release(groups, throttler);
    rt_page.set_notify(0, 0, 0, false);
    let now = now_ns();
    if let Some(j) = job.take() {
        finish(j, now, false, t0, &mut report, &mut rules);
        if let Some(last) = report.jobs.last_mut() {
            last.end_ns = 0; // unfinished
        }
    }
    report.end = end;
    report.elapsed_ns = now - t0;
    report.cpu_ns = frame.cpu_ns();
    Ok(report)
}

fn finish(mut j: Job, at: u64, by_deadline: bool, t0: u64, report: &mut MonitorReport, rules: &mut MonitorRules) {
    j.record.end_ns = at.saturating_sub(t0);
    j.record.by_deadline = by_deadline;
    j.record.sum = rules.sum();
    rules.end_job();
    report.jobs.push(j.record);
}
