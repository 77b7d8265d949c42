//! Simulator throughput (issue 3): jobs simulated per second under global EDF.
//!
//! Run with `cargo bench -p criticore --bench sim_throughput` (or `make
//! bench-simso`, which runs it through `benches/sim_vs_simso.py` together with
//! SimSo on the same systems, in one run).
//!
//! Workload (the simulator's throughput benchmark, benches/RESULTS.md): 4 cores, 20 periodic tasks with
//! implicit deadlines, periods uniform in [10 ms, 100 ms] in whole µs, drawn
//! among the primes (distinct primes: no two jobs of different tasks share an
//! absolute deadline before T_i·T_j >= 100 s, so the G-EDF schedule has no
//! ties and SimSo must produce exactly the same one), UUniFast(-discard)
//! utilizations summing to 3.0, WCET = round(u·T) in whole µs, 20 s simulated,
//! zero overheads, one thread. SYSTEMS systems from a seeded
//! ChaCha8 generator (seeds 0..SYSTEMS). Each system is written as a criticore
//! TOML file and parsed back (the benchmark runs on what the parser returns);
//! the files go to $SIM_THROUGHPUT_DIR (default `target/sim_throughput/`), where
//! `sim_vs_simso.py` reads them to run SimSo on the same systems.
//!
//! Three modes, `sim::simulate(.., SchedulerKind::Gedf, ..)`:
//!   summary — record_jobs = false, record_segments = false (statistics only);
//!   jobs    — record_jobs = true (one JobRecord per finished job);
//!   trace   — record_jobs = record_segments = true, plus
//!             `sim::trace::perfetto_json` (the Perfetto JSON string).
//! A pass simulates every system once; a sample is as many passes as fit in
//! about SAMPLE_SECONDS; jobs/s = finished jobs / wall time. SAMPLES samples per
//! mode; min and median reported. The last line of output is one JSON object.
//! For profiling, SIM_THROUGHPUT_MODES=summary (comma-separated subset of
//! summary,jobs,trace) times only those modes (the others report 0).

use criticore::sim::{self, sched::SchedulerKind, SimConfig};
use criticore::{parse_task_system, Format, TaskSystem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

const SYSTEMS: u64 = 5;
const CORES: usize = 4;
const TASKS: usize = 20;
const UTILIZATION: f64 = 3.0;
const PERIOD_US: (u64, u64) = (10_000, 100_000);
const DURATION_NS: u64 = 20_000_000_000;
const SAMPLES: usize = 7;
const SAMPLE_SECONDS: f64 = 0.3;

fn is_prime(n: u64) -> bool {
    n > 1 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

struct Generated {
    toml: String,
    utilization: f64,
}

/// UUniFast-discard utilizations and whole-µs periods/WCETs, as TOML.
fn generate(seed: u64) -> Generated {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let us = loop {
        let mut us = Vec::with_capacity(TASKS);
        let mut left = UTILIZATION;
        for i in 1..TASKS {
            let next = left * rng.random::<f64>().powf(1.0 / (TASKS - i) as f64);
            us.push(left - next);
            left = next;
        }
        us.push(left);
        if us.iter().all(|&u| u <= 1.0) {
            break us;
        }
    };
    let mut periods: Vec<u64> = Vec::with_capacity(TASKS);
    while periods.len() < TASKS {
        let p = rng.random_range(PERIOD_US.0..=PERIOD_US.1);
        if is_prime(p) && !periods.contains(&p) {
            periods.push(p);
        }
    }
    let mut toml = format!("# sim_throughput system, seed {seed}\n[platform]\ncores = {CORES}\n");
    let mut utilization = 0.0;
    for (i, (&u, &period)) in us.iter().zip(&periods).enumerate() {
        let wcet = ((u * period as f64).round() as u64).clamp(1, period);
        utilization += wcet as f64 / period as f64;
        let _ = write!(toml, "\n[[task]]\nname = \"T{i}\"\nperiod = \"{period}us\"\npet = \"{wcet}us\"\n");
    }
    Generated { toml, utilization }
}

struct Rate {
    min: f64,
    median: f64,
    passes: usize,
}

/// `pass` simulates every system once and returns the finished jobs.
fn measure(mut pass: impl FnMut() -> u64) -> Rate {
    // Calibrate: passes per sample.
    let start = Instant::now();
    let jobs = pass();
    let once = start.elapsed().as_secs_f64();
    let passes = ((SAMPLE_SECONDS / once).ceil() as usize).max(1);
    let mut rates: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            let mut total = 0;
            for _ in 0..passes {
                total += pass();
            }
            assert_eq!(total, jobs * passes as u64, "a pass must be deterministic");
            total as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Rate { min: rates[0], median: rates[SAMPLES / 2], passes }
}

fn main() {
    let dir = std::env::var_os("SIM_THROUGHPUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sim_throughput"));
    std::fs::create_dir_all(&dir).expect("output directory");
    let mut systems: Vec<TaskSystem> = Vec::new();
    let mut utilizations = Vec::new();
    let mut files = Vec::new();
    for seed in 0..SYSTEMS {
        let g = generate(seed);
        let path = dir.join(format!("gedf-{seed}.toml"));
        std::fs::write(&path, &g.toml).expect("write TOML");
        let system = parse_task_system(&g.toml, Format::Toml, &path.display().to_string()).expect("generated TOML parses");
        assert_eq!(system.tasks.len(), TASKS);
        systems.push(system);
        utilizations.push(g.utilization);
        files.push(path.canonicalize().unwrap().display().to_string());
    }

    let config = |jobs: bool, segments: bool| SimConfig { record_jobs: jobs, record_segments: segments, ..SimConfig::new(DURATION_NS) };
    let (summary_cfg, jobs_cfg, trace_cfg) = (config(false, false), config(true, false), config(true, true));

    // One untimed run per system: counts, and the modes agree on what they simulate.
    let mut jobs_per_system = Vec::new();
    let mut events = 0u64;
    let mut trace_bytes = 0usize;
    for s in &systems {
        let a = sim::simulate(s, SchedulerKind::Gedf, &summary_cfg).unwrap();
        let b = sim::simulate(s, SchedulerKind::Gedf, &jobs_cfg).unwrap();
        let c = sim::simulate(s, SchedulerKind::Gedf, &trace_cfg).unwrap();
        assert_eq!(a.per_task, b.per_task);
        assert_eq!(a.per_task, c.per_task);
        assert_eq!(b.records.len() as u64, a.completed());
        jobs_per_system.push(a.completed());
        events += a.events;
        trace_bytes += sim::trace::perfetto_json(s, &c).len();
    }
    let total_jobs: u64 = jobs_per_system.iter().sum();
    let misses: u64 = systems
        .iter()
        .map(|s| sim::simulate(s, SchedulerKind::Gedf, &summary_cfg).unwrap().per_task.iter().map(|t| t.misses).sum::<u64>())
        .sum();
    println!(
        "criticore G-EDF throughput: {SYSTEMS} systems, {CORES} cores, {TASKS} tasks, U = {:.4}..{:.4}, periods {}-{} ms, {} s simulated each",
        utilizations.iter().cloned().fold(f64::INFINITY, f64::min),
        utilizations.iter().cloned().fold(0.0, f64::max),
        PERIOD_US.0 / 1000,
        PERIOD_US.1 / 1000,
        DURATION_NS / 1_000_000_000
    );
    println!(
        "finished jobs per system: {jobs_per_system:?} (total {total_jobs}); engine events {events} ({:.2} per job); deadline misses {misses}; trace JSON {:.1} MB per system",
        events as f64 / total_jobs as f64,
        trace_bytes as f64 / SYSTEMS as f64 / 1e6
    );
    println!("systems written to {}", dir.canonicalize().unwrap().display());
    println!("one thread, {SAMPLES} samples per mode of ~{SAMPLE_SECONDS} s; jobs/s as min / median\n");

    let modes = std::env::var("SIM_THROUGHPUT_MODES").unwrap_or_else(|_| "summary,jobs,trace".to_string());
    let wanted = |m: &str| modes.split(',').any(|x| x.trim() == m);
    let skipped = || Rate { min: 0.0, median: 0.0, passes: 0 };
    let summary = if !wanted("summary") { skipped() } else { measure(|| systems.iter().map(|s| black_box(sim::simulate(black_box(s), SchedulerKind::Gedf, &summary_cfg).unwrap()).completed()).sum()) };
    let jobs = if !wanted("jobs") { skipped() } else { measure(|| {
        systems
            .iter()
            .map(|s| {
                let r = sim::simulate(black_box(s), SchedulerKind::Gedf, &jobs_cfg).unwrap();
                black_box(&r.records);
                r.completed()
            })
            .sum()
    }) };
    let trace = if !wanted("trace") { skipped() } else { measure(|| {
        systems
            .iter()
            .map(|s| {
                let r = sim::simulate(black_box(s), SchedulerKind::Gedf, &trace_cfg).unwrap();
                black_box(sim::trace::perfetto_json(s, &r));
                r.completed()
            })
            .sum()
    }) };

    println!("{:<46} {:>14} {:>14} {:>10} {:>8}", "mode", "min jobs/s", "median jobs/s", "ns/job", "passes");
    for (label, r) in [
        ("summary only (no records, no segments)", &summary),
        ("with job records", &jobs),
        ("with job records + segments + Perfetto JSON", &trace),
    ] {
        println!("{label:<46} {:>14.0} {:>14.0} {:>10.1} {:>8}", r.min, r.median, 1e9 / r.median, r.passes);
    }
    let target = 5_000_000.0;
    println!(
        "\ntarget >= {target:.0} jobs/s with summary-only output: {} (min {:.0}, median {:.0})",
        if summary.min >= target { "met" } else if summary.median >= target { "met at the median, not at the min" } else { "NOT met" },
        summary.min,
        summary.median
    );

    let rate = |r: &Rate| serde_json::json!({ "min": r.min.round(), "median": r.median.round() });
    println!(
        "{}",
        serde_json::json!({
            "bench": "sim_throughput",
            "scheduler": "gedf",
            "systems": SYSTEMS,
            "cores": CORES,
            "tasks": TASKS,
            "utilizations": utilizations,
            "duration_ns": DURATION_NS,
            "jobs_per_system": jobs_per_system,
            "events": events,
            "deadline_misses": misses,
            "trace_bytes_per_system": trace_bytes / SYSTEMS as usize,
            "samples": SAMPLES,
            "unit": "jobs_per_second",
            "summary": rate(&summary),
            "jobs": rate(&jobs),
            "trace": rate(&trace),
            "files": files,
        })
    );
}
