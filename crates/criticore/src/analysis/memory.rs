//! Memory stalls in the bounds (issue 12 item 2; docs/analysis.md, "Memory
//! stalls"): what a job of each task costs under the simulator's fluid model
//! in the worst case, and the stall MemGuard's budgets add to a window.
//!
//! - A job's time: Σ over its phases of work × the model's longest time per
//!   ns of work (`FluidRules::worst_case`), and its requests likewise; only tasks
//!   that may run on another core at the same time press on its LLC share.
//! - A preemption costs the preempted job one reload: the model's reload work
//!   at its longest time per ns of work (and requests); and every job one
//!   more at its start, where its partition may evict its task's lines
//!   between jobs (docs/memory-model.md item 6).
//! - Under EDF and global scheduling (`charged_costs`) each preemption is
//!   charged to the job whose release caused it: a release preempts at most
//!   one job, of a task it can preempt, so a job's cost plus the largest
//!   reload among the tasks it can preempt covers every reload
//!   (docs/analysis.md, "EDF and global schedulers").
//! - MemGuard, per-core budgets Q per synchronous period P: a core stalls
//!   only after issuing its budget within a period, until that period ends,
//!   so a window in which the core's jobs issue N requests holds at most
//!   ⌊N/Q⌋ + 1 stalls (the first period may have been spent before the
//!   window), each at most P. Stalled cores issue nothing, so the others'
//!   interference is no larger than unregulated.

use crate::model::{Level, TaskSystem};
use crate::interference::fluid::FluidRules;

/// Worst-case cost of one job of a task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobCost {
    /// Longest execution time of a job, preemptions aside (ns).
    pub time_ns: u64,
    /// Most requests of a job.
    pub requests: f64,
    /// Longest time a resumption after a preemption adds (ns).
    pub reload_ns: u64,
    /// Most requests of that reload.
    pub reload_requests: f64,
    /// Longest time all of a job's resumptions add together, beyond its cold
    /// start (a job misses at most once per reference), and their requests;
    /// each resumption may round up by [`JobCost::reload_unit`] more.
    pub job_reload_ns: u64,
    pub job_reload_requests: f64,
    /// Longest time a job's start adds where its task's lines may have been
    /// evicted since its last job (ns; included in `time_ns`).
    pub cold_ns: u64,
    /// Fewest requests per ns while a job runs, over its phases (0: it may issue none).
    pub min_request_rate: f64,
    /// A job's time without the contention other cores' traffic causes (bus
    /// waits, row conflicts), its LLC share at its smallest still (ns).
    pub base_ns: u64,
    /// Of `requests`, those a job issues with no co-runner running (its
    /// cold start included); the rest needs one running beside it.
    pub alone_requests: f64,
    /// Most requests per ns of work a co-runner's presence adds.
    pub excess_per_work: f64,
    /// Most requests per ns of work with no co-runner running.
    pub alone_per_work: f64,
    /// Most requests per ns of wall time a job can issue.
    pub fastest_request_rate: f64,
    /// Longest execution time of a job that runs with no co-runner running
    /// (its alone miss ratio; cold start at its worst), ns.
    pub alone_time_ns: u64,
    /// Least and most time per ns of work over the job's phases.
    pub fastest_per_work: f64,
    pub slowest_per_work: f64,
}

/// The core a task runs on (its own, or its server's); None = any.
pub fn task_core(system: &TaskSystem, i: usize) -> Option<usize> {
    let t = &system.tasks[i];
    t.core.or(t.server.map(|s| system.servers[s].core))
}

/// Per task, its core ([`task_core`]).
fn cores_of(system: &TaskSystem) -> Vec<Option<usize>> {
    (0..system.tasks.len()).map(|i| task_core(system, i)).collect()
}

/// Whether tasks i and j may run at once, by their `cores`: on different
/// ones, or either on any.
fn apart(cores: &[Option<usize>]) -> impl Fn(usize, usize) -> bool + Copy + '_ {
    |i, j| cores[i].is_none() || cores[j].is_none() || cores[i] != cores[j]
}

/// Per task of `system`, the worst-case job cost under the fluid model, with
/// every task that may run on another core as a co-runner.
pub fn job_costs(system: &TaskSystem) -> Vec<JobCost> {
    job_costs_beside(system, |_, _| true)
}

/// As [`job_costs`], with only the tasks j that `also(i, j)` admits as co-runners of i.
pub fn job_costs_beside(system: &TaskSystem, also: impl Fn(usize, usize) -> bool) -> Vec<JobCost> {
    let cores = cores_of(system);
    let apart = apart(&cores);
    costs_with(system, |i, j| apart(i, j) && also(i, j), apart)
}

/// As [`job_costs`] under a global scheduler: any other task may run beside
/// a job, whatever core the file names (a task's own jobs run one at a time).
pub fn job_costs_global(system: &TaskSystem) -> Vec<JobCost> {
    costs_with(system, |i, j| i != j, |i, j| i != j)
}

impl JobCost {
    /// What one resumption's rounding may add beyond [`JobCost::job_reload_ns`]
    /// (half a ns of work at most, charged as one at the slowest phase):
    /// (time ns, requests).
    pub fn reload_unit(&self) -> (u64, f64) {
        (self.slowest_per_work.ceil() as u64, self.alone_per_work + self.excess_per_work)
    }
}

/// Per task j, its job's cost plus the largest reload among the tasks
/// `preempts(j, i)` says its release can preempt (module doc).
pub fn charged_costs(costs: &[JobCost], preempts: impl Fn(usize, usize) -> bool) -> Vec<u64> {
    (0..costs.len())
        .map(|j| {
            let reload = (0..costs.len()).filter(|&i| i != j && preempts(j, i)).map(|i| costs[i].reload_ns).max().unwrap_or(0);
            costs[j].time_ns.saturating_add(reload)
        })
        .collect()
}

/// A pair of tasks on different cores, task j running beside task i.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beside {
    /// The fewest requests per ns j issues meanwhile (`FluidRules::least_rate_beside`).
    pub rate: f64,
    /// The most requests per ns of work i issues above its alone count
    /// meanwhile (`FluidRules::excess_beside`).
    pub excess: f64,
}

/// [`job_costs`], and per pair of tasks on different cores, `[i][j]`: None
/// where task j cannot raise task i's misses (`FluidRules::presses_on`),
/// else what each does beside the other ([`Beside`]).
pub fn job_costs_and_rates_beside(system: &TaskSystem) -> (Vec<JobCost>, Vec<Vec<Option<Beside>>>) {
    let rules = FluidRules::new(system);
    let cores = cores_of(system);
    let apart = apart(&cores);
    let pets: Vec<u64> = system.tasks.iter().map(|t| t.pet_at(Level::C)).collect();
    let worst = rules.worst_case(&pets, system.platform.cores, apart, apart);
    let pairs = (0..system.tasks.len())
        .map(|i| {
            (0..system.tasks.len())
                .map(|j| (i != j && apart(i, j) && rules.presses_on(i, j)).then(|| Beside { rate: rules.least_rate_beside(j, i, &worst[j]), excess: rules.excess_beside(i, j, system.platform.cores, apart) }))
                .collect()
        })
        .collect();
    (costs_of(&worst), pairs)
}

/// The most requests per period a core issues above its alone count while
/// another core, stopped by its budget once it issued `budget` in the
/// period (None: never stopped), runs beside it: each pair (e, r) a task
/// of this core issuing at most e more per ns beside a task there issuing
/// at least r per ns. At most `period_ns` of pairs in all, and at most
/// `budget` of the other core's requests: a linear program whose optimum
/// mixes at most two pairs.
pub fn excess_per_period(pairs: &[(f64, f64)], budget: Option<f64>, period_ns: f64) -> f64 {
    let Some(b) = budget else { return pairs.iter().map(|&(e, _)| e).fold(0.0, f64::max) * period_ns };
    let single = |&(e, r): &(f64, f64)| e * if r > 0.0 { (b / r).min(period_ns) } else { period_ns };
    let mut best = pairs.iter().map(single).fold(0.0, f64::max);
    // Both limits tight: t_p + t_q = P, r_p·t_p + r_q·t_q = b.
    for &(ep, rp) in pairs {
        for &(eq, rq) in pairs {
            if rp * period_ns < b && b < rq * period_ns {
                let tq = (b - rp * period_ns) / (rq - rp);
                best = best.max(ep * (period_ns - tq) + eq * tq);
            }
        }
    }
    best
}

/// As [`job_costs`] under MCTI: the bus may switch to fixed priority while
/// a core overloads (`FluidRules::worst_case_mcti`).
pub fn job_costs_mcti(system: &TaskSystem) -> Vec<JobCost> {
    let cores = cores_of(system);
    let corunner = apart(&cores);
    let pets: Vec<u64> = system.tasks.iter().map(|t| t.pet_at(Level::C)).collect();
    let critical: Vec<bool> = system.tasks.iter().map(|t| t.criticality > 0).collect();
    costs_of(&FluidRules::new(system).worst_case_mcti(&pets, system.platform.cores, corunner, &cores, &critical))
}

/// Costs beside `corunner`, the co-runners' speeds beside every task of `apart` (`FluidRules::worst_case`).
fn costs_with(system: &TaskSystem, corunner: impl Fn(usize, usize) -> bool, apart: impl Fn(usize, usize) -> bool) -> Vec<JobCost> {
    let pets: Vec<u64> = system.tasks.iter().map(|t| t.pet_at(Level::C)).collect();
    costs_of(&FluidRules::new(system).worst_case(&pets, system.platform.cores, corunner, apart))
}

fn costs_of(worst: &[crate::interference::fluid::WorstCase]) -> Vec<JobCost> {
    worst
        .iter()
        .map(|w| {
            let time: f64 = w.phases.iter().map(|p| p.work_ns as f64 * p.time_per_work).sum();
            let requests: f64 = w.phases.iter().map(|p| p.work_ns as f64 * p.requests_per_work).sum();
            let slowest = w.phases.iter().map(|p| p.time_per_work).fold(0.0, f64::max);
            let busiest = w.phases.iter().map(|p| p.requests_per_work).fold(0.0, f64::max);
            // Rounded up, plus a nanosecond per phase for the engine's rounding of rates.
            // A job's cold start (its task's lines evicted since its last job) is part of every job.
            let (time, requests) = (time + w.cold_work_ns as f64 * slowest, requests + w.cold_work_ns as f64 * busiest);
            // Without contention: each phase's time less its contention, the cold
            // start at the largest of those (whatever phase it falls in).
            let base_of = |p: &crate::interference::fluid::WorstPhase| p.time_per_work - p.contention_per_work;
            let base = w.phases.iter().map(|p| p.work_ns as f64 * base_of(p)).sum::<f64>() + w.cold_work_ns as f64 * w.phases.iter().map(base_of).fold(0.0, f64::max);
            let excess_of = |p: &crate::interference::fluid::WorstPhase| p.requests_per_work - p.alone_requests_per_work;
            // The cold start is work at the running phase's rate too: alone, at its alone rate.
            let alone_busiest = w.phases.iter().map(|p| p.alone_requests_per_work).fold(0.0, f64::max);
            let alone = w.phases.iter().map(|p| p.work_ns as f64 * p.alone_requests_per_work).sum::<f64>() + w.cold_work_ns as f64 * alone_busiest;
            let alone_time = w.phases.iter().map(|p| p.work_ns as f64 * p.alone_time_per_work).sum::<f64>() + w.cold_work_ns as f64 * slowest;
            JobCost {
                alone_time_ns: (alone_time.ceil() as u64 + w.phases.len() as u64).min(time.ceil() as u64 + w.phases.len() as u64),
                alone_requests: alone.min(requests),
                alone_per_work: alone_busiest,
                fastest_request_rate: w.fastest_request_rate,
                excess_per_work: w.phases.iter().map(excess_of).fold(0.0, f64::max),
                base_ns: base.ceil() as u64 + w.phases.len() as u64,
                time_ns: time.ceil() as u64 + w.phases.len() as u64,
                requests,
                reload_ns: (w.reload_work_ns as f64 * slowest).ceil() as u64,
                reload_requests: w.reload_work_ns as f64 * busiest,
                // + 1 ns of work: the start's reload rounds up by at most half of one.
                job_reload_ns: ((w.job_reload_work_ns + 1) as f64 * slowest).ceil() as u64,
                job_reload_requests: (w.job_reload_work_ns + 1) as f64 * busiest,
                cold_ns: (w.cold_work_ns as f64 * slowest).ceil() as u64,
                min_request_rate: w.phases.iter().map(|p| p.min_request_rate).fold(f64::INFINITY, f64::min),
                fastest_per_work: w.phases.iter().map(|p| p.time_per_work).fold(f64::INFINITY, f64::min),
                slowest_per_work: slowest,
            }
        })
        .collect()
}

/// The longest a core's jobs can run in a window of `w_ns`, each task as
/// (period, longest running time of a job): one job more than its releases
/// (one may have begun before the window), and at most w.
pub fn running_ns(jobs: &[(u64, u64)], w_ns: u64) -> f64 {
    jobs.iter().map(|&(t, c)| (w_ns.div_ceil(t) + 1) as f64 * c as f64).sum::<f64>().min(w_ns as f64)
}

/// Time one task's jobs can run in any window of `w_ns`: period T, longest
/// running time C of a job and, where known, a bound R on its response. With
/// R, Bertogna and Cirinei's workload (RTSS 2007): N = ⌊(w + R − C)/T⌋ whole
/// jobs and at most C of the one before them, N·C + min(C, w + R − C − N·T);
/// without, all of w: a task whose jobs may pile up (a response past its
/// period) may run throughout. At most w.
pub fn workload_ns(period_ns: u64, time_ns: u64, response_ns: Option<u64>, w_ns: u64) -> f64 {
    match response_ns {
        Some(r) => (super::gfp_rta::workload(time_ns, period_ns, r.max(time_ns), w_ns) as f64).min(w_ns as f64),
        None => w_ns as f64,
    }
}

/// The longest the jobs of `tasks` (period, longest time of a job with all
/// its reloads, response bound where known) run in a window of `w_ns`:
/// Bertogna–Cirinei's workload each ([`workload_ns`], all of w where a
/// response is unknown), and one rounding of `unit_ns` per resumption: one
/// per event (of the periods `events`) in the window and one per task (its
/// one started job preempted as the window opens). Not capped at w.
pub fn jobs_running_ns(tasks: &[(u64, u64, Option<u64>)], unit_ns: u64, events: &[u64], w_ns: u64) -> f64 {
    let resumptions = events.iter().map(|&p| w_ns.div_ceil(p) + 1).sum::<u64>() + tasks.len() as u64;
    tasks.iter().map(|&(t, c, r)| workload_ns(t, c, r, w_ns)).sum::<f64>() + unit_ns.saturating_mul(resumptions) as f64
}

/// Their long-run share of the time ([`jobs_running_ns`] per ns as w
/// grows); None where a response is unknown (they may run throughout).
pub fn jobs_running_share(tasks: &[(u64, u64, Option<u64>)], unit_ns: u64, events: &[u64]) -> Option<f64> {
    if tasks.iter().any(|&(_, _, r)| r.is_none()) {
        return None;
    }
    let rounding = events.iter().map(|&p| unit_ns as f64 / p as f64).sum::<f64>();
    Some(tasks.iter().map(|&(t, c, _)| c as f64 / t as f64).sum::<f64>() + rounding)
}

/// The periods of `period_ns` (one grid, at any phase) an interval of
/// `len_ns` can overlap: ⌈len/P⌉ + 1 (a window's regulation periods, a
/// job's within its response).
pub fn periods_overlapping(len_ns: u64, period_ns: u64) -> u64 {
    len_ns.div_ceil(period_ns).saturating_add(1)
}

/// Jobs of a task (period T, response bound R where known) that can run in a
/// window of `w_ns`: those released within R before it or in it, ⌈(w + R)/T⌉;
/// without R, no bound (u64::MAX).
pub fn jobs_overlapping(period_ns: u64, response_ns: Option<u64>, w_ns: u64) -> u64 {
    response_ns.map_or(u64::MAX, |r| w_ns.saturating_add(r).div_ceil(period_ns))
}

/// The long-run share of the time they run, at most 1.
pub fn running_share(jobs: &[(u64, u64)]) -> f64 {
    jobs.iter().map(|&(t, c)| c as f64 / t as f64).sum::<f64>().min(1.0)
}

/// MemGuard's stall in a window whose jobs issue `requests` on a core with
/// budget `budget` per `period_ns`: ⌊N/Q⌋ + 1 stalled periods, the first
/// (spent before the window, perhaps) P long, each other one P less
/// `issue_ns`, the time the core needs to issue Q in that period
/// ([`issue_ns`]).
pub fn memguard_stall_ns(requests: f64, budget: u64, period_ns: u64, issue_ns: u64) -> u64 {
    if budget == 0 {
        return u64::MAX / 4;
    }
    memguard_stalls_ns(((requests / budget as f64).floor() as u64).saturating_add(1), period_ns, issue_ns)
}

/// `count` stalled periods: the first P, the others P − `issue_ns` each.
pub fn memguard_stalls_ns(count: u64, period_ns: u64, issue_ns: u64) -> u64 {
    count.saturating_sub(1).saturating_mul(period_ns - issue_ns.min(period_ns)).saturating_add(period_ns.min(count.saturating_mul(period_ns)))
}

/// The least time a core whose jobs issue at most `fastest` requests per ns
/// (while they run) needs to issue its budget Q: a period in which it
/// stalls after spending Q has run that long in it, so the stall is at most
/// P − Q/r (the throttled period of the per-period stall model, Mancuso et
/// al. ECRTS 2017, docs/references.md: s_j = P − Q). Less 2 ns for the
/// engine's rounding of rates and events; 0 if it issues nothing.
pub fn issue_ns(budget: u64, period_ns: u64, fastest: f64) -> u64 {
    if fastest <= 0.0 || !fastest.is_finite() {
        return 0;
    }
    ((budget as f64 / fastest).floor() as u64).saturating_sub(2).min(period_ns)
}

/// The most regulation periods of `period_ns` a run of `time_ns` touches
/// with at most `stalls` stalls inside it, each after at least `issue_ns`
/// of running in its period: its periods but the first and last are run
/// whole or stalled, so it spans at most 1 + B + ⌈(C − B·t)/P⌉ of them,
/// [`periods_overlapping`] of the running left and one per stall
/// (docs/analysis.md, "A co-runner's stalls inside its jobs").
pub fn periods_with_stalls(time_ns: u64, stalls: u64, issue_ns: u64, period_ns: u64) -> u64 {
    periods_overlapping(time_ns.saturating_sub(stalls.saturating_mul(issue_ns)), period_ns.max(1)).saturating_add(stalls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_worst_cost_by_hand() {
        // Default i.MX6 platform: 1 MiB LLC shared by all (no allocation), 32 B lines,
        // S = 32 B / 2.02 GB/s = 1600/101 ns, L = 120 ns, R = 30 ns, 8 banks
        // shared by all, round robin. Task a: 10 ms of work, 1,000 references
        // per ms, random over 4 MiB, reads only. Alone it misses 1 − 1/4 =
        // 0.75 (compute share 1 − 0.001·0.75·120 = 0.91); beside b's 4 MiB it
        // may keep only 1·4/8 = 0.5 MiB: misses 0.875, each 120 + W + p·R.
        // b's 4 MiB stream misses every write (compute share 1 − 10⁻⁶·S): at
        // most 10⁻⁶ requests per ns. W: one round (S) at most, and at most
        // S·ρ/(1 − ρ) for b's bus share ρ = 10⁻⁶·S: S²·10⁻⁶/(1 − S·10⁻⁶) =
        // 0.000251 ns. p: at most 1, and at most b's rate × R·8/(8·8) =
        // 10⁻⁶·3.75: p·R = 0.0001125 ns (before issue 26's bounds by what b
        // can issue, W = S and p = 1: 165.84 ns a miss). τ = 0.91 +
        // 0.001·0.875·120.000363 = 1.0150003 → 10 ms take 10,150,003.2 ns;
        // 0.001·0.875·10⁷ = 8,750 requests. Reload: min(1 MiB / 32 B = 32,768
        // lines, its job's 10,000 references) × 120 ns = 1,200,000 ns of work,
        // × τ = 1,218,001 ns (1,266,134 at W = S, p = 1). Cold start (b's
        // misses may evict a's lines between its jobs): as much, in every job:
        // 11,200,000 × τ = 11,368,003.56 → 11,368,004 + 1 ns, and 0.000875 ×
        // 11,200,000 = 9,800 requests.
        let text = "[platform]\ncores = 2\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"20ms\"\npet = \"10ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"20ms\"\npet = \"1ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 1 }\n";
        let system = crate::model::parse_task_system(text, crate::model::Format::Toml, "t.toml").unwrap();
        let a = job_costs(&system)[0];
        assert_eq!(a.time_ns, 11_368_005);
        assert!((a.requests - 9_800.0).abs() < 1e-6, "{}", a.requests);
        assert_eq!(a.reload_ns, 1_218_001);
        assert_eq!(a.cold_ns, 1_218_001);
        // With no co-runner running it misses 0.75 at worst cost per miss:
        // τ_alone = 0.91 + 0.001·0.75·120.000363 = 1.0000003, its cold start still
        // at τ: 10⁷·τ_alone + 1,200,000·τ = 11,218,003.11 → 11,218,004 + 1 ns.
        assert_eq!(a.alone_time_ns, 11_218_005);
        // Alone in the LLC with a 1 MiB set nothing can evict its lines: no cold start.
        let alone = text.replace("wss = \"4MiB\", pattern = \"random\"", "wss = \"512KiB\", pattern = \"random\"").replace("wss = \"4MiB\", pattern = \"stream\"", "wss = \"512KiB\", pattern = \"stream\"");
        let a = job_costs(&crate::model::parse_task_system(&alone, crate::model::Format::Toml, "t.toml").unwrap())[0];
        assert_eq!(a.cold_ns, 0);
    }

    #[test]
    fn a_co_runner_s_least_rate_beside_a_job_by_hand() {
        // Default platform (above): S = 1600/101 ns, L = 120, R = 30, round
        // robin on 2 cores (W ≤ S, and W ≤ S·ρ/(1 − ρ) for the other's bus
        // share ρ at its fastest). a on core 0 reads randomly over 4 MiB,
        // b on core 1 writes a 512 KiB stream, 0.001 references per ns each.
        // b beside a: 4.5 MiB press on the 1 MiB LLC, b keeps 1/9 MiB of its
        // 512 KiB and misses every reference; alone it fits (compute share 1),
        // so at most 0.001/(1 + 0.001·S) requests per ns. a beside b keeps
        // 8/9 MiB of 4 MiB: misses 1 − 2/9 = 7/9, alone 3/4 (compute share
        // 0.91), at most 0.001·(7/9)/(0.91 + 0.001·(7/9)·120) per ns.
        // b's slowest τ: 1 + 0.001·(S + W_b + p_b·R), W_b behind a's bus
        // share and p_b at most a's rate × R·8/(8·8) (8 banks shared), so it
        // issues at least 0.001/τ per ns; a's τ = 0.91 + 0.001·(7/9)·(120 +
        // W_a + p_a·R), behind b's, at least 0.001·(7/9)/τ per ns.
        let s = 1600.0 / 101.0;
        let (fastest_a, fastest_b) = (0.001 * (7.0 / 9.0) / (0.91 + 0.001 * (7.0 / 9.0) * 120.0), 0.001 / (1.0 + 0.001 * s));
        let queue = |rate: f64| (s * rate * s / (1.0 - rate * s)).min(s);
        let conflict = |rate: f64| (rate * 30.0 / 8.0).min(1.0) * 30.0;
        // Each one's wait and conflict per miss, behind the other.
        let (w_a, w_b) = (queue(fastest_b) + conflict(fastest_b), queue(fastest_a) + conflict(fastest_a));
        let text = "[platform]\ncores = 2\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"20ms\"\npet = \"10ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"20ms\"\npet = \"1ms\"\n\
            memory = { wss = \"512KiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 1000 }\n";
        let rates: Vec<Vec<Option<f64>>> = job_costs_and_rates_beside(&crate::model::parse_task_system(text, crate::model::Format::Toml, "t.toml").unwrap()).1.iter().map(|r| r.iter().map(|b| b.map(|b| b.rate)).collect()).collect();
        let close = |x: Option<f64>, want: f64| x.is_some_and(|x| (x - want).abs() < 1e-12 * want.max(1e-9));
        assert!(close(rates[0][1], 0.001 / (1.0 + 0.001 * (s + w_b))), "{:?}", rates[0][1]);
        assert!(close(rates[1][0], 0.001 * (7.0 / 9.0) / (0.91 + 0.001 * (7.0 / 9.0) * (120.0 + w_a))), "{:?}", rates[1][0]);
        assert_eq!((rates[0][0], rates[1][1]), (None, None));
        // The excess each issues beside the other, above its alone count: a
        // alone keeps 1 MiB of 4 (misses 3/4), beside b 8/9 MiB (7/9): 0.001·(7/9 − 3/4)
        // more per ns of work; b alone fits, beside a misses all: 0.001.
        let pairs = job_costs_and_rates_beside(&crate::model::parse_task_system(text, crate::model::Format::Toml, "t.toml").unwrap()).1;
        let excess = |i: usize, j: usize| pairs[i][j].map(|b| b.excess);
        assert!(close(excess(0, 1), 0.001 * (7.0 / 9.0 - 0.75)), "{:?}", excess(0, 1));
        assert!(close(excess(1, 0), 0.001), "{:?}", excess(1, 0));
        // On three cores, beside b a also has the largest other co-runner, c's
        // 2 MiB: 6.5 MiB press, it keeps 4/6.5 MiB, misses 11/13.
        let three = text.replace("cores = 2", "cores = 3")
            + "[[task]]\nname = \"c\"\ncore = 2\nperiod = \"20ms\"\npet = \"1ms\"\n\
            memory = { wss = \"2MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1 }\n";
        let pairs = job_costs_and_rates_beside(&crate::model::parse_task_system(&three, crate::model::Format::Toml, "t.toml").unwrap()).1;
        assert!(close(pairs[0][1].map(|b| b.excess), 0.001 * (11.0 / 13.0 - 0.75)), "{:?}", pairs[0][1]);
        // Beside a 512 KiB set b's 256 KiB stream still fits (768 KiB ≤ 1 MiB): it may issue nothing.
        let fits = text.replace("wss = \"4MiB\", pattern = \"random\"", "wss = \"512KiB\", pattern = \"random\"").replace("wss = \"512KiB\", pattern = \"stream\"", "wss = \"256KiB\", pattern = \"stream\"");
        assert_eq!(job_costs_and_rates_beside(&crate::model::parse_task_system(&fits, crate::model::Format::Toml, "t.toml").unwrap()).1[0][1].map(|b| b.rate), Some(0.0));
        // On one core they never run side by side.
        let one = text.replace("core = 1", "core = 0");
        let (costs, rates) = job_costs_and_rates_beside(&crate::model::parse_task_system(&one, crate::model::Format::Toml, "t.toml").unwrap());
        assert!(rates.iter().flatten().all(Option::is_none));
        assert_eq!(costs, job_costs(&crate::model::parse_task_system(&one, crate::model::Format::Toml, "t.toml").unwrap()));
    }

    #[test]
    fn the_excess_a_budget_lets_a_co_runner_cause_in_a_period_by_hand() {
        // Never stopped: the largest excess all period.
        assert_eq!(excess_per_period(&[(1.0, 0.5), (3.0, 2.0)], None, 10.0), 30.0);
        // A co-runner issuing nothing beside it runs all period.
        assert_eq!(excess_per_period(&[(1.0, 0.0)], Some(5.0), 10.0), 10.0);
        // One pair: stopped after 5/1 = 5 of the 10: 2·5.
        assert_eq!(excess_per_period(&[(2.0, 1.0)], Some(5.0), 10.0), 10.0);
        // max x + 3y with x + y ≤ 10, 0.1x + 2y ≤ 5: the vertices give 10 (x
        // = 10), 7.5 (y = 2.5) and, both tight, y = 4/1.9, x = 10 − y:
        // 10 + 2·4/1.9.
        let mixed = excess_per_period(&[(1.0, 0.1), (3.0, 2.0)], Some(5.0), 10.0);
        assert!((mixed - (10.0 + 8.0 / 1.9)).abs() < 1e-12, "{mixed}");
        assert_eq!(excess_per_period(&[], Some(5.0), 10.0), 0.0);
    }

    #[test]
    fn a_co_runner_s_workload_in_a_window_by_hand() {
        // T = 10, C = 3. With R = 5, a window of 12 holds N = ⌊(12 + 5 − 3)/10⌋
        // = 1 whole job and min(3, 12 + 5 − 3 − 10) = 3 of another: 6;
        // without R, its jobs may have piled up: all 12. With R = T (one
        // job pending as a window opens): N = ⌊(12 + 10 − 3)/10⌋ = 1 and
        // min(3, 19 − 10) = 3: 6, within (⌈12/10⌉ + 1)·3 = 9.
        assert_eq!(workload_ns(10, 3, Some(5), 12), 6.0);
        assert_eq!(workload_ns(10, 3, None, 12), 12.0);
        assert_eq!(workload_ns(10, 3, Some(10), 12), 6.0);
        // A window of 2: at most 2, whatever the jobs. Of 20 with R = C = 3:
        // N = ⌊20/10⌋ = 2 whole jobs and min(3, 20 − 20) = 0 more: 6.
        assert_eq!(workload_ns(10, 3, Some(5), 2), 2.0);
        assert_eq!(workload_ns(10, 3, Some(3), 20), 6.0);
        // A bound below C is no bound on the job: taken as C.
        assert_eq!(workload_ns(10, 3, Some(1), 12), workload_ns(10, 3, Some(3), 12));
        // Jobs that can run in a window of 12: released within R = 5 before it or in it, ⌈17/10⌉ = 2.
        // Without R, no bound; with R = T, one more than its releases, ⌈22/10⌉ = 3.
        assert_eq!((jobs_overlapping(10, Some(5), 12), jobs_overlapping(10, None, 12), jobs_overlapping(10, Some(10), 12)), (2, u64::MAX, 3));
    }

    #[test]
    fn a_fair_wait_and_row_conflicts_are_at_most_what_the_two_busiest_co_runners_cause() {
        // Three cores, round robin, 8 banks shared by all: a wait is at most
        // one round, 2·S, and at most S·ρ/(1 − ρ) for the bus share ρ the
        // other two cores can use at most, each running one task at a time;
        // a row conflict (R = 30 ns) comes with probability at most 1 and at
        // most Σ rate × R·8/(8·8) over them. b (core 1), d (core 1) and c
        // (core 2) write 4 MiB streams, which miss every reference alone too
        // (compute share 1 − r·S, time per ns of work exactly 1): at most r
        // requests per ns each, 0.01, 0.005 and 0.002. The two busiest, b
        // and d, give ρ = 0.015·S (b and d never run at once, but the bound
        // takes the m − 1 busiest co-runners whatever their cores): W =
        // S·ρ/(1 − ρ) = 4.94 ns < 2·S, and p = 0.015·3.75 = 0.05625, p·R =
        // 1.6875 ns. a reads a 4 MiB stream, 0.001 per ns: compute share 1 −
        // 0.001·120 = 0.88, each miss 120 + W + p·R, no cold start (its
        // stream outgrows the LLC): 10⁷·(0.88 + 0.001·(121.6875 + W)) + 1.
        let text = "[platform]\ncores = 3\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"20ms\"\npet = \"10ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"20ms\"\npet = \"1ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 10000 }\n\
            [[task]]\nname = \"c\"\ncore = 2\nperiod = \"20ms\"\npet = \"1ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 2000 }\n\
            [[task]]\nname = \"d\"\ncore = 1\nperiod = \"20ms\"\npet = \"1ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 5000 }\n";
        let s: f64 = 1600.0 / 101.0;
        let rho = 0.015 * s;
        let wait = s * rho / (1.0 - rho);
        assert!(wait < 2.0 * s && (wait - 4.94).abs() < 0.005, "{wait}");
        let expected = (1e7 * (0.88 + 0.001 * (121.6875 + wait))).ceil() as u64 + 1;
        let costs = job_costs(&crate::model::parse_task_system(text, crate::model::Format::Toml, "t.toml").unwrap());
        assert!(costs[0].time_ns.abs_diff(expected) <= 1, "{} vs {expected}", costs[0].time_ns);
        assert!((costs[1].fastest_request_rate - 0.01).abs() < 1e-15, "{}", costs[1].fastest_request_rate);
        // b at 0.1 references per ns asks more than its PET allows (0.1·S >
        // 1: a memory bomb, docs/memory-model.md item 1): it runs at
        // 1/(0.1·S), 1/S requests per ns. The queue's wait (ρ = 1 + 0.005·S:
        // saturated) is past the round, which decides: 2·S; p = (1/S +
        // 0.005)·3.75.
        let busy = text.replace("accesses_per_ms = 10000", "accesses_per_ms = 100000");
        let conflict = (1.0 / s + 0.005) * 3.75 * 30.0;
        let round = (1e7 * (0.88 + 0.001 * (120.0 + conflict + 2.0 * s))).ceil() as u64 + 1;
        let a = job_costs(&crate::model::parse_task_system(&busy, crate::model::Format::Toml, "t.toml").unwrap())[0];
        assert!(a.time_ns.abs_diff(round) <= 1, "{} vs {round}", a.time_ns);
    }

    #[test]
    fn a_cold_start_behind_one_partition_mate_is_at_most_the_mate_s_lines() {
        // One core, the 1 MiB LLC shared: a reads randomly over 1 MiB (32,768
        // lines), 1,000 references per ms, 10 ms of work: 10,000 references
        // a job. Alone it fits (compute share 1, τ = 1). Its one partition
        // mate j, 256 KiB (8,192 lines), fits too but not with a, so a's lines
        // may go between its jobs; only j runs there then, missing on nothing
        // but its reloads, and only its first reload after a job of a sees
        // a's misses: at most 8,192 lines come in. a's cold start: 8,192 ×
        // 120 ns = 983,040 ns, not its 10,000 references' 1,200,000.
        let text = "[platform]\ncores = 2\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"20ms\"\npet = \"10ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"j\"\ncore = 0\nperiod = \"20ms\"\npet = \"5ms\"\n\
            memory = { wss = \"256KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n";
        let cold = |t: &str| job_costs(&crate::model::parse_task_system(t, crate::model::Format::Toml, "t.toml").unwrap())[0].cold_ns;
        assert_eq!(cold(text), 983_040);
        // j's cold start: a's 32,768 lines, at most its own 8,192 and its 5,000 references.
        assert_eq!(job_costs(&crate::model::parse_task_system(text, crate::model::Format::Toml, "t.toml").unwrap())[1].cold_ns, 600_000);
        // A second mate, even a small one: two mates may take turns bringing
        // lines in, so a's whole 10,000 references.
        let two = format!("{text}[[task]]\nname = \"k\"\ncore = 0\nperiod = \"20ms\"\npet = \"1ms\"\nmemory = {{ wss = \"32KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1 }}\n");
        assert_eq!(cold(&two), 1_200_000);
        // A mate whose set outgrows the partition misses on its own: no bound.
        assert_eq!(cold(&text.replace("256KiB", "2MiB")), 1_200_000);
    }

    #[test]
    fn mcti_fixed_priority_bus_wait_by_hand() {
        // Default platform: S = 32 B / 2.02 GB/s = 1600/101 ns, L = 120, R = 30,
        // round robin on 2 cores: a fair wait of at most S. Task b on core 1
        // streams 4 MiB (misses everything, more than the 1 MiB LLC) writing,
        // 0.04 references per ns: alone its compute share is 1 − 0.04·S, so at
        // most 0.04 requests per ns of wall time, ρ = 0.04·S = 64/101. While a
        // core overloads the bus is fixed priority and a's requests may wait
        // S·ρ/(1 − ρ) + S/2 = S·(64/37 + 1/2) = S·165/74 ≈ 35.32 ns > S. Task a
        // on core 0 streams 4 MiB reading, 0.001 references per ns: compute
        // share 1 − 0.001·120 = 0.88, each miss at worst 120 + W + p·R, p at
        // most b's rate × R·8/(8·8) (8 banks shared) = 0.15, p·R = 4.5 ns, so
        // 10 ms of work take 10⁷·(0.88 + 0.001·(124.5 + W)) ns, + 1 ns of
        // rounding. No cold start: its stream outgrows the LLC. Both critical:
        // b's core may rank above a's (Property 1: level, then deadline).
        let text = |a_level: u32, b_level: u32| {
            format!(
                "[platform]\ncores = 2\n[regulation]\nkind = \"mcti\"\nperiod = \"1ms\"\nbudgets = [100, 100]\n\
                [[task]]\nname = \"a\"\ncore = 0\nlevel = {a_level}\nperiod = \"20ms\"\npet = \"10ms\"\n\
                memory = {{ wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
                [[task]]\nname = \"b\"\ncore = 1\nlevel = {b_level}\nperiod = \"20ms\"\npet = \"10ms\"\n\
                memory = {{ wss = \"4MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 40000 }}\n"
            )
        };
        let parse = |t: String| crate::model::parse_task_system(&t, crate::model::Format::Toml, "t.toml").unwrap();
        let s: f64 = 1600.0 / 101.0;
        let wait = s * 165.0 / 74.0;
        let expected = (1e7 * (0.88 + 0.001 * (124.5 + wait))).ceil() as u64 + 1;
        let a = job_costs_mcti(&parse(text(1, 1)))[0];
        assert!(a.time_ns.abs_diff(expected) <= 1, "{} vs {expected}", a.time_ns);
        // Without MCTI the round-robin wait S (b's share ρ = 64/101 queues
        // S·64/37 > S): 10⁷·(0.88 + 0.001·(124.5 + S)) + 1.
        let fair = (1e7 * (0.88 + 0.001 * (124.5 + s))).ceil() as u64 + 1;
        assert!(job_costs(&parse(text(1, 1)))[0].time_ns.abs_diff(fair) <= 1);
        // b not critical: its core ranks 0, below a's, so a waits at most half a
        // line behind it, S/2 < S: the fair wait decides. With no critical task
        // no core ever overloads: b waits as under the round robin alone (behind
        // a's share), not behind a's ρ at fixed priority.
        assert!(job_costs_mcti(&parse(text(1, 0)))[0].time_ns.abs_diff(fair) <= 1);
        let none = job_costs_mcti(&parse(text(0, 0)));
        assert_eq!((none[0].time_ns, none[1].time_ns), (job_costs(&parse(text(0, 0)))[0].time_ns, job_costs(&parse(text(0, 0)))[1].time_ns));
    }

    #[test]
    fn each_job_is_charged_the_largest_reload_it_can_cause() {
        let cost = |time_ns, reload_ns| JobCost { time_ns, requests: 0.0, reload_ns, reload_requests: 0.0, job_reload_ns: 0, job_reload_requests: 0.0, cold_ns: 0, min_request_rate: 0.0, base_ns: time_ns, alone_requests: 0.0, excess_per_work: 0.0, alone_per_work: 0.0, fastest_request_rate: 0.0, fastest_per_work: 1.0, slowest_per_work: 1.0, alone_time_ns: time_ns };
        let costs = [cost(100, 7), cost(200, 30), cost(300, 5)];
        // Task 0 preempts 1 and 2 (reloads 30 and 5): 100 + 30; task 1 preempts
        // only 2: 200 + 5; task 2 none: 300.
        assert_eq!(charged_costs(&costs, |j, i| j < i), vec![130, 205, 300]);
        // Nothing preempts anything: the costs as they are.
        assert_eq!(charged_costs(&costs, |_, _| false), vec![100, 200, 300]);
    }

    #[test]
    fn stalls_by_hand() {
        // 2,500 requests against 1,000 per 1 ms: at most 3 stalls (2 full budgets
        // in the window plus a period already spent before it), 3 ms.
        assert_eq!(memguard_stall_ns(2_500.0, 1_000, 1_000_000, 0), 3_000_000);
        assert_eq!(memguard_stall_ns(0.0, 1_000, 1_000_000, 0), 1_000_000);
        // A core that issues at most 0.01 requests per ns needs 100,000 ns for
        // its 1,000: each stall after the first at most 1 ms − (100,000 − 2) ns.
        let issue = issue_ns(1_000, 1_000_000, 0.01);
        assert_eq!(issue, 99_998);
        assert_eq!(memguard_stall_ns(2_500.0, 1_000, 1_000_000, issue), 1_000_000 + 2 * 900_002);
        assert_eq!(memguard_stall_ns(0.0, 1_000, 1_000_000, issue), 1_000_000);
        assert_eq!(memguard_stalls_ns(0, 1_000_000, issue), 0);
        // It issues nothing: no time to take off.
        assert_eq!(issue_ns(1_000, 1_000_000, 0.0), 0);
    }

    #[test]
    fn a_job_s_periods_with_its_stalls_inside_against_every_way_to_run_it() {
        // A second method: run a job of C time units, each issuing 0..=ρ
        // requests, from every start within a period of P units, under a
        // budget of Q a period (a stall after the unit that reaches Q, to the
        // period's end), in every pattern of requests, and count the periods
        // it runs in. The most, for each C and each N of total requests, is
        // at most 1 + B + ⌈(C − B·t)/P⌉ with B = ⌊N/Q⌋ and t = ⌈Q/ρ⌉ (the
        // least running that issues Q), and equal to it for some C and N.
        for (p, q, rho) in [(3u64, 3u64, 2u64), (4, 2, 2), (4, 5, 3), (2, 1, 1)] {
            let t = q.div_ceil(rho);
            let mut most = std::collections::HashMap::<(u64, u64), u64>::new();
            for c in 1..=7u64 {
                for pattern in 0..(rho + 1).pow(c as u32) {
                    let requests: Vec<u64> = (0..c).map(|u| pattern / (rho + 1).pow(u as u32) % (rho + 1)).collect();
                    for start in 0..p {
                        let (mut now, mut spent, mut periods, mut last) = (start, 0, 0, u64::MAX);
                        for &r in &requests {
                            if now / p != last {
                                (periods, last, spent) = (periods + 1, now / p, 0);
                            }
                            spent += r;
                            now += 1;
                            if spent >= q {
                                now = now.div_ceil(p) * p;
                            }
                            if now % p == 0 {
                                spent = 0;
                            }
                        }
                        let n = requests.iter().sum::<u64>();
                        let e = most.entry((c, n)).or_insert(0);
                        *e = (*e).max(periods);
                    }
                }
            }
            let (mut reached, mut past_stall_free) = (false, false);
            for (&(c, n), &m) in &most {
                let bound = periods_with_stalls(c, n / q, t, p);
                assert!(m <= bound, "P {p}, Q {q}, ρ {rho}: C {c}, N {n}: {m} periods > {bound}");
                reached |= m == bound && n >= q;
                // The stalls matter: ⌈C/P⌉ + 1 alone is exceeded.
                past_stall_free |= m > periods_overlapping(c, p);
            }
            assert!(reached && past_stall_free, "P {p}, Q {q}, ρ {rho}: reached {reached}, past the stall-free count {past_stall_free}");
        }
    }
}
