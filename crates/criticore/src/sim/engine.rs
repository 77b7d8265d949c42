//! The discrete-event loop. Time is integer nanoseconds. Between events every
//! running job progresses at the rate its memory model gives; the next event
//! (a release, a completion computed exactly from the rates, a scheduler timer,
//! a regulator event, the end) is the earliest of them. Events therefore scale
//! with scheduling decisions, not with time or memory accesses.

use super::job::{JobId, JobRecord, Jobs, NONE_U32, NONE_U64};
use super::memory::MemoryModel;
use super::regulate::Regulator;
use super::release::Releases;
use super::sched::Scheduler;
use super::{Segment, ServerSegment, SimConfig, SimResult, TaskStats, Unfinished};
use crate::model::TaskSystem;

/// Run `system` for `config.duration_ns` under a scheduler, memory model and regulator.
pub fn run<S: Scheduler, M: MemoryModel, R: Regulator>(
    system: &TaskSystem,
    sched: &mut S,
    memory: &mut M,
    regulator: &mut R,
    config: &SimConfig,
) -> SimResult {
    let m = system.platform.cores;
    let end = config.duration_ns;
    let trace = config.record_segments;
    let mut releases = Releases::new(system, config.exec, config.seed);
    let mut jobs = Jobs::default();
    let mut running: Vec<Option<JobId>> = vec![None; m];
    let mut previous: Vec<Option<JobId>> = vec![None; m];
    let mut rates = vec![1.0f64; m];
    let mut finish_at = vec![NONE_U64; m];
    let mut segment_start = vec![0u64; m];
    let mut servers_now: Vec<Option<u32>> = vec![None; m];
    let mut servers_before: Vec<Option<u32>> = vec![None; m];
    let mut server_since = vec![0u64; m];
    let mut result = SimResult {
        duration_ns: end,
        scheduler: String::new(),
        per_task: vec![TaskStats::default(); system.tasks.len()],
        records: Vec::new(),
        unfinished: Vec::new(),
        segments: Vec::new(),
        server_segments: Vec::new(),
        events: 0,
    };
    let mut now = 0u64;
    let mut stalled_steps = 0u32;
    loop {
        let mut t = releases.next_time().min(sched.next_timer()).min(memory.next_event()).min(regulator.next_event()).min(end);
        for &f in &finish_at {
            t = t.min(f);
        }
        // Advance every running job to t.
        if t > now {
            let dt = t - now;
            for c in 0..m {
                if let Some(id) = running[c] {
                    let job = jobs.get_mut(id);
                    job.remaining_ns = if finish_at[c] == t {
                        0
                    } else if rates[c] == 1.0 {
                        job.remaining_ns - dt
                    } else {
                        // Never reach 0 by rounding; the exact completion event does that.
                        job.remaining_ns.saturating_sub((dt as f64 * rates[c]) as u64).max(1)
                    };
                }
            }
            sched.advance(now, t);
            now = t;
            stalled_steps = 0;
        } else {
            stalled_steps += 1;
            assert!(stalled_steps < 1_000_000, "simulation made no progress at t = {now} ns (scheduler or regulator timer not advancing)");
        }
        result.events += 1;

        // Completions.
        for c in 0..m {
            let Some(id) = running[c] else { continue };
            if jobs.get(id).remaining_ns > 0 {
                continue;
            }
            let job = jobs.remove(id);
            running[c] = None;
            finish_at[c] = NONE_U64;
            sched.complete(now, id, &job, c);
            let record = JobRecord {
                task: job.task,
                number: job.number,
                core: c as u32,
                release_ns: job.release_ns,
                start_ns: job.start_ns,
                finish_ns: now,
                deadline_ns: job.deadline_ns,
                exec_ns: job.exec_ns,
                preemptions: job.preemptions,
                migrations: job.migrations,
            };
            result.per_task[job.task as usize].add(&record);
            if trace {
                result.segments.push(Segment { core: c as u32, task: job.task, number: job.number, start_ns: segment_start[c], end_ns: now });
            }
            if config.record_jobs {
                result.records.push(record);
            }
        }
        if now >= end {
            break;
        }

        // Releases, then internal events.
        while let Some(job) = releases.pop_due(now) {
            result.per_task[job.task as usize].released += 1;
            let id = jobs.insert(job);
            sched.release(now, id, jobs.get(id));
        }
        if sched.next_timer() <= now {
            sched.timer(now);
        }
        if regulator.next_event() <= now {
            regulator.on_event(now);
        }

        // Scheduling decision and its bookkeeping.
        previous.copy_from_slice(&running);
        sched.dispatch(now, &jobs, &mut running);
        for c in 0..m {
            if running[c] == previous[c] {
                continue;
            }
            if let Some(old) = previous[c] {
                if trace {
                    let j = jobs.get(old);
                    result.segments.push(Segment { core: c as u32, task: j.task, number: j.number, start_ns: segment_start[c], end_ns: now });
                }
                if !running.contains(&Some(old)) {
                    jobs.get_mut(old).preemptions += 1;
                }
            }
            segment_start[c] = now;
            if let Some(new) = running[c] {
                let job = jobs.get_mut(new);
                if job.start_ns == NONE_U64 {
                    job.start_ns = now;
                }
                if job.last_core != NONE_U32 && job.last_core != c as u32 {
                    job.migrations += 1;
                }
                job.last_core = c as u32;
            }
        }
        if trace {
            sched.servers_on_cores(&mut servers_now);
            for c in 0..m {
                if servers_now[c] != servers_before[c] {
                    if let Some(s) = servers_before[c] {
                        result.server_segments.push(ServerSegment { core: c as u32, server: s, start_ns: server_since[c], end_ns: now });
                    }
                    server_since[c] = now;
                    servers_before[c] = servers_now[c];
                }
            }
        }

        // Progress rates and exact completion times.
        memory.rates(now, &running, &jobs, &mut rates);
        for c in 0..m {
            if !regulator.core_allowed(c) {
                rates[c] = 0.0;
            }
            finish_at[c] = match running[c] {
                None => NONE_U64,
                Some(id) => {
                    let left = jobs.get(id).remaining_ns;
                    if rates[c] == 1.0 {
                        now + left
                    } else if rates[c] > 0.0 {
                        now.saturating_add((left as f64 / rates[c]).ceil() as u64)
                    } else {
                        NONE_U64
                    }
                }
            };
        }
    }

    // Close what is still open at the end.
    if trace {
        for c in 0..m {
            if let Some(id) = running[c] {
                let j = jobs.get(id);
                result.segments.push(Segment { core: c as u32, task: j.task, number: j.number, start_ns: segment_start[c], end_ns: end });
            }
            if let Some(s) = servers_before[c] {
                result.server_segments.push(ServerSegment { core: c as u32, server: s, start_ns: server_since[c], end_ns: end });
            }
        }
    }
    for (_, job) in jobs.live() {
        let stats = &mut result.per_task[job.task as usize];
        stats.unfinished += 1;
        if job.deadline_ns <= end {
            stats.misses += 1;
        }
        if config.record_jobs {
            result.unfinished.push(Unfinished { task: job.task, number: job.number, release_ns: job.release_ns, deadline_ns: job.deadline_ns });
        }
    }
    result.unfinished.sort_unstable_by_key(|u| (u.release_ns, u.task));
    result
}
