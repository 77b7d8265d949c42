//! Soundness of the classic tests against the simulator (issue 12): for random
//! CPU-only systems per analysis (pfp, pedf, gedf, gfp, periodic servers, CBS
//! servers), no simulated response time exceeds the task's bound, and a
//! system the test calls schedulable misses no deadline in simulation.
//! Jobs run for exactly their PET (what every bound charges), synchronously
//! released; each system is simulated for two of its hyperperiods (200 ms).
//! An unfinished job at the end counts with its age so far.
//!
//! `make test` runs 200 systems per analysis; the full sample is
//!   CRITICORE_SOUNDNESS_SYSTEMS=10000 cargo test --release -p criticore \
//!     --test analysis_soundness -- --nocapture
//! which also prints the distribution of simulated / bound (how tight).

use criticore::analysis::classic::{analyze, TaskAnalysis};
use criticore::model::Level;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig};
use criticore::{parse_task_system, Format, TaskSystem};
use std::fmt::Write;

const MS: u64 = 1_000_000;
/// Every period divides 200 ms, so 400 ms is two hyperperiods.
const PERIODS_MS: [u64; 7] = [10, 20, 25, 40, 50, 100, 200];
const HORIZON_NS: u64 = 400 * MS;

/// SplitMix64: a fixed sequence per seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize]
    }
    /// UUniFast (Bini & Buttazzo 2005): n utilizations summing to `total`.
    fn uunifast(&mut self, n: usize, total: f64) -> Vec<f64> {
        let mut sum = total;
        let mut out = Vec::with_capacity(n);
        for i in 1..n {
            let next = sum * self.unit().powf(1.0 / (n - i) as f64);
            out.push(sum - next);
            sum = next;
        }
        out.push(sum);
        out
    }
}

/// One task's TOML: PET from its utilization (at least 10 µs), deadline
/// implicit or constrained between the PET and the period.
fn task(rng: &mut Rng, text: &mut String, name: &str, u: f64, period_ms: u64, place: &str, constrained: bool, priority: bool) {
    let period_ns = period_ms * MS;
    let pet_ns = ((u * period_ns as f64) as u64).clamp(10_000, period_ns);
    let deadline_ns = if constrained { pet_ns + (rng.unit() * (period_ns - pet_ns) as f64) as u64 } else { period_ns };
    let _ = write!(text, "[[task]]\nname = \"{name}\"\n{place}period = \"{period_ns}ns\"\ndeadline = \"{}ns\"\npet = \"{pet_ns}ns\"\n", deadline_ns.max(pet_ns));
    if priority {
        let _ = writeln!(text, "priority = {}", rng.range(1, 99));
    }
}

fn partitioned(rng: &mut Rng) -> String {
    let (constrained, priority) = (rng.next() % 2 == 0, rng.next() % 3 == 0);
    let mut text = String::from("[platform]\ncores = 2\n");
    for core in 0..2 {
        let n = rng.range(1, 5) as usize;
        let total = 0.2 + 0.85 * rng.unit();
        for (k, u) in rng.uunifast(n, total).into_iter().enumerate() {
            let p = rng.pick(&PERIODS_MS);
            task(rng, &mut text, &format!("c{core}t{k}"), u, p, &format!("core = {core}\n"), constrained, priority);
        }
    }
    text
}

fn global(rng: &mut Rng, constrained: bool) -> String {
    let m = rng.pick(&[2u64, 4]);
    let mut text = format!("[platform]\ncores = {m}\n");
    let n = rng.range(m + 1, 3 * m) as usize;
    let total = m as f64 * (0.2 + 0.8 * rng.unit());
    let priority = rng.next() % 3 == 0;
    for (k, u) in rng.uunifast(n, total).into_iter().enumerate() {
        let p = rng.pick(&PERIODS_MS);
        task(rng, &mut text, &format!("t{k}"), u.min(1.0), p, "", constrained, priority);
    }
    text
}

fn servers(rng: &mut Rng, cbs: bool) -> String {
    let mut text = String::from("[platform]\ncores = 2\n");
    let mut tasks = String::new();
    let mut s = 0;
    for core in 0..2 {
        let n = rng.range(1, 3) as usize;
        let total = 0.3 + 0.7 * rng.unit();
        for u in rng.uunifast(n, total) {
            // Server periods well below most task periods, as reservations are used.
            let period_ms = rng.pick(&[5u64, 10, 20, 25]);
            let budget_ns = ((u * (period_ms * MS) as f64) as u64).clamp(100_000, period_ms * MS);
            let kind = if cbs { "cbs" } else { "periodic" };
            let _ = write!(text, "[[server]]\nname = \"s{s}\"\ncore = {core}\nkind = \"{kind}\"\npriority = {}\nperiod = \"{period_ms}ms\"\nbudget = \"{budget_ns}ns\"\n", rng.range(1, 5));
            let rate = budget_ns as f64 / (period_ms * MS) as f64;
            let k = rng.range(1, 3) as usize;
            let load = rate * (0.1 + 0.8 * rng.unit());
            for (j, tu) in rng.uunifast(k, load).into_iter().enumerate() {
                let p = rng.pick(&[40u64, 50, 100, 200]);
                let (constrained, priority) = (rng.next() % 2 == 0, rng.next() % 2 == 0);
                task(rng, &mut tasks, &format!("s{s}t{j}"), tu, p, &format!("server = \"s{s}\"\n"), constrained, priority);
            }
            s += 1;
        }
    }
    text + &tasks
}

struct Tally {
    systems: usize,
    schedulable: usize,
    bounded_tasks: usize,
    ratios: Vec<f64>,
}

/// Simulate `system` under `kind` and check every bound of `a`.
fn check(label: &str, seed: u64, text: &str, system: &TaskSystem, kind: SchedulerKind, a: &TaskAnalysis, tally: &mut Tally) {
    let config = SimConfig { seed, exec: ExecModel::Pet(Level::C), record_jobs: true, ..SimConfig::new(HORIZON_NS) };
    let r = simulate(system, kind, &config).unwrap_or_else(|e| panic!("{label} seed {seed}: {e:?}\n{text}"));
    tally.systems += 1;
    if a.schedulable == Some(true) {
        tally.schedulable += 1;
    }
    for (i, t) in system.tasks.iter().enumerate() {
        let row = a.tasks.iter().find(|b| b.task == t.name).expect("a row per task");
        let unfinished = r.unfinished.iter().filter(|u| u.task as usize == i).map(|u| HORIZON_NS - u.release_ns).max().unwrap_or(0);
        let observed = r.per_task[i].max_response_ns.max(unfinished);
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

fn systems() -> u64 {
    std::env::var("CRITICORE_SOUNDNESS_SYSTEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
}

fn run(label: &str, kind: SchedulerKind, salt: u64, make: impl Fn(&mut Rng) -> String) {
    let mut tally = Tally { systems: 0, schedulable: 0, bounded_tasks: 0, ratios: Vec::new() };
    for seed in 0..systems() {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ salt);
        let text = make(&mut rng);
        let system = parse_task_system(&text, Format::Toml, "generated.toml").unwrap_or_else(|e| panic!("{label} seed {seed}: {e}\n{text}"));
        let a = analyze(&system, kind).unwrap_or_else(|e| panic!("{label} seed {seed}: {e:?}"));
        check(label, seed, &text, &system, kind, &a, &mut tally);
    }
    tally.ratios.sort_by(f64::total_cmp);
    let q = |p: f64| tally.ratios.get(((tally.ratios.len() as f64 - 1.0) * p) as usize).copied().unwrap_or(f64::NAN);
    println!(
        "{label}: {} systems, {} deemed schedulable, {} tasks bounded; simulated/bound p10 {:.3} p50 {:.3} p90 {:.3} max {:.3}",
        tally.systems, tally.schedulable, tally.bounded_tasks, q(0.1), q(0.5), q(0.9), q(1.0)
    );
    // The sample must exercise the test on both sides of its boundary.
    assert!(tally.schedulable > 0 && tally.schedulable < tally.systems, "{label}: {} of {} schedulable", tally.schedulable, tally.systems);
    assert!(tally.bounded_tasks > tally.systems, "{label}: only {} bounded tasks", tally.bounded_tasks);
}

#[test]
fn partitioned_fixed_priority_bounds_hold() {
    run("pfp", SchedulerKind::Pfp, 1, partitioned);
}

#[test]
fn partitioned_edf_bounds_hold() {
    run("pedf", SchedulerKind::Pedf, 2, partitioned);
}

#[test]
fn global_edf_bounds_hold() {
    run("gedf", SchedulerKind::Gedf, 3, |rng| global(rng, false));
}

#[test]
fn global_fixed_priority_bounds_hold() {
    run("gfp", SchedulerKind::Gfp, 4, |rng| global(rng, true));
}

#[test]
fn periodic_server_bounds_hold() {
    run("servers (periodic)", SchedulerKind::Servers, 5, |rng| servers(rng, false));
}

#[test]
fn cbs_server_bounds_hold() {
    run("servers (CBS)", SchedulerKind::Servers, 6, |rng| servers(rng, true));
}
