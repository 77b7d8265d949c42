//! The discrete-event loop. Time is integer nanoseconds. Between events every
//! running job progresses at the rate its memory model gives and issues memory
//! requests at the rate it gives; the next event (a release, a completion or
//! phase change computed exactly from the rates, a scheduler timer, a regulator
//! event, the end) is the earliest of them. Events therefore scale with
//! scheduling and regulation decisions, not with time or memory accesses.
//!
//! At one instant: progress, completions, releases, scheduler and regulator
//! events, servers the regulator depleted, the scheduling decision, the
//! regulator's view of it (stalls, bus mode), then the memory flows.

use super::job::{JobId, JobRecord, Jobs, NONE_U32, NONE_U64};
use super::memory::{Flows, MemoryContext, MemoryModel};
use super::regulate::{CoreView, Regulator};
use super::release::Releases;
use super::sched::Scheduler;
use super::{Segment, ServerSegment, SimConfig, SimResult, TaskStats, Unfinished};
use crate::model::TaskSystem;

/// Run `system` for `config.duration_ns` under a scheduler, memory model and regulator.
pub fn run<S: Scheduler>(
    system: &TaskSystem,
    sched: &mut S,
    memory: &mut dyn MemoryModel,
    regulator: &mut dyn Regulator,
    config: &SimConfig,
) -> SimResult {
    let m = system.platform.cores;
    let end = config.duration_ns;
    let trace = config.record_segments;
    let mem_active = memory.interferes();
    let reg_active = regulator.is_active();
    let criticality: Vec<u32> = system.tasks.iter().map(|t| t.criticality).collect();
    let mut releases = Releases::new(system, config.exec, config.seed);
    let mut jobs = Jobs::default();
    let mut running: Vec<Option<JobId>> = vec![None; m];
    let mut previous: Vec<Option<JobId>> = vec![None; m];
    let mut flows = Flows::new(m);
    let mut allowed = vec![true; m];
    let mut views = vec![CoreView::default(); m];
    let mut depleted: Vec<u32> = Vec::new();
    let mut finish_at = vec![NONE_U64; m];
    let mut segment_start = vec![0u64; m];
    // Jobs started on each core so far: a resumed job reloads its cache only if another ran meanwhile.
    let mut switches = vec![0u64; m];
    let mut servers_now: Vec<Option<u32>> = vec![None; m];
    let mut servers_before: Vec<Option<u32>> = vec![None; m];
    let mut server_since = vec![0u64; m];
    let bin_ns = config.bandwidth_bin_ns.filter(|&b| b > 0);
    let bins = bin_ns.map_or(0, |b| end.div_ceil(b) as usize);
    let mut result = SimResult {
        duration_ns: end,
        scheduler: String::new(),
        per_task: vec![TaskStats::default(); system.tasks.len()],
        records: Vec::new(),
        unfinished: Vec::new(),
        segments: Vec::new(),
        server_segments: Vec::new(),
        events: 0,
        bandwidth_bin_ns: bin_ns.unwrap_or(0),
        bandwidth: vec![vec![0.0; bins]; if bin_ns.is_some() { m } else { 0 }],
        regulator_intervals: Vec::new(),
        regulator_report: None,
        regulator_entities: Vec::new(),
    };
    let mut now = 0u64;
    let mut stalled_steps = 0u32;
    loop {
        let mut t = releases.next_time().min(sched.next_timer()).min(memory.next_event()).min(regulator.next_event()).min(end);
        for &f in &finish_at {
            t = t.min(f);
        }
        // Advance every running job, and the budgets, to t.
        if t > now {
            let dt = t - now;
            for c in 0..m {
                let Some(id) = running[c] else { continue };
                let job = jobs.get_mut(id);
                let rate = flows.rate[c];
                job.remaining_ns = if finish_at[c] == t {
                    0
                } else if rate == 1.0 {
                    job.remaining_ns - dt
                } else {
                    // Never reach 0 by rounding; the exact completion event does that.
                    job.remaining_ns.saturating_sub((dt as f64 * rate) as u64).max(1)
                };
                if mem_active || reg_active {
                    let (requests, stall) = (flows.requests_per_ns[c] * dt as f64, flows.stall[c] * dt as f64);
                    job.memory_requests += requests;
                    job.memory_stall_ns += stall;
                    let stats = &mut result.per_task[job.task as usize];
                    stats.memory_requests += requests;
                    stats.memory_stall_ns += stall;
                }
            }
            if let Some(b) = bin_ns {
                add_to_bins(&mut result.bandwidth, &flows.requests_per_ns, now, t, b);
            }
            if reg_active {
                regulator.advance(now, t, &flows.requests_per_ns);
            }
            sched.advance(now, t);
            now = t;
            stalled_steps = 0;
        } else {
            stalled_steps += 1;
            assert!(stalled_steps < 1_000_000, "simulation made no progress at t = {now} ns (a timer is not advancing)");
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
            if reg_active {
                regulator.job_completed(now, job.task);
            }
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
                memory_requests: job.memory_requests.round() as u64,
                memory_stall_ns: job.memory_stall_ns.round() as u64,
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
            let task = job.task;
            let id = jobs.insert(job);
            sched.release(now, id, jobs.get(id));
            if reg_active {
                regulator.job_released(now, task);
            }
        }
        if sched.next_timer() <= now {
            sched.timer(now);
        }
        if reg_active {
            if regulator.next_event() <= now {
                fill_views(&mut views, &running, &jobs, &criticality, &servers_now);
                regulator.on_event(now, &views);
            }
            regulator.take_depleted_servers(&mut depleted);
            for s in depleted.drain(..) {
                sched.deplete_server(now, s);
            }
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
                    let j = jobs.get_mut(old);
                    j.preemptions += 1;
                    j.needs_reload = true;
                    j.switches_at_preemption = switches[c];
                }
            }
            segment_start[c] = now;
            if let Some(new) = running[c] {
                switches[c] += 1;
                let job = jobs.get_mut(new);
                // Another job ran on this core since the preemption, or it resumes elsewhere.
                let cache_disturbed = job.last_core != c as u32 || switches[c] > job.switches_at_preemption + 1;
                if job.start_ns == NONE_U64 {
                    job.start_ns = now;
                }
                if job.last_core != NONE_U32 && job.last_core != c as u32 {
                    job.migrations += 1;
                }
                job.last_core = c as u32;
                if job.needs_reload {
                    job.needs_reload = false;
                    if mem_active && cache_disturbed {
                        // Cache-related preemption delay: the reload is extra work.
                        let penalty = memory.resume_penalty_ns(job);
                        let job = jobs.get_mut(new);
                        job.remaining_ns += penalty;
                        job.exec_ns += penalty;
                    }
                }
            }
        }
        if trace || reg_active {
            sched.servers_on_cores(&mut servers_now);
        }
        if trace {
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

        // The regulator's view of the decision, then the memory flows.
        if reg_active {
            fill_views(&mut views, &running, &jobs, &criticality, &servers_now);
            regulator.update(now, &views);
            for (c, a) in allowed.iter_mut().enumerate() {
                *a = regulator.allowed(c);
            }
        }
        if mem_active || reg_active {
            let ctx = MemoryContext { allowed: &allowed, bus_priority: regulator.bus_priority() };
            memory.flows(now, &running, &jobs, &ctx, &mut flows);
            if reg_active {
                regulator.set_flows(now, &flows.requests_per_ns);
            }
        }
        for c in 0..m {
            finish_at[c] = match running[c] {
                None => NONE_U64,
                Some(id) => {
                    let left = jobs.get(id).remaining_ns;
                    let rate = flows.rate[c];
                    if rate == 1.0 {
                        now + left
                    } else if rate > 0.0 {
                        now.saturating_add((left as f64 / rate).ceil() as u64)
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
    if reg_active {
        result.regulator_intervals = regulator.finish(end);
        result.regulator_report = regulator.report();
        result.regulator_entities = regulator.entities(end);
    }
    result
}

fn fill_views(views: &mut [CoreView], running: &[Option<JobId>], jobs: &Jobs, criticality: &[u32], servers: &[Option<u32>]) {
    for (c, v) in views.iter_mut().enumerate() {
        *v = match running[c] {
            None => CoreView { task: None, criticality: 0, deadline_ns: u64::MAX, server: servers[c], work_done_ns: 0 },
            Some(id) => {
                let j = jobs.get(id);
                CoreView {
                    task: Some(j.task),
                    criticality: criticality[j.task as usize],
                    deadline_ns: j.deadline_ns,
                    server: servers[c],
                    work_done_ns: j.exec_ns - j.remaining_ns,
                }
            }
        };
    }
}

/// Spread each core's requests over [from, to) into fixed-width bins.
fn add_to_bins(bins: &mut [Vec<f64>], requests_per_ns: &[f64], from: u64, to: u64, width: u64) {
    for (c, &r) in requests_per_ns.iter().enumerate() {
        if r <= 0.0 {
            continue;
        }
        let mut t = from;
        while t < to {
            let i = (t / width) as usize;
            let edge = ((i as u64 + 1) * width).min(to);
            if let Some(b) = bins[c].get_mut(i) {
                *b += r * (edge - t) as f64;
            }
            t = edge;
        }
    }
}
