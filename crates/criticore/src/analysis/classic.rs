//! The classic tests, one per scheduler the simulator runs, chosen as
//! `simulate` chooses its scheduler (`SchedulerKind::implied_by`) or by name,
//! each giving every task a response-time bound (or none) and a verdict
//! (docs/analysis.md, "Beyond MC²"):
//!
//! - pfp: exact response-time analysis per core (`fp_rta`);
//! - pedf: the processor demand test per core (`edf_demand`); bound = deadline;
//! - gedf: Goossens-Funk-Baruah (bound = deadline), else the bounded-tardiness
//!   bound of Level C with every core fully available (`level_c`);
//! - gfp: Bertogna & Cirinei's response-time test (`gfp_rta`);
//! - servers: per core, periodic servers by fixed priority (each a task of
//!   its budget and period, `fp_rta`) or CBS reservations by EDF (total
//!   bandwidth ≤ 1); inside a server, its tasks by fixed priority over the
//!   periodic-resource supply (`supply`) of what it is sure of (all of its
//!   budget every period, or less per period or per K periods: `server_supply`),
//!   served within the server's own response time of each period's start.
//!
//! Tasks are charged their Level-C PET (their only one outside MC²), as
//! `simulate` runs them by default. With memory profiles, pfp charges the
//! fluid model's worst case and MemGuard's stalls (`memory`), periodic
//! servers that and MRS memory budgets (`server_memory`); the other tests,
//! and other regulation, are CPU-only and say so.

use super::edf_demand;
use super::fp_rta::{self, FpTask};
use super::gfp_rta;
use super::port_waits::{self, PortWaits};
use super::memory::{self, job_costs, task_core, JobCost};
use super::server_memory::{self, Demand, Reload, ServerView};
use super::server_supply::{self, Guarantee, ServiceSpan};
use super::supply::{best_block, BLOCKS};
use super::exact::{cmp_sum, utilizations, Frac};
use super::level_c::{restricted_supply_gedf, CoreSupply};
use super::supply::Supply;
use super::{Charged, NotDecided, Sporadic};
use crate::error::{quote, FieldError};
use crate::model::{Arrival, Region, BudgetGroup, Level, Preemption, RegulationKind, ServerKind, Task, TaskSystem};
use crate::policy::{fixed_priority_ranks, server_of_tasks, SchedulerKind};
use crate::policy::activation::jobs_active_at_most;
use super::chains::{self, ChainBound};
use serde::Serialize;
use std::cmp::Ordering;

/// One task's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskBound {
    pub task: String,
    /// Core, or server name, or "global".
    pub on: String,
    pub pet_ns: u64,
    pub period_ns: u64,
    pub deadline_ns: u64,
    /// Worst-case response time bound, if the test gives one.
    pub bound_ns: Option<u64>,
    /// Bound within the deadline; None when the test stopped at its work
    /// limit before deciding (the note says so).
    pub schedulable: Option<bool>,
    /// Why there is no bound, or what the bound rests on.
    pub note: Option<String>,
    /// What the bound is made of (`--explain`); every bound has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terms: Option<BoundTerms>,
    /// A background task (no jobs: PET, period and deadline are 0, no bound).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

/// A bound split by kind (`analyze --explain`). Under fixed priority: the
/// demand in the window [0, w) that ends with the worst job, job `jobs − 1`
/// of the busy period, released `earlier_releases_ns` after it opens. The
/// terms sum to w, and w − earlier_releases_ns is the bound. Under EDF the
/// bound is the deadline, plus ⌈x⌉ and the job's cost under bounded
/// tardiness; the terms sum to it. PETs include a job's memory time alone
/// (docs/memory-model.md item 1); what co-runners on other cores add is
/// interference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BoundTerms {
    /// The task's own jobs in the window.
    pub jobs: u64,
    /// Their PETs.
    pub own_pet_ns: u64,
    /// What memory interference from the other cores adds to them (fluid
    /// model, worst case; with memory stalls, their LLC share: the bus waits
    /// and row conflicts are `contention_ns`).
    pub own_interference_ns: u64,
    /// Their cold starts: lines of the task others may evict between its jobs.
    pub own_cold_ns: u64,
    /// The higher-priority jobs released in the window: their PETs.
    pub higher_pet_ns: u64,
    /// Their memory interference and cold starts.
    pub higher_interference_ns: u64,
    /// Under global fixed priority: the higher-priority tasks' work in the
    /// window (at their charged costs, each capped at R − C + 1) shared
    /// among the m cores (Bertogna and Cirinei), in place of the two above.
    pub higher_share_ns: u64,
    /// Bus waits and row conflicts of all those jobs: at most their own
    /// worst, and at most what the other cores' requests can cause.
    pub contention_ns: u64,
    /// On a scratchpad platform: those jobs' label accesses at their paths'
    /// latency (and 1 ns per phase with accesses), beside their PETs.
    pub access_ns: u64,
    /// On a scratchpad platform: their waits at the memories' ports.
    pub port_wait_ns: u64,
    /// The reloads their preemptions cost the tasks they preempt.
    pub reload_ns: u64,
    /// MemGuard's budget stalls in the window.
    pub regulation_ns: u64,
    /// Blocking by lower-priority work (none in these models: fully preemptive).
    pub blocking_ns: u64,
    /// Time the supply (a server) does not give the task's level in the window.
    pub supply_wait_ns: u64,
    /// How long after the window opens the worst job is released (q·T).
    pub earlier_releases_ns: u64,
    /// Under EDF (pedf, gedf, MC²'s Level C): its relative deadline, which a
    /// job meets once the test passes (what the test weighs is its group's
    /// [`Load`], not a window; `edf_terms`).
    pub deadline_ns: u64,
    /// Under bounded tardiness (gedf, MC²'s Level C): the tardiness bound's
    /// ⌈x⌉ (Devi and Anderson: a job is late by at most x + its cost, the
    /// cost being the own terms above).
    pub tardiness_ns: u64,
}

impl BoundTerms {
    /// The window w the terms fill.
    pub fn window_ns(&self) -> u64 {
        self.own_pet_ns
            + self.own_interference_ns
            + self.own_cold_ns
            + self.higher_pet_ns
            + self.higher_interference_ns
            + self.higher_share_ns
            + self.contention_ns
            + self.access_ns
            + self.port_wait_ns
            + self.reload_ns
            + self.regulation_ns
            + self.blocking_ns
            + self.supply_wait_ns
            + self.deadline_ns
            + self.tardiness_ns
    }
}

/// A core's or a server's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupResult {
    pub name: String,
    pub utilization: f64,
    /// None when a task's test did not decide.
    pub schedulable: Option<bool>,
    pub note: Option<String>,
    /// Under EDF (pedf, gedf): what the test weighs, its jobs' long-run
    /// demand split by kind (`--explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
}

/// The long-run demand of a core's (or the cores') jobs by kind, in shares
/// of one core: their charged costs per period split as [`cost_terms`]
/// splits one job's, and MemGuard's stalls (`edf_demand::Stalls::rate`).
/// The EDF tests weigh their sum (Liu and Layland's U ≤ 1 where deadlines
/// are implicit; the demand test at its points otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Load {
    pub pet: f64,
    pub cold: f64,
    pub interference: f64,
    pub reload: f64,
    pub regulation: f64,
}

/// The [`Load`] of `tasks` charged `cost` (per task of the file), their
/// stalls at `regulation` of the time.
fn load(system: &TaskSystem, mem: Option<&Memory>, tasks: &[usize], cost: &[u64], regulation: f64) -> Load {
    tasks.iter().filter(|&&i| !system.tasks[i].is_background()).fold(Load { regulation, ..Load::default() }, |l, &i| {
        let t = cost_terms(system, mem, i, cost[i]);
        let per = |ns: u64| ns as f64 / system.tasks[i].period_ns as f64;
        Load { pet: l.pet + per(t.own_pet_ns), cold: l.cold + per(t.own_cold_ns), interference: l.interference + per(t.own_interference_ns), reload: l.reload + per(t.reload_ns), ..l }
    })
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskAnalysis {
    /// The scheduler analyzed (simulate's names).
    pub scheduler: &'static str,
    /// The test used.
    pub test: &'static str,
    /// None when there is no task to analyze.
    pub schedulable: Option<bool>,
    pub tasks: Vec<TaskBound>,
    pub groups: Vec<GroupResult>,
    pub notes: Vec<String>,
    /// The file's cause-effect chains, bounded from `tasks` (`chains`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<ChainBound>,
}

fn pet(system: &TaskSystem, i: usize) -> u64 {
    system.tasks[i].pet_at(Level::C)
}

fn sporadic(system: &TaskSystem, i: usize, cost_ns: u64) -> Sporadic {
    Sporadic { pet_ns: cost_ns, period_ns: system.tasks[i].period_ns, deadline_ns: system.tasks[i].deadline_ns }
}

/// What each job of a task is charged (ns): its PET CPU-only; with memory,
/// its worst case under the fluid model plus the largest reload among the
/// tasks `preempts(j, i)` says its release can preempt (`memory::charged_costs`).
fn charged(system: &TaskSystem, mem: Option<&Memory>, preempts: impl Fn(usize, usize) -> bool) -> Vec<u64> {
    match mem {
        Some(m) => memory::charged_costs(&m.costs, preempts),
        None => (0..system.tasks.len()).map(|i| pet(system, i)).collect(),
    }
}

/// The note on a bounded row with memory: what it rests on, for a task with a profile.
fn memory_note(system: &TaskSystem, i: usize, mem: Option<&Memory>) -> Option<String> {
    (mem.is_some() && system.tasks[i].memory.is_some()).then(|| "with memory stalls (fluid model, unregulated)".to_string())
}

/// The note of a background task's row: it has no jobs, so no deadline to miss.
pub const BACKGROUND_NOTE: &str = "background task: no jobs, no deadline, no bound (charged to the others as busy all the time)";

fn row(system: &TaskSystem, i: usize, on: String, bound_ns: Option<u64>, note: Option<String>) -> TaskBound {
    let t = &system.tasks[i];
    if t.is_background() {
        return TaskBound { task: t.name.clone(), on, pet_ns: 0, period_ns: 0, deadline_ns: 0, schedulable: Some(true), bound_ns: None, note: Some(BACKGROUND_NOTE.into()), terms: None, background: true };
    }
    TaskBound {
        task: t.name.clone(),
        on,
        pet_ns: pet(system, i),
        period_ns: t.period_ns,
        deadline_ns: t.deadline_ns,
        schedulable: Some(bound_ns.is_some_and(|b| b <= t.deadline_ns)),
        bound_ns,
        note,
        terms: None,
        background: false,
    }
}

/// A task whose test stopped at its limit: no bound and no verdict.
fn not_decided(system: &TaskSystem, i: usize, on: String, why: NotDecided) -> TaskBound {
    undecided(system, i, on, why.to_string())
}

/// No bound and no verdict, for the reason `why`.
fn undecided(system: &TaskSystem, i: usize, on: String, why: String) -> TaskBound {
    let r = row(system, i, on, None, Some(why));
    // A background task's row keeps its (vacuous) verdict.
    TaskBound { schedulable: if r.background { r.schedulable } else { None }, ..r }
}

/// All true → true; any false → false; else (some undecided) None.
fn all_of(verdicts: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    let mut all = Some(true);
    for v in verdicts {
        match v {
            Some(false) => return Some(false),
            None => all = None,
            Some(true) => {}
        }
    }
    all
}

/// Of the tasks with jobs: a background task's stand-in is no load to report.
fn utilization(system: &TaskSystem, tasks: &[usize]) -> f64 {
    tasks.iter().filter(|&&i| !system.tasks[i].is_background()).map(|&i| pet(system, i) as f64 / system.tasks[i].period_ns as f64).fold(0.0, |a, b| a + b)
}

/// Rows back in the file's task order.
fn in_file_order(system: &TaskSystem, mut rows: Vec<TaskBound>) -> Vec<TaskBound> {
    let index: std::collections::HashMap<&str, usize> = system.tasks.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();
    rows.sort_by_key(|r| index[r.task.as_str()]);
    rows
}

/// Tasks in fixed-priority order (most important first), as the simulator ranks them.
fn by_rank(system: &TaskSystem, tasks: &[usize]) -> Vec<usize> {
    let rank = fixed_priority_ranks(system, tasks);
    let mut v = tasks.to_vec();
    v.sort_by_key(|&i| rank[i]);
    v
}

/// Fixed priority over one supply: every task of `ordered` below the ones before it.
/// `waits`: a scratchpad platform's port waits, charged per window (pfp on a dedicated core).
fn fp_over(system: &TaskSystem, ordered: &[usize], supply_of: impl Fn(usize) -> Supply, on: &str, waits: Option<&PortWaits>) -> Vec<TaskBound> {
    let fp = |i: usize| FpTask { pet_ns: pet(system, i), period_ns: system.tasks[i].period_ns };
    // Cooperative and non-preemptive tasks, and copies (pfp only, so a dedicated core): their regions.
    let regions: Vec<Option<Vec<Region>>> = ordered.iter().map(|&i| system.tasks[i].regions(Level::C)).collect();
    (0..ordered.len())
        .map(|k| {
            let hp: Vec<FpTask> = ordered[..k].iter().map(|&i| fp(i)).collect();
            let own = fp(ordered[k]);
            let supply = supply_of(k);
            // Blocking: a lower-priority job may have entered its longest
            // non-preemptive region 1 ns before the release (a release at the
            // same instant goes first).
            let blocking = regions[k + 1..].iter().flatten().flatten().filter(|r| !r.preemptible).map(|r| r.work_ns).max().map_or(0, |q| q - 1);
            // The window's accesses: its jobs', and any blocking region's (the most per memory).
            let own_accesses = waits.map(|pw| {
                let blocking = ordered[k + 1..].iter().zip(&regions[k + 1..]).flat_map(|(&j, r)| r.iter().flatten().filter(|r| !r.preemptible).map(move |x| (j, x)));
                let mut most: crate::interference::crossbar::Accesses = Vec::new();
                for (j, region) in blocking {
                    for (m, a) in pw.crossbar.region_accesses(j, region) {
                        match most.iter_mut().find(|(x, _)| *x == m) {
                            Some((_, b)) => *b = (*b).max(a),
                            None => most.push((m, a)),
                        }
                    }
                }
                let with_period = |i: usize| (pw.per_job(i).clone(), system.tasks[i].period_ns);
                port_waits::Own { core: system.tasks[ordered[k]].core.expect("pfp tasks are on a core"), task: with_period(ordered[k]), higher: ordered[..k].iter().map(|&i| with_period(i)).collect(), blocking: most }
            });
            let share = waits.zip(own_accesses.as_ref()).map_or(0.0, |(pw, o)| pw.share(o));
            let wait = |q: u64, w: u64| waits.zip(own_accesses.as_ref()).map_or(0, |(pw, o)| pw.wait_ns(o, q, w));
            // Its last region, non-preemptive, runs through every release (Yao
            // et al.'s refinement); a preemptible last region is plain RTA.
            let last_region = regions[k].as_ref().and_then(|r| match r.last() {
                Some(last) if last.preemptible => None,
                Some(last) => Some(last.work_ns),
                None => Some(own.pet_ns),
            });
            let mut window = match last_region {
                Some(q) => fp_rta::limited_preemptive_with(own, q, &hp, blocking, share, wait),
                None => fp_rta::worst_window(own, &hp, supply, share, |q, w| blocking + wait(q, w)),
            };
            // An activation limit of one: no own job before a job, so its
            // first job bounds it (its own earlier job's regions may have
            // held the higher-priority ones as a lower job's would), whatever
            // its own utilization; the lesser of the two where both exist.
            let mut blocking = blocking;
            if system.tasks[ordered[k]].activation_limit == Some(1) {
                let own_region = regions[k].iter().flatten().filter(|r| !r.preemptible).map(|r| r.work_ns).max().map_or(0, |q| q - 1);
                let first_blocking = blocking.max(own_region);
                let first = match last_region {
                    Some(q) => fp_rta::limited_first_job(own, q, &hp, first_blocking, share, wait),
                    None => fp_rta::first_job_window(own, &hp, supply, share, |q, w| first_blocking + wait(q, w)),
                };
                match (&window, first) {
                    (Ok(Some(a)), Ok(Some(b))) if b.response_ns >= a.response_ns => {}
                    (_, Ok(Some(b))) => (window, blocking) = (Ok(Some(b)), first_blocking),
                    _ => {}
                }
            }
            match window {
                Ok(window) => {
                    let note = window.is_none().then(|| {
                        let u: f64 = std::iter::once(&own).chain(&hp).map(|t| t.pet_ns as f64 / t.period_ns as f64).sum();
                        let why = match fp_rta::cmp_rate(own, &hp, supply) {
                            Ordering::Greater => unbounded(own, &hp, supply, 0.0, Cost::PET),
                            _ if share > 0.0 => format!("utilization {u:.4} with the higher-priority tasks plus their waits at the memories' ports {share:.4} reach {}", supply.rate()),
                            // Exactly the supply's rate: with blocking the level active period need not end.
                            _ => format!("utilization {u:.4} with the higher-priority tasks is the supply's whole rate"),
                        };
                        if blocking > 0 { format!("{why}, with {blocking} ns of blocking by lower-priority non-preemptive regions") } else { why }
                    });
                    let mut r = row(system, ordered[k], on.to_string(), window.map(|w| w.response_ns), note);
                    r.terms = window.map(|win| {
                        // Under limited preemption the higher-priority jobs are those
                        // released by the start of the last region, S = w − q_last.
                        let jobs = |t: &FpTask| match last_region {
                            Some(q) => (win.w - q) / t.period_ns + 1,
                            None => win.w.div_ceil(t.period_ns),
                        };
                        // A scratchpad platform's PETs were charged their accesses' latency: shown apart.
                        let access = |i: usize| waits.map_or(0, |pw| pw.access_ns[i]);
                        let higher_access: u64 = hp.iter().zip(ordered).map(|(t, &i)| jobs(t) * access(i)).sum();
                        let own_access = (win.q + 1) * access(ordered[k]);
                        let mut terms = BoundTerms {
                            jobs: win.q + 1,
                            own_pet_ns: (win.q + 1) * own.pet_ns - own_access,
                            higher_pet_ns: hp.iter().map(|t| jobs(t) * t.pet_ns).sum::<u64>() - higher_access,
                            access_ns: own_access + higher_access,
                            port_wait_ns: wait(win.q, win.w),
                            blocking_ns: blocking,
                            earlier_releases_ns: win.q * own.period_ns,
                            ..BoundTerms::default()
                        };
                        terms.supply_wait_ns = win.w - terms.window_ns();
                        terms
                    });
                    r
                }
                Err(why) => not_decided(system, ordered[k], on.to_string(), why),
            }
        })
        .collect()
}

/// What the jobs are charged, in [`unbounded`]'s words: the PET, or the fluid
/// model's worst case (PET plus memory stalls).
#[derive(Clone, Copy, PartialEq)]
struct Cost {
    /// The task's own jobs are charged memory stalls.
    own_memory: bool,
    /// Some job of the task or a higher-priority one is.
    any_memory: bool,
}

impl Cost {
    const PET: Cost = Cost { own_memory: false, any_memory: false };
}

/// Why fixed priority gives `task` below `higher` no bound over a supply of
/// `supply`, naming the term that made it (the checks of
/// `fp_rta::response_time_with`, in its order, decided exactly where they are
/// CPU terms): the task's own cost above its period, the utilization above
/// the supply, MemGuard's stall share on top.
fn unbounded(task: FpTask, higher: &[FpTask], supply: Supply, stall_share: f64, cost: Cost) -> String {
    let rate = supply.rate();
    let what = if cost.own_memory { "cost with memory stalls (fluid model)" } else { "PET" };
    let of = if cost.any_memory { "utilization with memory stalls (fluid model)" } else { "utilization" };
    let util = |t: &FpTask| t.pet_ns as f64 / t.period_ns as f64;
    let u = util(&task) + higher.iter().map(util).sum::<f64>();
    let share = if rate < 1.0 { format!("the supply's share {rate:.4}") } else { "1".to_string() };
    if fp_rta::cmp_rate(task, &[], supply) == Ordering::Greater {
        let alone = if rate < 1.0 { format!(" times the supply's share {rate:.4}") } else { String::new() };
        format!("its {what}, {}, exceeds its period{alone}", ms(task.pet_ns))
    } else if fp_rta::cmp_rate(task, higher, supply) == Ordering::Greater {
        format!("{of} {u:.4} with the higher-priority tasks is above {share}")
    } else {
        debug_assert!(stall_share > 0.0);
        format!("{of} {u:.4} plus MemGuard's budget stalls {stall_share:.4} reach {share}")
    }
}

/// ns as ms to 4 significant digits, trailing zeros dropped ("589.4 ms"), as
/// the CLI prints durations (docs/format.md, "Numbers as printed").
fn ms(ns: u64) -> String {
    let v = ns as f64 / 1e6;
    let before_point = if v > 0.0 { v.log10().floor() as i32 + 1 } else { 1 };
    let text = format!("{:.*}", (4 - before_point).max(0) as usize, v);
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    format!("{text} ms")
}

/// Memory stalls as the simulator's fluid model makes them (`memory.rs`).
struct Memory {
    costs: Vec<JobCost>,
    /// MemGuard per-core budgets and period; None = unregulated.
    memguard: Option<(Vec<u64>, u64)>,
    /// MRS memory budgets apply (servers).
    mrs: bool,
    /// MemGuard budgets per group of tasks and the period (criticore's
    /// extension: an exhausted group's tasks are held until the period ends).
    groups: Option<(Vec<BudgetGroup>, u64)>,
    /// MCTI on `memguard`'s per-core budgets: a core stalls only while it
    /// runs a non-critical task (rule 4); a critical one overloads (rule 5).
    mcti: bool,
    /// The bandwidth monitor: its real-time task and the best-effort cores
    /// it suspends while a job of that task runs past its threshold.
    monitor: Option<(usize, Vec<usize>)>,
    /// MemGuard's reclaim: an entity may stall below its budget (a throttle error).
    reclaim: bool,
    /// MemGuard's spare sharing: once every core is stalled, all run on past Q.
    spare: bool,
    /// `memory::job_costs_and_rates_beside`, for per-core MemGuard and MRS (else empty).
    beside: Vec<Vec<Option<memory::Beside>>>,
}

impl Memory {
    /// Whether task `x`, running on another core, can raise the misses of
    /// one of `tasks`: some pair's excess above its alone count is above 0
    /// (beside x and the largest co-runners elsewhere); where the pairs are
    /// not known, any task with memory can (docs/analysis.md, "Co-runners
    /// that raise no miss").
    fn raises_misses(&self, system: &TaskSystem, x: usize, tasks: &[usize]) -> bool {
        tasks.iter().any(|&i| self.presses(system, i, x))
    }

    /// Whether task x on another core can raise task i's misses ([`Memory::raises_misses`]).
    fn presses(&self, system: &TaskSystem, i: usize, x: usize) -> bool {
        system.tasks[x].memory.is_some() && (self.beside.is_empty() || self.beside[i][x].is_some_and(|b| b.excess > 0.0))
    }
}

/// What the bounds of `kind` must include: None when the simulator would run
/// CPU-only; Err(reason) where no memory-aware bound is derived yet (pfp
/// unregulated or under MemGuard budgets, pedf, gedf and gfp unregulated,
/// servers unregulated or under MemGuard or MCTI budgets per core, periodic
/// and CBS servers under MRS are).
fn memory_of(system: &TaskSystem, kind: SchedulerKind) -> Result<Option<Memory>, String> {
    let reclaim = system.regulation.as_ref().is_some_and(|r| r.kind == RegulationKind::Memguard && r.memguard.reclaim);
    let spare = system.regulation.as_ref().is_some_and(|r| r.memguard.spare_sharing);
    let plain = |costs| Memory { costs, memguard: None, mrs: false, groups: None, mcti: false, monitor: None, reclaim, spare, beside: Vec::new() };
    // The monitor only takes interference away from its real-time task, but
    // suspends its best-effort cores, memory profiles or not (its estimate
    // grows with every sample).
    if let Some(r) = system.regulation.as_ref().filter(|r| kind == SchedulerKind::Pfp && r.kind == RegulationKind::Monitor) {
        if let Some(m) = r.monitor.as_ref().filter(|m| system.tasks[m.rt_task].core.is_some_and(|c| !m.be_cores.contains(&c))) {
            return Ok(Some(Memory { monitor: Some((m.rt_task, m.be_cores.clone())), ..plain(job_costs(system)) }));
        }
    }
    if !system.tasks.iter().any(|t| t.memory.is_some()) {
        return Ok(None);
    }
    let memory = |memguard, mrs| Ok(Some(Memory { memguard, mrs, ..plain(job_costs(system)) }));
    match (kind, &system.regulation) {
        (SchedulerKind::Pfp | SchedulerKind::Pedf | SchedulerKind::Servers, None) => memory(None, false),
        (SchedulerKind::Pfp | SchedulerKind::Pedf, Some(r)) if r.kind == RegulationKind::Memguard && r.groups.is_empty() && !r.budgets.is_empty() => {
            let (costs, beside) = memory::job_costs_and_rates_beside(system);
            Ok(Some(Memory { memguard: Some((r.budgets.clone(), r.period_ns)), beside, ..plain(costs) }))
        }
        (SchedulerKind::Pfp, Some(r)) if r.kind == RegulationKind::Memguard && !r.groups.is_empty() => Ok(Some(Memory { groups: Some((r.groups.clone(), r.period_ns)), ..plain(job_costs(system)) })),
        (SchedulerKind::Pfp, Some(r)) if r.kind == RegulationKind::Mcti && r.groups.is_empty() && !r.budgets.is_empty() => {
            Ok(Some(Memory { memguard: Some((r.budgets.clone(), r.period_ns)), mcti: true, ..plain(memory::job_costs_mcti(system)) }))
        }
        (SchedulerKind::Servers, Some(r)) if r.kind == RegulationKind::Mrs => {
            let (costs, beside) = memory::job_costs_and_rates_beside(system);
            Ok(Some(Memory { mrs: true, beside, ..plain(costs) }))
        }
        // Per-core budgets whose stalls the servers pay from their budgets (server_memory.rs).
        (SchedulerKind::Servers, Some(r)) if matches!(r.kind, RegulationKind::Memguard | RegulationKind::Mcti) && r.groups.is_empty() && !r.budgets.is_empty() && !reclaim => {
            let mcti = r.kind == RegulationKind::Mcti;
            let costs = if mcti { memory::job_costs_mcti(system) } else { job_costs(system) };
            Ok(Some(Memory { memguard: Some((r.budgets.clone(), r.period_ns)), mcti, ..plain(costs) }))
        }
        (SchedulerKind::Gedf | SchedulerKind::Gfp, None) => Ok(Some(plain(memory::job_costs_global(system)))),
        (_, Some(r)) => Err(format!("CPU only: no memory-aware bound under {} regulation for {} yet", r.kind.name(), kind.name())),
        (SchedulerKind::Mc2, None) => Err("CPU only: memory stalls are not in these bounds".into()),
    }
}

/// Fixed priority on one dedicated core with memory stalls: jobs cost their
/// worst case, each higher-priority release one reload of the task it may
/// preempt, and MemGuard its stalls in the window.
/// `suspended`: the bandwidth monitor may suspend this core for at most R
/// per real-time job of period T, as (R, T).
/// `responses`: bounds known already per task (an earlier round), which
/// limit what the other cores' jobs run in a window.
fn fp_with_memory(system: &TaskSystem, ordered: &[usize], core: usize, on: &str, mem: &Memory, suspended: Option<(u64, u64)>, responses: &[Option<u64>]) -> Vec<TaskBound> {
    // MemGuard's budget for this core and its period, where its tasks can spend it.
    let memguard = match &mem.memguard {
        Some((budgets, period)) if ordered.iter().any(|&i| mem.costs[i].requests > 0.0) => Some((budgets.get(core).copied().unwrap_or(0), *period)),
        _ => None,
    };
    let view = CoreView::of(system, core, mem, responses);
    // Each task's bound as found, for the tasks below it.
    let mut found: Vec<Option<u64>> = Vec::with_capacity(ordered.len());
    (0..ordered.len())
        .map(|k| {
            let row = fp_with_memory_one(system, ordered, core, on, mem, memguard, k, &found, suspended, &view);
            found.push(row.bound_ns);
            row
        })
        .collect()
}

/// A job's time with no co-runner running (its alone miss ratio, cold start
/// included), at least its PET: what the windows that charge alone time read.
fn alone_time_of(system: &TaskSystem, mem: &Memory, x: usize) -> u64 {
    mem.costs[x].alone_time_ns.max(pet(system, x))
}

/// A core's tasks and the other cores', as the stall terms read them.
struct CoreView {
    /// Every task of this core, lower ones too: one may spend the budget of
    /// the period the window opens in.
    on_core: Vec<usize>,
    others: Vec<OtherCore>,
    /// Per task of the system, its response bound where known (a round before).
    responses: Vec<Option<u64>>,
    /// The most requests this core issues in a period above its alone count
    /// while the other cores run beside it (`excess_from`).
    excess_per_period: f64,
}

/// Another core, as a co-runner of this one.
struct OtherCore {
    /// Its tasks that can raise the misses of one of this core's tasks (a
    /// memory profile, and beside it an excess over the alone count; every
    /// task with memory where the pairs are not known): their running is
    /// the co-runner presence. Each as (period, longest time of a job with
    /// all its reloads, its response bound: None where unknown).
    pressing: Vec<usize>,
    running: Vec<(u64, u64, Option<u64>)>,
    /// The same with each job at its alone time, and the most share of
    /// what runs beside a pressing job that it can lose, 1 − 1/slowest: it
    /// runs no slower than alone but while something runs beside it, and
    /// then does at least 1/slowest of work per ns (docs/analysis.md,
    /// "Co-runner jobs at their alone time plus what runs beside them").
    running_alone: Vec<(u64, u64, Option<u64>)>,
    slowed_share: f64,
    /// What each resumption of one of them may add by rounding (`reload_unit`),
    /// and the periods of the events that may make one resume (a release
    /// of a task ranked above one of them, a regulation period).
    unit_ns: u64,
    events: Vec<u64>,
    /// All its tasks.
    all: Vec<usize>,
    /// Those whose release can start a run of a pressing task: the pressing
    /// tasks, and those ranked above one of them (their jobs may preempt it,
    /// and it resumes after them); a task below every pressing task never
    /// interrupts one.
    interrupting: Vec<usize>,
    /// Its budget per period where it never exceeds it (per-core MemGuard or
    /// MCTI without reclaim).
    budget: Option<u64>,
    /// Per period, the longest it can run a task that raises the misses of
    /// one of this core's tasks while that task runs (None: unbounded
    /// here, a whole period): such a pair issues at least r per ns, so it
    /// spends its budget within (Q + 1)/r (docs/analysis.md, "Co-runners
    /// beside this core's jobs").
    beside_per_period: Option<f64>,
    /// Whether it can spend its budget in a period at all, with the
    /// cores raising its misses beside it at most their `beside_per_period`.
    may_exhaust: bool,
    /// The most requests it issues in a period above its alone count while
    /// the cores raising its misses run beside it (`excess_from`).
    excess_per_period: f64,
}

impl OtherCore {
    /// The longest its pressing jobs run in a window of w, at most w:
    /// Bertogna–Cirinei's workload per task (all of w where its response is
    /// unknown), and one rounding per resumption: at most one per event in
    /// the window and one per task (its one started job preempted as the
    /// window opens).
    fn running_ns(&self, w: u64) -> f64 {
        memory::jobs_running_ns(&self.running, self.unit_ns, &self.events, w).min(w as f64)
    }

    /// The long-run share of the time they run, at most 1; 1 where a
    /// response is unknown (as its windows, all of them).
    fn running_share(&self) -> f64 {
        memory::jobs_running_share(&self.running, self.unit_ns, &self.events).map_or(1.0, |s| s.min(1.0))
    }

    /// As [`OtherCore::running_ns`], with at most `beside` ns of the window
    /// run beside its jobs on other cores: their alone time and at most
    /// `slowed_share` of that more.
    fn running_beside_ns(&self, w: u64, beside: f64) -> f64 {
        let alone = memory::jobs_running_ns(&self.running_alone, self.unit_ns, &self.events, w) + self.slowed_share * beside;
        self.running_ns(w).min(alone)
    }

    /// Its long-run share the same way, `beside` per ns.
    fn running_beside_share(&self, beside: f64) -> f64 {
        let alone = memory::jobs_running_share(&self.running_alone, self.unit_ns, &self.events).map_or(1.0, |s| s + self.slowed_share * beside);
        self.running_share().min(alone)
    }
}

impl CoreView {
    fn of(system: &TaskSystem, core: usize, mem: &Memory, responses: &[Option<u64>]) -> CoreView {
        let alone_time = |x: usize| alone_time_of(system, mem, x);
        let on = |d: usize| -> Vec<usize> { (0..system.tasks.len()).filter(|&x| task_core(system, x) == Some(d)).collect() };
        let budgets = mem.memguard.as_ref().filter(|_| !mem.reclaim).map(|(b, _)| b);
        let spare = mem.spare;
        let budget_of = |d: usize| budgets.map(|b| b.get(d).copied().unwrap_or(0));
        // Per period, the longest core `src` runs a task raising the misses of
        // a task of core `dst` beside it (None: unbounded, a whole period).
        // Per pair of a task of `dst` that a co-runner can make miss more and
        // a task of `src` with memory that can: what each does beside the other.
        let pairs = |src: usize, dst: usize| -> Vec<memory::Beside> {
            if mem.beside.is_empty() {
                return Vec::new();
            }
            let there: Vec<usize> = on(src).into_iter().filter(|&j| system.tasks[j].memory.is_some()).collect();
            on(dst).into_iter().filter(|&i| mem.costs[i].excess_per_work > 0.0).flat_map(|i| there.iter().filter_map(move |&j| mem.beside[i][j])).collect()
        };
        let beside = |src: usize, dst: usize| -> Option<f64> {
            let q = budget_of(src).filter(|_| !mem.beside.is_empty() && !mem.mcti && !spare)?;
            pairs(src, dst).iter().map(|b| if b.rate > 0.0 { (q + 1) as f64 / b.rate } else { f64::INFINITY }).reduce(f64::max).or(Some(0.0)).filter(|b| b.is_finite())
        };
        let period = mem.memguard.as_ref().map_or(0, |(_, p)| *p) as f64;
        // Per period, the most requests core `dst` issues above its alone
        // count while core `src` runs beside it: its largest excess while
        // `src` runs there at all (`beside`), and, pair by pair, what the
        // budget of `src` lets it run beside each of `dst`'s tasks
        // (`memory::excess_per_period`; docs/analysis.md).
        let excess_from = |src: usize, dst: usize| -> f64 {
            let most = on(dst).iter().map(|&i| mem.costs[i].excess_per_work).fold(0.0, f64::max);
            let coarse = most * beside(src, dst).unwrap_or(period).min(period);
            if mem.beside.is_empty() {
                return coarse;
            }
            let pairs: Vec<(f64, f64)> = pairs(src, dst).iter().map(|b| (b.excess, b.rate)).collect();
            let budget = budget_of(src).filter(|_| !mem.mcti && !spare).map(|q| (q + 1) as f64);
            coarse.min(memory::excess_per_period(&pairs, budget, period))
        };
        let excess_here = |d: usize| -> f64 {
            // Read only under per-core budgets.
            if mem.memguard.is_none() {
                return f64::INFINITY;
            }
            let most = on(d).iter().map(|&x| mem.costs[x].excess_per_work).fold(0.0, f64::max) * period;
            (0..system.platform.cores).filter(|&e| e != d).map(|e| excess_from(e, d)).sum::<f64>().min(most)
        };
        let others = (0..system.platform.cores)
            .filter(|&d| d != core)
            .map(|d| {
                let all = on(d);
                // A task there that raises no miss here is no presence.
                let here = on(core);
                let pressing: Vec<usize> = all.iter().copied().filter(|&x| mem.raises_misses(system, x, &here)).collect();
                let ranked = by_rank(system, &all);
                let lowest = ranked.iter().rposition(|&x| pressing.contains(&x)).map_or(0, |p| p + 1);
                let interrupting = ranked[..lowest].to_vec();
                let running = pressing.iter().map(|&x| (system.tasks[x].period_ns, mem.costs[x].time_ns.saturating_add(mem.costs[x].job_reload_ns), responses[x])).collect();
                let running_alone = pressing.iter().map(|&x| (system.tasks[x].period_ns, alone_time(x).saturating_add(mem.costs[x].job_reload_ns), responses[x])).collect();
                let slowed_share = pressing.iter().map(|&x| 1.0 - 1.0 / mem.costs[x].slowest_per_work.max(1.0)).fold(0.0, f64::max);
                let unit_ns = pressing.iter().map(|&x| mem.costs[x].reload_unit().0).max().unwrap_or(0);
                let events = interrupting.iter().map(|&x| system.tasks[x].period_ns).chain(mem.memguard.as_ref().map(|(_, p)| *p)).collect();
                let budget = budget_of(d);
                // Its requests in a period: at most its alone rate all period
                // and its excess while the cores raising its misses run beside it.
                let alone = all.iter().map(|&x| mem.costs[x].alone_per_work).fold(0.0, f64::max);
                let excess_per_period = excess_here(d);
                let may_exhaust = budget.is_none_or(|q| mem.mcti || spare || alone * period + excess_per_period + 1.0 >= q as f64);
                OtherCore { pressing, running, running_alone, slowed_share, unit_ns, events, all, interrupting, budget, beside_per_period: beside(d, core), may_exhaust, excess_per_period }
            })
            .collect();
        CoreView { on_core: on(core), others, responses: responses.to_vec(), excess_per_period: excess_here(core) }
    }
}

/// [`fp_with_memory`] for `ordered[k]`, below tasks whose bounds are `found`.
#[allow(clippy::too_many_arguments)]
fn fp_with_memory_one(system: &TaskSystem, ordered: &[usize], core: usize, on: &str, mem: &Memory, memguard: Option<(u64, u64)>, k: usize, found: &[Option<u64>], suspended: Option<(u64, u64)>, view: &CoreView) -> TaskBound {
    let i = ordered[k];
    let CoreView { on_core, others, responses, excess_per_period } = view;
    // MCTI rules 4-5: the core stalls only while it runs a non-critical job;
    // if this task and every one above it are critical, it never waits for a stall.
    let never_stalled = mem.mcti && (0..=k).all(|h| system.tasks[ordered[h]].criticality > 0);
    let memguard = if never_stalled { None } else { memguard };
    // Jobs cost their time without contention (bus waits, row conflicts);
    // the window adds each job's worst contention (time − base), a term of
    // its own in `--explain`.
    let base = |x: usize| mem.costs[x].base_ns.min(mem.costs[x].time_ns);
    let worst_contention = |x: usize| mem.costs[x].time_ns - base(x);
    // A release of ordered[h] may preempt any of ordered[h+1..=k]: charge the longest reload.
    let hp: Vec<FpTask> = (0..k)
        .map(|h| {
            let reload = ordered[h + 1..=k].iter().map(|&x| mem.costs[x].reload_ns).max().unwrap_or(0);
            FpTask { pet_ns: base(ordered[h]) + reload, period_ns: system.tasks[ordered[h]].period_ns }
        })
        .collect();
    let hp_requests: Vec<(f64, u64)> = (0..k)
        .map(|h| {
            let reload = ordered[h + 1..=k].iter().map(|&x| mem.costs[x].reload_requests).fold(0.0, f64::max);
            (mem.costs[ordered[h]].requests + reload, system.tasks[ordered[h]].period_ns)
        })
        .collect();
    let own = FpTask { pet_ns: base(i), period_ns: system.tasks[i].period_ns };
    // MemGuard groups: the task waits only for its own group's stalls
    // (the others' only free the core). Its group spends its budget
    // through the task's jobs, its higher-priority group mates here,
    // and its mates on other cores (their jobs within their responses,
    // `group_requests`).
    let group = mem.groups.as_ref().and_then(|(gs, period)| gs.iter().find(|g| g.tasks.contains(&i)).map(|g| (g, *period)));
    let group = group.filter(|(g, _)| g.tasks.iter().any(|&j| mem.costs[j].requests > 0.0));
    // Every resumption of a group's job reloads (requests too): at each
    // period boundary after a hold, and after each preemption on its core.
    // Per mate: (period, requests a job, reload requests a resumption; on
    // another core, the periods of the tasks that may preempt it there).
    // Per mate elsewhere, also its response bound where known (a round
    // before), else its fastest rate.
    let (mates_here, mates_elsewhere): (Vec<(u64, f64, f64)>, Vec<(u64, f64, f64, Vec<u64>, Result<u64, f64>)>) = match group {
        None => (Vec::new(), Vec::new()),
        Some((g, _)) => (
            (0..k)
                .filter(|&h| g.tasks.contains(&ordered[h]))
                .map(|h| (hp_requests[h].1, hp_requests[h].0, mem.costs[ordered[h]].reload_requests + ordered[h + 1..=k].iter().map(|&x| mem.costs[x].reload_requests).fold(0.0, f64::max)))
                .collect(),
            g.tasks
                .iter()
                .filter(|&&j| task_core(system, j) != Some(core))
                .map(|&j| {
                    let preemptors = (0..system.tasks.len()).filter(|&x| x != j && task_core(system, x) == task_core(system, j)).map(|x| system.tasks[x].period_ns).collect();
                    (system.tasks[j].period_ns, mem.costs[j].requests, mem.costs[j].reload_requests, preemptors, responses[j].ok_or(mem.costs[j].fastest_request_rate))
                })
                .collect(),
        ),
    };
    // The window's requests once more, split by the co-runners' presence
    // (docs/analysis.md, "Requests bounded by the co-runners' presence"): a
    // job issues its alone requests (its partition to itself, cold start and
    // reloads included) whenever it runs, and the rest only while a task
    // with a memory profile runs on another core, at most `excess` per ns.
    let excess = ordered[..=k].iter().map(|&x| mem.costs[x].excess_per_work).fold(0.0, f64::max);
    let hp_alone: Vec<f64> = (0..k)
        .map(|h| mem.costs[ordered[h]].alone_requests + ordered[h + 1..=k].iter().map(|&x| mem.costs[x].reload_requests).fold(0.0, f64::max))
        .collect();
    let alone_rate = mem.costs[i].alone_requests / own.period_ns as f64 + (0..k).map(|h| hp_alone[h] / system.tasks[ordered[h]].period_ns as f64).sum::<f64>();
    let alone_requests = |q: u64, w: u64| -> f64 { (q + 1) as f64 * mem.costs[i].alone_requests + (0..k).map(|h| w.div_ceil(system.tasks[ordered[h]].period_ns) as f64 * hp_alone[h]).sum::<f64>() };
    // Stalls bounded by the periods a co-runner runs in (docs/analysis.md):
    // a period stalls the core only once it issued Q there; without a
    // co-runner running, all of that is alone requests. Per other core: at
    // most every period of the window, and at most its running time's
    // periods plus one more for each run it makes (a job's start, a
    // resumption after a preemption: one per release there; after one of
    // its own stalls, its count at most ⌊N/Q⌋ + 1 under per-core budgets).
    // A core whose tasks cannot issue Q requests in a period never exhausts its budget.
    let can_exhaust = |on: &[usize], q: u64, period: u64| on.iter().map(|&x| mem.costs[x].fastest_request_rate).fold(0.0, f64::max) * period as f64 + 1.0 >= q as f64;
    // This core, per period: at most its alone rate for the whole period and
    // its excess while a co-runner runs; a co-runner under a budget that
    // issues at least r per ns while it runs runs at most (Q + 1)/r of a
    // period before its budget stops it (docs/analysis.md, "Stalls bounded
    // by the periods a co-runner runs in").
    let brief = |o: &OtherCore, period: u64| -> f64 {
        let least = o.pressing.iter().map(|&x| mem.costs[x].min_request_rate).fold(f64::INFINITY, f64::min);
        // Under MCTI a critical task runs on past its budget (rule 5);
        // with MemGuard's spare sharing every core runs on once all are stalled.
        let overloads = (mem.mcti && o.pressing.iter().any(|&x| system.tasks[x].criticality > 0)) || mem.spare;
        let alone = match o.budget {
            Some(q) if least > 0.0 && least.is_finite() && !overloads => ((q + 1) as f64 / least).min(period as f64),
            _ => period as f64,
        };
        alone.min(o.beside_per_period.unwrap_or(f64::INFINITY))
    };
    let per_period_presence = |period: u64| -> f64 { others.iter().filter(|o| !o.pressing.is_empty()).map(|o| brief(o, period)).sum::<f64>().min(period as f64) };
    // Co-runner presence (a task with a memory profile running on another
    // core) in a window of w: per other core, its jobs' running time, at
    // most w, and under MemGuard at most its `brief` presence in each
    // period the window overlaps.
    let mg_period = memguard.map(|(_, p)| p);
    // Per other core, its presence per MemGuard period and the period.
    let caps: Vec<Option<(f64, u64)>> = others.iter().map(|o| mg_period.map(|p| (brief(o, p), p))).collect();
    // What runs beside a co-runner's job inside the window: this core runs
    // only ordered[..=k] there (a level-k busy window), and only those with
    // a memory profile slow it, their jobs at their worst time with the
    // reloads their preemptions cost; every other core all of w.
    let alone_time = |x: usize| alone_time_of(system, mem, x);
    let window_memory: Vec<(u64, u64)> = (0..=k)
        .map(|h| {
            let x = ordered[h];
            let own = if system.tasks[x].memory.is_some() { mem.costs[x].time_ns.saturating_add(mem.costs[x].job_reload_ns) } else { 0 };
            let reload = if h < k { hp[h].pet_ns - base(x) } else { 0 };
            (system.tasks[x].period_ns, own.saturating_add(reload))
        })
        .collect();
    let elsewhere = system.platform.cores.saturating_sub(2) as f64;
    let beside_ns = |w: u64| -> f64 { window_memory.iter().map(|&(t, c)| w.div_ceil(t) as f64 * c as f64).sum::<f64>().min(w as f64) + elsewhere * w as f64 };
    let beside_share = window_memory.iter().map(|&(t, c)| c as f64 / t as f64).sum::<f64>().min(1.0) + elsewhere;
    let running_in = |o: &OtherCore, w: u64| o.running_beside_ns(w, beside_ns(w)).min(w as f64);
    let presence = |w: u64| -> f64 { others.iter().zip(&caps).map(|(o, cap)| cap.map_or(running_in(o, w), |(b, p)| running_in(o, w).min(b * memory::periods_overlapping(w, p) as f64))).sum() };
    let presence_rate: f64 = others.iter().zip(&caps).map(|(o, cap)| cap.map_or(o.running_beside_share(beside_share), |(b, p)| o.running_beside_share(beside_share).min(b / p as f64))).sum();
    // And at most the core's excess per MemGuard period in each period the window overlaps.
    let excess_in = |w: u64| -> f64 { mg_period.map_or(f64::INFINITY, |p| *excess_per_period * memory::periods_overlapping(w, p) as f64) };
    let excess_rate = (excess * presence_rate).min(mg_period.map_or(f64::INFINITY, |p| *excess_per_period / p as f64));
    let requests_beside = |q: u64, w: u64| -> f64 { alone_requests(q, w) + (excess * presence(w)).min(excess_in(w)) };
    // Whether this core's alone requests (no co-runner running) can spend
    // Q in a period: if not, only a period a co-runner runs in can stall it.
    let core_alone = on_core.iter().map(|&x| mem.costs[x].alone_per_work).fold(0.0, f64::max);
    let core_excess = on_core.iter().map(|&x| mem.costs[x].excess_per_work).fold(0.0, f64::max);
    let alone_fast = |q: u64, period: u64| core_alone * period as f64 + 1.0 >= q as f64;
    let alone_stalls = |q: u64, w: u64, budget: u64, period: u64| if alone_fast(budget, period) { (alone_requests(q, w) / budget.max(1) as f64).floor() + 1.0 } else { 0.0 };
    let here_can_exhaust = |q: u64, period: u64| can_exhaust(on_core, q, period) && core_alone * period as f64 + (core_excess * per_period_presence(period)).min(*excess_per_period) + 1.0 >= q as f64;
    // A period this core stalls in holds at least x of co-runner presence:
    // it issues Q there, at most its alone rate for the whole period and its
    // excess only while a co-runner runs (docs/analysis.md, "Stalls bounded
    // by the co-runners' presence"). None where alone requests may reach Q.
    let presence_needed = |q: u64, period: u64| -> Option<f64> {
        let x = (q as f64 - 1.0 - core_alone * period as f64) / core_excess;
        (x > 0.0 && x.is_finite()).then_some(x)
    };
    // Periods a co-runner core runs in: its running time's periods, two per
    // release there of a task that can start a run of its tasks with memory
    // (a start, a resumption), and its own stalls (⌊N/Q⌋ + 1 under a
    // per-core budget, none where it cannot issue Q), or counted job by job;
    // at most its jobs' spans and every period; in a window of w
    // (`Some(w)`), or per ns in the long run (`None`).
    let touched = |w: Option<u64>, period: u64| -> f64 {
        let beside_w = w.map(beside_ns);
        others
            .iter()
            .filter(|o| !o.pressing.is_empty())
            .map(|o| {
                // Any number where its response is unknown, in the long run too
                // (its windows' slope).
                let jobs = |x: usize| match (w, responses[x]) {
                    (_, None) => f64::INFINITY,
                    (Some(w), r) => memory::jobs_overlapping(system.tasks[x].period_ns, r, w) as f64,
                    (None, Some(_)) => 1.0 / system.tasks[x].period_ns as f64,
                };
                let running = w.zip(beside_w).map_or_else(|| o.running_beside_share(beside_share), |(w, b)| o.running_beside_ns(w, b).min(w as f64));
                // Periods the window overlaps (per ns in the long run).
                let every = w.map_or(1.0 / period as f64, |w| memory::periods_overlapping(w, period) as f64);
                // A run of its pressing tasks touches at most its length / P + 2
                // periods, and a run split by a gap at most what its hull does:
                // a pressing job's start may begin a run (2); a job ranked above
                // one that raises no miss here splits it, or the hull spans the
                // gap, its job's time h: min(2, h/P).
                // A job of y (raising no miss here) splits a run only if it is
                // released while a pressing job ranked below y has started and
                // not finished: at most ⌈R_x/T_y⌉ of y's releases per job of
                // such an x (docs/analysis.md, "Gaps only inside a pressing job").
                let splits = |y: usize| -> f64 {
                    let at = o.interrupting.iter().position(|&z| z == y).map_or(o.interrupting.len(), |p| p + 1);
                    let t_y = system.tasks[y].period_ns;
                    let inside = o.interrupting[at..].iter().filter(|z| o.pressing.contains(z)).map(|&x| responses[x].map_or(f64::INFINITY, |r| jobs(x) * r.div_ceil(t_y) as f64));
                    jobs(y).min(inside.sum::<f64>())
                };
                let runs = o
                    .interrupting
                    .iter()
                    .map(|&x| {
                        let each = if o.pressing.contains(&x) { 2.0 } else { (mem.costs[x].time_ns.saturating_add(mem.costs[x].job_reload_ns) as f64 / period as f64).min(2.0) };
                        let count = if o.pressing.contains(&x) { jobs(x) } else { splits(x) };
                        if each > 0.0 { each * count } else { 0.0 }
                    })
                    .sum::<f64>();
                let reload = o.all.iter().map(|&x| mem.costs[x].reload_requests).fold(0.0, f64::max);
                let stalls = match o.budget {
                    Some(q) if !can_exhaust(&o.all, q, period) || !o.may_exhaust => 0.0,
                    Some(q) if q > 0 => {
                        // Its jobs' requests: at most their worst, and at most
                        // their alone requests plus its excess while the cores
                        // raising its misses run beside it. Every task there
                        // with memory spends its budget, pressing here or not.
                        let issuing = o.all.iter().copied().filter(|&x| o.interrupting.contains(&x) || system.tasks[x].memory.is_some());
                        let worst = issuing.clone().map(|x| jobs(x) * (mem.costs[x].requests + reload)).sum::<f64>();
                        let beside = issuing.map(|x| jobs(x) * (mem.costs[x].alone_requests + reload)).sum::<f64>() + o.excess_per_period * every;
                        let n = worst.min(beside) / q as f64;
                        if w.is_some() { n.floor() + 1.0 } else { n }
                    }
                    Some(_) => f64::INFINITY,
                    None => 0.0,
                };
                // Every job of a pressing task runs between its release and
                // its response bound R: at most ⌈R/P⌉ + 1 periods each.
                let spans = o
                    .pressing
                    .iter()
                    .map(|&x| responses[x].map_or(f64::INFINITY, |r| jobs(x) * memory::periods_overlapping(r, period) as f64))
                    .sum::<f64>();
                // Or job by job: a job of time C touches at most ⌈C/P⌉ + 1
                // periods, and jobs run back to back no more than their sum;
                // a gap that splits a job (a job ranked above it that raises
                // no miss here, h long; a stall) adds at most min(2, ⌈h/P⌉)
                // and 1 (docs/analysis.md, "A co-runner's periods job by job").
                // A job's time: with all its reloads, and one rounding per
                // resumption within its span R (a release above it, a period).
                let time = |x: usize, r: u64| -> u64 {
                    let resumptions = o.events.iter().map(|&e| r.div_ceil(e) + 1).sum::<u64>() + 1;
                    let cost = &mem.costs[x];
                    // At most its alone time and its share of what runs beside it in the window.
                    let slowed = 1.0 - 1.0 / cost.slowest_per_work.max(1.0);
                    let most = beside_w.map_or(cost.time_ns, |b| cost.time_ns.min(alone_time(x).saturating_add((slowed * b).ceil() as u64)));
                    most.saturating_add(cost.job_reload_ns).saturating_add(cost.reload_unit().0.saturating_mul(resumptions))
                };
                let by_job = o.pressing.iter().map(|&x| responses[x].map_or(f64::INFINITY, |r| jobs(x) * memory::periods_overlapping(time(x, r), period) as f64)).sum::<f64>();
                let requests = |x: usize| mem.costs[x].requests + mem.costs[x].job_reload_requests;
                // A gap h long adds at most min(2, ⌈h/P⌉); where the stalls are
                // counted inside the jobs (below), one more if it issues
                // requests (they may spend Q in a period of the hull).
                let gaps = |stalls_inside: bool| -> f64 {
                    o.interrupting
                        .iter()
                        .filter(|y| !o.pressing.contains(y))
                        .map(|&y| match responses[y] {
                            None => f64::INFINITY,
                            Some(r) => splits(y) * (time(y, r).div_ceil(period) + (stalls_inside && requests(y) > 0.0) as u64).min(2) as f64,
                        })
                        .sum::<f64>()
                };
                // Or with each job's stalls inside it: a run's periods other
                // than its first and last are run whole or stalled after Q of
                // its own requests, at least t = Q/ρ of running, so a job of
                // time C and N requests touches at most 1 + B + ⌈(C − B·t)/P⌉,
                // B = ⌊N/Q⌋, and jobs back to back no more than their sum
                // (docs/analysis.md, "A co-runner's stalls inside its jobs").
                // Where a stall lasts to the period's end: not under MCTI,
                // spare sharing or reclaim.
                let stall_aware = match o.budget.filter(|&q| q > 0 && stalls > 0.0 && stalls.is_finite() && !mem.mcti && !mem.spare && !mem.reclaim) {
                    Some(q) => {
                        let t = memory::issue_ns(q, period, o.pressing.iter().map(|&x| mem.costs[x].fastest_request_rate).fold(0.0, f64::max));
                        let stalls_in = |x: usize| (requests(x) / q as f64).floor().min(u64::MAX as f64 / 4.0) as u64;
                        o.pressing.iter().map(|&x| responses[x].map_or(f64::INFINITY, |r| jobs(x) * memory::periods_with_stalls(time(x, r), stalls_in(x), t, period) as f64)).sum::<f64>() + gaps(true)
                    }
                    None => f64::INFINITY,
                };
                (running / period as f64 + runs + stalls).min(by_job + gaps(false) + stalls).min(stall_aware).min(spans).min(every)
            })
            .sum()
    };
    let group_requests = |q: u64, w: u64| -> f64 {
        let Some((_, period)) = group else { return 0.0 };
        let held_resumes = memory::periods_overlapping(w, period) as f64;
        let jobs = |t: u64| (w.div_ceil(t) + 1) as f64;
        let here: f64 = mates_here.iter().map(|&(t, r, reload)| jobs(t) * r + held_resumes * reload).sum();
        // A mate elsewhere: its jobs within its response R of the window,
        // ⌈(w + R)/T⌉, or where R is unknown (its jobs may pile up), its
        // fastest rate all the window; and a reload per resumption (a
        // period's, a preemption's: a release there in the window or its one
        // job preempted as it opens).
        let elsewhere: f64 = mates_elsewhere
            .iter()
            .map(|(t, r, reload, by, response)| {
                let own = match *response {
                    Ok(rj) => memory::jobs_overlapping(*t, Some(rj), w) as f64 * r,
                    Err(fastest) => fastest * w as f64,
                };
                own + (held_resumes + by.iter().map(|&t| jobs(t)).sum::<f64>()) * reload
            })
            .sum();
        (q + 1) as f64 * mem.costs[i].requests + held_resumes * mem.costs[i].reload_requests + here + elsewhere
    };
    // MemGuard's reclaim: a period whose budget was partly donated may stall
    // the core below Q (a throttle error), but never two periods running (the
    // next one's prediction is Q, so it donates nothing): at most every other
    // period of the window, P each, beside the stalls that spent Q
    // (docs/analysis.md, "Reclaim and spare sharing").
    let reclaim = mem.reclaim;
    // A stalled period but the first holds the time the core's window jobs
    // need to issue Q at their fastest (`memory::issue_ns`); not under
    // reclaim, where a period's budget may be less than Q.
    let fastest = ordered[..=k].iter().map(|&x| mem.costs[x].fastest_request_rate).fold(0.0, f64::max);
    let issue = |budget: u64, period: u64| if reclaim { 0 } else { memory::issue_ns(budget, period, fastest) };
    let throttle_errors = |w: u64, period: u64| -> u64 { if reclaim { memory::periods_overlapping(w, period).div_ceil(2).saturating_mul(period) } else { 0 } };
    let stall = |q: u64, w: u64| -> u64 {
        if let Some((g, period)) = group {
            return memory::memguard_stall_ns(group_requests(q, w), g.budget, period, 0).saturating_add(throttle_errors(w, period));
        }
        let Some((budget, period)) = memguard else { return 0 };
        let errors = throttle_errors(w, period);
        if !here_can_exhaust(budget, period) {
            return errors;
        }
        let n = (q + 1) as f64 * mem.costs[i].requests + hp_requests.iter().map(|&(r, t)| w.div_ceil(t) as f64 * r).sum::<f64>();
        let by_requests = memory::memguard_stall_ns(n.min(requests_beside(q, w)), budget, period, issue(budget, period));
        // Under reclaim the co-runner cores stall too (their stalls are runs not counted here).
        if reclaim {
            return by_requests.saturating_add(errors);
        }
        // Periods overlapping the window lie in one P longer on each side.
        let by_presence = presence_needed(budget, period).map_or(f64::INFINITY, |x| (presence(w.saturating_add(2 * period)) / x).floor());
        let by_periods = (touched(Some(w), period) + alone_stalls(q, w, budget, period)).min(by_presence).min(u64::MAX as f64 / 4.0) as u64;
        by_requests.min(memory::memguard_stalls_ns(by_periods, period, issue(budget, period)))
    };
    // In the long run each Q requests stall the core (the group) at most P;
    // under reclaim, throttle errors at most every other period besides.
    let errors_share = if reclaim && (group.is_some() || memguard.is_some()) { 0.5 } else { 0.0 };
    let stalled = match group {
        Some((g, period)) => {
            // As `group_requests` grows: every job, and every resumption's
            // reload (each period's and each preemption's elsewhere).
            let p = period as f64;
            let rate = (mem.costs[i].requests / own.period_ns as f64 + mem.costs[i].reload_requests / p)
                + mates_here.iter().map(|&(t, r, reload)| r / t as f64 + reload / p).sum::<f64>()
                + mates_elsewhere.iter().map(|(t, r, reload, by, response)| response.map_or_else(|fastest| fastest, |_| r / *t as f64) + (1.0 / p + by.iter().map(|&t| 1.0 / t as f64).sum::<f64>()) * reload).sum::<f64>();
            let share = rate * p / g.budget.max(1) as f64 + errors_share;
            // Each of those stalls reloads the task's own job once more (`held_reloads`).
            share + share / p * mem.costs[i].reload_ns as f64
        }
        None => errors_share + memguard.filter(|&(budget, period)| here_can_exhaust(budget, period)).map_or(0.0, |(budget, period)| {
            let rate = mem.costs[i].requests / own.period_ns as f64 + hp_requests.iter().map(|&(r, t)| r / t as f64).sum::<f64>();
            // Each stalled period P − issue long (the first's extra is no rate).
            let stalled_ns = (period - issue(budget, period)) as f64;
            let by_requests = rate.min(alone_rate + excess_rate) * stalled_ns / budget.max(1) as f64;
            if reclaim {
                return by_requests;
            }
            let by_presence = presence_needed(budget, period).map_or(f64::INFINITY, |x| presence_rate / x);
            let alone_share = if alone_fast(budget, period) { alone_rate / budget.max(1) as f64 } else { 0.0 };
            by_requests.min((touched(None, period) + alone_share).min(by_presence) * stalled_ns)
        }),
    };
    // Under groups a held job resumes at a period boundary and reloads,
    // and preempts the job below it, which reloads too: per grouped
    // higher-priority task one resumption a period (and one more for
    // a period begun before the window); per stall of the task's own group, its own.
    let grouped_hp: Vec<usize> = match &mem.groups {
        Some((gs, _)) => (0..k).filter(|&h| gs.iter().any(|g| g.tasks.contains(&ordered[h]))).collect(),
        None => Vec::new(),
    };
    let resume_reloads: u64 = grouped_hp.iter().map(|&h| mem.costs[ordered[h]].reload_ns + ordered[h + 1..=k].iter().map(|&x| mem.costs[x].reload_ns).max().unwrap_or(0)).sum();
    // A held job may still be pending when the window opens (a hold
    // idles the core with work left): one job of carry-in per grouped
    // higher-priority task, which holds only while each such task
    // finishes within its period (never two jobs pending).
    if let Some(&h) = grouped_hp.iter().find(|&&h| found[h].is_none_or(|b| b > system.tasks[ordered[h]].period_ns)) {
        let why = format!("higher-priority task {} of a MemGuard group has no bound within its period, so the work it carries over is not bounded here", system.tasks[ordered[h]].name);
        return row(system, i, on.to_string(), None, Some(why));
    }
    let carry_in: u64 = grouped_hp.iter().map(|&h| hp[h].pet_ns).sum();
    let held_reloads = |q: u64, w: u64| -> u64 {
        let Some((_, period)) = &mem.groups else { return 0 };
        let resumes = memory::periods_overlapping(w, *period);
        let own_stalls = if group.is_some() { stall(q, w) / period } else { 0 };
        resumes.saturating_mul(resume_reloads).saturating_add(own_stalls.saturating_mul(mem.costs[i].reload_ns))
    };
    let stalled = stalled + mem.groups.as_ref().map_or(0.0, |(_, period)| resume_reloads as f64 / *period as f64);
    // The bandwidth monitor stops this whole core from its threshold to the
    // end of the real-time job: at most R per job, one more for a job begun
    // before the window, and each resumption reloads one job of the window.
    let resume = ordered[..=k].iter().map(|&x| mem.costs[x].reload_ns).max().unwrap_or(0);
    let suspension = |w: u64| suspended.map_or(0, |(r, t)| (w.div_ceil(t) + 1).saturating_mul(r.saturating_add(resume)));
    let stalled = stalled + suspended.map_or(0.0, |(r, t)| (r + resume) as f64 / t as f64);
    let contention = |q: u64, w: u64| -> u64 {
        (q + 1).saturating_mul(worst_contention(i)) + (0..k).map(|h| (w.div_ceil(system.tasks[ordered[h]].period_ns) + grouped_hp.contains(&h) as u64).saturating_mul(worst_contention(ordered[h]))).sum::<u64>()
    };
    // In the long run the contention grows at most as the jobs' own worst.
    let stalled_regulation = stalled;
    let stalled = stalled + worst_contention(i) as f64 / own.period_ns as f64 + (0..k).map(|h| worst_contention(ordered[h]) as f64 / hp[h].period_ns as f64).sum::<f64>();
    let extra = |q: u64, w: u64| stall(q, w).saturating_add(held_reloads(q, w)).saturating_add(carry_in).saturating_add(suspension(w)).saturating_add(contention(q, w));
    let window = match fp_rta::worst_window(own, &hp, Supply::Dedicated, stalled, extra) {
        Ok(window) => window,
        Err(why) => return not_decided(system, i, on.to_string(), why),
    };
    // Per-core MemGuard: a period some co-runner runs in, or one this core's
    // alone requests spend its budget in, costs at most P; in every other
    // period the jobs run at their alone speed (docs/analysis.md, "The
    // co-runners' periods"). Not under reclaim, spare sharing or MCTI, where
    // a period may stall a core without Q issued or let it run past Q.
    // The window's jobs at their alone time (the higher ones with the reload
    // their release costs), and their split: the other two windows charge
    // them so, and add what the co-runners cost (`regulation_ns`,
    // `contention_ns`).
    let own2 = FpTask { pet_ns: alone_time(i), period_ns: own.period_ns };
    let hp2: Vec<FpTask> = (0..k).map(|h| FpTask { pet_ns: alone_time(ordered[h]) + (hp[h].pet_ns - base(ordered[h])), period_ns: hp[h].period_ns }).collect();
    let jobs_share = own2.pet_ns as f64 / own2.period_ns as f64 + hp2.iter().map(|h| h.pet_ns as f64 / h.period_ns as f64).sum::<f64>();
    let jobs = |q: u64, w: u64| -> u128 { (q as u128 + 1) * own2.pet_ns as u128 + hp2.iter().map(|h| (w as u128).div_ceil(h.period_ns as u128) * h.pet_ns as u128).sum::<u128>() };
    let alone_terms = |win: &fp_rta::Window| -> BoundTerms {
        let (q1, pet_i) = (win.q + 1, pet(system, i));
        let mut terms = BoundTerms { jobs: q1, own_pet_ns: q1 * pet_i, own_interference_ns: q1 * (own2.pet_ns - pet_i), earlier_releases_ns: win.q * own.period_ns, ..BoundTerms::default() };
        for (h, f) in hp2.iter().enumerate() {
            let (x, jobs) = (ordered[h], win.w.div_ceil(f.period_ns));
            let pet_x = pet(system, x);
            terms.higher_pet_ns += jobs * pet_x;
            terms.higher_interference_ns += jobs * (alone_time(x) - pet_x);
            terms.reload_ns += jobs * (f.pet_ns - alone_time(x));
        }
        terms
    };
    // Sought only where the classic window leaves the task past its deadline
    // (what it costs: benches/RESULTS.md).
    let by_periods = memguard.filter(|_| window.is_none_or(|w| w.response_ns > system.tasks[i].deadline_ns) && mem.groups.is_none() && !reclaim && !mem.mcti && !mem.spare && suspended.is_none()).and_then(|(budget, period)| {
        let p = period as f64;
        // Two ways to charge the periods, each a bound (docs/analysis.md): every
        // period a co-runner runs in (or this core's alone requests stall it
        // in) whole; or, where its alone requests cannot spend Q in a period,
        // the co-runners' presence and whole only the periods with enough of
        // it to spend Q (at least `presence_needed`).
        let alone_fast = alone_fast(budget, period);
        // A period charged whole inside the window holds at least min(P, t)
        // of this core's running (t what its jobs need to issue Q at their
        // fastest: it stalls only after Q, else it runs all of P), in which
        // its jobs do at least 1/slowest ns of work per ns, each at least a
        // ns of their alone time: that much of Σ alone time is done there
        // (docs/analysis.md, "Work done in the periods charged whole").
        let slowest = ordered[..=k].iter().map(|&x| mem.costs[x].slowest_per_work).fold(1.0, f64::max);
        let runs_at_least = if fastest > 0.0 { issue(budget, period) } else { period };
        let done = (runs_at_least as f64 / slowest).floor();
        let whole = |q: u64, w: u64| -> (f64, f64) {
            let n = touched(Some(w), period) + alone_stalls(q, w, budget, period);
            (n, -done * (n - 2.0).max(0.0))
        };
        let whole_share = (touched(None, period) + if alone_fast { alone_rate / budget.max(1) as f64 } else { 0.0 }) * (p - done);
        let needed = presence_needed(budget, period).filter(|_| !alone_fast);
        let by_presence = |_: u64, w: u64| -> (f64, f64) {
            let x = needed.expect("only with a threshold");
            let stalling = if here_can_exhaust(budget, period) { touched(Some(w), period).min((presence(w.saturating_add(2 * period)) / x).floor()) } else { 0.0 };
            (stalling, presence(w))
        };
        let by_presence_share = needed.map(|x| {
            let stalling = if here_can_exhaust(budget, period) { touched(None, period).min(presence_rate / x) * p } else { 0.0 };
            stalling + presence_rate
        });
        let window_of = |charge: &dyn Fn(u64, u64) -> (f64, f64), share: f64| -> Option<(fp_rta::Window, u64)> {
            if jobs_share + share >= 1.0 {
                return None;
            }
            let lost = |q: u64, w: u64| -> u64 {
                let (periods, beside) = charge(q, w);
                (periods * p + beside).ceil().min(u64::MAX as f64 / 8.0) as u64
            };
            let win = fp_rta::worst_window_of(own2.period_ns, Supply::Dedicated, |q, w| jobs(q, w) + lost(q, w) as u128).ok()?;
            Some((win, lost(win.q, win.w)))
        };
        let candidates = [Some(window_of(&whole, whole_share)), by_presence_share.map(|share| window_of(&by_presence, share))];
        let (win, lost) = candidates.into_iter().flatten().flatten().min_by_key(|(w, _)| w.response_ns)?;
        Some((win, BoundTerms { regulation_ns: lost, ..alone_terms(&win) }))
    });
    // Or jobs at their alone time and what the pressing co-runners'
    // presence costs them: while one runs, a job does at least 1/s of work
    // per ns, each ns of work a ns or more of its alone time, so each ns of
    // presence costs at most 1 − 1/s; the stalls as the classic window's
    // (docs/analysis.md, "Jobs at their alone time plus their co-runners'
    // presence"). Sought where the classic window leaves the task past its
    // deadline.
    let by_presence_time = (window.is_none_or(|w| w.response_ns > system.tasks[i].deadline_ns) && mem.groups.is_none() && !reclaim && !mem.mcti && !mem.spare && suspended.is_none())
        .then(|| {
            let slowest = ordered[..=k].iter().map(|&x| mem.costs[x].slowest_per_work).fold(1.0, f64::max);
            let lose = 1.0 - 1.0 / slowest;
            if jobs_share + lose * presence_rate + stalled_regulation >= 1.0 {
                return None;
            }
            let beside = |w: u64| (lose * presence(w)).ceil().min(u64::MAX as f64 / 8.0) as u64;
            let win = fp_rta::worst_window_of(own.period_ns, Supply::Dedicated, |q, w| jobs(q, w) + beside(w) as u128 + stall(q, w) as u128).ok()?;
            Some((win, BoundTerms { contention_ns: beside(win.w), regulation_ns: stall(win.q, win.w), ..alone_terms(&win) }))
        })
        .flatten();
    let by_periods = match (by_periods, by_presence_time) {
        (Some(a), Some(b)) => Some(if b.0.response_ns < a.0.response_ns { (b.0, b.1, true) } else { (a.0, a.1, false) }),
        (a, b) => a.map(|a| (a.0, a.1, false)).or(b.map(|b| (b.0, b.1, true))),
    };
    if let Some((win, terms, presence_time)) = by_periods.filter(|(w2, _, _)| window.is_none_or(|w1| w2.response_ns < w1.response_ns)) {
        if presence_time {
            let regulated = if memguard.is_some() { ") and MemGuard's budget stalls" } else { ", unregulated)" };
            let note = system.tasks[i].memory.is_some().then(|| format!("with memory stalls (fluid model{regulated}, its jobs at their alone time and their co-runners' presence"));
            let r = row(system, i, on.to_string(), Some(win.response_ns), note);
            return TaskBound { terms: Some(terms).filter(|_| !r.background), ..r };
        }
        let note = if system.tasks[i].memory.is_some() { Some("with memory stalls (fluid model) and MemGuard's budget stalls, its co-runners' periods whole".to_string()) } else { None };
        let r = row(system, i, on.to_string(), Some(win.response_ns), note);
        return TaskBound { terms: Some(terms).filter(|_| !r.background), ..r };
    }
    let bound = window.map(|w| w.response_ns);
    let terms = window.map(|win| {
        let (q1, cost) = (win.q + 1, &mem.costs[i]);
        let pet_i = pet(system, i);
        let mut terms = BoundTerms {
            jobs: q1,
            own_pet_ns: q1 * pet_i,
            own_cold_ns: q1 * cost.cold_ns.min(base(i) - pet_i),
            own_interference_ns: q1 * (base(i) - pet_i - cost.cold_ns.min(base(i) - pet_i)),
            contention_ns: contention(win.q, win.w),
            regulation_ns: stall(win.q, win.w).saturating_add(suspension(win.w)),
            reload_ns: held_reloads(win.q, win.w),
            earlier_releases_ns: win.q * own.period_ns,
            ..BoundTerms::default()
        };
        for (h, f) in hp.iter().enumerate() {
            let (x, jobs) = (ordered[h], win.w.div_ceil(f.period_ns) + grouped_hp.contains(&h) as u64);
            let pet_x = pet(system, x);
            terms.higher_pet_ns += jobs * pet_x;
            terms.higher_interference_ns += jobs * (base(x) - pet_x);
            terms.reload_ns += jobs * (f.pet_ns - base(x));
        }
        terms
    });
    // What the bound rests on, for this task's own memory; a task without a
    // memory profile gets no memory note.
    let own_memory = system.tasks[i].memory.is_some();
    let cost = Cost { own_memory, any_memory: (0..=k).any(|h| system.tasks[ordered[h]].memory.is_some()) };
    let note = match bound {
        None => {
            // Named with each job's whole worst cost, contention included.
            let whole = |t: FpTask, x: usize| FpTask { pet_ns: t.pet_ns + worst_contention(x), ..t };
            let hp_whole: Vec<FpTask> = hp.iter().enumerate().map(|(h, &t)| whole(t, ordered[h])).collect();
            Some(unbounded(whole(own, i), &hp_whole, Supply::Dedicated, stalled_regulation, cost))
        }
        Some(_) if suspended.is_some() && !own_memory => Some("with the bandwidth monitor's suspensions".to_string()),
        Some(_) if suspended.is_some() => Some("with memory stalls (fluid model) and the bandwidth monitor's suspensions".to_string()),
        Some(_) if !own_memory => None,
        Some(_) if group.is_some() => Some("with memory stalls (fluid model) and its MemGuard group's budget stalls".to_string()),
        Some(_) if never_stalled => Some("with memory stalls (fluid model, MCTI's fixed-priority bus); never stalled: it and every task above it are critical".to_string()),
        Some(_) if mem.mcti => Some("with memory stalls (fluid model, MCTI's fixed-priority bus) and MCTI's budget stalls".to_string()),
        Some(_) if memguard.is_some() => Some("with memory stalls (fluid model) and MemGuard's budget stalls".to_string()),
        Some(_) => Some("with memory stalls (fluid model, unregulated)".to_string()),
    };
    let r = row(system, i, on.to_string(), bound, note);
    TaskBound { terms: terms.filter(|_| !r.background), ..r }
}

fn require_cores(system: &TaskSystem, scheduler: &str) -> Result<(), FieldError> {
    match system.tasks.iter().position(|t| t.core.is_none()) {
        Some(i) => Err(FieldError::new(format!("task[{i}].core"), format!("the {scheduler} analysis needs a core for every task"))),
        None => Ok(()),
    }
}

/// Under the bandwidth monitor, how long its best-effort cores may be
/// suspended per real-time job and the job's period: the job's response
/// bound (the suspension ends with the job; blin-bandwidth-monitor §3.3),
/// from its own core's analysis, and those cores. A real-time task without a
/// bound suspends them without bound, (u64::MAX / 4, T).
fn monitor_suspension<'m>(system: &TaskSystem, mem: &'m Memory) -> Option<((u64, u64), &'m [usize])> {
    let (rt, be) = mem.monitor.as_ref()?;
    let rt_core = system.tasks[*rt].core?;
    let on: Vec<usize> = (0..system.tasks.len()).filter(|&i| system.tasks[i].core == Some(rt_core)).collect();
    let rows = fp_with_memory(system, &by_rank(system, &on), rt_core, "", mem, None, &vec![None; system.tasks.len()]);
    let bound = rows.iter().find(|r| r.task == system.tasks[*rt].name).and_then(|r| r.bound_ns);
    Some(((bound.unwrap_or(u64::MAX / 4), system.tasks[*rt].period_ns), be))
}

/// Rounds of the pfp memory bounds of every core in `cores`: each round
/// bounds a core's tasks with the other cores' jobs limited by the bounds
/// of the round before (none in the first: a co-runner without a bound may
/// have jobs piled up, and runs all of any window), so every round's bounds
/// hold if the earlier ones do, and each task keeps its least; until none
/// improves or every task meets its deadline, at most `FP_MEMORY_ROUNDS`.
/// Per core, its rows by rank.
fn fp_memory_rounds(system: &TaskSystem, cores: &[usize], mem: &Memory, suspended: impl Fn(usize) -> Option<(u64, u64)>) -> Vec<Vec<TaskBound>> {
    let ordered: Vec<Vec<usize>> = cores.iter().map(|&c| by_rank(system, &(0..system.tasks.len()).filter(|&i| system.tasks[i].core == Some(c)).collect::<Vec<_>>())).collect();
    let round = |responses: &[Option<u64>], pending: &[bool]| -> Vec<Vec<TaskBound>> {
        cores.iter().zip(&ordered).zip(pending).map(|((&c, on), &p)| if p { fp_with_memory(system, on, c, &format!("core {c}"), mem, suspended(c), responses) } else { Vec::new() }).collect()
    };
    // Without budgets (per core or per group) no co-runner's jobs are read: one round.
    let rounds = if mem.memguard.is_some() || mem.groups.is_some() { FP_MEMORY_ROUNDS } else { 1 };
    rounds_of_bounds(system.tasks.len(), &ordered, rounds, round)
}

/// Up to `rounds` rounds of `round`, which bounds the tasks of each group
/// (`groups[k]`, its rows in that order) given every task's bound from the
/// round before (None: unknown; all in the first): each task keeps its
/// least, until none improves or every task meets its deadline.
fn rounds_of_bounds(tasks: usize, groups: &[Vec<usize>], rounds: usize, round: impl Fn(&[Option<u64>], &[bool]) -> Vec<Vec<TaskBound>>) -> Vec<Vec<TaskBound>> {
    let mut responses = vec![None; tasks];
    let mut best = round(&responses, &vec![true; groups.len()]);
    for _ in 1..rounds {
        // Every task meets its deadline already: no verdict left to change.
        if best.iter().flatten().all(|r| r.schedulable == Some(true)) {
            break;
        }
        for (rows, group) in best.iter().zip(groups) {
            for (r, &i) in rows.iter().zip(group) {
                responses[i] = r.bound_ns;
            }
        }
        if responses.iter().all(Option::is_none) {
            break;
        }
        // Only groups with a task past its deadline are bounded again (the
        // others keep theirs: no verdict there to change).
        let pending: Vec<bool> = best.iter().map(|rows| rows.iter().any(|r| r.schedulable != Some(true))).collect();
        let mut improved = false;
        for (old, new) in best.iter_mut().zip(round(&responses, &pending)) {
            for (o, n) in old.iter_mut().zip(new) {
                if n.bound_ns.is_some_and(|b| o.bound_ns.is_none_or(|a| b < a)) {
                    *o = n;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
    best
}

/// Rounds of [`fp_memory_rounds`] at most.
const FP_MEMORY_ROUNDS: usize = 4;

fn partitioned(system: &TaskSystem, edf: bool, memory: Option<&Memory>, waits: Option<&PortWaits>) -> Result<(Vec<TaskBound>, Vec<GroupResult>), FieldError> {
    require_cores(system, if edf { "pedf" } else { "pfp" })?;
    // Once for all the monitor's best-effort cores.
    let suspension = memory.filter(|_| !edf).and_then(|m| monitor_suspension(system, m));
    // The pfp cores with memory bounds, all at once (their bounds limit each other's).
    let limited = |c: usize| system.tasks.iter().any(|t| t.core == Some(c) && t.limited_preemption());
    let fp_cores: Vec<usize> = (0..system.platform.cores).filter(|&c| !edf && !limited(c) && system.tasks.iter().any(|t| t.core == Some(c))).collect();
    let mut fp_rows = match memory.filter(|_| !edf) {
        Some(mem) => fp_memory_rounds(system, &fp_cores, mem, |c| suspension.filter(|(_, be)| be.contains(&c)).map(|(s, _)| s)),
        None => Vec::new(),
    }
    .into_iter();
    let mut rows = Vec::new();
    let mut groups = Vec::new();
    for core in 0..system.platform.cores {
        let on: Vec<usize> = (0..system.tasks.len()).filter(|&i| system.tasks[i].core == Some(core)).collect();
        if on.is_empty() {
            continue;
        }
        let name = format!("core {core}");
        let (core_rows, core_load) = if edf {
            // A release preempts only a job with a later absolute deadline: one of a longer relative deadline.
            // A background job's deadline is never: it runs only when no job waits (no demand, no reload owed).
            let preempts = |j: usize, i: usize| system.tasks[i].core == system.tasks[j].core && system.tasks[i].deadline_ns > system.tasks[j].deadline_ns && !system.tasks[i].is_background();
            let cost = charged(system, memory, preempts);
            let with_jobs: Vec<usize> = on.iter().copied().filter(|&i| !system.tasks[i].is_background()).collect();
            let tasks: Vec<Sporadic> = with_jobs.iter().map(|&i| sporadic(system, i, cost[i])).collect();
            // MemGuard per core, where the core's tasks issue requests: each job's
            // requests with the largest reload it is charged (as its time).
            let stalls = memory.and_then(|m| m.memguard.as_ref().map(|b| (m, b))).filter(|(m, _)| with_jobs.iter().any(|&i| m.costs[i].requests > 0.0)).map(|(m, (budgets, period))| {
                let requests = with_jobs
                    .iter()
                    .map(|&j| m.costs[j].requests + (0..system.tasks.len()).filter(|&i| i != j && preempts(j, i)).map(|i| m.costs[i].reload_requests).fold(0.0, f64::max))
                    .collect();
                let budget = budgets.get(core).copied().unwrap_or(0);
                // Not under reclaim, where a period's budget may be less than Q.
                let fastest = with_jobs.iter().map(|&j| m.costs[j].fastest_request_rate).fold(0.0, f64::max);
                let issue_ns = if m.reclaim { 0 } else { memory::issue_ns(budget, *period, fastest) };
                edf_demand::Stalls { requests, budget, period_ns: *period, reclaim: m.reclaim, issue_ns }
            });
            let verdict = match &stalls {
                Some(s) => edf_demand::schedulable_with_stalls(&tasks, s),
                None => edf_demand::schedulable(&tasks),
            };
            // Which term failed it (Build 5): the PETs alone (the test run
            // again on them), or the memory on top of them. Only for a core that fails.
            let fails = || {
                let cpu_fails = || edf_demand::schedulable(&with_jobs.iter().map(|&i| sporadic(system, i, pet(system, i))).collect::<Vec<_>>()) == Ok(false);
                match (memory.is_some(), stalls.is_some()) {
                    (false, _) => "the core fails the processor demand test: CPU demand exceeds the core",
                    _ if cpu_fails() => "the core fails the processor demand test on its PETs alone: CPU demand exceeds the core",
                    (true, true) => "memory stalls push demand over the core: it passes the processor demand test on its PETs alone, not with memory stalls (fluid model) and MemGuard's budget stalls",
                    (true, false) => "memory stalls push demand over the core: it passes the processor demand test on its PETs alone, not with memory stalls (fluid model)",
                }
            };
            let fails = (verdict == Ok(false)).then(fails).unwrap_or_default();
            let rate = stalls.as_ref().map_or(0.0, |s| s.rate(&tasks));
            let rows = on
                .iter()
                .map(|&i| match verdict {
                    Ok(ok) => {
                        let note = match (ok, &stalls) {
                            (true, Some(_)) if system.tasks[i].memory.is_some() => Some("with memory stalls (fluid model) and MemGuard's budget stalls".to_string()),
                            (true, Some(_)) => Some("with MemGuard's budget stalls".to_string()),
                            (true, None) => memory_note(system, i, memory),
                            (false, _) => Some(fails.to_string()),
                        };
                        let r = row(system, i, name.clone(), ok.then_some(system.tasks[i].deadline_ns), note);
                        TaskBound { terms: (ok && !r.background).then(|| edf_terms(system, memory, i, cost[i], None)), ..r }
                    }
                    Err(why) => not_decided(system, i, name.clone(), why),
                })
                .collect();
            (rows, Some(load(system, memory, &with_jobs, &cost, rate)))
        } else if let Some(i) = memory.and_then(|_| on.iter().copied().find(|&i| system.tasks[i].limited_preemption())) {
            // Blocking and last regions are bounded for CPU-only cores so far.
            let t = &system.tasks[i];
            let kind = if t.preemption == Preemption::Preemptive { "non-preemptive copies of" } else { t.preemption.name() };
            let why = format!("no bound yet for limited preemption with memory stalls ({kind} task {} on this core); without memory profiles the core is analyzed", t.name);
            (on.iter().map(|&j| undecided(system, j, name.clone(), why.clone())).collect(), None)
        } else if memory.is_some() {
            (fp_rows.next().expect("a round's rows per pfp core"), None)
        } else {
            (fp_over(system, &by_rank(system, &on), |_| Supply::Dedicated, &name, waits), None)
        };
        let ok = all_of(core_rows.iter().map(|r: &TaskBound| r.schedulable));
        rows.extend(core_rows);
        groups.push(GroupResult { name, utilization: utilization(system, &on), schedulable: ok, note: None, load: core_load });
    }
    Ok((rows, groups))
}

fn global_edf(system: &TaskSystem, mem: Option<&Memory>) -> (Vec<TaskBound>, Vec<GroupResult>, &'static str) {
    let m = system.platform.cores;
    // A background job's deadline is never: it runs only on a core no job wants.
    let all: Vec<usize> = (0..system.tasks.len()).filter(|&i| !system.tasks[i].is_background()).collect();
    let implicit = system.tasks.iter().all(|t| t.deadline_ns == t.period_ns);
    // A release preempts only a job with a later absolute deadline: one of a longer relative deadline.
    let cost = charged(system, mem, |j, i| system.tasks[i].deadline_ns > system.tasks[j].deadline_ns && !system.tasks[i].is_background());
    // The same tests on the PETs alone name the term that fails them (Build 5):
    // with memory profiles, memory stalls where the PETs alone pass.
    let pets: Vec<u64> = (0..system.tasks.len()).map(|i| pet(system, i)).collect();
    // Goossens, Funk & Baruah (2003): Σδ ≤ m − (m−1)·δ_max meets every deadline
    // (δ = C/min(D, T); utilization for implicit deadlines).
    // Decided exactly: Σδ + (m−1)·δ_max ≤ m over rationals.
    let gfb_on = |c: &[u64]| {
        let mut terms: Vec<Frac> = all.iter().map(|&i| Frac::new(c[i] as u128, system.tasks[i].deadline_ns.min(system.tasks[i].period_ns) as u128)).collect();
        let max = terms.iter().copied().max().unwrap_or(Frac::new(0, 1));
        terms.push(Frac::new(max.num * (m as u128 - 1), max.den));
        cmp_sum(&terms, Frac::new(m as u128, 1)) != Ordering::Greater
    };
    // Above m cores' worth no tardiness is bounded (exactly: Σ C/T > m).
    let over_on = |c: &[u64]| cmp_sum(&utilizations(all.iter().map(|&i| (c[i], system.tasks[i].period_ns))), Frac::new(m as u128, 1)) == Ordering::Greater;
    // Bounded tardiness (Devi & Anderson 2005, the Level-C bound with σ = 0):
    // a job responds within D + x + C.
    let tardiness_on = |c: &[u64]| {
        let full: Vec<CoreSupply> = (0..m).map(CoreSupply::full).collect();
        restricted_supply_gedf(full, &all.iter().map(|&i| Charged { task: i, pet_ns: c[i], period_ns: system.tasks[i].period_ns }).collect::<Vec<_>>())
    };
    let u = utilization(system, &all);
    let rows: Vec<TaskBound>;
    let test;
    if gfb_on(&cost) {
        test = "Goossens-Funk-Baruah density test";
        rows = all.iter().map(|&i| TaskBound { terms: Some(edf_terms(system, mem, i, cost[i], None)), ..row(system, i, "global".into(), Some(system.tasks[i].deadline_ns), memory_note(system, i, mem)) }).collect();
    } else if implicit {
        test = "Goossens-Funk-Baruah, else bounded tardiness";
        let t = tardiness_on(&cost);
        // Why none is bounded, said once for all.
        let unbounded = if over_on(&cost) {
            if mem.is_some() && !over_on(&pets) {
                format!("memory stalls push demand over the {m} cores: utilization {u:.4} on PETs alone, above {m} with memory stalls (fluid model): tardiness grows without bound")
            } else {
                format!("utilization {u:.4} exceeds the {m} cores: CPU demand exceeds them, tardiness grows without bound")
            }
        } else if mem.is_none() {
            "fails the bounded-tardiness condition".to_string()
        } else if tardiness_on(&pets).schedulable() {
            "memory stalls push demand past the bounded-tardiness condition: it holds on the PETs alone, not with memory stalls (fluid model)".to_string()
        } else {
            "fails the bounded-tardiness condition on the PETs alone: CPU demand".to_string()
        };
        rows = all
            .iter()
            .zip(&t.tardiness_bounds_ns)
            .map(|(&i, tard)| {
                let note = match tard {
                    Some(_) if memory_note(system, i, mem).is_some() => "deadline + bounded tardiness, with memory stalls (fluid model, unregulated)".to_string(),
                    Some(_) => "deadline + bounded tardiness".to_string(),
                    None => unbounded.clone(),
                };
                let terms = tard.map(|x| edf_terms(system, mem, i, cost[i], Some(x)));
                TaskBound { terms, ..row(system, i, "global".into(), tard.map(|x| system.tasks[i].deadline_ns + x), Some(note)) }
            })
            .collect();
    } else {
        test = "Goossens-Funk-Baruah density test";
        let why = if mem.is_some() && gfb_on(&pets) {
            "memory stalls push density over the Goossens-Funk-Baruah bound (it holds on the PETs alone); no tardiness bound for deadlines shorter than periods"
        } else {
            "fails the density test; no tardiness bound for deadlines shorter than periods"
        };
        rows = all.iter().map(|&i| row(system, i, "global".into(), None, Some(why.into()))).collect();
    }
    let background = (0..system.tasks.len()).filter(|&i| system.tasks[i].is_background()).map(|i| row(system, i, "global".into(), None, None));
    let rows = in_file_order(system, rows.into_iter().chain(background).collect());
    let ok = all_of(rows.iter().map(|r| r.schedulable));
    (rows, vec![GroupResult { name: format!("{m} cores"), utilization: u, schedulable: ok, note: None, load: Some(load(system, mem, &all, &cost, 0.0)) }], test)
}

fn global_fp(system: &TaskSystem, mem: Option<&Memory>) -> (Vec<TaskBound>, Vec<GroupResult>) {
    let m = system.platform.cores;
    let all: Vec<usize> = (0..system.tasks.len()).collect();
    let ordered = by_rank(system, &all);
    let rank = fixed_priority_ranks(system, &all);
    let cost = charged(system, mem, |j, i| rank[j] < rank[i]);
    let tasks: Vec<Sporadic> = ordered.iter().map(|&i| sporadic(system, i, cost[i])).collect();
    let bounds = gfp_rta::response_times(&tasks, m);
    // Where a bound is missing with memory: the PETs alone name the term (Build 5).
    let cpu_bounds = mem.filter(|_| bounds.contains(&None)).map(|_| gfp_rta::response_times(&ordered.iter().map(|&i| sporadic(system, i, pet(system, i))).collect::<Vec<_>>(), m));
    let rows = ordered
        .iter()
        .zip(bounds)
        .enumerate()
        .map(|(k, (&i, b))| {
            let note = match (b, cpu_bounds.as_ref().map(|c| c[k])) {
                (None, Some(Some(_))) => Some("memory stalls push its response past its deadline: on the PETs alone it has a fixed point within it".to_string()),
                (None, _) => Some("no fixed point within the deadline (here or above)".to_string()),
                (Some(_), _) => memory_note(system, i, mem),
            };
            let r = row(system, i, "global".into(), b, note);
            let terms = b.filter(|_| !r.background).map(|bound| global_fp_terms(system, mem, i, cost[i], bound));
            TaskBound { terms, ..r }
        })
        .collect();
    let rows = in_file_order(system, rows);
    let ok = all_of(rows.iter().map(|r| r.schedulable));
    (rows, vec![GroupResult { name: format!("{m} cores"), utilization: utilization(system, &all), schedulable: ok, note: None, load: None }])
}

/// One job's charged cost C split into its terms (`--explain`): its PET, its
/// cold start, LLC interference and contention, and the reload a preemption
/// costs it (`memory::charged_costs`).
fn cost_terms(system: &TaskSystem, mem: Option<&Memory>, i: usize, cost_ns: u64) -> BoundTerms {
    let pet_i = pet(system, i);
    let (time, cold) = mem.map_or((pet_i, 0), |m| (m.costs[i].time_ns, m.costs[i].cold_ns));
    let own_cold_ns = cold.min(time - pet_i);
    BoundTerms { jobs: 1, own_pet_ns: pet_i, own_cold_ns, own_interference_ns: time - pet_i - own_cold_ns, reload_ns: cost_ns - time, ..BoundTerms::default() }
}

/// A global fixed-priority bound R split into its terms (`--explain`): one
/// job, its cost C ([`cost_terms`]) and R − C, the higher-priority work
/// shared among the cores (`gfp_rta`: R = C + ⌊Σ min(W, R − C + 1)/m⌋ at most).
fn global_fp_terms(system: &TaskSystem, mem: Option<&Memory>, i: usize, cost_ns: u64, bound_ns: u64) -> BoundTerms {
    BoundTerms { higher_share_ns: bound_ns - cost_ns, ..cost_terms(system, mem, i, cost_ns) }
}

/// An EDF bound split into its terms (`--explain`): the deadline D where
/// the test meets it (pedf, Goossens-Funk-Baruah); under bounded tardiness
/// D + ⌈x⌉ + C, the job's cost C split by [`cost_terms`] (Devi and Anderson
/// 2005: tardiness ≤ x + C; `tardiness_ns` ⌈x + C⌉ from `level_c`).
fn edf_terms(system: &TaskSystem, mem: Option<&Memory>, i: usize, cost_ns: u64, tardiness_bound_ns: Option<u64>) -> BoundTerms {
    let deadline_ns = system.tasks[i].deadline_ns;
    match tardiness_bound_ns {
        None => BoundTerms { jobs: 1, deadline_ns, ..BoundTerms::default() },
        Some(tard) => BoundTerms { deadline_ns, tardiness_ns: tard - cost_ns, ..cost_terms(system, mem, i, cost_ns) },
    }
}

fn servers(system: &TaskSystem, mem: Option<&Memory>) -> Result<(Vec<TaskBound>, Vec<GroupResult>), FieldError> {
    let of: Vec<usize> = server_of_tasks(system)?;
    let n = system.servers.len();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, &s) in of.iter().enumerate() {
        members[s].push(i);
    }
    // Within how long of each period's start the budget is served (R_s ≤ P_s;
    // P_s where it is not sure: the rest is lost at the period's end, rule 1).
    let mut within: Vec<u64> = system.servers.iter().map(|sv| sv.period_ns).collect();
    // The fastest its tasks issue requests, and its MRS memory budget where
    // they can spend it: a budget that nothing in the server can spend within
    // its CPU budget (at its fastest, + 1 for rounding) never suspends it. A
    // CBS reservation's memory budget is renewed on the grid of its period
    // from 0, not at its replenishments: one period of that grid may hold the
    // ends of two of its budgets.
    let fastest: Vec<f64> = members.iter().map(|m| mem.map_or(0.0, |mem| m.iter().map(|&i| mem.costs[i].fastest_request_rate).fold(0.0, f64::max))).collect();
    let spendable: Vec<Option<u64>> = system
        .servers
        .iter()
        .enumerate()
        .map(|(s, sv)| {
            let mem = mem.filter(|m| m.mrs)?;
            let runs_per_grid_period = if sv.kind == ServerKind::Cbs { 2.0 } else { 1.0 };
            sv.memory_budget.filter(|&m| members[s].iter().any(|&i| mem.costs[i].requests > 0.0) && fastest[s] * runs_per_grid_period * sv.budget_ns as f64 + 1.0 >= m as f64)
        })
        .collect();
    // On the common grid from 0 a periodic server (on a core of periodic
    // servers) is served in each of its periods no earlier than the budgets
    // of the servers above it released with it that cannot leave the core
    // early (no memory budget they can spend: each holds it for all of its
    // Q, MRS §III rule 6), and within its response.
    let mut earliest: Vec<Option<u64>> = vec![None; n];
    // What its tasks are sure of: all of it where sure; else part of it per
    // period or per K periods (server_supply.rs), if anything.
    let mut served: Vec<Option<Guarantee>> = vec![None; n];
    // Periods of the servers above each one on its core (fixed priority).
    let mut above: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut groups = Vec::new();
    let mut notes = vec![None; n];
    for core in 0..system.platform.cores {
        let on: Vec<usize> = (0..n).filter(|&s| system.servers[s].core == core).collect();
        let cbs = on.iter().filter(|&&s| system.servers[s].kind == ServerKind::Cbs).count();
        if cbs > 0 && cbs < on.len() {
            for &s in &on {
                notes[s] = Some("periodic and CBS servers share this core: not analyzed".to_string());
            }
        } else if cbs > 0 {
            // EDF among hard reservations: Σ Q/P ≤ 1 serves each its Q by every deadline.
            let bw: f64 = on.iter().map(|&s| system.servers[s].budget_ns as f64 / system.servers[s].period_ns as f64).sum();
            let fits = cmp_sum(&utilizations(on.iter().map(|&s| (system.servers[s].budget_ns, system.servers[s].period_ns))), Frac::new(1, 1)) != Ordering::Greater;
            for &s in &on {
                served[s] = fits.then_some(Guarantee::PerPeriod { budget_ns: system.servers[s].budget_ns, within_ns: system.servers[s].period_ns });
                if !fits {
                    notes[s] = Some(format!("the CBS bandwidth of core {core} is {bw:.3} > 1"));
                }
                // Under EDF any other reservation may take the core: at each of its
                // replenishments, and at each wake-up (a release of one of its tasks).
                above[s] = on.iter().filter(|&&h| h != s).flat_map(|&h| std::iter::once(system.servers[h].period_ns).chain(members[h].iter().map(|&i| system.tasks[i].period_ns))).collect();
            }
        } else {
            // Fixed priority among idling servers (rule 2: higher number first, ties
            // by file order); an idling server takes its whole budget: a periodic task.
            let mut ordered = on.clone();
            ordered.sort_by_key(|&s| (std::cmp::Reverse(system.servers[s].priority), s));
            for (k, &s) in ordered.iter().enumerate() {
                earliest[s] = Some(ordered[..k].iter().filter(|&&h| spendable[h].is_none() && system.servers[s].period_ns % system.servers[h].period_ns == 0).map(|&h| system.servers[h].budget_ns).sum());
                above[s] = ordered[..k].iter().map(|&h| system.servers[h].period_ns).collect();
                let task = |s: usize| FpTask { pet_ns: system.servers[s].budget_ns, period_ns: system.servers[s].period_ns };
                let hp: Vec<FpTask> = ordered[..k].iter().map(|&h| task(h)).collect();
                let r = fp_rta::response_time(task(s), &hp, Supply::Dedicated);
                // Node level: is the server's budget sure in every one of its periods?
                let sure = matches!(r, Ok(Some(r)) if r <= system.servers[s].period_ns);
                if let (Ok(Some(r)), true) = (r, sure) {
                    within[s] = r;
                    served[s] = Some(Guarantee::PerPeriod { budget_ns: system.servers[s].budget_ns, within_ns: r });
                }
                if !sure {
                    let response = match r {
                        Ok(Some(r)) => ms(r),
                        Ok(None) => "unbounded".to_string(),
                        Err(why) => why.to_string(),
                    };
                    // The servers above serve theirs within their response, or their period.
                    let spans: Vec<u64> = ordered[..k].iter().map(|&h| within[h]).collect();
                    // Every server starts on one grid from 0: with those above sure of
                    // their budgets, its periods' share is known exactly.
                    let sure_above = ordered[..k].iter().all(|&h| matches!(served[h], Some(Guarantee::PerPeriod { budget_ns, .. }) if budget_ns == system.servers[h].budget_ns));
                    let grid = if sure_above { server_supply::on_grid(task(s), &hp) } else { None };
                    served[s] = server_supply::guarantee(task(s), &hp, &spans, grid);
                    let part = match served[s] {
                        Some(Guarantee::PerPeriod { budget_ns, within_ns }) => format!("; its tasks are sure of {} of it within {} of each period's start", ms(budget_ns), ms(within_ns)),
                        Some(Guarantee::Blocks { budgets, per_period }) => {
                            let (k, g) = best_block(&budgets).expect("one at least");
                            let per = per_period.map_or(String::new(), |(c, r)| format!(", and of {} within {} of each period's start", ms(c), ms(r)));
                            format!("; its tasks are sure of {} in every {k} of its periods{per}", ms(g))
                        }
                        None => format!("; its tasks are sure of nothing in 1-{BLOCKS} of its periods"),
                    };
                    notes[s] = Some(format!("its budget is not sure within its period on core {core} (server response {response}){part}"));
                }
            }
        }
    }
    // MRS: periodic servers whose memory budget caps the time their jobs run
    // per period. (Not a CBS reservation: throttled until its deadline, it
    // runs on unregulated for the rest of the memory budget's period.)
    let capped: Vec<Option<u64>> = system
        .servers
        .iter()
        .enumerate()
        .map(|(s, sv)| {
            let mem = mem.filter(|m| m.mrs && sv.kind == ServerKind::Periodic)?;
            let rate = members[s].iter().map(|&i| mem.costs[i].min_request_rate).fold(f64::INFINITY, f64::min);
            let budget = sv.memory_budget?;
            (rate > 0.0 && rate.is_finite()).then(|| sv.budget_ns.min((budget as f64 / rate).ceil() as u64))
        })
        .collect();
    let in_capped: Vec<bool> = (0..system.tasks.len()).map(|i| capped[of[i]].is_some()).collect();
    // Two servers whose spans on the common grid never meet never run at once.
    let spans: Vec<Option<ServiceSpan>> = (0..n).map(|s| earliest[s].map(|earliest_ns| ServiceSpan { period_ns: system.servers[s].period_ns, earliest_ns, within_ns: within[s] })).collect();
    let meet = |s: usize, k: usize| match (spans[s], spans[k]) {
        (Some(a), Some(b)) => server_supply::services_meet(a, b),
        _ => true,
    };
    // Costs beside the uncapped co-runners only (the full costs when none is capped).
    let beside = in_capped.contains(&true).then(|| memory::job_costs_beside(system, |_, j| !in_capped[j]));
    // Costs beside only the co-runners that raise none of a task's misses:
    // those that do add their running time instead (server_memory.rs).
    let unpressed = mem.map(|m| memory::job_costs_beside(system, |i, j| !m.presses(system, i, j)));
    let ordered_of: Vec<Vec<usize>> = members.iter().map(|m| by_rank(system, m)).collect();
    // Per server, its rows by rank, with the co-runners' tasks limited by
    // `responses` where known (their jobs run only within them).
    let round = |responses: &[Option<u64>], pending: &[bool]| -> Vec<Vec<TaskBound>> {
        system.servers.iter().enumerate().map(|(s, sv)| {
            let ordered = &ordered_of[s];
            if !pending[s] {
                return Vec::new();
            }
            // A window of a task whose releases and those above it fall on the
            // server's period starts opens at one (server_memory.rs).
            let opens_at_period_start = |k: usize| sv.kind == ServerKind::Periodic && ordered[..=k].iter().all(|&j| on_grid_of(&system.tasks[j], sv.period_ns));
            if let (Some(guarantee), Some(mem)) = (served[s], mem) {
                let costs = beside.as_deref().unwrap_or(&mem.costs);
                // Time beside the uncapped co-runners (the capped ones add their running
                // time per window); requests at the worst of all co-runners (a capped one
                // running beside the job shrinks its LLC share, so it misses more).
                let full = &mem.costs;
                // Least progress share while capped co-runners run, over the server's
                // tasks and phases: 1 − fastest beside / slowest full time per work.
                let slowed_share = ordered.iter().map(|&x| (1.0 - costs[x].fastest_per_work / full[x].slowest_per_work).clamp(0.0, 1.0)).fold(0.0, f64::max);
                let unpressed = unpressed.as_deref().unwrap_or(full);
                let pressed_share = ordered.iter().map(|&x| (1.0 - unpressed[x].fastest_per_work / full[x].slowest_per_work).clamp(0.0, 1.0)).fold(0.0, f64::max);
                let cbs = sv.kind == ServerKind::Cbs;
                let memory_budget = spendable[s];
                let view = ServerView {
                    period_ns: sv.period_ns,
                    budget_ns: sv.budget_ns,
                    guarantee,
                    memory_budget,
                    issue_ns: memory_budget.map_or(0, |m| memory::issue_ns(m, sv.budget_ns, fastest[s])),
                    memory_grid_apart: cbs,
                    opens_at_period_start: false, // per task, below
                    higher_periods_ns: above[s].clone(),
                    // While a capped co-runner runs a job still progresses at its
                    // worst (full-cost) rate instead of its beside one: it loses at
                    // most 1 − τ_beside/τ_full of that time (server_memory.rs).
                    interference: (0..n)
                        .filter(|&k| system.servers[k].core != sv.core && meet(s, k))
                        .filter_map(|k| capped[k].map(|a| (system.servers[k].period_ns, (a as f64 * slowed_share).ceil() as u64)))
                        .collect(),
                    corunners: (0..system.platform.cores)
                        .filter(|&c| c != sv.core)
                        .map(|c| {
                            (0..n)
                                .filter(|&k| system.servers[k].core == c && meet(s, k))
                                .filter_map(|k| {
                                    // Its tasks that raise a miss here, and those ranked above one of
                                    // them (their releases make it resume).
                                    let pressing: Vec<usize> = ordered_of[k].iter().copied().filter(|&x| mem.raises_misses(system, x, ordered)).collect();
                                    let lowest = ordered_of[k].iter().rposition(|x| pressing.contains(x))?;
                                    Some(server_memory::CoRunner {
                                        within_ns: (system.servers[k].kind == ServerKind::Periodic).then_some(within[k]),
                                        period_ns: system.servers[k].period_ns,
                                        per_period_ns: capped[k].unwrap_or(system.servers[k].budget_ns),
                                        tasks: pressing.iter().map(|&x| (system.tasks[x].period_ns, full[x].time_ns.saturating_add(full[x].job_reload_ns), responses[x])).collect(),
                                        unit_ns: pressing.iter().map(|&x| full[x].reload_unit().0).max().unwrap_or(0),
                                        events: std::iter::once(system.servers[k].period_ns)
                                            .chain(above[k].iter().copied())
                                            .chain(ordered_of[k][..lowest].iter().map(|&x| system.tasks[x].period_ns))
                                            .chain(mem.memguard.as_ref().map(|(_, p)| *p))
                                            .collect(),
                                    })
                                })
                                .collect()
                        })
                        .collect(),
                    excess_per_work: ordered.iter().map(|&x| full[x].excess_per_work).fold(0.0, f64::max),
                    alone_per_work: ordered.iter().map(|&x| full[x].alone_per_work).fold(0.0, f64::max),
                    pressed_share,
                    core_stalls: core_stalls(system, mem, &members, &within, s),
                };
                let demand = |i: usize| Demand {
                    time_ns: costs[i].time_ns,
                    unpressed_time_ns: unpressed[i].time_ns,
                    requests: full[i].requests,
                    alone_requests: full[i].alone_requests,
                    period_ns: system.tasks[i].period_ns,
                    reload_ns: costs[i].job_reload_ns,
                    reload_requests: full[i].job_reload_requests,
                };
                (0..ordered.len())
                    .map(|k| {
                        let i = ordered[k];
                        let hp: Vec<Demand> = ordered[..k].iter().map(|&j| demand(j)).collect();
                        // Any task of the window may be the one that loses the core.
                        let reload = ordered[..=k].iter().fold(Reload { each_ns: 0, each_requests: 0.0, unit_ns: 0, unit_requests: 0.0 }, |r, &j| Reload {
                            each_ns: r.each_ns.max(costs[j].reload_ns),
                            each_requests: r.each_requests.max(full[j].reload_requests),
                            unit_ns: r.unit_ns.max(costs[j].reload_unit().0),
                            unit_requests: r.unit_requests.max(full[j].reload_unit().1),
                        });
                        // MCTI rule 5: a critical task is never stalled.
                        let never_stalled = mem.mcti && ordered[..=k].iter().all(|&h| system.tasks[h].criticality > 0);
                        let stalled = view.core_stalls.is_some() && !never_stalled;
                        // Every job of the window released at a start of the server's period.
                        let opens_at_period_start = opens_at_period_start(k);
                        let own_view;
                        let view_k = if (view.core_stalls.is_some() && never_stalled) || opens_at_period_start {
                            own_view = ServerView { core_stalls: view.core_stalls.clone().filter(|_| !never_stalled), opens_at_period_start, ..view.clone() };
                            &own_view
                        } else {
                            &view
                        };
                        match server_memory::response_window(demand(i), &hp, reload, view_k) {
                            Ok(window) => {
                                let bound = window.map(|w| w.w_ns - (w.jobs - 1) * system.tasks[i].period_ns);
                                let regulator = if mem.mcti { "MCTI" } else { "MemGuard" };
                                let note = match (bound.is_some(), stalled) {
                                    (true, true) => format!("with memory stalls (fluid model) and {regulator}'s budget stalls of core {}, paid from the server's budget", sv.core),
                                    (true, false) if never_stalled => "with memory stalls (fluid model, MCTI's fixed-priority bus); never stalled: it and every task above it in the server are critical".to_string(),
                                    (true, false) => "with memory stalls (fluid model)".to_string(),
                                    (false, true) => format!("demand with memory stalls and {regulator}'s budget stalls outgrows the server"),
                                    (false, false) => "demand with memory stalls outgrows the server".to_string(),
                                };
                                let note = if opens_at_period_start && bound.is_some() { format!("{note}; {ON_PERIOD_STARTS}") } else { note };
                                let r = row(system, i, sv.name.clone(), bound, Some(note));
                                let terms = window.map(|w| server_terms(system, i, &ordered[..k], &w));
                                TaskBound { terms: terms.filter(|_| !r.background), ..r }
                            }
                            Err(why) => not_decided(system, i, sv.name.clone(), why),
                        }
                    })
                    .collect()
            } else if let Some(guarantee) = served[s] {
                let rows = fp_over(system, ordered, |k| guarantee.supply(sv.period_ns, opens_at_period_start(k)), &sv.name, None);
                // The bound holds for the file's releases: the note says so.
                rows.into_iter()
                    .enumerate()
                    .map(|(k, r)| match (&r.note, r.bound_ns.is_some() && opens_at_period_start(k)) {
                        (_, false) => r,
                        (Some(note), true) => TaskBound { note: Some(format!("{note}; {ON_PERIOD_STARTS}")), ..r },
                        (None, true) => TaskBound { note: Some(ON_PERIOD_STARTS.to_string()), ..r },
                    })
                    .collect()
            } else {
                ordered.iter().map(|&i| row(system, i, sv.name.clone(), None, Some(format!("server {}: {}", sv.name, notes[s].clone().unwrap_or_default())))).collect()
            }
        }).collect()
    };
    // Rounds, as pfp's (`fp_memory_rounds`): each bounds every server's tasks
    // with the co-runners' jobs limited by the bounds of the round before.
    let best = rounds_of_bounds(system.tasks.len(), &ordered_of, if mem.is_some() { FP_MEMORY_ROUNDS } else { 1 }, round);
    let mut rows = Vec::new();
    for ((s, sv), server_rows) in system.servers.iter().enumerate().zip(best) {
        let ok = if served[s].is_some() { all_of(server_rows.iter().map(|r| r.schedulable)) } else { Some(false) };
        rows.extend(server_rows);
        groups.push(GroupResult { name: sv.name.clone(), utilization: sv.budget_ns as f64 / sv.period_ns as f64, schedulable: ok, note: notes[s].clone(), load: None });
    }
    Ok((in_file_order(system, rows), groups))
}

/// The note of a server task whose windows open at its server's period starts.
const ON_PERIOD_STARTS: &str = "its windows open at its server's period starts (its releases and those above it fall on them)";

/// Every job of `task` is released at a start of a period of `period_ns`
/// (on the grid from 0): periodic, its period and offset multiples of it.
fn on_grid_of(task: &Task, period_ns: u64) -> bool {
    task.arrival == Arrival::Periodic && task.period_ns % period_ns == 0 && task.offset_ns % period_ns == 0
}

/// A server task's bound split into its terms (`--explain`): the jobs'
/// PETs and what their costs add, what co-runners add beyond those, the
/// reloads, the core's stalls and the memory budget's suspensions beyond the
/// CPU supply's wait; they sum to the window.
fn server_terms(system: &TaskSystem, i: usize, higher: &[usize], w: &server_memory::Window) -> BoundTerms {
    let own_pet_ns = w.jobs * pet(system, i);
    let higher_pet_ns: u64 = higher.iter().map(|&h| w.w_ns.div_ceil(system.tasks[h].period_ns) * pet(system, h)).sum();
    let time = w.time_ns();
    let supplied = w.supply_only_ns.min(w.w_ns).max(time);
    BoundTerms {
        jobs: w.jobs,
        own_pet_ns,
        own_interference_ns: w.own_ns - own_pet_ns,
        higher_pet_ns,
        higher_interference_ns: w.higher_ns - higher_pet_ns,
        contention_ns: w.corunners_ns,
        reload_ns: w.reload_ns,
        regulation_ns: w.core_stall_ns + (w.w_ns - supplied),
        supply_wait_ns: supplied - time,
        earlier_releases_ns: (w.jobs - 1) * system.tasks[i].period_ns,
        ..BoundTerms::default()
    }
}

/// Server `s`'s view of its core's MemGuard or MCTI budget, where a task on
/// the core issues requests (server_memory.rs).
fn core_stalls(system: &TaskSystem, mem: &Memory, members: &[Vec<usize>], within: &[u64], s: usize) -> Option<server_memory::CoreStalls> {
    let (budgets, period_ns) = mem.memguard.as_ref()?;
    let core = system.servers[s].core;
    let on: Vec<usize> = (0..system.servers.len()).filter(|&k| system.servers[k].core == core).collect();
    let fastest = |k: usize| members[k].iter().map(|&x| mem.costs[x].fastest_request_rate).fold(0.0, f64::max);
    if !on.iter().any(|&k| members[k].iter().any(|&x| mem.costs[x].requests > 0.0)) {
        return None;
    }
    Some(server_memory::CoreStalls {
        period_ns: *period_ns,
        budget: budgets.get(core).copied().unwrap_or(0),
        own_fastest_request_rate: fastest(s),
        others: on
            .iter()
            .filter(|&&k| k != s)
            .map(|&k| server_memory::OtherServer { period_ns: system.servers[k].period_ns, budget_ns: system.servers[k].budget_ns, within_ns: within[k], fastest_request_rate: fastest(k) })
            .collect(),
    })
}

/// A task with an activation limit N (OSEK): none of its releases is lost
/// when at most N jobs can be active (`policy::activation`); the bound holds
/// for the jobs that run either way.
fn note_activation_limits(system: &TaskSystem, rows: &mut [TaskBound]) {
    for row in rows.iter_mut() {
        let Some(t) = system.tasks.iter().find(|t| t.name == row.task) else { continue };
        let Some(n) = t.activation_limit else { continue };
        let said = match row.bound_ns.map(|r| jobs_active_at_most(r, t.period_ns)) {
            Some(active) if active <= n as u64 => format!("activation limit {n}: no release is lost (at most {active} jobs active)"),
            Some(active) => format!("activation limit {n}: releases may be lost (up to {active} jobs would be active)"),
            None => format!("activation limit {n}: releases may be lost"),
        };
        row.note = Some(match row.note.take() {
            Some(note) => format!("{note}; {said}"),
            None => said,
        });
    }
}

/// Under fixed priority a task below a background task on its core (pfp) or
/// in its server never runs once the load starts: its note names the load.
fn name_the_background_above(system: &TaskSystem, kind: SchedulerKind, rows: &mut [TaskBound]) {
    if !matches!(kind, SchedulerKind::Pfp | SchedulerKind::Servers) || !system.tasks.iter().any(|t| t.is_background()) {
        return;
    }
    let all: Vec<usize> = (0..system.tasks.len()).collect();
    let rank = fixed_priority_ranks(system, &all);
    let same = |a: &crate::model::Task, b: &crate::model::Task| if kind == SchedulerKind::Servers { a.server == b.server } else { a.core == b.core };
    for r in rows.iter_mut().filter(|r| r.bound_ns.is_none()) {
        let Some(i) = system.tasks.iter().position(|t| t.name == r.task) else { continue };
        let t = &system.tasks[i];
        if t.is_background() {
            continue;
        }
        if let Some(b) = all.iter().find(|&&b| system.tasks[b].is_background() && rank[b] < rank[i] && same(&system.tasks[b], t)) {
            r.note = Some(format!("below background task {}, which never finishes: no bound", system.tasks[*b].name));
        }
    }
}

/// Analyze `system` as `kind` schedules it (not MC²: `analysis::report`).
/// pfp on a scratchpad platform: the cores in rounds, each bounding the
/// port waits by what the other cores' tasks issue given their bounds of
/// the round before (none at first), until no bound changes (each round's
/// bounds are sound and no larger than the last's).
fn port_wait_rounds(system: &TaskSystem, x: &crate::interference::crossbar::Crossbar, mem: Option<&Memory>, access_ns: &[u64]) -> Result<(Vec<TaskBound>, Vec<GroupResult>), FieldError> {
    let mut responses: Vec<Option<u64>> = vec![None; system.tasks.len()];
    for _ in 0..16 {
        let waits = PortWaits::new(x, system, responses.clone(), access_ns.to_vec());
        let (rows, groups) = partitioned(system, false, mem, Some(&waits))?;
        let next: Vec<Option<u64>> = system.tasks.iter().map(|t| rows.iter().find(|r| r.task == t.name).and_then(|r| r.bound_ns)).collect();
        if next == responses {
            return Ok((rows, groups));
        }
        responses = next;
    }
    partitioned(system, false, mem, Some(&PortWaits::new(x, system, responses, access_ns.to_vec())))
}

pub fn analyze(system: &TaskSystem, kind: SchedulerKind) -> Result<TaskAnalysis, FieldError> {
    crate::policy::require_preemptive_unless_pfp(system, kind)?;
    let mut notes = Vec::new();
    // A scratchpad platform: each runnable's label accesses at their
    // latency, as demand; their waits at the ports per window under pfp
    // (`port_waits`), else each access's worst wait.
    let crossbar = crate::interference::crossbar::Crossbar::new(system);
    let file = system;
    let charged;
    let system = match &crossbar {
        None => system,
        Some(x) => {
            let worst = x.charged(system).map_err(|(i, m)| {
                let core = system.tasks[i].core.map_or("a core".to_string(), |c| format!("core {c}"));
                FieldError::new(format!("platform.memory[{m}].arbiter"), format!("fixed priority: task {} on {core} may wait without bound behind a higher-priority core's accesses to {} (no bound yet; round-robin and fcfs have one)", quote(&system.tasks[i].name), quote(&system.platform.memories[m].name)))
            })?;
            charged = if kind == SchedulerKind::Pfp { x.charged_alone(system) } else { worst };
            notes.push(if kind == SchedulerKind::Pfp {
                "label accesses: each at its path's latency, and the waits at the memories' ports per window, bounded by what the other cores issue (crossbar, docs/analysis.md)"
            } else {
                "label accesses: each at its path's latency and its worst wait at the memory's port (crossbar, docs/analysis.md)"
            }.to_string());
            &charged
        }
    };
    let memory = memory_of(system, kind);
    if let Err(reason) = &memory {
        notes.push(reason.clone());
    }
    let mem = memory.as_ref().ok().and_then(Option::as_ref);
    let (tasks, groups, test) = match kind {
        SchedulerKind::Pfp => {
            let (t, g) = match &crossbar {
                Some(x) => {
                    let access_ns: Vec<u64> = (0..system.tasks.len()).map(|i| pet(system, i) - pet(file, i)).collect();
                    port_wait_rounds(system, x, mem, &access_ns)?
                }
                None => partitioned(system, false, mem, None)?,
            };
            (t, g, if mem.is_some() { "response-time analysis per core with memory stalls" } else { "exact response-time analysis per core" })
        }
        SchedulerKind::Pedf => {
            let (t, g) = partitioned(system, true, mem, None)?;
            (t, g, if mem.is_some() { "processor demand test per core with memory stalls" } else { "processor demand test per core" })
        }
        SchedulerKind::Gedf => global_edf(system, mem),
        SchedulerKind::Gfp => {
            let (t, g) = global_fp(system, mem);
            (t, g, if mem.is_some() { "Bertogna-Cirinei response-time test with memory stalls" } else { "Bertogna-Cirinei response-time test" })
        }
        SchedulerKind::Servers => {
            let (t, g) = servers(system, mem)?;
            let test = match mem {
                Some(m) if m.mrs => "server supply (periodic resource) with fixed priority inside, memory stalls and MRS memory budgets",
                Some(_) => "server supply (periodic resource) with fixed priority inside and memory stalls",
                None => "server supply (periodic resource) with fixed priority inside",
            };
            (t, g, test)
        }
        SchedulerKind::Mc2 => return Err(FieldError::new("--scheduler", "the MC² analysis has its own report")),
    };
    let mut tasks = tasks;
    // The file's PETs in the rows: a scratchpad platform's accesses are charged apart (`terms.access_ns`).
    if crossbar.is_some() {
        for row in tasks.iter_mut().filter(|r| !r.background) {
            if let Some(i) = file.tasks.iter().position(|t| t.name == row.task) {
                row.pet_ns = pet(file, i);
            }
        }
    }
    name_the_background_above(system, kind, &mut tasks);
    note_activation_limits(system, &mut tasks);
    // Only background tasks: no job to bound, so no verdict either way.
    let schedulable = if tasks.iter().all(|t| t.background) { None } else { all_of(tasks.iter().map(|t| t.schedulable).chain(groups.iter().map(|g| g.schedulable))) };
    let chains = chains::bounds(system, |t| tasks.iter().find(|r| r.task == system.tasks[t].name).and_then(|r| r.bound_ns));
    Ok(TaskAnalysis { scheduler: kind.name(), test, schedulable, tasks, groups, notes, chains })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_task_system, Format};

    fn notes(text: &str) -> std::collections::HashMap<String, Option<String>> {
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let r = analyze(&system, SchedulerKind::Pfp).unwrap();
        r.tasks.into_iter().map(|t| (t.task, t.note)).collect()
    }

    #[test]
    fn a_group_whose_resumptions_spend_its_budget_is_unbounded_in_the_long_run() {
        // c0t1 (a 64 KiB stream, 3,908 accesses per ms) shares the 1 MiB LLC
        // with c1t0's 1 MiB stream on core 1: beside it, it misses every
        // access. Its group's budget is 2,000 requests per 1 ms, and a held
        // job resumes with a reload of up to its 1,024 cached lines in every
        // period: those requests alone take half the budget per period, so
        // the jobs' own 0.2 share of the group's stalls is not all. Counting
        // the jobs only, the window passed the long-run check, never closed,
        // and was iterated to 10,000,000 jobs ("not decided", 277 s in
        // release); now the long-run share with the reloads says no bound.
        let text = "[platform]\ncores = 2\n\
            [[task]]\nname = \"c0t1\"\ncore = 0\nperiod = \"100ms\"\npet = \"3740281ns\"\n\
            memory = { wss = \"64KiB\", pattern = \"stream\", read_fraction = 0.53, accesses_per_ms = 3908 }\n\
            [[task]]\nname = \"c0t2\"\ncore = 0\nperiod = \"100ms\"\npet = \"4315465ns\"\npriority = 15\n\
            [[task]]\nname = \"c1t0\"\ncore = 1\nperiod = \"20ms\"\npet = \"3466254ns\"\n\
            memory = { wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.13, accesses_per_ms = 3061 }\n\
            [regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\n\
            [[regulation.group]]\nname = \"g1\"\ntasks = [\"c0t1\", \"c0t2\"]\nbudget = 2000\n";
        let note = notes(text)["c0t1"].clone().unwrap();
        assert!(note.contains("MemGuard's budget stalls") && note.contains("reach 1"), "{note}");
    }

    #[test]
    fn a_group_mate_whose_jobs_pile_up_is_counted_within_its_response() {
        // x (core 1) waits below h's 300 ms every 400 ms: its 0.2 ms jobs
        // every 50 ms pile up (its response is past its period), and then run
        // back to back, 10,000 requests each, where its group shares 2,000
        // per 1 ms with a on core 0. Charging one job of x more than its
        // releases ((⌈w/50⌉ + 1) jobs, as if one were pending as a's window
        // opens) bounded a at 22.1 ms; simulated, a responds in 36.8 ms
        // (released as h ends). The first round knows no bound of x: x may
        // issue at its fastest (50,000 per ms > 2,000) all of a's window, so
        // a has none. The next knows x's bound R_x and counts x's jobs
        // released within R_x of the window or in it: a's window of at least
        // its 10 ms holds ⌈(10 ms + R_x)/50 ms⌉ of them, 10,000 requests each,
        // and with a's 2,000 each 2,000 stall a period of 1 ms.
        let text = "[platform]\ncores = 2\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"400ms\"\noffset = \"300ms\"\npet = \"10ms\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 200 }\n\
            [[task]]\nname = \"h\"\ncore = 1\npriority = 9\nperiod = \"400ms\"\npet = \"300ms\"\n\
            [[task]]\nname = \"x\"\ncore = 1\npriority = 2\nperiod = \"50ms\"\npet = \"200us\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 50000 }\n\
            [regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\n\
            [[regulation.group]]\nname = \"g\"\ntasks = [\"a\", \"x\"]\nbudget = 2000\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let r = analyze(&system, SchedulerKind::Pfp).unwrap();
        let bound = |name: &str| r.tasks.iter().find(|t| t.task == name).unwrap().bound_ns;
        let rx = bound("x").unwrap();
        assert!(rx > 50_000_000, "{r:?}");
        let jobs = (10_000_000 + rx).div_ceil(50_000_000);
        let stalls_ms = (jobs * 10_000 + 2_000) / 2_000;
        // (R_x = 308.7 ms: 7 jobs, 36 stalled periods, 46 ms, past the 36.8 simulated.)
        assert!(bound("a").unwrap() >= 10_000_000 + stalls_ms * 1_000_000 && 10 + stalls_ms > 37, "{r:?}");
        // With h at 30 ms, x meets its period and a is bounded as before.
        let light = parse_task_system(&text.replace("pet = \"300ms\"", "pet = \"30ms\""), Format::Toml, "t.toml").unwrap();
        let r = analyze(&light, SchedulerKind::Pfp).unwrap();
        let x = r.tasks.iter().find(|t| t.task == "x").unwrap().bound_ns.unwrap();
        assert!(x <= 50_000_000 && r.tasks.iter().find(|t| t.task == "a").unwrap().bound_ns.is_some(), "{r:?}");
    }

    #[test]
    fn a_co_runner_core_runs_its_jobs_and_a_rounding_per_resumption() {
        // One task with memory (T = 10, C = 2 with its reloads, R = 10), a
        // rounding of 1 ns per resumption, events every 10 and 4 ns: in a
        // window of 20, Bertogna–Cirinei's N = ⌊(20 + 10 − 2)/10⌋ = 2 jobs
        // and min(2, 28 − 20) = 2 more, 6; resumptions (⌈20/10⌉ + 1) +
        // (⌈20/4⌉ + 1) + 1 = 10: 16. Long run: 2/10 + 1/10 + 1/4 = 0.55.
        let core = |r: Option<u64>| OtherCore {
            pressing: vec![0],
            running: vec![(10, 2, r)],
            running_alone: vec![(10, 1, r)],
            slowed_share: 0.5,
            unit_ns: 1,
            events: vec![10, 4],
            all: vec![0],
            interrupting: vec![0],
            budget: None,
            beside_per_period: None,
            may_exhaust: true,
            excess_per_period: 0.0,
        };
        assert_eq!(core(Some(10)).running_ns(20), 16.0);
        assert!((core(Some(10)).running_share() - 0.55).abs() < 1e-12);
        // Its response unknown: it may run all of any window.
        assert_eq!((core(None).running_ns(20), core(None).running_share()), (20.0, 1.0));
        // At its alone time (C = 1: N = ⌊29/10⌋ = 2, 2 + min(1, 9) = 3, and
        // the 10 resumptions) and half of 4 ns run beside it: 15; with 8, the
        // 16 above. Long run: 1/10 + 0.35 + 0.5·0.1 = 0.5.
        assert_eq!((core(Some(10)).running_beside_ns(20, 4.0), core(Some(10)).running_beside_ns(20, 8.0)), (15.0, 16.0));
        assert!((core(Some(10)).running_beside_share(0.1) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_bound_splits_into_its_terms() {
        // Buttazzo's RM example (1, 4), (2, 6), (3, 10): R3 = 3 + ⌈10/4⌉·1 +
        // ⌈10/6⌉·2 = 3 + 3 + 4 = 10: its own 3 ms and 7 ms of the others.
        let text = "[platform]\ncores = 1\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"4ms\"\npet = \"1ms\"\n\
            [[task]]\nname = \"b\"\ncore = 0\nperiod = \"6ms\"\npet = \"2ms\"\n\
            [[task]]\nname = \"c\"\ncore = 0\nperiod = \"10ms\"\npet = \"3ms\"\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let r = analyze(&system, SchedulerKind::Pfp).unwrap();
        let c = r.tasks.iter().find(|t| t.task == "c").unwrap();
        let ms = 1_000_000;
        assert_eq!(c.bound_ns, Some(10 * ms));
        assert_eq!(c.terms, Some(BoundTerms { jobs: 1, own_pet_ns: 3 * ms, higher_pet_ns: 7 * ms, ..BoundTerms::default() }));
        // Lehoczky's (62, 100) below (26, 70): the worst is job 4 of the busy
        // period (fp_rta's test): window 518 from 0, released at 400, R = 118
        // = 5·62 own + 8·26 higher − 400.
        let text = "[platform]\ncores = 1\n\
            [[task]]\nname = \"hi\"\ncore = 0\nperiod = \"70ms\"\npet = \"26ms\"\n\
            [[task]]\nname = \"lo\"\ncore = 0\nperiod = \"100ms\"\npet = \"62ms\"\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let lo = analyze(&system, SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == "lo").unwrap();
        assert_eq!(lo.bound_ns, Some(118 * ms));
        assert_eq!(lo.terms, Some(BoundTerms { jobs: 5, own_pet_ns: 310 * ms, higher_pet_ns: 208 * ms, earlier_releases_ns: 400 * ms, ..BoundTerms::default() }));
    }

    #[test]
    fn a_co_runner_its_budget_stops_beside_each_task_cannot_spend_this_core_s_budget() {
        // Default platform (1 MiB LLC, S = 1600/101 ns, L = 120, R = 30, round
        // robin: W ≤ S), MemGuard periods of 1 ms. Core 0: a reads randomly
        // over 1 MiB, 0.001 references per ns (alone it fits: no misses). Core
        // 1 (budget 20): b1 reads randomly over 16 KiB at 0.0001 per ns, b2
        // writes a 1 MiB stream at 0.01 per ns.
        // - a beside b1 keeps 1024/1040 of its set: misses 1/65, e1 = 0.001/65
        //   more per ns; b1 then misses 1/65 too, issuing r1 = 0.0001/65/τ1,
        //   τ1 = 1 + 0.0001/65·(150 + S): 1.54 in a whole period, never stopped.
        // - a beside b2 keeps half: e2 = 0.0005; b2 misses every write, r2 =
        //   0.01/τ2, τ2 = 1 + 0.01·(2S + 30): stopped after 21/r2 ≈ 3.4 µs.
        // The most a issues above its alone count in a period (t1 + t2 ≤ 1 ms,
        // r1·t1 + r2·t2 ≤ 21): both tight, t2 = (21 − r1·P)/(r2 − r1),
        // e1·(P − t2) + e2·t2 ≈ 16.9. So with a budget of 20 (16.9 + 1 < 20) a
        // never stalls: its bound is the unregulated one; with 17 it may.
        // Before this bound a's largest excess all period (500) said it could.
        let s = 1600.0 / 101.0;
        let (r1, r2) = (0.0001 / 65.0 / (1.0 + 0.0001 / 65.0 * (150.0 + s)), 0.01 / (1.0 + 0.01 * (2.0 * s + 30.0)));
        let t2 = (21.0 - r1 * 1e6) / (r2 - r1);
        let most = 0.001 / 65.0 * (1e6 - t2) + 0.0005 * t2;
        assert!(most + 1.0 < 20.0 && most + 1.0 >= 17.0, "{most}");
        let text = |q0: u64| {
            format!(
                "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [{q0}, 20]\n\
                [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"5ms\"\n\
                memory = {{ wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
                [[task]]\nname = \"b1\"\ncore = 1\nperiod = \"10ms\"\npet = \"6ms\"\n\
                memory = {{ wss = \"16KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 100 }}\n\
                [[task]]\nname = \"b2\"\ncore = 1\nperiod = \"10ms\"\npet = \"1ms\"\n\
                memory = {{ wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 10000 }}\n"
            )
        };
        let a = |text: &str| {
            let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
            analyze(&system, SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == "a").unwrap()
        };
        let unregulated = a(&text(20).replace("[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [20, 20]\n", ""));
        let never = a(&text(20));
        assert!(never.bound_ns.is_some());
        assert_eq!((never.bound_ns, never.terms.map(|t| t.regulation_ns)), (unregulated.bound_ns, Some(0)));
        let may = a(&text(17));
        assert!(may.terms.is_none_or(|t| t.regulation_ns > 0), "{may:?}");
        assert!(may.bound_ns.is_none_or(|b| b > never.bound_ns.unwrap()));
    }

    /// Task or server `a`'s row with `h`'s memory profile set to `h` (none
    /// where empty): `text` ends with h's table.
    fn a_beside_h(text: &str, h: &str, kind: SchedulerKind) -> TaskBound {
        let memory = if h.is_empty() { String::new() } else { format!("memory = {{ wss = \"{h}\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n") };
        let system = parse_task_system(&format!("{text}{memory}"), Format::Toml, "t.toml").unwrap();
        analyze(&system, kind).unwrap().tasks.into_iter().find(|t| t.task == "a").unwrap()
    }

    #[test]
    fn a_co_runner_that_raises_no_miss_here_is_no_presence() {
        // Core 0: a (256 KiB random) under a budget of 100 per 1 ms it cannot
        // spend alone; core 1 (a budget it never spends): p (4 MiB stream,
        // 1 ms every 100 ms, ranked first) and h (1 ms every 2 ms). With h's
        // working set 16 KiB, a and h fit the 1 MiB LLC together: beside h, a
        // misses as alone, so h's running is no co-runner presence and,
        // ranked below p, never splits p's runs; a's bound is the one with h
        // issuing nothing (its traffic's waits are in a's worst time either
        // way). With 4 MiB, h presses on a and a's stalls grow. (Counted as
        // presence, h made every period a stall of a: no bound.)
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [100, 100000]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"20ms\"\npet = \"4ms\"\n\
            memory = { wss = \"256KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"p\"\ncore = 1\nperiod = \"100ms\"\npet = \"1ms\"\npriority = 5\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 100 }\n\
            [[task]]\nname = \"h\"\ncore = 1\nperiod = \"2ms\"\npet = \"1ms\"\npriority = 1\n";
        let fits = a_beside_h(text, "16KiB", SchedulerKind::Pfp);
        let silent = a_beside_h(text, "", SchedulerKind::Pfp);
        assert!(fits.bound_ns.is_some() && fits.bound_ns < Some(20_000_000), "{fits:?}");
        assert_eq!((fits.bound_ns, fits.terms.map(|t| t.regulation_ns)), (silent.bound_ns, silent.terms.map(|t| t.regulation_ns)));
        let presses = a_beside_h(text, "4MiB", SchedulerKind::Pfp);
        assert!(presses.bound_ns.is_none_or(|b| b > fits.bound_ns.unwrap()), "{presses:?}");
    }

    #[test]
    fn a_co_runner_server_whose_tasks_raise_no_miss_here_is_no_presence() {
        // As above under MRS: a (16 KiB random, 4 ms every 20 ms) in s0 (2 ms
        // every 5 ms, 1,000 requests per period: alone, a issues its 512-line
        // cold start at most, beside p it misses nearly every access), p
        // (4 MiB stream) in sp (200 µs every 100 ms) and h in sh (1 ms every
        // 2 ms) on core 1. With h at 16 KiB, a and h fit together: sh is no
        // co-runner of a's excess, and a's bound is the one with h issuing
        // nothing; at 4 MiB it is larger (as it was with sh counted).
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"mrs\"\n\
            [[server]]\nname = \"s0\"\ncore = 0\nkind = \"periodic\"\nperiod = \"5ms\"\nbudget = \"2ms\"\nmemory_budget = 1000\n\
            [[server]]\nname = \"sp\"\ncore = 1\nkind = \"periodic\"\nperiod = \"100ms\"\nbudget = \"200us\"\npriority = 5\n\
            [[server]]\nname = \"sh\"\ncore = 1\nkind = \"periodic\"\nperiod = \"2ms\"\nbudget = \"1ms\"\npriority = 1\n\
            [[task]]\nname = \"a\"\nserver = \"s0\"\nperiod = \"20ms\"\npet = \"4ms\"\n\
            memory = { wss = \"16KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"p\"\nserver = \"sp\"\nperiod = \"100ms\"\npet = \"100us\"\n\
            memory = { wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 100 }\n\
            [[task]]\nname = \"h\"\nserver = \"sh\"\nperiod = \"10ms\"\npet = \"1ms\"\n";
        let fits = a_beside_h(text, "16KiB", SchedulerKind::Servers);
        let silent = a_beside_h(text, "", SchedulerKind::Servers);
        assert!(fits.bound_ns.is_some() && fits.bound_ns < Some(20_000_000), "{fits:?}");
        assert_eq!(fits.bound_ns, silent.bound_ns);
        let presses = a_beside_h(text, "4MiB", SchedulerKind::Servers);
        assert!(presses.bound_ns.is_none_or(|b| b > fits.bound_ns.unwrap()), "{presses:?}");
    }

    #[test]
    fn a_co_runner_s_periods_count_releases_above_its_tasks_with_memory_and_their_jobs_spans() {
        // The system above with a budget of 17 (a may stall in a period b1 or
        // b2 runs in), a's PET 2 ms and b2 at 0.0001 references per ns (core 1
        // never spends its budget: beside a, stopped after 18 requests, it
        // issues at most 0.0001·18/r_a + 0.0001/65·P ≈ 5.4 more than alone,
        // alone nothing) and on core 1 z, without memory, 2.5 ms every 5 ms,
        // ranked below b1 and b2: it never preempts them, so it starts no run
        // of theirs and touches no period a stalls in: a's bound is the one
        // without z. Ranked above them, each job of z may split their runs
        // (a run touches at most its length / P + 2 periods, a hull across a
        // gap of h at most h/P more: min(2, 2.5) here): the bound grows.
        let text = |z: &str| {
            format!(
                "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [17, 20]\n\
                [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"5ms\"\n\
                memory = {{ wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
                [[task]]\nname = \"b1\"\ncore = 1\nperiod = \"100ms\"\npet = \"6ms\"\npriority = 5\n\
                memory = {{ wss = \"16KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 100 }}\n\
                [[task]]\nname = \"b2\"\ncore = 1\nperiod = \"100ms\"\npet = \"1ms\"\npriority = 4\n\
                memory = {{ wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 100 }}\n{z}"
            )
        };
        let z = |period: &str, pet: &str, priority: u32| format!("[[task]]\nname = \"z\"\ncore = 1\nperiod = \"{period}\"\npet = \"{pet}\"\npriority = {priority}\n");
        let analyzed = |text: &str| analyze(&parse_task_system(text, Format::Toml, "t.toml").unwrap(), SchedulerKind::Pfp).unwrap().tasks;
        let a = |text: &str| analyzed(text).into_iter().find(|t| t.task == "a").unwrap();
        let without = a(&text(""));
        let below = a(&text(&z("5ms", "2500us", 1)));
        let above_text = text(&z("5ms", "2500us", 9));
        let above = a(&above_text);
        let stalls = |t: &TaskBound| t.terms.map(|t| t.regulation_ns);
        assert!(stalls(&without).is_some_and(|r| r > 0), "{without:?}");
        assert_eq!((below.bound_ns, stalls(&below)), (without.bound_ns, stalls(&without)));
        assert!(above.bound_ns.is_none_or(|b| b > without.bound_ns.unwrap()), "{above:?}");
        // Each job of b1 and b2 runs between its release and its bound R: a's
        // stalls are at most P per period of those spans, ⌈(w + R)/T⌉ jobs each
        // touching ⌈R/P⌉ + 1 periods (a's core cannot spend its budget alone),
        // and at most the window's (fewer since z's jobs split their runs
        // only inside one of their jobs: 29 against the spans' 31).
        let rows = analyzed(&above_text);
        let bound = |name: &str| rows.iter().find(|t| t.task == name).and_then(|t| t.bound_ns).unwrap();
        let (w, p) = (bound("a"), 1_000_000u64);
        let spans: u64 = ["b1", "b2"].iter().map(|b| (w + bound(b)).div_ceil(100 * p) * (bound(b).div_ceil(p) + 1)).sum();
        let periods = spans.min(w.div_ceil(p) + 1);
        assert!(stalls(&above).is_some_and(|r| r <= periods * p), "{above:?}, {periods} periods");
        // A z of 100 µs every 1 ms above them may split their runs in every
        // period, but a hull across its gap touches at most 0.1 period more
        // per job. By hand from the bounds: a stalls only in periods where b1
        // or b2 runs (its core cannot spend its budget alone), at most P each
        // and one more (the period the window opens in): each of their
        // ⌈(w + R)/T⌉ jobs runs C (its time with reloads) and touches C/P + 2
        // periods, each of z's 0.1 more (18.4 ms with 2 per z job, as before
        // the hulls: every period of the window).
        let short_text = text(&z("1ms", "100us", 9));
        let system = parse_task_system(&short_text, Format::Toml, "t.toml").unwrap();
        let (rows, costs) = (analyzed(&short_text), crate::analysis::memory::job_costs(&system));
        let at = |name: &str| system.tasks.iter().position(|t| t.name == name).unwrap();
        let bound = |name: &str| rows.iter().find(|t| t.task == name).and_then(|t| t.bound_ns).unwrap();
        let (w, p) = (bound("a") as f64, 1e6);
        let jobs = |name: &str| ((w + bound(name) as f64) / system.tasks[at(name)].period_ns as f64).ceil();
        let time = |name: &str| (costs[at(name)].time_ns + costs[at(name)].job_reload_ns) as f64;
        let touched = ["b1", "b2"].iter().map(|&b| jobs(b) * (time(b) / p + 2.0)).sum::<f64>() + jobs("z") * time("z") / p;
        let short = rows.iter().find(|t| t.task == "a").unwrap();
        assert!(stalls(short).is_some_and(|r| (r as f64) <= (touched + 1.0) * p), "{short:?}, {touched} periods");
    }

    #[test]
    fn a_co_runner_s_periods_counted_job_by_job() {
        // a (core 0, budget 17: it stalls only in a period a co-runner runs
        // in) beside core 1's b1, 1.9 ms of PET every 10 ms ranked above b2,
        // 20 ms every 100 ms, both pressing a; core 1 never spends its
        // budget. Job by job, b1's jobs (1.92 ms with contention) touch 3
        // periods each, not 1.92 + 2, and b2's (20.16 ms) 22, not 28 (its
        // span R = 26.0 ms): 7·3 + 22 = 43 periods in a's window of 65.7 ms
        // (of 67), every stall but the first P − d. Counting 2 per release
        // (before): a's bound 77.3 ms.
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [17, 20]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\npet = \"20ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b1\"\ncore = 1\nperiod = \"10ms\"\npet = \"1900us\"\npriority = 5\n\
            memory = { wss = \"16KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 100 }\n\
            [[task]]\nname = \"b2\"\ncore = 1\nperiod = \"100ms\"\npet = \"20ms\"\npriority = 4\n\
            memory = { wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 100 }\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let rows = analyze(&system, SchedulerKind::Pfp).unwrap().tasks;
        let costs = crate::analysis::memory::job_costs(&system);
        let at = |name: &str| system.tasks.iter().position(|t| t.name == name).unwrap();
        let bound = |name: &str| rows.iter().find(|t| t.task == name).and_then(|t| t.bound_ns).unwrap();
        let (w, p) = (bound("a"), 1_000_000u64);
        // Per job of b: its ⌈(w + R)/T⌉ jobs in the window, each touching ⌈C/P⌉ + 1 periods.
        let periods: u64 = ["b1", "b2"]
            .iter()
            .map(|&b| (w + bound(b)).div_ceil(system.tasks[at(b)].period_ns) * ((costs[at(b)].time_ns + costs[at(b)].job_reload_ns).div_ceil(p) + 1))
            .sum();
        assert_eq!(periods, 7 * 3 + 22);
        let spans: u64 = ["b1", "b2"].iter().map(|&b| (w + bound(b)).div_ceil(system.tasks[at(b)].period_ns) * (bound(b).div_ceil(p) + 1)).sum();
        assert!(periods < spans && periods < w.div_ceil(p) + 1, "{periods} periods, spans {spans}");
        let issue = crate::analysis::memory::issue_ns(17, p, costs[at("a")].fastest_request_rate);
        let a = rows.iter().find(|t| t.task == "a").unwrap();
        assert_eq!(a.terms.map(|t| t.regulation_ns), Some(crate::analysis::memory::memguard_stalls_ns(periods, p, issue)), "{a:?}");
        assert!(w < 70 * p, "{a:?}");
    }


    #[test]
    fn a_co_runner_s_stalls_counted_inside_its_jobs() {
        // a (core 0, budget 17: it stalls only in a period a co-runner runs
        // in) beside core 1's b, an 8 MiB stream that misses every access
        // alone: 6,000 requests a job and 1,440 more for its reloads, at most
        // 2,000 per ms, against core 1's budget of 1,000. Above b, h (5 ms
        // every 20 ms, no memory) is a gap. Each job of b (C = 3.00 + 0.72 ms
        // with its reloads) stalls at most ⌊7,440/1,000⌋ = 7 times inside it,
        // each after at least t = 1,000/0.002 ns (less 2) of running, so it
        // touches at most 1 + 7 + ⌈(C − 7t)/P⌉ = 9 periods; h's jobs, which
        // issue nothing, 2 each. ⌈(w + R)/T⌉ = 4 jobs of each in a's window
        // (w = 67.9 ms, R_b = 12.0 ms): 44 periods. Before, b's jobs were
        // charged ⌈C/P⌉ + 1 = 5 and the core's stalls ⌊4·7,440/1,000⌋ + 1 =
        // 30 beside (58), or their spans, 4·(⌈R/P⌉ + 1) = 56.
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [17, 1000]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\npet = \"20ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"h\"\ncore = 1\nperiod = \"20ms\"\npet = \"5ms\"\npriority = 5\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"20ms\"\npet = \"3ms\"\npriority = 4\n\
            memory = { wss = \"8MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 2000 }\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let rows = analyze(&system, SchedulerKind::Pfp).unwrap().tasks;
        let costs = crate::analysis::memory::job_costs(&system);
        let bound = |name: &str| rows.iter().find(|t| t.task == name).and_then(|t| t.bound_ns).unwrap();
        let (w, p) = (bound("a"), 1_000_000u64);
        let b = costs[2];
        assert_eq!((b.requests, b.fastest_request_rate, b.time_ns.div_ceil(100_000), b.job_reload_ns.div_ceil(100_000)), (6_000.0, 0.002, 31, 8));
        assert!((b.job_reload_requests - 1_440.0).abs() < 0.01, "{b:?}");
        let (stalls, t) = (7u64, 500_000 - 2);
        let c = b.time_ns + b.job_reload_ns;
        assert_eq!((c - stalls * t).div_ceil(p), 1);
        let jobs = |name: &str| (w + bound(name)).div_ceil(20 * p);
        assert_eq!((jobs("b"), jobs("h")), (4, 4));
        let periods = 4 * (1 + stalls + 1) + 4 * 2;
        let before = (4 * (c.div_ceil(p) + 1) + 4 * 2 + (4 * 7_440) / 1_000 + 1).min(4 * (bound("b").div_ceil(p) + 1));
        assert_eq!((periods, before), (44, 56));
        let issue = crate::analysis::memory::issue_ns(17, p, costs[0].fastest_request_rate);
        let a = rows.iter().find(|t| t.task == "a").unwrap();
        assert_eq!(a.terms.map(|t| t.regulation_ns), Some(crate::analysis::memory::memguard_stalls_ns(periods, p, issue)), "{a:?}");
    }

    #[test]
    fn work_done_in_the_periods_charged_whole_is_taken_off() {
        // a (core 0, budget 17, its alone requests never spend it) beside b,
        // 1.5 ms every 5 ms, pressing a, on core 1 (which never spends its
        // budget). The classic window leaves a past its 30 ms deadline, so
        // its jobs' alone time is charged beside every period b runs in,
        // whole: ⌈(w + R)/T⌉ = 7 jobs of b, ⌈C/P⌉ + 1 = 3 periods each,
        // 21. In each of them but the first and last a runs at least what
        // its jobs need to issue its 17 requests at their fastest (36,038 ns;
        // it stalls only after them), doing at least 1/slowest of it as work
        // (1/1.0600: each miss 120 ns, the wait behind b's bus share, 0.025
        // ns, and the row conflicts b can cause, 0.011 ns), each ns of work a
        // ns of alone time: 33,997 ns less per period, w = alone + 21·P −
        // 19·33,997 = 31,626,080 ns (32,272,023 without).
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [17, 20]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\ndeadline = \"30ms\"\npet = \"10ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"5ms\"\npet = \"1500us\"\n\
            memory = { wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 100 }\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let rows = analyze(&system, SchedulerKind::Pfp).unwrap().tasks;
        let costs = crate::analysis::memory::job_costs(&system);
        let (a, p) = (&rows[0], 1_000_000u64);
        let (w, r_b) = (a.bound_ns.unwrap(), rows[1].bound_ns.unwrap());
        assert!(a.note.as_deref().is_some_and(|n| n.ends_with("its co-runners' periods whole")), "{a:?}");
        let periods = (w + r_b).div_ceil(5 * p) * ((costs[1].time_ns + costs[1].job_reload_ns).div_ceil(p) + 1);
        assert_eq!(periods, 7 * 3);
        let issue = crate::analysis::memory::issue_ns(17, p, costs[0].fastest_request_rate);
        let done = (issue as f64 / costs[0].slowest_per_work).floor() as u64;
        assert_eq!((issue, done), (36_038, 33_997));
        assert_eq!(w, costs[0].alone_time_ns + periods * p - (periods - 2) * done);
        assert_eq!(w, 31_626_080);
    }

    #[test]
    fn a_gap_splits_a_co_runner_s_run_only_inside_one_of_its_jobs() {
        // As above, with b 1 ms every 20 ms below y (no memory, 3 ms every
        // 8 ms) on core 1, and a's deadline 21.5 ms (the classic window past
        // it). A job of y splits a run of b (two periods
        // more) only if it is released while a job of b has started and not
        // finished: at most ⌈R_b/T_y⌉ = ⌈4.01/8⌉ = 1 per job of b. In a's
        // window ⌈(w + R)/T⌉ = 2 jobs of b, 3 periods each (⌈C/P⌉ + 1), and
        // 4 of y, of which 2 split: 10 periods, w = alone + 10·P − 8·33,997
        // = 21,000,047 ns. Counting every job of y as a gap, b's spans
        // (⌈R_b/P⌉ + 1 = 6 each) gave 12 periods and 22,932,053 ns, past the
        // deadline.
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [17, 20]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\ndeadline = \"21500us\"\npet = \"10ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"20ms\"\npet = \"1ms\"\npriority = 1\n\
            memory = { wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 100 }\n\
            [[task]]\nname = \"y\"\ncore = 1\nperiod = \"8ms\"\npet = \"3ms\"\npriority = 2\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let rows = analyze(&system, SchedulerKind::Pfp).unwrap().tasks;
        let costs = crate::analysis::memory::job_costs(&system);
        let (a, p) = (&rows[0], 1_000_000u64);
        let (w, r_b, r_y) = (a.bound_ns.unwrap(), rows[2].bound_ns.unwrap(), rows[1].bound_ns.unwrap());
        assert_eq!((rows[1].task.as_str(), rows[2].task.as_str()), ("y", "b"));
        assert!(a.note.as_deref().is_some_and(|n| n.ends_with("its co-runners' periods whole")), "{a:?}");
        let jobs_b = (w + r_b).div_ceil(20 * p);
        let splits = (w + r_y).div_ceil(8 * p).min(jobs_b * r_b.div_ceil(8 * p));
        assert_eq!((jobs_b, splits), (2, 2));
        let periods = jobs_b * ((costs[1].time_ns + costs[1].job_reload_ns).div_ceil(p) + 1) + 2 * splits;
        assert_eq!(periods, 10);
        let issue = crate::analysis::memory::issue_ns(17, p, costs[0].fastest_request_rate);
        let done = (issue as f64 / costs[0].slowest_per_work).floor() as u64;
        assert_eq!(w, costs[0].alone_time_ns + periods * p - (periods - 2) * done);
        assert_eq!((w, a.schedulable), (21_000_047, Some(true)));
    }

    #[test]
    fn a_co_runner_job_runs_at_its_alone_time_plus_a_share_of_what_runs_beside_it() {
        // a (core 0, 1 ms, its budget of 17 spent only beside a co-runner)
        // beside b (core 1, 8 ms of PET, 3,000 references per ms over 1 MiB:
        // 12.84 ms at its worst, 11.40 ms alone, its cold start included). In
        // a's window its core runs only a, whose one job runs 1.19 ms at its
        // worst; b's job runs at its alone time but while a runs, and then
        // does at least 1/1.1803 of work per ns: at most 11.40 ms + (1 −
        // 1/1.1803)·1.19 ms = 11.58 ms inside the window, ⌈11.58⌉ + 1 = 13
        // periods, not ⌈12.84⌉ + 1 = 14. w = alone + 13·P − 11·33,990 =
        // 13,753,340 ns, within a's 13.754 ms deadline (14,719,350 with 14;
        // the classic window, which the same presence shortens, is past it).
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [17, 100000]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\ndeadline = \"13754us\"\npet = \"1ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"100ms\"\npet = \"8ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 3000 }\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let rows = analyze(&system, SchedulerKind::Pfp).unwrap().tasks;
        let costs = crate::analysis::memory::job_costs(&system);
        let (a, p) = (&rows[0], 1_000_000u64);
        let w = a.bound_ns.unwrap();
        assert!(a.note.as_deref().is_some_and(|n| n.ends_with("its co-runners' periods whole")), "{a:?}");
        let (b, beside) = (&costs[1], (costs[0].time_ns + costs[0].job_reload_ns) as f64);
        let inside = b.time_ns.min(b.alone_time_ns + ((1.0 - 1.0 / b.slowest_per_work) * beside).ceil() as u64);
        assert_eq!(((b.time_ns + b.job_reload_ns).div_ceil(p) + 1, (inside + b.job_reload_ns).div_ceil(p) + 1), (14, 13));
        let issue = crate::analysis::memory::issue_ns(17, p, costs[0].fastest_request_rate);
        let done = (issue as f64 / costs[0].slowest_per_work).floor() as u64;
        assert_eq!(w, costs[0].alone_time_ns + 13 * p - 11 * done);
        assert_eq!((w, a.schedulable), (13_753_340, Some(true)));
    }

    #[test]
    fn jobs_at_their_alone_time_plus_what_their_co_runners_presence_costs() {
        // a (10 ms of PET, 12 ms deadline, 1 MiB random) beside b (1.5 ms
        // every 5 ms, a 1 MiB stream) on core 1, budgets no core can spend.
        // At its worst a's job runs 11,872,205 ns, past its 11.6 ms deadline;
        // alone (no co-runner running, its cold start included) 11,272,023 ns.
        // While b runs, a does at least 1/1.0600182 of work per ns (each miss
        // 120 ns, the wait behind b's bus share, 0.025 ns, and the row
        // conflicts b can cause, 0.011 ns), each ns of work a ns of its alone
        // time: each ns of b's presence costs a at most 1 − 1/1.0600182 =
        // 0.0566. b's presence in a's window of w: Bertogna–Cirinei's N =
        // ⌊(w + R − C)/T⌋ = 2 jobs of C = 1,504,786 and min(C, w + R − C −
        // 2T) = C more, 4,514,358, and a rounding of 2 ns per resumption
        // (⌈w/5 ms⌉ + 1 + ⌈w/1 ms⌉ + 1 + 1 = 18): 4,514,394 ns, 255,605 ns
        // lost. w = 11,527,628 ns.
        let text = "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [100000, 100000]\n\
            [[task]]\nname = \"a\"\ncore = 0\nperiod = \"100ms\"\ndeadline = \"11600us\"\npet = \"10ms\"\n\
            memory = { wss = \"1MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
            [[task]]\nname = \"b\"\ncore = 1\nperiod = \"5ms\"\npet = \"1500us\"\n\
            memory = { wss = \"1MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 100 }\n";
        let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
        let rows = analyze(&system, SchedulerKind::Pfp).unwrap().tasks;
        let costs = crate::analysis::memory::job_costs(&system);
        let (a, w) = (&rows[0], rows[0].bound_ns.unwrap());
        assert_eq!((costs[0].time_ns, costs[0].alone_time_ns), (11_872_205, 11_272_023));
        assert!(a.note.as_deref().is_some_and(|n| n.ends_with("its jobs at their alone time and their co-runners' presence")), "{a:?}");
        let (c, r, t) = (costs[1].time_ns + costs[1].job_reload_ns, rows[1].bound_ns.unwrap().max(costs[1].time_ns + costs[1].job_reload_ns), 5_000_000u64);
        let n = (w + r - c) / t;
        let presence = n * c + c.min(w + r - c - n * t) + 2 * (w.div_ceil(t) + 1 + w.div_ceil(1_000_000) + 1 + 1);
        assert_eq!((n, presence), (2, 4_514_394));
        let lost = ((1.0 - 1.0 / costs[0].slowest_per_work) * presence as f64).ceil() as u64;
        assert_eq!(a.terms.map(|t| t.contention_ns), Some(lost));
        assert_eq!((w, lost, a.schedulable), (costs[0].alone_time_ns + lost, 255_605, Some(true)));
    }

    #[test]
    fn pedf_under_memguard_adds_the_stalls_of_the_jobs_due() {
        // Core 0: a (10 ms, 2 ms, 4 MiB random, 1,000 references per ms) and b
        // (25 ms, deadline 12 ms, 4 ms, no memory); core 1 empty. Budget Q per
        // 1 ms. By brute force over every deadline of two hyperperiods (a's
        // charged cost c_a, its n_a requests): a deadline t is met when
        // dbf(t) + stalls(⌊due_a(t)·n_a/Q⌋ + 1) ≤ t, where each stall but the
        // first is 1 ms less the time a needs to issue Q: alone (core 1 is
        // empty) a misses 0.75 of its 0.001 references per ns, each 120 ns, at
        // compute share 0.91, so at most 0.00075 / (0.91 + 0.00075·120) =
        // 0.00075 requests per ns, Q/0.00075 ns (less 2 ns of rounding). The
        // long run needs U + (n_a/10 ms)·(P − issue)/Q < 1. The budget sweep
        // crosses the verdict.
        let ms = 1_000_000u64;
        let mut verdicts = Vec::new();
        for q in [100u64, 300, 600, 1_000, 3_000] {
            let text = format!(
                "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [{q}, {q}]\n\
                 [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"2ms\"\n\
                 memory = {{ wss = \"4MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
                 [[task]]\nname = \"b\"\ncore = 0\nperiod = \"25ms\"\ndeadline = \"12ms\"\npet = \"4ms\"\n"
            );
            let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
            let costs = memory::job_costs(&system);
            // a (deadline 10 ms) may preempt b (12 ms), whose reload is 0 (no
            // memory), and b preempts nothing: the charged costs are the plain ones.
            let (c_a, n_a, c_b) = (costs[0].time_ns, costs[0].requests, costs[1].time_ns);
            let due = |t: u64, d: u64, p: u64| if t >= d { (t - d) / p + 1 } else { 0 };
            assert!((costs[0].fastest_request_rate - 0.00075).abs() < 1e-12, "{}", costs[0].fastest_request_rate);
            let issue = ((q as f64 / 0.00075).floor() as u64 - 2).min(ms);
            let stalls = |count: u64| ms + (count - 1) * (ms - issue);
            let long_run = c_a as f64 / 10e6 + c_b as f64 / 25e6 + n_a / 10e6 * (ms - issue) as f64 / (q as f64) < 1.0;
            let met = (1..=100u64)
                .flat_map(|k| [k * 10 * ms, 12 * ms + (k - 1) * 25 * ms])
                .filter(|&t| t <= 100 * ms)
                .all(|t| due(t, 10 * ms, 10 * ms) * c_a + due(t, 12 * ms, 25 * ms) * c_b + stalls((due(t, 10 * ms, 10 * ms) as f64 * n_a / (q as f64)).floor() as u64 + 1) <= t);
            let r = analyze(&system, SchedulerKind::Pedf).unwrap();
            assert!(r.notes.is_empty(), "{:?}", r.notes);
            assert_eq!(r.schedulable, Some(long_run && met), "Q = {q}: c_a {c_a}, n_a {n_a}, c_b {c_b}");
            // `--explain`: the stalls' long-run share beside the jobs' costs.
            let load = r.groups[0].load.expect("pedf weighs a load");
            let rate = n_a / 10e6 * (ms - issue) as f64 / (q as f64);
            assert!((load.regulation - rate).abs() < 1e-12 && (load.pet - 0.36).abs() < 1e-12, "Q = {q}: {load:?}, rate {rate}");
            if !(long_run && met) {
                // 2/10 + 4/25 = 0.36 on PETs alone: the stalls fail it.
                assert!(r.tasks[0].note.as_deref().unwrap().starts_with("memory stalls push demand over the core"), "{:?}", r.tasks[0].note);
            }
            verdicts.push(long_run && met);
        }
        assert!(verdicts.contains(&true) && verdicts.contains(&false), "{verdicts:?}");
    }

    #[test]
    fn pedf_with_memory_is_the_edf_utilization_test_on_the_charged_costs() {
        // Implicit deadlines on one core: the demand test accepts exactly when
        // Σ C/T ≤ 1 (Liu & Layland), here over each task's charged cost (its
        // worst job under the fluid model, plus the largest reload of a task
        // with a longer period it can preempt). Task b (4 MiB streamed on core
        // 1) evicts a's and c's lines between their jobs, so each job on core 0
        // pays a cold start. PETs of 1-4 ms every 10 and 12 ms load the core
        // at most 0.733 CPU-only; charged, it crosses 1 between 3 ms (0.98)
        // and 4 ms (1.27), and the verdict flips there.
        let mut verdicts = Vec::new();
        for pet_ms in [1u64, 2, 3, 4] {
            let text = format!(
                "[platform]\ncores = 2\n\
                 [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"{pet_ms}ms\"\n\
                 memory = {{ wss = \"512KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 2000 }}\n\
                 [[task]]\nname = \"c\"\ncore = 0\nperiod = \"12ms\"\npet = \"{pet_ms}ms\"\n\
                 memory = {{ wss = \"256KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 2000 }}\n\
                 [[task]]\nname = \"b\"\ncore = 1\nperiod = \"10ms\"\npet = \"5ms\"\n\
                 memory = {{ wss = \"4MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 5000 }}\n"
            );
            let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
            let costs = memory::job_costs(&system);
            assert!(costs[0].cold_ns > 0 && costs[0].time_ns > pet_ms * 1_000_000);
            // a (10 ms) preempts c (12 ms): a is charged c's reload; c preempts nothing.
            let (ca, cc) = (costs[0].time_ns + costs[1].reload_ns, costs[1].time_ns);
            let fits = ca as u128 * 12 + cc as u128 * 10 <= 120_000_000;
            let r = analyze(&system, SchedulerKind::Pedf).unwrap();
            assert_eq!(r.test, "processor demand test per core with memory stalls");
            let a = r.tasks.iter().find(|t| t.task == "a").unwrap();
            assert_eq!(a.schedulable, Some(fits), "PET {pet_ms} ms: charged {ca} and {cc} ns");
            let fails = "memory stalls push demand over the core: it passes the processor demand test on its PETs alone, not with memory stalls (fluid model)";
            assert_eq!(a.note.as_deref(), Some(if fits { "with memory stalls (fluid model, unregulated)" } else { fails }));
            // `--explain`: the core's load by kind sums to the charged utilization, its PETs' share apart.
            let load = r.groups[0].load.expect("pedf weighs a load");
            let charged = ca as f64 / 10e6 + cc as f64 / 12e6;
            let total = load.pet + load.cold + load.interference + load.reload + load.regulation;
            assert!((total - charged).abs() < 1e-9 && (load.pet - pet_ms as f64 * (1.0 / 10.0 + 1.0 / 12.0)).abs() < 1e-12, "{load:?} against {charged}");
            assert!(load.cold > 0.0 && load.reload > 0.0 && load.regulation == 0.0, "{load:?}");
            // CPU-only the core is at most 0.733 loaded: the memory decides.
            assert!(pet_ms * 12 + pet_ms * 10 <= 88);
            verdicts.push(fits);
        }
        // Both sides of the boundary are exercised.
        assert!(verdicts.contains(&true) && verdicts.contains(&false), "{verdicts:?}");
    }

    #[test]
    fn per_core_reclaim_charges_a_throttle_error_every_other_period() {
        // Reclaim may stall a core below its budget Q (a throttle error), but
        // not two periods running: a window of w holds at most
        // ⌈(⌈w/P⌉ + 1)/2⌉ of them, P = 1 ms each. Task a (4 MiB random, 1,000
        // references per ms) issues fewer than Q = 2,000 a period, so it never
        // spends Q: throttle errors are its only stalls. Its bound is the
        // least w = C_a + errors(w): with 2 < C_a < 3 ms, w = C_a + 4 ms
        // (⌈w⌉ = 7 periods, + 1, halved). b (3 ms, no memory) below it, by
        // the same iteration with a's jobs in the window.
        let text = |reclaim: bool| {
            format!(
                "[platform]\ncores = 2\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [2000, 2000]\nreclaim = {reclaim}\n\
                 [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"2ms\"\n\
                 memory = {{ wss = \"4MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
                 [[task]]\nname = \"b\"\ncore = 0\nperiod = \"20ms\"\npet = \"3ms\"\n"
            )
        };
        let ms = 1_000_000u64;
        let system = parse_task_system(&text(true), Format::Toml, "t.toml").unwrap();
        let (c_a, c_b) = (memory::job_costs(&system)[0].time_ns, memory::job_costs(&system)[1].time_ns);
        assert!(2 * ms < c_a && c_a < 3 * ms, "{c_a}");
        // b's 3 ms, + 1 ns of the fluid model's rounding (per phase).
        assert_eq!(c_b, 3 * ms + 1);
        let errors = |w: u64| (w.div_ceil(ms) + 1).div_ceil(2) * ms;
        let least = |demand: &dyn Fn(u64) -> u64| {
            let mut w = 0;
            while demand(w) != w {
                w = demand(w);
            }
            w
        };
        let with = analyze(&system, SchedulerKind::Pfp).unwrap();
        assert!(with.notes.is_empty(), "{:?}", with.notes);
        assert_eq!(with.tasks[0].bound_ns, Some(c_a + 4 * ms));
        assert_eq!(with.tasks[0].bound_ns, Some(least(&|w| c_a + errors(w))));
        assert_eq!(with.tasks[1].bound_ns, Some(least(&|w| c_b + w.div_ceil(10 * ms) * c_a + errors(w))));
        // Without reclaim nothing stalls a: its cost alone.
        let without = analyze(&parse_task_system(&text(false), Format::Toml, "t.toml").unwrap(), SchedulerKind::Pfp).unwrap();
        assert_eq!(without.tasks[0].bound_ns, Some(c_a));
    }

    #[test]
    fn memguard_bombs_notes_are_whole_and_name_the_term() {
        let n = notes(include_str!("../../../../examples/memguard-bombs.toml"));
        assert_eq!(n["rt"].as_deref(), Some("with memory stalls (fluid model) and MemGuard's budget stalls"));
        // A bomb's PET equals its period (100 ms): its stalls alone push its cost past it.
        for bomb in ["bomb1", "bomb2", "bomb3"] {
            let note = n[bomb].as_deref().unwrap();
            let cost = note.strip_prefix("its cost with memory stalls (fluid model), ").and_then(|r| r.strip_suffix(" ms, exceeds its period"));
            assert!(cost.is_some_and(|c| c.parse::<f64>().unwrap() > 100.0), "{note}");
        }
    }

    // Core 0: "a" (6 ms every 10 ms, highest), "b" (6 ms every 10 ms), "c"
    // (12 ms every 10 ms); core 1: "m" with a memory profile, so the analysis
    // charges memory stalls, but nothing on core 0 issues requests.
    const MIXED: &str = r#"
[platform]
cores = 2
[[task]]
name = "a"
core = 0
priority = 3
period = "10ms"
pet = "6ms"
[[task]]
name = "b"
core = 0
priority = 2
period = "10ms"
pet = "6ms"
[[task]]
name = "c"
core = 0
priority = 1
period = "10ms"
pet = "12ms"
[[task]]
name = "m"
core = 1
period = "10ms"
pet = "1ms"
memory = { wss = "1MiB", accesses_per_ms = 1000, read_fraction = 1.0, pattern = "random" }
"#;

    #[test]
    fn a_task_without_memory_gets_no_memory_note_and_the_term_that_failed() {
        let n = notes(MIXED);
        // a: 6 ≤ 10, bounded, no memory: no note at all.
        assert_eq!(n["a"], None);
        // b: 6/10 + 6/10 = 1.2 > 1.
        assert_eq!(n["b"].as_deref(), Some("utilization 1.2000 with the higher-priority tasks is above 1"));
        // c: its own PET, 12 ms, is more than its 10 ms period.
        assert_eq!(n["c"].as_deref(), Some("its PET, 12 ms, exceeds its period"));
        assert_eq!(n["m"].as_deref(), Some("with memory stalls (fluid model, unregulated)"));
    }

    #[test]
    fn cpu_only_fixed_priority_names_the_term_too() {
        // The same core 0 without any memory profile: the CPU-only test.
        let cpu_only = MIXED.split("[[task]]\nname = \"m\"").next().unwrap();
        let n = notes(cpu_only);
        assert_eq!(n["a"], None);
        assert_eq!(n["b"].as_deref(), Some("utilization 1.2000 with the higher-priority tasks is above 1"));
        assert_eq!(n["c"].as_deref(), Some("its PET, 12 ms, exceeds its period"));
    }

    #[test]
    fn ms_has_four_significant_digits() {
        assert_eq!(ms(12_000_000), "12 ms");
        assert_eq!(ms(26_400_000), "26.4 ms");
        assert_eq!(ms(589_431_000), "589.4 ms");
        assert_eq!(ms(1_234), "0.001234 ms");
        assert_eq!(ms(123_456_789_000), "123457 ms");
    }

    fn analyzed(kind: SchedulerKind, cores: usize, tasks: &[(u64, u64)]) -> TaskAnalysis {
        let mut text = format!("[platform]\ncores = {cores}\n");
        for (i, (c, t)) in tasks.iter().enumerate() {
            text += &format!("[[task]]\nname = \"t{i}\"\ncore = 0\nperiod = \"{t}ns\"\npet = \"{c}ns\"\n");
        }
        analyze(&parse_task_system(&text, Format::Toml, "t.toml").unwrap(), kind).unwrap()
    }

    #[test]
    fn gfb_is_exact_one_over_the_lcm_above_the_bound() {
        // One core, U = 1,666,661/1,999,993 + 333,333/1,999,999 = 1 + 1/(T₁T₂) ≈ 1 + 2.5e-13:
        // within the old 1e-12 tolerance, so GFB accepted it and it missed in simulation.
        let (t1, t2) = (1_999_993u64, 1_999_999u64);
        assert_eq!(1_666_661u128 * t2 as u128 + 333_333u128 * t1 as u128, t1 as u128 * t2 as u128 + 1);
        let a = analyzed(SchedulerKind::Gedf, 1, &[(1_666_661, t1), (333_333, t2)]);
        assert_eq!(a.schedulable, Some(false));
        // Above m = 1 no tardiness is bounded either.
        assert!(a.tasks.iter().all(|t| t.bound_ns.is_none()), "{:?}", a.tasks);
        assert!(a.tasks[0].note.as_deref().unwrap().contains("exceeds the 1 cores"), "{:?}", a.tasks[0].note);
        // 1 ns less of PET: U = 1 − (T₂ − 1)/(T₁T₂) < 1: GFB holds, bound = deadline.
        let a = analyzed(SchedulerKind::Gedf, 1, &[(1_666_660, t1), (333_333, t2)]);
        assert_eq!(a.schedulable, Some(true));
        assert_eq!(a.test, "Goossens-Funk-Baruah density test");
    }

    #[test]
    fn gedf_tardiness_is_exact_when_x_is_an_integer() {
        // Two cores, (8, 10), (8, 10), (1, 10) ms: GFB fails (1.7 > 2 − 0.8), U = 1.7 ≤ 2.
        // slack = 2 − 1·0.8 − 0.8 = 0.4 (f64: 0.3999…), x = E_L(1)/slack = 8 ms/0.4 = 20 ms exactly:
        // bounds D + x + e = 10 + 20 + 8 = 38 ms and 10 + 20 + 1 = 31 ms (f64 gave 1 ns more).
        let a = analyzed(SchedulerKind::Gedf, 2, &[(8_000_000, 10_000_000), (8_000_000, 10_000_000), (1_000_000, 10_000_000)]);
        let bounds: Vec<Option<u64>> = a.tasks.iter().map(|t| t.bound_ns).collect();
        assert_eq!(bounds, vec![Some(38_000_000), Some(38_000_000), Some(31_000_000)]);
        // `--explain`: D + ⌈x⌉ + e, term by term.
        let ms = 1_000_000;
        assert_eq!(a.tasks[2].terms, Some(BoundTerms { jobs: 1, own_pet_ns: ms, deadline_ns: 10 * ms, tardiness_ns: 20 * ms, ..BoundTerms::default() }));
        // The long-run demand the test weighs: 1.7 of the 2 cores, all PETs.
        let load = a.groups[0].load.expect("gedf weighs a load");
        assert!((load.pet - 1.7).abs() < 1e-12 && load.cold + load.interference + load.reload + load.regulation == 0.0, "{load:?}");
    }

    #[test]
    fn gedf_and_gfp_notes_say_when_memory_stalls_fail_the_test() {
        // Two cores, implicit deadlines of 10 ms: a (PET p, 4 MiB random), b
        // (9 ms), c (0.1 ms). GFB fails on the PETs for p ≥ 2 ms, so the
        // tardiness test decides: on the PETs its slack 2 − 2·max(p, 9)/10 is
        // positive. With memory (equal deadlines: no reload charged) a's
        // cost C_a is its fluid-model time: bounded while C_a < 10 ms; at
        // C_a ≥ 10 ms the memory stalls fail it, above the 2 cores once
        // C_a + 9.1 ms > 20 ms.
        let ms = 1_000_000u64;
        let mut seen = Vec::new();
        for p_us in [5_000u64, 7_000, 8_000, 8_500, 9_000, 9_900] {
            let text = format!(
                "[platform]\ncores = 2\n\
                 [[task]]\nname = \"a\"\nperiod = \"10ms\"\npet = \"{p_us}us\"\n\
                 memory = {{ wss = \"4MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
                 [[task]]\nname = \"b\"\nperiod = \"10ms\"\npet = \"9ms\"\n\
                 [[task]]\nname = \"c\"\nperiod = \"10ms\"\npet = \"100us\"\n"
            );
            let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
            let c_a = memory::job_costs(&system)[0].time_ns;
            let r = analyze(&system, SchedulerKind::Gedf).unwrap();
            let note = r.tasks[1].note.clone().unwrap();
            let expected = if c_a < 10 * ms {
                "deadline + bounded tardiness"
            } else if c_a + 9 * ms + ms / 10 > 20 * ms {
                "memory stalls push demand over the 2 cores"
            } else {
                "memory stalls push demand past the bounded-tardiness condition: it holds on the PETs alone"
            };
            assert!(note.starts_with(expected), "p {p_us} µs, C_a {c_a} ns: {note}");
            seen.push(expected);
            // gfp (a first by index): a's own response C_a passes 10 ms with memory only.
            let g = analyze(&system, SchedulerKind::Gfp).unwrap();
            let why = "memory stalls push its response past its deadline: on the PETs alone it has a fixed point within it";
            assert_eq!(g.tasks[0].bound_ns.is_none(), c_a > 10 * ms, "p {p_us} µs: {:?}", g.tasks[0]);
            assert!(g.tasks[0].bound_ns.is_some() || g.tasks[0].note.as_deref() == Some(why), "{:?}", g.tasks[0].note);
        }
        // All three outcomes are exercised.
        seen.dedup();
        assert_eq!(seen.len(), 3, "{seen:?}");
    }

    #[test]
    fn an_edf_bound_is_its_deadline_and_the_note_names_the_term_that_fails() {
        let ms = 1_000_000;
        // One core, (2, 10) and (3, 15) ms: U = 0.4, each bound its deadline.
        let a = analyzed(SchedulerKind::Pedf, 1, &[(2 * ms, 10 * ms), (3 * ms, 15 * ms)]);
        assert_eq!(a.tasks[1].bound_ns, Some(15 * ms));
        assert_eq!(a.tasks[1].terms, Some(BoundTerms { jobs: 1, deadline_ns: 15 * ms, ..BoundTerms::default() }));
        let load = a.groups[0].load.expect("pedf weighs a load");
        assert!((load.pet - 0.4).abs() < 1e-12, "{load:?}");
        // GFB on 2 cores: the same, bound = deadline.
        let g = analyzed(SchedulerKind::Gedf, 2, &[(2 * ms, 10 * ms), (3 * ms, 15 * ms)]);
        assert_eq!(g.tasks[0].terms, Some(BoundTerms { jobs: 1, deadline_ns: 10 * ms, ..BoundTerms::default() }));
        // (6, 10) and (9, 15) ms: U = 1.2 on PETs alone.
        let a = analyzed(SchedulerKind::Pedf, 1, &[(6 * ms, 10 * ms), (9 * ms, 15 * ms)]);
        assert_eq!(a.tasks[0].note.as_deref(), Some("the core fails the processor demand test: CPU demand exceeds the core"));
        assert_eq!(a.tasks[0].terms, None);
        let g = analyzed(SchedulerKind::Gedf, 1, &[(6 * ms, 10 * ms), (9 * ms, 15 * ms)]);
        assert_eq!(g.tasks[0].note.as_deref(), Some("utilization 1.2000 exceeds the 1 cores: CPU demand exceeds them, tardiness grows without bound"));
        // With memory profiles too, the PETs alone fail it.
        let text = "[platform]\ncores = 1\n\
                    [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"6ms\"\n\
                    memory = { wss = \"4MiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }\n\
                    [[task]]\nname = \"b\"\ncore = 0\nperiod = \"15ms\"\npet = \"9ms\"\n";
        let a = analyze(&parse_task_system(text, Format::Toml, "t.toml").unwrap(), SchedulerKind::Pedf).unwrap();
        assert_eq!(a.tasks[0].note.as_deref(), Some("the core fails the processor demand test on its PETs alone: CPU demand exceeds the core"));
    }

    #[test]
    fn a_global_fp_bound_splits_into_its_cost_and_the_higher_share() {
        // Two cores, (1, 4), (1, 4), (3, 10) ms by rate-monotonic order. The
        // two above respond within 1 ms (a alone; b with ⌊min(1, 1)/2⌋ = 0).
        // c: at R = 3 each above may run min(W(3), 3 − 3 + 1) = 1, so
        // 3 + ⌊2/2⌋ = 4 > 3; at R = 4, W(4) = 1 + min(1, 4 + 1 − 1 − 4) = 1
        // each, 3 + ⌊2/2⌋ = 4: R = 4 ms, its PET 3 and 1 ms of the higher
        // tasks' work shared among the cores.
        let ms = 1_000_000;
        let a = analyzed(SchedulerKind::Gfp, 2, &[(ms, 4 * ms), (ms, 4 * ms), (3 * ms, 10 * ms)]);
        let c = &a.tasks[2];
        assert_eq!(c.bound_ns, Some(4 * ms));
        assert_eq!(c.terms, Some(BoundTerms { jobs: 1, own_pet_ns: 3 * ms, higher_share_ns: ms, ..BoundTerms::default() }));
        assert_eq!(a.tasks[0].terms.map(|t| (t.own_pet_ns, t.window_ns())), Some((ms, ms)));
    }

    /// Server b below a on one core (a first by priority), each with a task
    /// of 1 ms every 100 ms (x in a, y in b); (period, budget) each. y is
    /// released at 0 and every 100 ms (at starts of b's period), or sporadic.
    fn b_below_a(a: (&str, &str), b: (&str, &str), y_sporadic: bool) -> TaskAnalysis {
        let arrival = if y_sporadic { "arrival = \"sporadic\"\n" } else { "" };
        let text = format!(
            "[platform]\ncores = 1\n\
            [[server]]\nname = \"a\"\ncore = 0\npriority = 2\nperiod = \"{}\"\nbudget = \"{}\"\n\
            [[server]]\nname = \"b\"\ncore = 0\npriority = 1\nperiod = \"{}\"\nbudget = \"{}\"\n\
            [[task]]\nname = \"x\"\nserver = \"a\"\nperiod = \"100ms\"\npet = \"1ms\"\n\
            [[task]]\nname = \"y\"\nserver = \"b\"\nperiod = \"100ms\"\npet = \"1ms\"\n{arrival}",
            a.0, a.1, b.0, b.1
        );
        analyze(&parse_task_system(&text, Format::Toml, "t.toml").unwrap(), SchedulerKind::Servers).unwrap()
    }

    #[test]
    fn a_server_below_a_longer_budget_is_bounded_by_what_it_is_sure_of_per_block() {
        // Server b (2 of 5 ms) below a (6 of 10 ms): synchronously a takes [0, 6), so
        // b's first period serves nothing (R_b = 2 + 6 = 8 ms > 5 ms): before, no
        // bound. a, on top, serves its 6 ms within 6 ms of each period's start, so
        // any 10 ms hold at most 6 of it: b is sure of 2 ms in any 2 of its periods
        // (server_supply.rs; with a anywhere in its period, 4 in 5), and a sporadic
        // job of 1 ms waits at most (2·⌈1/2⌉ + 1)·5 = 15 ms (simulated: 7 ms,
        // served 6-7 ms). Released at b's period starts, its window holds whole
        // periods from its release: 2·⌈1/2⌉·5 = 10 ms.
        let sporadic = b_below_a(("10ms", "6ms"), ("5ms", "2ms"), true);
        let y = &sporadic.tasks[1];
        assert_eq!((y.bound_ns, y.schedulable), (Some(15_000_000), Some(true)));
        let a = b_below_a(("10ms", "6ms"), ("5ms", "2ms"), false);
        let y = &a.tasks[1];
        assert_eq!((y.bound_ns, y.schedulable), (Some(10_000_000), Some(true)));
        let note = a.groups[1].note.as_deref().unwrap();
        assert!(note.contains("(server response 8 ms)") && note.ends_with("sure of 2 ms in every 2 of its periods"), "{note}");
        assert_eq!(a.schedulable, Some(true));
    }

    #[test]
    fn a_server_sure_per_block_keeps_what_it_is_sure_of_per_period() {
        // Server b (4 of 10 ms) below a (8 of 20 ms, on top: served within 8 ms):
        // synchronously a takes [0, 8), so b is sure of 2 ms within 10 ms of each
        // period's start (share 0.2), and of 6 ms in any 2 of its periods (0.3:
        // 20 ms hold at most 8 of a's). A job of 1 ms: the blocks alone take
        // min_K (K·⌈1/G_K⌉ + 1)·10 = 20 ms (K = 1, G_1 = 2); the per-period bound
        // beside them (10 − 2) + (10 − 2) + 1 = 17 ms for a sporadic job. Released at
        // b's period starts: the blocks 1·10 ms, the per-period bound (10 − 2) + 1 =
        // 9 ms, as simulated (served 8-9 ms).
        let sporadic = b_below_a(("20ms", "8ms"), ("10ms", "4ms"), true);
        assert_eq!((sporadic.tasks[1].task.as_str(), sporadic.tasks[1].bound_ns), ("y", Some(17_000_000)));
        let a = b_below_a(("20ms", "8ms"), ("10ms", "4ms"), false);
        assert_eq!((a.tasks[1].task.as_str(), a.tasks[1].bound_ns), ("y", Some(9_000_000)));
        let note = a.groups[1].note.as_deref().unwrap();
        assert!(note.ends_with("sure of 6 ms in every 2 of its periods, and of 2 ms within 10 ms of each period's start"), "{note}");
    }

    #[test]
    fn cbs_bandwidth_of_exactly_one_is_sure_and_one_ns_more_is_not() {
        let text = |b: &str| format!(
            "[platform]\ncores = 1\n[[server]]\nname = \"s\"\ncore = 0\nkind = \"cbs\"\nperiod = \"3ns\"\nbudget = \"1ns\"\n\
             [[server]]\nname = \"u\"\ncore = 0\nkind = \"cbs\"\nperiod = \"3ns\"\nbudget = \"1ns\"\n\
             [[server]]\nname = \"v\"\ncore = 0\nkind = \"cbs\"\nperiod = \"3ns\"\nbudget = \"{b}ns\"\n\
             [[task]]\nname = \"a\"\nserver = \"s\"\nperiod = \"30ns\"\npet = \"1ns\"\n");
        let sure = |b: &str| analyze(&parse_task_system(&text(b), Format::Toml, "t.toml").unwrap(), SchedulerKind::Servers).unwrap().groups[0].schedulable;
        // 1/3 + 1/3 + 1/3 = 1 exactly (f64: 1.0000000000000002 is not, 0.9999… is).
        assert_eq!(sure("1"), Some(true));
        assert_eq!(sure("2"), Some(false));
    }

    #[test]
    fn a_co_runner_server_never_served_beside_a_server_on_the_grid_presses_none_of_its_tasks() {
        // Core 0: s0 (2 of every 10 ms, no memory, so it always holds the core
        // for all of its budget, rule 6) above s1 (6 of 10 ms, served within
        // [2, 8] ms of each period). Core 1: s2 (1 of 10 ms, top: [0, 1]) with
        // a 4 MiB random reader that raises the misses of s1's 256 KiB reader
        // t. On the grid from 0 the two are never served at once: the reader
        // still evicts t's lines between its services (reloads, cold starts),
        // but is never present beside it. Two checks by other files: (1) s2
        // every 15 ms meets s1 ([15, 16] in [12, 18]) and costs t more, though
        // it runs less (counting presence here too gave 41.98 ms, above that
        // file's 41.69 ms); (2) with s1 above s0 (served within [0, 6], it
        // meets s2) the reader costs t more than here over the same file
        // without it (1.12 ms against 0.38 ms; with presence here, 1.27 ms).
        let text = |s2_period: &str, with_reader: bool| {
            let reader = if with_reader {
                "[[task]]\nname = \"r\"\nserver = \"s2\"\nperiod = \"30ms\"\npet = \"2ms\"\nmemory = { wss = \"4MiB\", pattern = \"random\", read_fraction = 0.5, accesses_per_ms = 4000 }\n"
            } else {
                ""
            };
            format!(
                "[platform]\ncores = 2\n\
                [[server]]\nname = \"s0\"\ncore = 0\npriority = 9\nperiod = \"10ms\"\nbudget = \"2ms\"\n\
                [[server]]\nname = \"s1\"\ncore = 0\npriority = 1\nperiod = \"10ms\"\nbudget = \"6ms\"\n\
                [[server]]\nname = \"s2\"\ncore = 1\npriority = 1\nperiod = \"{s2_period}\"\nbudget = \"1ms\"\n\
                [[task]]\nname = \"t\"\nserver = \"s1\"\nperiod = \"100ms\"\npet = \"20ms\"\n\
                memory = {{ wss = \"256KiB\", pattern = \"random\", read_fraction = 0.5, accesses_per_ms = 2000 }}\n{reader}"
            )
        };
        let bound = |text: String| {
            let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
            analyze(&system, SchedulerKind::Servers).unwrap().tasks.into_iter().find(|t| t.task == "t").unwrap().bound_ns.unwrap()
        };
        let never = bound(text("10ms", true));
        assert!(never < bound(text("15ms", true)));
        let swapped = |reader| bound(text("10ms", reader).replace("priority = 9", "priority = 0"));
        assert!(never - bound(text("10ms", false)) < swapped(true) - swapped(false));
    }

    #[test]
    fn a_server_task_released_on_its_periods_starts_waits_no_blackout() {
        // s: 4 ms every 10 ms, alone on its core (served [0, 4] of each
        // period). t: 3 ms every 20 ms, released at 0 and every 20 ms, each
        // at a start of s's period: its window opens with the budget whole,
        // 3 ms. Released at 5 ms, or sporadic, it may open just after a
        // service: the blackout 10 − 4 first, 6 + 3 = 9 ms. Below h (1 ms
        // every 15 ms, off the grid): 6 + 4 = 10 ms (one job of h), or with h
        // on it (every 30 ms from 0) 4 ms.
        let row = |t: &str, h: &str| {
            let text = format!("[platform]\ncores = 1\n[[server]]\nname = \"s\"\ncore = 0\nperiod = \"10ms\"\nbudget = \"4ms\"\n[[task]]\nname = \"t\"\nserver = \"s\"\nperiod = \"20ms\"\npet = \"3ms\"\npriority = 1\n{t}{h}");
            let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
            analyze(&system, SchedulerKind::Servers).unwrap().tasks.into_iter().find(|r| r.task == "t").unwrap()
        };
        let bound = |t: &str, h: &str| row(t, h).bound_ns.unwrap();
        assert_eq!(bound("", ""), 3 * 1_000_000);
        // The note says the bound holds for the file's releases.
        assert_eq!(row("", "").note.as_deref(), Some(ON_PERIOD_STARTS));
        assert_eq!(row("arrival = \"sporadic\"\n", "").note, None);
        assert_eq!(bound("offset = \"5ms\"\n", ""), 9 * 1_000_000);
        assert_eq!(bound("arrival = \"sporadic\"\n", ""), 9 * 1_000_000);
        let h = |period: &str| format!("[[task]]\nname = \"h\"\nserver = \"s\"\nperiod = \"{period}\"\npet = \"1ms\"\npriority = 2\n");
        assert_eq!(bound("", &h("15ms")), 10 * 1_000_000);
        assert_eq!(bound("", &h("30ms")), 4 * 1_000_000);
    }
}
