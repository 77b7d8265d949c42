//! Simulator throughput with memory demand and regulation (issue 4):
//! simulated seconds per wall second, and engine events per second.
//!
//! Run with `cargo bench -p criticore --bench sim_memory`.
//!
//! Systems (built here from the examples, parsed from TOML like any file):
//!
//! - **MC²**: the 27 tasks of `examples/mc2-llc-heavy.toml` (4 cores, Levels
//!   A–C) with a memory profile each — random reads, the working-set size of
//!   the task's row in mc2-hardware-management Table 1 (kept as a comment in the
//!   example), 5,000 LLC references per ms of work — plus four global Level-D
//!   memory bombs (write-only streams at the bus peak, 10 ms every 100 ms),
//!   the canonical allocation of mc2-hardware-management Fig. 4 (2 ways and one
//!   bank per core for Levels A/B, 8 ways and banks 2–3 for Level C, banks 0–1
//!   for the OS) and a `[regulation]` table with MemGuard budgets per 1 ms
//!   period. Scheduler `mc2`.
//! - **MRS**: `examples/mrs-synthetic.toml` (2 cores, 5 periodic servers with
//!   memory budgets M_s, 8 tasks) with a memory profile per task added here.
//!   Scheduler `servers`.
//!
//! Modes (one `SimConfig` each; `--regulator` / `--no-memory` of the CLI):
//!
//! - `cpu-only`: `memory = false` (no memory model, no regulation) — the
//!   in-run reference: every other mode is also reported as a ratio to it;
//! - `fluid`: the fluid memory model, no regulation;
//! - `memguard`, `mcti` (MC² system), `mrs` (MRS system): the fluid model and that regulator.
//!
//! 10 s simulated per run. A sample is as many runs as fit in about
//! SAMPLE_SECONDS; SAMPLES samples per mode; min and median of simulated s per
//! wall s and of events per wall s. Every run of a mode must give the same
//! event count (determinism). The last line of output is one JSON object.
//! SIM_MEMORY_MODES=mc2:memguard,mrs:mrs (comma-separated system:mode pairs)
//! times only those (for profiling).

use criticore::model::{Level, RegulationKind};
use criticore::sim::{self, sched::SchedulerKind, SimConfig, SimResult};
use criticore::{parse_task_system, Format, TaskSystem};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

const DURATION_NS: u64 = 10_000_000_000;
const SAMPLES: usize = 7;
const SAMPLE_SECONDS: f64 = 0.3;

const MC2_HEAVY: &str = include_str!("../examples/mc2-llc-heavy.toml");
const MRS_SYNTHETIC: &str = include_str!("../examples/mrs-synthetic.toml");

/// MemGuard/MCTI budgets per core per 1 ms (32-byte lines: 3,000 = 96 MB/s).
const BUDGETS: [u64; 4] = [3_000, 3_000, 3_000, 3_000];

/// mc2-llc-heavy with memory profiles, Level-D bombs, the Fig. 4 allocation and budgets.
fn mc2_system() -> String {
    let mut out = String::new();
    let mut profiles = 0;
    for line in MC2_HEAVY.lines() {
        out.push_str(line);
        out.push('\n');
        // "# table row T4: WSS 128KiB, 20 loop iterations" closes each task.
        if let Some(rest) = line.strip_prefix("# table row ") {
            let wss = rest.split("WSS ").nth(1).and_then(|s| s.split(',').next()).expect("a WSS in the row comment");
            let _ = writeln!(out, "memory = {{ wss = \"{wss}\", pattern = \"random\", accesses_per_ms = 5000, read_fraction = 1.0 }}");
            profiles += 1;
        }
    }
    assert_eq!(profiles, 27, "one profile per task of mc2-llc-heavy");
    for i in 0..4 {
        let _ = write!(
            out,
            "\n[[task]]\nname = \"bomb{i}\"\nlevel = \"D\"\nperiod = \"100ms\"\npet = {{ D = \"10ms\" }}\n\
             memory = {{ wss = \"64MiB\", pattern = \"stream\", accesses_per_ms = 63131, read_fraction = 0.0 }}\n"
        );
    }
    out.push_str(
        "\n[allocation]\nllc_ways = { core0 = 2, core1 = 2, core2 = 2, core3 = 2, levelC = 8 }\n\
         banks = { core0 = [4], core1 = [5], core2 = [6], core3 = [7], levelC = [2, 3], os = [0, 1] }\n",
    );
    let budgets: Vec<String> = BUDGETS.iter().map(|b| b.to_string()).collect();
    let _ = write!(out, "\n[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [{}]\n", budgets.join(", "));
    out
}

/// mrs-synthetic with a memory profile per task. Every task reads (mostly)
/// random lines of a 2 MiB set, so alone it misses half its references in the
/// shared 1 MiB LLC; references per ms are set so that a job needs roughly
/// 40–110 % of its server's M_s (Task3 and Task6 more than their share:
/// their servers run out of memory budget).
fn mrs_system() -> String {
    let profile = |name: &str| -> (u32, f64) {
        match name {
            "Task1" => (120, 1.0),
            "Task2" => (100, 0.8),
            "Task3" => (200, 0.7),
            "Task4" => (150, 1.0),
            "Task5" => (100, 0.9),
            "Task6" => (150, 0.8),
            "Task7" => (120, 1.0),
            _ => (120, 0.7),
        }
    };
    let mut out = String::new();
    let mut task = None::<String>;
    let mut profiles = 0;
    for line in MRS_SYNTHETIC.lines() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("[[") {
            task = None;
        }
        if let Some(name) = line.strip_prefix("name = \"Task").map(|n| format!("Task{}", n.trim_end_matches('"'))) {
            task = Some(name);
        }
        if let (Some(name), true) = (&task, line.starts_with("pet = ")) {
            let (refs, rf) = profile(name);
            let _ = writeln!(out, "memory = {{ wss = \"2MiB\", pattern = \"random\", accesses_per_ms = {refs}, read_fraction = {rf} }}");
            profiles += 1;
        }
    }
    assert_eq!(profiles, 8, "one profile per task of mrs-synthetic");
    out.push_str("\n[regulation]\nkind = \"mrs\"\n");
    out
}

struct Mode {
    system: &'static str,
    name: &'static str,
    kind: SchedulerKind,
    config: SimConfig,
}

fn modes() -> Vec<Mode> {
    let base = SimConfig::new(DURATION_NS);
    let cpu = SimConfig { memory: false, regulation: Some(None), ..base.clone() };
    let fluid = SimConfig { regulation: Some(None), ..base.clone() };
    let with = |k: RegulationKind| SimConfig { regulation: Some(Some(k)), ..base.clone() };
    vec![
        Mode { system: "mc2", name: "cpu-only", kind: SchedulerKind::Mc2, config: cpu.clone() },
        Mode { system: "mc2", name: "fluid", kind: SchedulerKind::Mc2, config: fluid.clone() },
        Mode { system: "mc2", name: "memguard", kind: SchedulerKind::Mc2, config: with(RegulationKind::Memguard) },
        Mode { system: "mc2", name: "mcti", kind: SchedulerKind::Mc2, config: with(RegulationKind::Mcti) },
        Mode { system: "mrs", name: "cpu-only", kind: SchedulerKind::Servers, config: cpu },
        Mode { system: "mrs", name: "fluid", kind: SchedulerKind::Servers, config: fluid },
        Mode { system: "mrs", name: "mrs", kind: SchedulerKind::Servers, config: with(RegulationKind::Mrs) },
    ]
}

#[derive(Clone, Copy, Default)]
struct Rate {
    sim_s_per_s: (f64, f64),
    events_per_s: (f64, f64),
    runs_per_sample: usize,
}

fn min_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2])
}

fn measure(system: &TaskSystem, mode: &Mode, events: u64) -> Rate {
    let run = || black_box(sim::simulate(black_box(system), mode.kind, &mode.config).unwrap()).events;
    let start = Instant::now();
    assert_eq!(run(), events);
    let once = start.elapsed().as_secs_f64();
    let runs = ((SAMPLE_SECONDS / once).ceil() as usize).max(1);
    let mut sim = Vec::new();
    let mut ev = Vec::new();
    for _ in 0..SAMPLES {
        let start = Instant::now();
        let mut total = 0u64;
        for _ in 0..runs {
            total += run();
        }
        let wall = start.elapsed().as_secs_f64();
        assert_eq!(total, events * runs as u64, "{}:{} must be deterministic", mode.system, mode.name);
        sim.push(runs as f64 * DURATION_NS as f64 / 1e9 / wall);
        ev.push(total as f64 / wall);
    }
    Rate { sim_s_per_s: min_median(sim), events_per_s: min_median(ev), runs_per_sample: runs }
}

/// One-line description of what a run did (to see the regulator at work).
fn describe(system: &TaskSystem, r: &SimResult) -> String {
    let count = |state: &str| r.regulator_intervals.iter().filter(|iv| iv.state == state).count();
    let requests: f64 = r.per_task.iter().map(|t| t.memory_requests).sum();
    let misses: u64 = r.per_task.iter().map(|t| t.misses).sum();
    let d_misses: u64 = r.per_task.iter().zip(&system.tasks).filter(|(_, t)| t.level == Some(Level::D)).map(|(s, _)| s.misses).sum();
    format!(
        "{} events, {} jobs done, {} misses ({} of them Level D), {:.3e} requests, stalled {} / overload {} / depleted {} spans",
        r.events,
        r.completed(),
        misses,
        d_misses,
        requests,
        count("stalled"),
        count("overload"),
        count("depleted")
    )
}

fn main() {
    let texts = [("mc2", mc2_system()), ("mrs", mrs_system())];
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/sim_memory");
    std::fs::create_dir_all(&dir).expect("output directory");
    let mut systems = Vec::new();
    for (name, text) in &texts {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).expect("write TOML");
        let system = parse_task_system(text, Format::Toml, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        println!("{name}: {} tasks, {} cores, {} servers; written to {}", system.tasks.len(), system.platform.cores, system.servers.len(), path.display());
        systems.push((*name, system));
    }
    let system = |name: &str| &systems.iter().find(|(n, _)| *n == name).unwrap().1;

    let only = std::env::var("SIM_MEMORY_MODES").ok();
    let wanted = |m: &Mode| only.as_deref().is_none_or(|o| o.split(',').any(|x| x.trim() == format!("{}:{}", m.system, m.name)));
    println!("\n{} s simulated per run, one thread, {SAMPLES} samples of ~{SAMPLE_SECONDS} s per mode\n", DURATION_NS / 1_000_000_000);

    let modes = modes();
    let mut results: Vec<(&Mode, u64, Rate)> = Vec::new();
    for mode in &modes {
        let s = system(mode.system);
        let r = sim::simulate(s, mode.kind, &mode.config).unwrap();
        println!("{}:{:<9} {}", mode.system, mode.name, describe(s, &r));
        let rate = if wanted(mode) { measure(s, mode, r.events) } else { Rate::default() };
        results.push((mode, r.events, rate));
    }

    println!(
        "\n{:<14} {:>10} {:>16} {:>16} {:>14} {:>14} {:>10} {:>6}",
        "system:mode", "events", "min sim s/s", "median sim s/s", "min events/s", "med events/s", "vs cpu", "runs"
    );
    let mut json = Vec::new();
    for (mode, events, rate) in &results {
        let reference = results.iter().find(|(m, _, _)| m.system == mode.system && m.name == "cpu-only").unwrap().2;
        let ratio = if reference.sim_s_per_s.1 > 0.0 { rate.sim_s_per_s.1 / reference.sim_s_per_s.1 } else { 0.0 };
        println!(
            "{:<14} {:>10} {:>16.0} {:>16.0} {:>14.0} {:>14.0} {:>10.4} {:>6}",
            format!("{}:{}", mode.system, mode.name),
            events,
            rate.sim_s_per_s.0,
            rate.sim_s_per_s.1,
            rate.events_per_s.0,
            rate.events_per_s.1,
            ratio,
            rate.runs_per_sample
        );
        json.push(serde_json::json!({
            "system": mode.system,
            "mode": mode.name,
            "events": events,
            "sim_s_per_s": { "min": rate.sim_s_per_s.0, "median": rate.sim_s_per_s.1 },
            "events_per_s": { "min": rate.events_per_s.0.round(), "median": rate.events_per_s.1.round() },
            "median_ratio_to_cpu_only": ratio,
            "runs_per_sample": rate.runs_per_sample,
        }));
    }
    println!(
        "{}",
        serde_json::json!({
            "bench": "sim_memory",
            "duration_ns": DURATION_NS,
            "samples": SAMPLES,
            "budgets_per_ms": BUDGETS,
            "results": json,
        })
    );
}
