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
//!
//! Records (jobs, segments, regulator spans, bandwidth bins) go to a [`Sink`]
//! as they close; statistics are running aggregates, so memory does not grow
//! with simulated time. Every [`PROGRESS_EVENTS`] events the [`Progress`]
//! callback may stop the run: the result is then that of a run whose
//! duration was the time reached.

use crate::policy::activation::ActivationLimits;
use super::job::{JobId, JobRecord, Jobs, NONE_U32, NONE_U64};
use super::memory::{Flows, MemoryContext, MemoryModel};
use super::regulate::{CoreView, Regulator};
use super::regulate::Interval;
use super::regions::Regions;
use super::release::Releases;
use super::draws::Draws;
use std::sync::Arc;
use super::sched::Scheduler;
use super::sink::{Progress, Sink};
use super::{Segment, ServerSegment, SimConfig, SimResult, TaskStats, Unfinished, WorkSpan};
use crate::model::TaskSystem;

/// Events between two calls of the progress callback (a power of two).
pub const PROGRESS_EVENTS: u64 = 256;

/// A job's segment to the sink, and, for a task with runnables (`named`),
/// its work over it as (done at the start, done at the end, in all).
fn close_segment(sink: &mut dyn Sink, segment: Segment, named: bool, (work_start_ns, work_end_ns, exec_ns): (u64, u64, u64)) {
    sink.segment(&segment);
    if named {
        sink.work_span(&WorkSpan { segment, work_start_ns, work_end_ns, exec_ns });
    }
}

/// Run `system` for `config.duration_ns` under a scheduler, memory model and
/// regulator, handing records to `sink` and asking `progress` whether to go on.
pub fn run<S: Scheduler, M: MemoryModel + ?Sized, R: Regulator + ?Sized>(
    system: &TaskSystem,
    sched: &mut S,
    memory: &mut M,
    regulator: &mut R,
    config: &SimConfig,
    draws: Option<&Arc<Draws>>,
    sink: &mut dyn Sink,
    progress: &mut dyn Progress,
) -> SimResult {
    let m = system.platform.cores;
    let end = config.duration_ns;
    let trace = config.record_segments;
    let mem_active = memory.interferes();
    let reg_active = regulator.is_active();
    let criticality: Vec<u32> = system.tasks.iter().map(|t| t.criticality).collect();
    let mut releases = Releases::new(system, config.exec, config.seed, end, draws.cloned()).with_given(&config.given_exec_ns);
    let mut jobs = Jobs::default();
    let mut running: Vec<Option<JobId>> = vec![None; m];
    let mut previous: Vec<Option<JobId>> = vec![None; m];
    let mut flows = Flows::new(m);
    let mut allowed = vec![true; m];
    let mut views = vec![CoreView::default(); m];
    let mut depleted: Vec<u32> = Vec::new();
    let mut holds: Vec<(u32, bool)> = Vec::new();
    let mut finish_at = vec![NONE_U64; m];
    // Cooperative and non-preemptive tasks: where each core's job reaches its next preemption point.
    let regions = Regions::new(system, draws.cloned());
    let mut point_at = vec![NONE_U64; m];
    let mut segment_start = vec![0u64; m];
    // Work done by the running job when its segment began (tasks with runnables).
    let mut segment_work = vec![0u64; m];
    let named_steps: Vec<bool> = system.tasks.iter().map(|t| !t.steps().is_empty()).collect();
    let mut servers_now: Vec<Option<u32>> = vec![None; m];
    let mut servers_before: Vec<Option<u32>> = vec![None; m];
    let mut server_since = vec![0u64; m];
    let mut bins = config.bandwidth_bin_ns.filter(|&b| b > 0).map(|b| Bins::new(b, m));
    let mut intervals: Vec<Interval> = Vec::new();
    let mut completed = 0u64;
    // Only with memory or regulation can a core's rate change without a new job on it.
    let rates_vary = mem_active || reg_active;
    let all_cores: Vec<usize> = (0..m).collect();
    // A busy task's next release may wait for its job to finish (release.rs).
    let serial = sched.serial_tasks() && !(reg_active && regulator.observes_releases());
    // Activation limits count each task's jobs in flight too.
    let mut limits = ActivationLimits::new(system);
    let track = serial || limits.any();
    let mut in_flight = vec![0u32; if track { system.tasks.len() } else { 0 }];
    let mut changed: Vec<usize> = Vec::with_capacity(m);
    let mut result = SimResult {
        drawn_seed: matches!(config.exec, super::ExecModel::Drawn(_)).then_some(config.seed),
        duration_ns: end,
        scheduler: String::new(),
        per_task: vec![TaskStats::default(); system.tasks.len()],
        records: Vec::new(),
        unfinished: Vec::new(),
        segments: Vec::new(),
        work_spans: Vec::new(),
        server_segments: Vec::new(),
        events: 0,
        bandwidth_bin_ns: bins.as_ref().map_or(0, |b| b.width_ns),
        bandwidth: Vec::new(),
        regulator_intervals: Vec::new(),
        regulator_states: Default::default(),
        partial: false,
        regulator_report: None,
        regulator_entities: Vec::new(),
        chains: Vec::new(),
    };
    let mut now = 0u64;
    let mut stalled_steps = 0u32;
    loop {
        let next_finish = finish_at.iter().copied().min().unwrap_or(NONE_U64);
        let mut t = releases.next_time().min(sched.next_timer()).min(end).min(next_finish);
        if regions.any() {
            t = t.min(point_at.iter().copied().min().unwrap_or(NONE_U64));
        }
        if mem_active {
            t = t.min(memory.next_event());
        }
        if reg_active {
            t = t.min(regulator.next_event());
        }
        // Advance every running job, and the budgets, to t.
        if t > now {
            let dt = t - now;
            // At rate 1 a running job's work left is finish_at − now, brought up to
            // date only when it leaves its core.
            for c in (0..m).filter(|_| rates_vary) {
                let Some(id) = running[c] else { continue };
                let job = jobs.get_mut(id);
                let rate = flows.rate[c];
                job.remaining_ns = if finish_at[c] == t {
                    0
                } else if rate == 1.0 {
                    job.remaining_ns - dt
                } else {
                    // Whole ns done, the fraction carried; never reach 0 by
                    // rounding: the exact completion event does that.
                    // (A whole ns less a float's error counts as whole.)
                    let exact = dt as f64 * rate + job.work_carry;
                    let whole = (exact + 1e-6).floor();
                    job.work_carry = (exact - whole).max(0.0);
                    job.remaining_ns.saturating_sub(whole as u64).max(1)
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
            if let Some(b) = bins.as_mut() {
                b.add(&flows.requests_per_ns, now, t, sink);
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

        // Completions: the jobs whose work ran out now (cores scanned only at a completion instant).
        let finishing = if next_finish == now { 0..m } else { 0..0 };
        for c in finishing {
            if finish_at[c] != now {
                continue;
            }
            let Some(id) = running[c] else { continue };
            let job = jobs.remove(id);
            if mem_active {
                memory.completed(now, &job);
            }
            running[c] = None;
            previous[c] = None;
            finish_at[c] = NONE_U64;
            sched.complete(now, id, &job, c);
            if track {
                in_flight[job.task as usize] -= 1;
            }
            if limits.any() {
                limits.completed(job.task, now);
            }
            if serial && releases.is_parked(job.task) {
                // Its next job was released meanwhile: made now, released as of its own time.
                let mut next = releases.unpark(job.task);
                if limits.any() && limits.lost(next.task, next.release_ns, in_flight[next.task as usize]) {
                    result.per_task[next.task as usize].lost_activations += 1;
                } else {
                    in_flight[job.task as usize] += 1;
                    if mem_active {
                        next.needs_reload = memory.released(&mut next);
                    }
                    let id = jobs.insert(next);
                    sched.release(now, id, jobs.get(id));
                }
            }
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
                memory_requests: if rates_vary { job.memory_requests.round() as u64 } else { 0 },
                memory_stall_ns: if rates_vary { job.memory_stall_ns.round() as u64 } else { 0 },
            };
            result.per_task[job.task as usize].add(&record);
            completed += 1;
            if trace {
                let segment = Segment { core: c as u32, task: job.task, number: job.number, start_ns: segment_start[c], end_ns: now };
                close_segment(sink, segment, named_steps[job.task as usize], (segment_work[c], job.exec_ns, job.exec_ns));
            }
            if config.record_jobs {
                sink.job(&record);
            }
        }
        if now >= end {
            break;
        }
        if result.events & (PROGRESS_EVENTS - 1) == 0 {
            if reg_active {
                regulator.drain_intervals(&mut intervals);
                take_intervals(&mut intervals, &mut result, sink);
            }
            if !progress.proceed(now, completed) {
                result.partial = true;
                break;
            }
        }

        // Releases, then internal events.
        while releases.next_time() <= now {
            if serial && in_flight[releases.next_task() as usize] > 0 {
                releases.park_next();
                continue;
            }
            let Some(mut job) = releases.pop_due(now) else { break };
            if limits.any() && limits.lost(job.task, job.release_ns, in_flight[job.task as usize]) {
                result.per_task[job.task as usize].lost_activations += 1;
                continue;
            }
            if mem_active {
                job.needs_reload = memory.released(&mut job);
            }
            if track {
                in_flight[job.task as usize] += 1;
            }
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
            regulator.take_holds(&mut holds);
            for (t, held) in holds.drain(..) {
                sched.hold_task(now, t, held);
            }
        }

        // A job inside a non-preemptive region keeps its core.
        if regions.any() {
            for c in 0..m {
                let Some(id) = running[c] else { continue };
                let left = if rates_vary { jobs.get(id).remaining_ns } else { finish_at[c].saturating_sub(now) };
                let job = jobs.get_mut(id);
                job.locked = regions.locked(job, job.exec_ns - left);
            }
        }

        // Scheduling decision and its bookkeeping (`previous` is `running` as it
        // was before the decision: kept equal core by core, no copy per event).
        sched.dispatch(now, &jobs, &mut running);
        changed.clear();
        for &c in sched.touched().unwrap_or(&all_cores) {
            if running[c] == previous[c] {
                continue;
            }
            changed.push(c);
            if let Some(old) = previous[c] {
                if !rates_vary {
                    jobs.get_mut(old).remaining_ns = finish_at[c] - now;
                }
                if trace {
                    let j = jobs.get(old);
                    let segment = Segment { core: c as u32, task: j.task, number: j.number, start_ns: segment_start[c], end_ns: now };
                    close_segment(sink, segment, named_steps[j.task as usize], (segment_work[c], j.exec_ns - j.remaining_ns, j.exec_ns));
                }
                if !running.contains(&Some(old)) {
                    let j = jobs.get_mut(old);
                    j.preemptions += 1;
                    j.needs_reload = true;
                    if mem_active {
                        memory.preempted(now, j);
                    }
                }
            }
            segment_start[c] = now;
            if let Some(new) = running[c] {
                let job = jobs.get_mut(new);
                segment_work[c] = job.exec_ns - job.remaining_ns;
                if job.start_ns == NONE_U64 {
                    job.start_ns = now;
                }
                if job.last_core != NONE_U32 && job.last_core != c as u32 {
                    job.migrations += 1;
                }
                job.last_core = c as u32;
                let mut reload = 0;
                if job.needs_reload {
                    job.needs_reload = false;
                    if mem_active {
                        // Cache-related preemption delay: the reload is extra work
                        // (the model counts what was evicted meanwhile).
                        reload = memory.resume_penalty_ns(now, job);
                        let job = jobs.get_mut(new);
                        job.remaining_ns = job.remaining_ns.saturating_add(reload);
                        job.exec_ns = job.exec_ns.saturating_add(reload);
                        job.reload_ns = job.reload_ns.saturating_add(reload);
                    }
                }
                let job = jobs.get_mut(new);
                regions.on_core(job, job.exec_ns - job.remaining_ns, reload);
            }
            // Here, not after the loop: a core listed twice is seen once.
            previous[c] = running[c];
        }
        if trace || reg_active {
            sched.servers_on_cores(&mut servers_now);
        }
        if trace {
            for c in 0..m {
                if servers_now[c] != servers_before[c] {
                    if let Some(s) = servers_before[c] {
                        sink.server_segment(&ServerSegment { core: c as u32, server: s, start_ns: server_since[c], end_ns: now });
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
        // At rate 1 only the cores with another job have a new completion time.
        let cores: &[usize] = if rates_vary { &all_cores } else { &changed };
        for &c in cores {
            finish_at[c] = match running[c] {
                None => NONE_U64,
                Some(id) if !rates_vary => now + jobs.get(id).remaining_ns,
                Some(id) => {
                    let j = jobs.get(id);
                    j.reaches(now, j.exec_ns, flows.rate[c])
                }
            };
        }
        // Each limited job's next preemption point (a job that ran past one
        // without losing its core enters its next region).
        if regions.any() {
            for c in 0..m {
                point_at[c] = NONE_U64;
                let Some(id) = running[c] else { continue };
                let left = if rates_vary { jobs.get(id).remaining_ns } else { finish_at[c].saturating_sub(now) };
                let job = jobs.get_mut(id);
                let done = job.exec_ns - left;
                regions.kept(job, done);
                if !regions.ends_inside(job, done) {
                    continue;
                }
                point_at[c] = if rates_vary { job.reaches(now, job.region_end, flows.rate[c]) } else { now + (job.region_end - done) };
            }
        }
    }

    // Close what is still open at the end (or where the run was stopped).
    let end = now;
    result.duration_ns = end;
    sink.run_ends(end);
    if trace {
        for c in 0..m {
            if let Some(id) = running[c] {
                let j = jobs.get(id);
                let segment = Segment { core: c as u32, task: j.task, number: j.number, start_ns: segment_start[c], end_ns: end };
                // At rate 1 the work left is brought up to date only when a job leaves its core.
                let left = if rates_vary { j.remaining_ns } else { finish_at[c].saturating_sub(end).min(j.remaining_ns) };
                close_segment(sink, segment, named_steps[j.task as usize], (segment_work[c], j.exec_ns - left, j.exec_ns));
            }
            if let Some(s) = servers_before[c] {
                sink.server_segment(&ServerSegment { core: c as u32, server: s, start_ns: server_since[c], end_ns: end });
            }
        }
    }
    let mut unfinished: Vec<Unfinished> = Vec::new();
    // Released before the end but still waiting for their task's previous job.
    // Under an activation limit a waiting release may have been lost: the
    // ones kept before it are active at it too.
    let mut kept = vec![0u32; if limits.any() { system.tasks.len() } else { 0 }];
    releases.never_made(end, |task, number, release_ns, deadline_ns| {
        if limits.any() {
            if limits.lost(task, release_ns, in_flight[task as usize] + kept[task as usize]) {
                result.per_task[task as usize].lost_activations += 1;
                return;
            }
            kept[task as usize] += 1;
        }
        let stats = &mut result.per_task[task as usize];
        stats.left_unfinished(release_ns);
        if deadline_ns <= end {
            stats.misses += 1;
        }
        if config.record_jobs {
            unfinished.push(Unfinished { task, number, release_ns, deadline_ns });
        }
    });
    // Counted here, not per release: the task's statistics stay out of the cache until its job finishes.
    for (task, stats) in result.per_task.iter_mut().enumerate() {
        stats.released = if releases.is_endless(task as u32) { 0 } else { releases.made(task as u32) - stats.lost_activations };
    }
    for (_, job) in jobs.live() {
        let stats = &mut result.per_task[job.task as usize];
        if releases.is_endless(job.task) {
            // A background task's one job never finishes: no job of the
            // statistics, but its preemptions count here.
            stats.preemptions += job.preemptions as u64;
            stats.migrations += job.migrations as u64;
            continue;
        }
        stats.left_unfinished(job.release_ns);
        if job.deadline_ns <= end {
            stats.misses += 1;
        }
        if config.record_jobs {
            unfinished.push(Unfinished { task: job.task, number: job.number, release_ns: job.release_ns, deadline_ns: job.deadline_ns });
        }
    }
    unfinished.sort_unstable_by_key(|u| (u.release_ns, u.task));
    for u in &unfinished {
        sink.unfinished(u);
    }
    if let Some(b) = bins.as_mut() {
        b.finish(end, sink);
    }
    if reg_active {
        regulator.drain_intervals(&mut intervals);
        intervals.append(&mut regulator.finish(end));
        take_intervals(&mut intervals, &mut result, sink);
        result.regulator_report = regulator.report();
        result.regulator_entities = regulator.entities(end);
    }
    result
}

/// Count closed regulator spans into the run's totals and hand them to the sink.
fn take_intervals(intervals: &mut Vec<Interval>, result: &mut SimResult, sink: &mut dyn Sink) {
    for i in intervals.drain(..) {
        let e = result.regulator_states.entry((i.state, i.core)).or_default();
        e.0 += 1;
        e.1 += i.end_ns - i.start_ns;
        sink.interval(&i);
    }
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

/// The bandwidth series as it is built: requests per core in the open bin;
/// bins go to the sink as time passes their end.
struct Bins {
    width_ns: u64,
    /// Index of the open bin.
    index: u64,
    open: Vec<f64>,
}

impl Bins {
    fn new(width_ns: u64, cores: usize) -> Self {
        Bins { width_ns, index: 0, open: vec![0.0; cores] }
    }

    fn close(&mut self, sink: &mut dyn Sink) {
        sink.bandwidth_bin(self.index, &self.open);
        self.open.fill(0.0);
        self.index += 1;
    }

    /// Spread each core's requests over [from, to) into the bins.
    fn add(&mut self, requests_per_ns: &[f64], from: u64, to: u64, sink: &mut dyn Sink) {
        let mut t = from;
        while t < to {
            let i = t / self.width_ns;
            while self.index < i {
                self.close(sink);
            }
            let edge = ((i + 1) * self.width_ns).min(to);
            for (open, &r) in self.open.iter_mut().zip(requests_per_ns) {
                if r > 0.0 {
                    *open += r * (edge - t) as f64;
                }
            }
            t = edge;
        }
    }

    /// Close every bin up to the one holding `end` (the last may be partial).
    fn finish(&mut self, end: u64, sink: &mut dyn Sink) {
        while self.index < end.div_ceil(self.width_ns) {
            self.close(sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{parse_task_system, Format, TaskSystem};
    use crate::sim::sched::SchedulerKind;
    use crate::sim::sink::{Collect, Discard};
    use crate::sim::{simulate, simulate_into, trace, SimConfig};

    fn bombs() -> TaskSystem {
        parse_task_system(include_str!("../../../../examples/memguard-bombs.toml"), Format::Toml, "memguard-bombs.toml").unwrap()
    }

    fn full(duration_ns: u64) -> SimConfig {
        SimConfig { record_jobs: true, record_segments: true, bandwidth_bin_ns: Some(1_000_000), ..SimConfig::new(duration_ns) }
    }

    #[test]
    fn a_stopped_run_is_the_run_of_the_time_it_reached() {
        let system = bombs();
        let mut calls = 0;
        let mut stop_at_40th = |_now: u64, _jobs: u64| {
            calls += 1;
            calls < 40
        };
        let mut kept = Collect::default();
        let stopped = simulate_into(&system, SchedulerKind::Pfp, &full(10_000_000_000), &mut kept, &mut stop_at_40th).unwrap();
        assert!(stopped.partial);
        assert!(stopped.duration_ns > 0 && stopped.duration_ns < 10_000_000_000);
        // The same system simulated for exactly that long, start to end.
        let whole = simulate(&system, SchedulerKind::Pfp, &full(stopped.duration_ns)).unwrap();
        assert!(!whole.partial);
        assert_eq!(stopped.per_task, whole.per_task);
        assert_eq!(stopped.regulator_states, whole.regulator_states);
        assert_eq!(kept.records, whole.records);
        assert_eq!(kept.unfinished, whole.unfinished);
        assert_eq!(kept.segments, whole.segments);
        assert_eq!(kept.intervals, whole.regulator_intervals);
        assert_eq!(kept.bandwidth, whole.bandwidth);
    }

    #[test]
    fn statistics_do_not_depend_on_what_is_kept() {
        let system = bombs();
        let kept = simulate(&system, SchedulerKind::Pfp, &full(300_000_000)).unwrap();
        let summary = simulate_into(&system, SchedulerKind::Pfp, &SimConfig::new(300_000_000), &mut Discard, &mut crate::sim::sink::ToTheEnd).unwrap();
        assert_eq!(kept.per_task, summary.per_task);
        assert_eq!(kept.regulator_states, summary.regulator_states);
        assert_eq!(kept.events, summary.events);
        // The totals are those of the spans kept (summed here by hand).
        let stalled: u64 = kept.regulator_intervals.iter().filter(|i| i.core == 1).map(|i| i.end_ns - i.start_ns).sum();
        assert!(stalled > 0);
        assert_eq!(summary.regulator_states[&("stalled", 1)].1, stalled);
    }

    /// Trace events as a sorted list of JSON texts (the format leaves their order free).
    fn events(doc: &str) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(doc).unwrap();
        let mut e: Vec<String> = v["traceEvents"].as_array().unwrap().iter().map(|x| x.to_string()).collect();
        e.sort();
        e
    }

    #[test]
    fn the_streamed_trace_has_the_events_of_the_whole_one() {
        let system = bombs();
        let config = full(200_000_000);
        let whole = simulate(&system, SchedulerKind::Pfp, &config).unwrap();
        let mut writer = trace::TraceWriter::new(&system, 1_000_000);
        let mut text = String::new();
        let mut take_every_tick = |_: u64, _: u64| true;
        simulate_into(&system, SchedulerKind::Pfp, &config, &mut writer, &mut take_every_tick).unwrap();
        text.push_str(&writer.take());
        text.push_str(&writer.finish());
        let streamed = events(&text);
        assert_eq!(streamed, events(&trace::perfetto_json(&system, &whole)));
        // Regulator spans, bandwidth counters, job slices and misses all made it.
        for needle in ["\"cat\":\"regulator\"", "bandwidth core 1", "\"cat\":\"job\"", "\"release\""] {
            assert!(streamed.iter().any(|e| e.contains(needle)), "{needle}");
        }
    }

    /// The same scheduler, but every release an event and every job made at its release.
    struct Eager<S>(S);

    impl<S: crate::sim::sched::Scheduler> crate::sim::sched::Scheduler for Eager<S> {
        fn release(&mut self, now: u64, id: crate::sim::job::JobId, job: &crate::sim::job::Job) {
            self.0.release(now, id, job)
        }
        fn complete(&mut self, now: u64, id: crate::sim::job::JobId, job: &crate::sim::job::Job, core: usize) {
            self.0.complete(now, id, job, core)
        }
        fn dispatch(&mut self, now: u64, jobs: &crate::sim::job::Jobs, running: &mut [Option<crate::sim::job::JobId>]) {
            self.0.dispatch(now, jobs, running)
        }
    }

    /// An overloaded system: sporadic jitter and drawn execution times, so that
    /// parked releases must draw in the same order as eager ones.
    fn overloaded(cores: usize, partitioned: bool) -> TaskSystem {
        let mut text = format!("[platform]\ncores = {cores}\n");
        for i in 0..12 {
            let core = if partitioned { format!("core = {}\n", i % cores) } else { String::new() };
            text += &format!("[[task]]\nname = \"t{i}\"\nperiod = \"{}us\"\npet = \"{}us\"\narrival = \"sporadic\"\njitter = \"{}us\"\n{core}", 700 + 130 * i, 300 + 55 * i, 40 * i);
        }
        parse_task_system(&text, Format::Toml, "overloaded.toml").unwrap()
    }

    #[test]
    fn parked_releases_change_nothing_but_the_cost() {
        use crate::sim::memory::CpuOnly;
        use crate::sim::regulate::Unregulated;
        use crate::sim::sched::{gedf::Gedf, pfp::Pfp};
        for (system, global) in [(overloaded(3, false), true), (overloaded(3, true), false)] {
            let mut config = full(200_000_000);
            config.exec = crate::sim::ExecModel::Uniform { level: crate::model::Level::C, best_case_fraction: 0.5 };
            config.seed = 11;
            let run = |eager: bool| {
                let mut kept = Collect::default();
                let mut to_end = crate::sim::sink::ToTheEnd;
                let r = match (global, eager) {
                    (true, false) => super::run(&system, &mut Gedf::new(&system), &mut CpuOnly, &mut Unregulated, &config, None, &mut kept, &mut to_end),
                    (true, true) => super::run(&system, &mut Eager(Gedf::new(&system)), &mut CpuOnly, &mut Unregulated, &config, None, &mut kept, &mut to_end),
                    (false, false) => super::run(&system, &mut Pfp::new(&system).unwrap(), &mut CpuOnly, &mut Unregulated, &config, None, &mut kept, &mut to_end),
                    (false, true) => super::run(&system, &mut Eager(Pfp::new(&system).unwrap()), &mut CpuOnly, &mut Unregulated, &config, None, &mut kept, &mut to_end),
                };
                (r, kept)
            };
            let ((lazy, lazy_kept), (eager, eager_kept)) = (run(false), run(true));
            let unfinished: u64 = eager.per_task.iter().map(|s| s.unfinished).sum();
            assert!(unfinished > 100, "the system is overloaded: {unfinished} jobs left");
            assert!(lazy.events < eager.events, "parked releases are not events");
            assert_eq!(lazy.per_task, eager.per_task);
            assert_eq!(lazy_kept.records, eager_kept.records);
            assert_eq!(lazy_kept.unfinished, eager_kept.unfinished);
            assert_eq!(lazy_kept.segments, eager_kept.segments);
        }
    }
}

