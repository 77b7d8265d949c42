//! Consistency of the simulator with the MC² analysis (issue acceptance):
//! for 1,000 random MC² systems that the analysis deems schedulable at Levels
//! A and B, simulating one hyperperiod of the A/B tasks misses no Level-A or
//! Level-B deadline; where Level C is schedulable too, every Level-C task's
//! observed tardiness stays within the analysis' bound.
//!
//! Which PETs the jobs run for follows what each test charges:
//! - (a) Levels A and B. The Level-B test (per-core RM, U_A^B + U_B^B ≤ 1)
//!   charges every A and B task its *Level-B* PET, and the Level-A test only
//!   builds the cyclic table from Level-A PETs. Running jobs at their Level-B
//!   PETs (or anything below, the uniform variant) is the most demanding
//!   behaviour under which the analysis still promises every A and B
//!   deadline: an A job finishes early inside its table slots and B gets the
//!   rest. At Level-A PETs the analysis promises Level B nothing (and B
//!   tasks do miss: run (a) with `ExecModel::Pet(Level::A)` to see it).
//! - (b) Level C. The Level-C test charges *every* task (A and B included,
//!   through the supply û_p, σ_p of each core) its *Level-C* PET, so its
//!   tardiness bounds are promises about a run at Level-C PETs. At Level-B
//!   PETs the supply the bound assumes would not be there.

use criticore::analysis::mc2::{analyze, Mc2Result};
use criticore::analysis::mc2_bounds::task_bounds;
use criticore::analysis::Provisioning;
use criticore::generate::{mc2_uniform, Mc2UniformParams};
use criticore::model::validate::lcm;
use criticore::model::{Level, TaskSystem};
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig, SimResult};
use std::sync::OnceLock;

const SYSTEMS: usize = 1_000;
const MS: u64 = 1_000_000;
/// Horizon of the Level-C runs (b): many Level-C periods (10–100 ms) and
/// five A/B hyperperiods of 400 ms at most.
const LEVEL_C_HORIZON_NS: u64 = 2_000 * MS;

struct Case {
    seed: u64,
    system: TaskSystem,
    analysis: Mc2Result,
    /// lcm of every Level-A and -B period on every core.
    hyperperiod_ns: u64,
}

/// The first `count` generator seeds whose systems pass the Level-A and -B
/// tests (and the Level-C test too when `level_c`).
fn collect(params: Mc2UniformParams, count: usize, level_c: bool) -> Vec<Case> {
    let mut out = Vec::with_capacity(count);
    for seed in 0.. {
        if out.len() == count {
            break;
        }
        assert!(seed < 100 * count as u64, "the generator rarely gives schedulable systems");
        let system = mc2_uniform(params, seed);
        let analysis = analyze(&system, Provisioning::MC2_ISOLATED).expect("generated systems carry every PET");
        if !(analysis.level_schedulable(Level::A) && analysis.level_schedulable(Level::B)) {
            continue;
        }
        if level_c && !analysis.level_schedulable(Level::C) {
            continue;
        }
        let hyperperiod_ns = system
            .tasks
            .iter()
            .filter(|t| matches!(t.level, Some(Level::A | Level::B)))
            .map(|t| t.period_ns)
            .fold(1, lcm);
        assert!(hyperperiod_ns <= 400 * MS, "seed {seed}: A/B hyperperiod {hyperperiod_ns} ns");
        out.push(Case { seed, system, analysis, hyperperiod_ns });
    }
    out
}

/// The first 1,000 default-generator systems schedulable at Levels A and B.
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| collect(Mc2UniformParams::default(), SYSTEMS, false))
}

fn run(case: &Case, exec: ExecModel, duration_ns: u64, record_jobs: bool) -> SimResult {
    let config = SimConfig { seed: case.seed, exec, record_jobs, ..SimConfig::new(duration_ns) };
    simulate(&case.system, SchedulerKind::Mc2, &config).unwrap_or_else(|e| panic!("seed {}: {e:?}", case.seed))
}

/// (a): over `hyperperiods` A/B hyperperiods, every Level-A and -B job is
/// released on time, finishes, and finishes by its deadline.
fn assert_no_ab_miss(exec: ExecModel, hyperperiods: u64) {
    let mut jobs = 0u64;
    let mut bounded = 0u64;
    let mut level_c = 0u64;
    for case in cases() {
        let end = hyperperiods * case.hyperperiod_ns;
        let result = run(case, exec, end, false);
        // The per-task bounds `analyze --check-sim` compares (mc2_bounds.rs).
        let bounds = task_bounds(&case.system, Provisioning::MC2_ISOLATED, &case.analysis);
        for (i, (task, stats)) in case.system.tasks.iter().zip(&result.per_task).enumerate() {
            if !matches!(task.level, Some(Level::A | Level::B)) {
                // `--explain` of a Level-C bound: D + ⌈x⌉ + e fills it.
                if let Some(b) = bounds[i].bound_ns.filter(|_| task.level == Some(Level::C)) {
                    let terms = bounds[i].terms.expect("a Level-C bound splits");
                    assert_eq!((terms.window_ns(), terms.deadline_ns), (b, task.deadline_ns), "seed {}: task[{i}] {}: {terms:?}", case.seed, task.name);
                    level_c += 1;
                }
                continue;
            }
            let what = format!("seed {} ({exec:?}), task[{i}] {} (Level {:?}, core {:?})", case.seed, task.name, task.level, task.core);
            if let Some(b) = bounds[i].bound_ns {
                assert!(stats.max_response_ns <= b, "{what}: response {} ns above its bound {b} ns: {stats:?}", stats.max_response_ns);
                // `--explain`: its terms fill the bound exactly.
                assert_eq!(bounds[i].terms.map(|t| t.window_ns()), Some(b), "{what}: {:?}", bounds[i].terms);
                bounded += 1;
            }
            // Releases at 0, T, …, end − T; every deadline is at or before the end.
            assert_eq!(stats.released, end / task.period_ns, "{what}: {stats:?}");
            assert_eq!(stats.misses, 0, "{what}: deadline misses: {stats:?}");
            assert_eq!(stats.unfinished, 0, "{what}: unfinished past its deadline: {stats:?}");
            assert_eq!(stats.completed, stats.released, "{what}: {stats:?}");
            assert_eq!(stats.max_tardiness_ns, 0, "{what}: {stats:?}");
            assert!(stats.max_response_ns <= task.deadline_ns, "{what}: {stats:?}");
            jobs += stats.completed;
        }
    }
    assert!(jobs > 10 * SYSTEMS as u64, "only {jobs} A/B jobs checked");
    // Level A always has its table's bound; Level B one where the response fits its period.
    assert!(bounded > 2 * SYSTEMS as u64, "only {bounded} A/B tasks had a bound");
    assert!(level_c > 0, "no Level-C task had a bound");
}

#[test]
fn level_a_and_b_meet_every_deadline_at_level_b_pets() {
    assert_no_ab_miss(ExecModel::Pet(Level::B), 1);
}

#[test]
fn level_a_and_b_meet_every_deadline_with_random_execution_up_to_level_b_pets() {
    // Two hyperperiods: the second starts from whatever state the random
    // (early-finishing) first one left behind.
    assert_no_ab_miss(ExecModel::Uniform { level: Level::B, best_case_fraction: 0.5 }, 2);
}

/// (b) on `cases` that are Level-C schedulable; returns how many there were.
fn assert_level_c_within_bounds(cases: &[Case], label: &str) -> usize {
    let end = LEVEL_C_HORIZON_NS;
    let mut systems = 0usize;
    let mut misses = 0u64;
    let mut worst_ratio = 0.0f64;
    for case in cases.iter().filter(|c| c.analysis.level_schedulable(Level::C)) {
        systems += 1;
        let result = run(case, ExecModel::Pet(Level::C), end, true);
        let c = &case.analysis.level_c;
        let bounds = task_bounds(&case.system, Provisioning::MC2_ISOLATED, &case.analysis);
        // A/B stay hard at Level-C PETs too (the generator's are at most the Level-B ones).
        for (i, task) in case.system.tasks.iter().enumerate() {
            if matches!(task.level, Some(Level::A | Level::B)) {
                assert_eq!(result.per_task[i].misses, 0, "seed {}: task[{i}] {}", case.seed, task.name);
            }
        }
        for (&i, bound) in c.tasks.iter().zip(&c.tardiness_bounds_ns) {
            let task = &case.system.tasks[i];
            let bound = bound.unwrap_or_else(|| panic!("seed {}: Level C schedulable but no bound for {}", case.seed, task.name));
            let stats = &result.per_task[i];
            let what = format!(
                "{label} seed {}, Level-C task[{i}] {} (period {} ns, PET_C {} ns, bound {bound} ns)",
                case.seed,
                task.name,
                task.period_ns,
                task.pet_at(Level::C)
            );
            assert!(stats.max_tardiness_ns <= bound, "{what}: observed tardiness {} ns: {stats:?}", stats.max_tardiness_ns);
            assert_eq!(bounds[i].bound_ns, Some(task.deadline_ns + bound), "{what}: the per-task bound is deadline + tardiness");
            worst_ratio = worst_ratio.max(stats.max_tardiness_ns as f64 / bound as f64);
            misses += stats.misses;
            // Jobs still unfinished at the end: their tardiness is already at
            // least end − deadline. Job k (1-based) is released at
            // offset + (k − 1)·period (periodic tasks).
            let mut done: Vec<u32> = result.records.iter().filter(|r| r.task as usize == i).map(|r| r.number).collect();
            done.sort_unstable();
            for k in 1..=stats.released as u32 {
                if done.binary_search(&k).is_ok() {
                    continue;
                }
                let deadline = task.offset_ns + (k as u64 - 1) * task.period_ns + task.deadline_ns;
                let late = end.saturating_sub(deadline);
                assert!(late <= bound, "{what}: job {k} unfinished at the end, already {late} ns late");
            }
        }
    }
    eprintln!(
        "{label}: {systems} of {} systems Level-C schedulable; {misses} Level-C deadline misses; worst observed/bound = {worst_ratio:.3}",
        cases.len()
    );
    systems
}

#[test]
fn level_c_tardiness_stays_within_the_analysis_bound_at_level_c_pets() {
    let systems = assert_level_c_within_bounds(cases(), "default generator");
    assert!(systems >= 100, "only {systems} systems are Level-C schedulable: the check has too little to bite on");
}

/// With the default generator every A/B-schedulable system is Level-C
/// schedulable too, with room to spare; twice the per-task utilization
/// (mean 0.1) brings Level C closer to its limit (about one system in eight
/// that passes A and B fails C).
#[test]
fn level_c_tardiness_stays_within_the_analysis_bound_on_heavier_systems() {
    let params = Mc2UniformParams { mean_task_utilization: 0.1, ..Mc2UniformParams::default() };
    let cases = collect(params, 200, true);
    assert_eq!(assert_level_c_within_bounds(&cases, "mean task utilization 0.1"), 200);
}

/// Jobs of one task run one after another (a task is one thread): job k + 1
/// never starts before job k has finished. The tardiness argument of
/// docs/analysis.md relies on it ("J's own predecessors hold it back").
#[test]
fn jobs_of_a_level_c_task_never_run_in_parallel() {
    for case in cases().iter().filter(|c| c.analysis.level_schedulable(Level::C)).take(200) {
        let result = run(case, ExecModel::Pet(Level::C), LEVEL_C_HORIZON_NS, true);
        let mut records = result.records.clone();
        records.sort_by_key(|r| (r.task, r.number));
        for pair in records.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if a.task == b.task && b.number == a.number + 1 {
                assert!(
                    b.start_ns >= a.finish_ns,
                    "seed {}: {} job {} starts at {} ns, before job {} finishes at {} ns",
                    case.seed,
                    case.system.tasks[a.task as usize].name,
                    b.number,
                    b.start_ns,
                    a.number,
                    a.finish_ns
                );
            }
        }
    }
}
