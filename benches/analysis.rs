//! Throughput of the MC² analysis (issue 2): 100,000 random task systems from
//! `generate::mc2_uniform` (20–60 tasks, 4 cores), analyzed on one thread.
//!
//! Run with `cargo bench -p criticore --bench analysis` (or `make bench`, which
//! also runs the pure-Python reference in `benches/analysis_reference.py`).
//!
//! Measured, each 5 times, min and median systems per second:
//!   (a) `mc2::analyze` under configuration (i) (MC2_ISOLATED) for every system;
//!   (b) `mc2::analyze` under all four configurations of §4.3 for every system;
//!   (c) `report::report` plus `serde_json::to_string` (what `analyze --json` does);
//!   parse: `parse_task_system` on 1,000 of the systems written out as TOML.
//! The machine is shared and noisy, so the numbers are also printed as ratios to
//! (a) measured in the same run. No timing thresholds are asserted here; the
//! only hard checks are sanity checks (the share of schedulable systems under
//! (i) is strictly between 0 and 1; a parsed system equals the one written).
//! The last line of output is one JSON object with every number.

use criticore::analysis::{mc2, report, Provisioning};
use criticore::generate::{mc2_uniform, Mc2UniformParams};
use criticore::model::{Level, LevelPets, TaskSystem};
use criticore::{parse_task_system, Format};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

const SYSTEMS: u64 = 100_000;
const PARSED_SYSTEMS: usize = 1_000;
const REPEATS: usize = 5;

const CONFIGURATIONS: [Provisioning; 4] = [
    Provisioning::MC2_ISOLATED,
    Provisioning::MC2_UNMANAGED,
    Provisioning::ISOLATED_ONLY,
    Provisioning::NEITHER,
];

/// Min and median throughput (systems per second) over the repeats.
struct Rate {
    min: f64,
    median: f64,
}

/// Run `pass` (which processes `count` systems) REPEATS times; systems per second.
fn measure(count: usize, mut pass: impl FnMut()) -> Rate {
    let mut rates: Vec<f64> = (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            pass();
            count as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Rate { min: rates[0], median: rates[REPEATS / 2] }
}

/// Benchmark-local TOML writer (docs/format.md schema; durations in exact ns).
fn to_toml(system: &TaskSystem) -> String {
    fn pets(out: &mut String, key: &str, p: &LevelPets) {
        let fields: Vec<String> = Level::ALL
            .iter()
            .filter_map(|&l| p.get(l).map(|ns| format!("{l} = \"{ns}ns\"")))
            .collect();
        let _ = writeln!(out, "{key} = {{ {} }}", fields.join(", "));
    }
    let p = &system.platform;
    let mut out = String::new();
    let _ = writeln!(out, "[platform]");
    let _ = writeln!(out, "cores = {}", p.cores);
    let _ = writeln!(
        out,
        "llc = {{ size = \"{}B\", ways = {}, colors = {}, line = \"{}B\" }}",
        p.llc.size_bytes, p.llc.ways, p.llc.colors, p.llc.line_bytes
    );
    let _ = writeln!(out, "dram = {{ banks = {}, bank_size = \"{}B\" }}", p.dram.banks, p.dram.bank_size_bytes);
    let arbiter = serde_json::to_value(p.bus.arbiter).unwrap();
    let _ = writeln!(out, "bus = {{ arbiter = {arbiter} }}");
    assert!(system.allocation.is_none(), "the TOML helper does not write allocations");
    for t in &system.tasks {
        assert!(t.memory.is_none(), "the TOML helper does not write memory profiles");
        let _ = writeln!(out, "\n[[task]]");
        let _ = writeln!(out, "name = \"{}\"", t.name);
        let _ = writeln!(out, "level = \"{}\"", t.level.expect("mc2_uniform tasks have levels"));
        if let Some(core) = t.core {
            let _ = writeln!(out, "core = {core}");
        }
        let _ = writeln!(out, "period = \"{}ns\"", t.period_ns);
        if t.deadline_ns != t.period_ns {
            let _ = writeln!(out, "deadline = \"{}ns\"", t.deadline_ns);
        }
        pets(&mut out, "pet", &t.pet_ns);
        if let Some(u) = &t.pet_unmanaged_ns {
            pets(&mut out, "pet_unmanaged", u);
        }
    }
    out
}

fn main() {
    let params = Mc2UniformParams::default();

    // Generation (not timed).
    let start = Instant::now();
    let systems: Vec<TaskSystem> = (0..SYSTEMS).map(|seed| mc2_uniform(params, seed)).collect();
    let generated_in = start.elapsed();
    let tasks: usize = systems.iter().map(|s| s.tasks.len()).sum();
    let n = systems.len();
    println!(
        "MC² analysis throughput: {n} systems from mc2_uniform(default, seed 0..{SYSTEMS}), \
         {} cores, {:.1} tasks/system on average (generated in {:.2} s, not timed)",
        params.cores,
        tasks as f64 / n as f64,
        generated_in.as_secs_f64()
    );
    println!("one thread, {REPEATS} repeats per measurement; systems/s as min / median\n");

    // Sanity: share of systems schedulable under (i), outside the timed loops.
    let schedulable = systems
        .iter()
        .filter(|s| mc2::analyze(s, Provisioning::MC2_ISOLATED).expect("generated systems carry all PETs").schedulable())
        .count();
    let share = schedulable as f64 / n as f64;
    assert!(share > 0.0 && share < 1.0, "schedulable share under (i) is {share}, expected strictly between 0 and 1");

    // (a) configuration (i) only.
    let a = measure(n, || {
        let mut ok = 0usize;
        for s in &systems {
            let r = mc2::analyze(black_box(s), Provisioning::MC2_ISOLATED);
            ok += r.as_ref().is_some_and(|r| r.schedulable()) as usize;
            black_box(r);
        }
        assert_eq!(black_box(ok), schedulable);
    });

    // (b) all four configurations.
    let b = measure(n, || {
        for s in &systems {
            for prov in CONFIGURATIONS {
                black_box(mc2::analyze(black_box(s), prov));
            }
        }
    });

    // (c) the full report serialized to JSON, as `criticore analyze --json` does.
    let mut json_bytes = 0usize;
    let c = measure(n, || {
        json_bytes = 0;
        for s in &systems {
            let text = serde_json::to_string(&report::report(black_box(s))).unwrap();
            json_bytes += text.len();
            black_box(text);
        }
    });

    // Parse cost: 1,000 systems as TOML text.
    let texts: Vec<String> = systems[..PARSED_SYSTEMS].iter().map(to_toml).collect();
    let text_bytes: usize = texts.iter().map(String::len).sum();
    for (text, system) in texts.iter().zip(&systems) {
        let parsed = parse_task_system(text, Format::Toml, "bench.toml").expect("helper writes valid TOML");
        assert_eq!(&parsed, system, "TOML round trip changed a system");
    }
    let parse = measure(PARSED_SYSTEMS, || {
        for text in &texts {
            black_box(parse_task_system(black_box(text), Format::Toml, "bench.toml").unwrap());
        }
    });

    let per_us = |r: &Rate| 1e6 / r.median;
    println!("{:<44} {:>12} {:>12} {:>10} {:>10}", "measurement", "min sys/s", "median sys/s", "µs/system", "vs (a)");
    for (label, r) in [
        ("(a) analyze, configuration (i)", &a),
        ("(b) analyze, all four configurations", &b),
        ("(c) report + serde_json::to_string", &c),
        ("parse_task_system (TOML, 1,000 systems)", &parse),
    ] {
        println!(
            "{label:<44} {:>12.0} {:>12.0} {:>10.2} {:>9.3}×",
            r.min,
            r.median,
            per_us(r),
            r.median / a.median
        );
    }
    println!(
        "\nschedulable under (i): {schedulable} of {n} ({:.2}%); mean JSON report {:.0} B; mean TOML file {:.0} B",
        100.0 * share,
        json_bytes as f64 / n as f64,
        text_bytes as f64 / PARSED_SYSTEMS as f64
    );
    let target = 100_000.0;
    println!(
        "target > {target:.0} systems/s per core for (a): {} (median {:.0}, min {:.0}, one thread)",
        if a.min > target { "met" } else if a.median > target { "met at the median, not at the min" } else { "NOT met" },
        a.median,
        a.min
    );

    let rate = |r: &Rate| serde_json::json!({ "min": r.min.round(), "median": r.median.round() });
    let summary = serde_json::json!({
        "bench": "mc2_analysis",
        "systems": n,
        "cores": params.cores,
        "mean_tasks": tasks as f64 / n as f64,
        "repeats": REPEATS,
        "threads": 1,
        "unit": "systems_per_second",
        "a_analyze_mc2_isolated": rate(&a),
        "b_analyze_four_configurations": rate(&b),
        "c_report_json": rate(&c),
        "parse_toml": rate(&parse),
        "parse_systems": PARSED_SYSTEMS,
        "schedulable_share_mc2_isolated": share,
    });
    println!("{summary}");
}
