//! Soundness of the classic tests against the simulator (issue 12): for random
//! systems per analysis (CPU-only: pfp, pedf, gedf, gfp, periodic servers, CBS
//! servers; with memory profiles under the fluid model: pfp unregulated and
//! under MemGuard (per core, groups, reclaim), MCTI and the bandwidth
//! monitor, pedf unregulated and under MemGuard, gedf and gfp unregulated,
//! periodic and CBS servers unregulated and under MemGuard or MCTI budgets
//! per core, periodic and CBS servers under MRS budgets, periodic ones with
//! offsets too), no simulated response time exceeds the task's bound, and a
//! system the test calls schedulable misses no deadline in simulation.
//! Jobs run for exactly their PET (what every bound charges), synchronously
//! released (and, in `bounds_hold_for_jobs_shorter_than_their_pets`, or in
//! every family with CRITICORE_SOUNDNESS_SHORTER=f, each for a time drawn
//! in [f·PET, PET]); each system is simulated for 400 ms, two of its hyperperiods
//! (every period divides 200 ms).
//! An unfinished job at the end counts with its age so far. Under the fluid
//! model every finished job's reloads, the work added to its PET, stay within
//! one cold start and its preemptions × one reload each, as the analysis
//! charges them (`JobCost::cold_ns`, `JobCost::reload_ns`).
//!
//! `make test` runs 1,000 systems per analysis (all 27 in about 80 s
//! unoptimized on two cores; until 2026-11-29 fewer under MemGuard, whose
//! groups' analysis could take minutes a system); the full sample is
//!   CRITICORE_SOUNDNESS_SYSTEMS=10000 cargo test --release -p criticore \
//!     --test analysis_soundness -- --nocapture
//! (CRITICORE_SOUNDNESS_FIRST=K starts at seed K, to split a long run;
//! CRITICORE_SOUNDNESS_EVERY=N prints the tally so far every N systems),
//! which also prints the distribution of simulated / bound (how tight).
//! CRITICORE_GAP=1 prints each task of a miss-free system the analysis
//! rejects (its simulated worst, bound, deadline, note and terms; with
//! CRITICORE_GAP_TEXT=1 the system's file too): the acceptance gap's cases.
//! CRITICORE_GAP_PHASINGS=N simulates every miss-free system again under N
//! other phasings (random offsets; with CRITICORE_GAP_ADVERSARY=1 half of
//! them chosen against one core, with CRITICORE_GAP_SHORT=f every other one
//! with jobs drawn in [f·PET, PET], with CRITICORE_GAP_QUIET=1 the tasks
//! without memory on the other cores at 1 µs jobs in half of those against
//! a core): each phased file is analyzed itself (a server bound may read
//! the releases' offsets) and its bounds and verdict must hold under it;
//! the miss-free systems that miss under one are counted, rejected
//! (rightly) or accepted (for their own offsets).
//! CRITICORE_GAP_LIST=1 then prints per miss-free system its seed, its
//! text's hash, whether it misses under no phasing, the verdict and the
//! largest response / deadline of any task under the phasings run (up to
//! the first that misses).

use criticore::analysis::classic::{analyze, TaskAnalysis};
use criticore::analysis::memory::{job_costs, job_costs_global};
use criticore::model::overhead::{parse_overhead_table, OverheadTable};
use criticore::model::Level;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig, SimResult};
use criticore::generate::classic;
use criticore::TaskSystem;

const MS: u64 = 1_000_000;
const HORIZON_NS: u64 = 400 * MS;

struct Tally {
    /// How long each job runs (`exec_model`).
    exec: ExecModel,
    systems: usize,
    /// Systems whose simulation missed no deadline (none late, none unfinished past one).
    miss_free: usize,
    /// Those the analysis deemed schedulable (the acceptance; the rest is its gap).
    miss_free_accepted: usize,
    schedulable: usize,
    bounded_tasks: usize,
    ratios: Vec<f64>,
    /// With CRITICORE_GAP_PHASINGS=N: the rejected miss-free systems that
    /// miss a deadline under one of N other phasings (random offsets).
    rejected_missing_elsewhere: usize,
    /// And the accepted ones (their bounds may read the file's offsets).
    accepted_missing_elsewhere: usize,
}

/// Jobs run for exactly their PET; with CRITICORE_SOUNDNESS_SHORTER=f each
/// for a time drawn in [f·PET, PET] (a PET bounds a job's time, and every
/// bound must hold for shorter ones too: a shorter job moves the others'
/// releases against its regions and its co-runners' runs).
fn exec_model() -> ExecModel {
    match std::env::var("CRITICORE_SOUNDNESS_SHORTER").ok().and_then(|v| v.parse::<f64>().ok()) {
        Some(f) => shorter(f),
        None => ExecModel::Pet(Level::C),
    }
}

fn shorter(best_case_fraction: f64) -> ExecModel {
    ExecModel::Uniform { level: Level::C, best_case_fraction }
}

/// Simulate `system` under `kind` and check every bound of `a` (with the
/// bandwidth monitor's overhead table, if any).
#[allow(clippy::too_many_arguments)]
fn check_with(label: &str, seed: u64, text: &str, system: &TaskSystem, kind: SchedulerKind, a: &TaskAnalysis, tally: &mut Tally, table: Option<OverheadTable>) {
    let config = SimConfig { seed, exec: tally.exec, record_jobs: true, overhead_table: table, ..SimConfig::new(HORIZON_NS) };
    let r = simulate(system, kind, &config).unwrap_or_else(|e| panic!("{label} seed {seed}: {e:?}\n{text}"));
    tally.systems += 1;
    // Each charged reload (docs/memory-model.md item 6) is at most the
    // analysis's: one at the job's start, one per preemption, and all of a
    // job's resumptions together at most its cap (plus their rounding).
    let costs = if matches!(kind, SchedulerKind::Gedf | SchedulerKind::Gfp) { job_costs_global(system) } else { job_costs(system) };
    for j in &r.records {
        let c = &costs[j.task as usize];
        let pet = system.tasks[j.task as usize].pet_at(Level::C);
        let n = j.preemptions as u64;
        let resumptions = (n * c.reload_ns).min(c.job_reload_ns + n * c.reload_unit().0);
        assert!(
            j.exec_ns.saturating_sub(pet) <= c.cold_ns + resumptions,
            "{label} seed {seed}: job {} of {} reloaded {} ns in {n} preemptions, bound {} ns at its start and {resumptions} ns for them\n{text}",
            j.number,
            system.tasks[j.task as usize].name,
            j.exec_ns.saturating_sub(pet),
            c.cold_ns
        );
    }
    if a.schedulable == Some(true) {
        tally.schedulable += 1;
    }
    let late = |i: usize| r.per_task[i].misses > 0 || r.unfinished.iter().any(|u| u.task as usize == i && u.deadline_ns < HORIZON_NS);
    // Other phasings (every task offset at random within its period): an
    // accepted system must miss under none; a rejected miss-free one that
    // misses under one is rejected rightly (the gap overstates the pessimism).
    let phasings = std::env::var("CRITICORE_GAP_PHASINGS").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // CRITICORE_GAP_ADVERSARY=1: every other pair of phasings is chosen
    // against one core at a time, its tasks released together at 0 and
    // every other task just before a regulation period's boundary (its runs
    // straddle one). CRITICORE_GAP_SHORT=f: every other phasing draws each
    // job's time in [f·PET, PET].
    let adversary = std::env::var("CRITICORE_GAP_ADVERSARY").is_ok_and(|v| v == "1");
    let short = std::env::var("CRITICORE_GAP_SHORT").ok().and_then(|v| v.parse::<f64>().ok());
    // CRITICORE_GAP_QUIET=1: in the phasings against a core run at the
    // PETs, every task elsewhere without a memory profile runs 1 µs jobs (a
    // job may take less than its PET), so the co-runners that press run as
    // much of the window as they can; every other such phasing releases
    // every task at 0.
    let quiet = std::env::var("CRITICORE_GAP_QUIET").is_ok_and(|v| v == "1");
    let regulation_ns = system.regulation.as_ref().map_or(MS, |r| r.period_ns.max(1));
    // The largest response / deadline of any task under any phasing run (the
    // synchronous one included; an unfinished job counts with its age).
    let worst_share = |r: &SimResult, system: &TaskSystem| -> f64 { (0..system.tasks.len()).map(|i| observed_ns(r, i) as f64 / system.tasks[i].deadline_ns as f64).fold(0.0, f64::max) };
    let worst = std::cell::Cell::new(worst_share(&r, system));
    let misses_elsewhere = |system: &TaskSystem| -> Option<u64> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (1..=phasings).find(|&k| {
            let mut phased = system.clone();
            let against = (adversary && (k / 2) % 2 == 1).then_some((k % system.platform.cores.max(1) as u64) as usize);
            for t in &mut phased.tasks {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let quiet = quiet && k % 2 == 1 && against.is_some();
                if quiet && t.memory.is_none() && t.core != against {
                    for p in t.pet_ns.0.iter_mut().flatten() {
                        *p = (*p).min(1_000);
                    }
                }
                t.offset_ns = match against {
                    None => x % t.period_ns,
                    Some(_) if quiet && k % 8 == 3 => 0,
                    Some(c) if t.core == Some(c) => 0,
                    Some(_) => ((x % t.period_ns) / regulation_ns * regulation_ns + regulation_ns - (x >> 40) % (regulation_ns / 20).max(1)) % t.period_ns,
                };
            }
            let exec = match short {
                Some(f) if k % 2 == 0 => shorter(f),
                _ => tally.exec,
            };
            let config = SimConfig { seed: seed + k, exec, ..SimConfig::new(HORIZON_NS) };
            let r = simulate(&phased, kind, &config).unwrap_or_else(|e| panic!("{label} seed {seed}: {e:?}"));
            worst.set(worst.get().max(worst_share(&r, &phased)));
            let misses = r.per_task.iter().any(|p| p.misses > 0) || r.unfinished.iter().any(|u| u.deadline_ns < HORIZON_NS);
            // The phased file analyzed itself (a bound may read the releases'
            // offsets): its bounds and verdict hold under it.
            let pa = analyze(&phased, kind).unwrap_or_else(|e| panic!("{label} seed {seed} phasing {k}: {e:?}"));
            assert!(!(misses && pa.schedulable == Some(true)), "{label} seed {seed}: phasing {k}, deemed schedulable, misses a deadline\n{}{text}", offsets(&phased));
            for (i, t) in phased.tasks.iter().enumerate() {
                let bound = pa.tasks.iter().find(|b| b.task == t.name).and_then(|b| b.bound_ns);
                assert!(bound.is_none_or(|b| observed_ns(&r, i) <= b), "{label} seed {seed}: phasing {k}: {} responded in {} ns > bound {bound:?}\n{}{text}", t.name, observed_ns(&r, i), offsets(&phased));
            }
            misses
        })
    };
    if !(0..system.tasks.len()).any(late) {
        tally.miss_free += 1;
        tally.miss_free_accepted += (a.schedulable == Some(true)) as usize;
        if phasings > 0 {
            let elsewhere = misses_elsewhere(system);
            // One line per system, to set another build's verdicts beside
            // these (the same seed and the text's FNV-1a hash).
            if std::env::var("CRITICORE_GAP_LIST").is_ok() {
                let fnv = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
                eprintln!("LIST {label} {seed} {fnv:016x} {} {} {:.4}", elsewhere.is_none(), a.schedulable == Some(true), worst.get());
            }
            // Accepted with its own offsets, a system may miss under others.
            if a.schedulable == Some(true) {
                tally.accepted_missing_elsewhere += elsewhere.is_some() as usize;
            } else {
                tally.rejected_missing_elsewhere += elsewhere.is_some() as usize;
            }
        }
        if a.schedulable != Some(true) && std::env::var("CRITICORE_GAP").is_ok() {
            if std::env::var("CRITICORE_GAP_TEXT").is_ok() {
                eprintln!("TEXT seed {seed}\n{text}\nEND");
            }
            for row in &a.tasks {
                let i = system.tasks.iter().position(|t| t.name == row.task).expect("a row per task");
                if row.schedulable != Some(true) {
                    eprintln!("GAP {label} seed {seed} {} obs {} bound {:?} D {} note {:?} terms {:?}", row.task, r.per_task[i].max_response_ns, row.bound_ns, row.deadline_ns, row.note, row.terms);
                }
            }
        }
    }
    for (i, t) in system.tasks.iter().enumerate() {
        let row = a.tasks.iter().find(|b| b.task == t.name).expect("a row per task");
        // `analyze --explain`: every bound splits, and its terms fill it exactly.
        if let Some(bound) = row.bound_ns {
            let terms = row.terms.unwrap_or_else(|| panic!("{label} seed {seed}: {}'s bound {bound} ns has no terms\n{text}", t.name));
            assert_eq!(terms.window_ns() - terms.earlier_releases_ns, bound, "{label} seed {seed}: {}'s terms {terms:?}\n{text}", t.name);
        }
        let observed = observed_ns(&r, i);
        if a.schedulable == Some(true) {
            assert_eq!(r.per_task[i].misses, 0, "{label} seed {seed}: {} misses a deadline in a system deemed schedulable\n{text}", t.name);
        }
        if let Some(bound) = row.bound_ns {
            assert!(observed <= bound, "{label} seed {seed}: {} responded in {observed} ns > bound {bound} ns\n{text}", t.name);
            tally.bounded_tasks += 1;
            if r.per_task[i].completed > 0 {
                tally.ratios.push(r.per_task[i].max_response_ns as f64 / bound as f64);
            }
        }
    }
}

/// What a phasing changed: every task's offset and PET (the file's text is
/// the synchronous one).
fn offsets(system: &TaskSystem) -> String {
    system.tasks.iter().map(|t| format!("{} offset {} ns pet {:?}\n", t.name, t.offset_ns, t.pet_ns.0)).collect()
}

/// A task's longest simulated response, an unfinished job counted with its
/// age at the horizon.
fn observed_ns(r: &SimResult, task: usize) -> u64 {
    let unfinished = r.unfinished.iter().filter(|u| u.task as usize == task).map(|u| HORIZON_NS - u.release_ns).max().unwrap_or(0);
    r.per_task[task].max_response_ns.max(unfinished)
}

/// Seeds per analysis: CRITICORE_SOUNDNESS_SYSTEMS systems (else `default`),
/// from CRITICORE_SOUNDNESS_FIRST (else 0), so a long run can be split.
fn seeds(default: u64) -> std::ops::Range<u64> {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let first = var("CRITICORE_SOUNDNESS_FIRST").unwrap_or(0);
    first..first + var("CRITICORE_SOUNDNESS_SYSTEMS").unwrap_or(default)
}

fn run(label: &str, kind: SchedulerKind, cbs: bool) {
    run_with(label, kind, 1_000, |seed| classic::system(kind, cbs, seed));
}

fn run_with(label: &str, kind: SchedulerKind, default_systems: u64, make: impl Fn(u64) -> (String, TaskSystem)) {
    run_tables(label, kind, default_systems, |seed| {
        let (text, system) = make(seed);
        (text, system, None)
    });
}

/// As [`run_with`], each system with its monitor's overhead table, if any.
fn run_tables(label: &str, kind: SchedulerKind, default_systems: u64, make: impl Fn(u64) -> (String, TaskSystem, Option<OverheadTable>)) {
    run_tables_as(label, kind, default_systems, exec_model(), make);
}

/// As [`run_tables`], every job running as `exec` says.
fn run_tables_as(label: &str, kind: SchedulerKind, default_systems: u64, exec: ExecModel, make: impl Fn(u64) -> (String, TaskSystem, Option<OverheadTable>)) {
    let mut tally = Tally { exec, systems: 0, miss_free: 0, miss_free_accepted: 0, schedulable: 0, bounded_tasks: 0, ratios: Vec::new(), rejected_missing_elsewhere: 0, accepted_missing_elsewhere: 0 };
    let every = std::env::var("CRITICORE_SOUNDNESS_EVERY").ok().and_then(|v| v.parse::<usize>().ok());
    for seed in seeds(default_systems) {
        let (text, system, table) = make(seed);
        let a = analyze(&system, kind).unwrap_or_else(|e| panic!("{label} seed {seed}: {e:?}"));
        check_with(label, seed, &text, &system, kind, &a, &mut tally, table);
        // A long run prints its tally so far, so a run stopped early still counts.
        if every.is_some_and(|n| n > 0 && tally.systems % n == 0) {
            println!("{} (through seed {seed})", summary(label, &tally));
        }
    }
    println!("{}", summary(label, &tally));
    // The sample must exercise the test on both sides of its boundary.
    assert!(tally.schedulable > 0 && tally.schedulable < tally.systems, "{label}: {} of {} schedulable", tally.schedulable, tally.systems);
    assert!(tally.bounded_tasks > tally.systems, "{label}: only {} bounded tasks", tally.bounded_tasks);
}

/// The tally in one line: how tight (simulated / bound) and the acceptance gap.
fn summary(label: &str, tally: &Tally) -> String {
    let mut ratios = tally.ratios.clone();
    ratios.sort_by(f64::total_cmp);
    let q = |p: f64| ratios.get(((ratios.len() as f64 - 1.0) * p) as usize).copied().unwrap_or(f64::NAN);
    format!(
        "{label}: {} systems, {} deemed schedulable, {} tasks bounded; simulated/bound p10 {:.3} p50 {:.3} p90 {:.3} max {:.3}; of {} miss-free in simulation {} accepted, {:.1}% rejected{}",
        tally.systems,
        tally.schedulable,
        tally.bounded_tasks,
        q(0.1),
        q(0.5),
        q(0.9),
        q(1.0),
        tally.miss_free,
        tally.miss_free_accepted,
        100.0 * (tally.miss_free - tally.miss_free_accepted) as f64 / tally.miss_free.max(1) as f64,
        if tally.rejected_missing_elsewhere + tally.accepted_missing_elsewhere > 0 {
            let still = tally.miss_free - tally.rejected_missing_elsewhere - tally.accepted_missing_elsewhere;
            let accepted = tally.miss_free_accepted - tally.accepted_missing_elsewhere;
            format!(
                "; {} of the rejected and {} of the accepted miss a deadline under another phasing: of {still} miss-free under every phasing tried, {:.1}% rejected",
                tally.rejected_missing_elsewhere,
                tally.accepted_missing_elsewhere,
                100.0 * (still - accepted) as f64 / still.max(1) as f64
            )
        } else {
            String::new()
        }
    )
}

#[test]
fn bounds_hold_for_jobs_shorter_than_their_pets() {
    // Each job drawn in (0, PET] (a PET is an upper bound): the families
    // whose schedules a shorter job can turn against a bound, its regions
    // (a scratchpad task's copy-out ran at its body's access rate in a
    // shortened job until 2026-11-30: a bound exceeded by 0.95 ms) or its
    // co-runners' runs. All 25 with CRITICORE_SOUNDNESS_SHORTER=0.
    let families: [(&str, SchedulerKind, fn(u64) -> (String, TaskSystem)); 6] = [
        ("pfp, scratchpad crossbar, shorter jobs", SchedulerKind::Pfp, classic::system_scratchpad),
        ("pfp, cooperative, non-preemptive and copies, shorter jobs", SchedulerKind::Pfp, classic::system_limited),
        ("pfp + memory + MemGuard, shorter jobs", SchedulerKind::Pfp, |seed| classic::system_with_memory(true, seed)),
        ("gfp + memory (fluid, unregulated), shorter jobs", SchedulerKind::Gfp, |seed| classic::system_with_memory_for(SchedulerKind::Gfp, seed)),
        ("gedf + memory (fluid, unregulated), shorter jobs", SchedulerKind::Gedf, |seed| classic::system_with_memory_for(SchedulerKind::Gedf, seed)),
        ("servers + memory + MRS budgets, shorter jobs", SchedulerKind::Servers, |seed| classic::servers_with_memory(true, seed)),
    ];
    for (label, kind, make) in families {
        run_tables_as(label, kind, 500, shorter(0.0), |seed| {
            let (text, system) = make(seed);
            (text, system, None)
        });
    }
}

#[test]
fn partitioned_fixed_priority_bounds_hold() {
    run("pfp", SchedulerKind::Pfp, false);
}

#[test]
fn partitioned_edf_bounds_hold() {
    run("pedf", SchedulerKind::Pedf, false);
}

#[test]
fn global_edf_bounds_hold() {
    run("gedf", SchedulerKind::Gedf, false);
}

#[test]
fn global_fixed_priority_bounds_hold() {
    run("gfp", SchedulerKind::Gfp, false);
}

#[test]
fn periodic_server_bounds_hold() {
    run("servers (periodic)", SchedulerKind::Servers, false);
}

#[test]
fn cbs_server_bounds_hold() {
    run("servers (CBS)", SchedulerKind::Servers, true);
}

#[test]
fn fixed_priority_with_limited_preemption_bounds_hold() {
    // Cooperative and non-preemptive tasks, and copies: blocking and last regions (fp_rta::limited_preemptive).
    run_with("pfp, cooperative, non-preemptive and copies", SchedulerKind::Pfp, 1_000, classic::system_limited);
}

#[test]
fn fixed_priority_on_a_scratchpad_platform_bounds_hold() {
    // Label accesses through a crossbar: latency as demand, port waits per window in rounds, activation limits of one.
    run_with("pfp, scratchpad crossbar", SchedulerKind::Pfp, 1_000, classic::system_scratchpad);
}

#[test]
fn fixed_priority_with_memory_stalls_bounds_hold() {
    run_with("pfp + memory (fluid, unregulated)", SchedulerKind::Pfp, 1_000, |seed| classic::system_with_memory(false, seed));
}

#[test]
fn fixed_priority_under_memguard_bounds_hold() {
    run_with("pfp + memory + MemGuard", SchedulerKind::Pfp, 1_000, |seed| classic::system_with_memory(true, seed));
}

#[test]
fn fixed_priority_under_mcti_bounds_hold() {
    // As MemGuard per core (1 ms periods), plus overload and the fixed-priority bus.
    run_with("pfp + memory + MCTI", SchedulerKind::Pfp, 1_000, classic::system_with_memory_mcti);
}

#[test]
fn fixed_priority_under_the_bandwidth_monitor_bounds_hold() {
    // Overhead tables at random: the monitor's estimate may be anything, the bounds may not depend on it.
    run_tables("pfp + memory + bandwidth monitor", SchedulerKind::Pfp, 1_000, |seed| {
        let (text, system, table) = classic::system_with_memory_monitor(seed);
        let table = parse_overhead_table(&table, "generated-overheads.toml").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        (text, system, Some(table))
    });
}

#[test]
fn fixed_priority_under_memguard_reclaim_bounds_hold() {
    // Reclaim (and spare sharing in half the systems): a core may stall below its budget.
    run_with("pfp + memory + MemGuard reclaim", SchedulerKind::Pfp, 1_000, |seed| classic::system_with_memory_reclaim(false, seed));
}

#[test]
fn fixed_priority_under_memguard_groups_reclaim_bounds_hold() {
    run_with("pfp + memory + MemGuard groups, reclaim", SchedulerKind::Pfp, 1_000, |seed| classic::system_with_memory_reclaim(true, seed));
}

#[test]
fn fixed_priority_under_memguard_groups_bounds_hold() {
    // Groups hold their tasks, not the core (the runtime's rule, the simulator's too).
    run_with("pfp + memory + MemGuard groups", SchedulerKind::Pfp, 1_000, classic::system_with_memory_groups);
}

#[test]
fn partitioned_edf_under_memguard_bounds_hold() {
    // 1 ms regulation periods, as pfp under MemGuard.
    run_with("pedf + memory + MemGuard", SchedulerKind::Pedf, 1_000, classic::pedf_with_memory_memguard);
}

#[test]
fn partitioned_edf_with_memory_stalls_bounds_hold() {
    run_with("pedf + memory (fluid, unregulated)", SchedulerKind::Pedf, 1_000, |seed| classic::system_with_memory_for(SchedulerKind::Pedf, seed));
}

#[test]
fn global_edf_with_memory_stalls_bounds_hold() {
    run_with("gedf + memory (fluid, unregulated)", SchedulerKind::Gedf, 1_000, |seed| classic::system_with_memory_for(SchedulerKind::Gedf, seed));
}

#[test]
fn global_fixed_priority_with_memory_stalls_bounds_hold() {
    run_with("gfp + memory (fluid, unregulated)", SchedulerKind::Gfp, 1_000, |seed| classic::system_with_memory_for(SchedulerKind::Gfp, seed));
}

#[test]
fn servers_with_memory_stalls_bounds_hold() {
    run_with("servers + memory (fluid, unregulated)", SchedulerKind::Servers, 1_000, |seed| classic::servers_with_memory(false, seed));
}

#[test]
fn cbs_servers_with_memory_stalls_bounds_hold() {
    run_with("CBS servers + memory (fluid, unregulated)", SchedulerKind::Servers, 1_000, classic::cbs_servers_with_memory);
}

#[test]
fn servers_under_memguard_bounds_hold() {
    run_with("servers + memory + MemGuard per core", SchedulerKind::Servers, 1_000, |seed| classic::servers_with_memory_budgets(false, seed));
}

#[test]
fn servers_under_mcti_bounds_hold() {
    run_with("servers + memory + MCTI", SchedulerKind::Servers, 1_000, |seed| classic::servers_with_memory_budgets(true, seed));
}

#[test]
fn servers_under_mrs_memory_budgets_bounds_hold() {
    run_with("servers + memory + MRS budgets", SchedulerKind::Servers, 1_000, |seed| classic::servers_with_memory(true, seed));
}

#[test]
fn servers_under_mrs_with_offsets_bounds_hold() {
    // Most releases on the servers' grids, where a window opens only at a
    // period's start (server_memory.rs), the rest anywhere.
    run_with("servers + memory + MRS budgets, offsets", SchedulerKind::Servers, 1_000, classic::servers_with_memory_offsets);
}

#[test]
fn cbs_servers_under_mrs_memory_budgets_bounds_hold() {
    run_with("CBS servers + memory + MRS budgets", SchedulerKind::Servers, 1_000, classic::cbs_servers_under_mrs);
}
