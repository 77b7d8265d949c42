//! Throughput of the classic tests (issue 12): 100,000 random systems per
//! test from `generate::classic` (generated and parsed up front, not timed;
//! the memory variants: pfp and servers with memory profiles, unregulated,
//! under MemGuard (per core and in groups), under MRS, CBS under MRS),
//! each analyzed by `analysis::classic::analyze` on one thread, 5 times; min
//! and median systems per second. No timing threshold: the numbers go to
//! benches/RESULTS.md beside the pure-Python reference measured in the same
//! run (`benches/classic_reference.py`). The last line is one JSON object.
//!
//! Run with `cargo bench -p criticore --bench classic_analysis`
//! (`CRITICORE_BENCH_SYSTEMS=N` for fewer systems).

use criticore::analysis::classic::analyze;
use criticore::generate::classic;
use criticore::sim::sched::SchedulerKind;
use criticore::TaskSystem;
use std::hint::black_box;
use std::time::Instant;

const REPEATS: usize = 5;

fn main() {
    let n: u64 = std::env::var("CRITICORE_BENCH_SYSTEMS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    type Make = Box<dyn Fn(u64) -> TaskSystem>;
    let classic = |kind, cbs| -> Make { Box::new(move |seed| classic::system(kind, cbs, seed).1) };
    let cases: Vec<(&str, SchedulerKind, Make)> = vec![
        ("pfp", SchedulerKind::Pfp, classic(SchedulerKind::Pfp, false)),
        ("pedf", SchedulerKind::Pedf, classic(SchedulerKind::Pedf, false)),
        ("gedf", SchedulerKind::Gedf, classic(SchedulerKind::Gedf, false)),
        ("gfp", SchedulerKind::Gfp, classic(SchedulerKind::Gfp, false)),
        ("servers", SchedulerKind::Servers, classic(SchedulerKind::Servers, false)),
        ("servers-cbs", SchedulerKind::Servers, classic(SchedulerKind::Servers, true)),
        ("pfp-memory", SchedulerKind::Pfp, Box::new(|seed| classic::system_with_memory(false, seed).1)),
        ("pfp-memguard", SchedulerKind::Pfp, Box::new(|seed| classic::system_with_memory(true, seed).1)),
        ("servers-memory", SchedulerKind::Servers, Box::new(|seed| classic::servers_with_memory(false, seed).1)),
        ("servers-mrs", SchedulerKind::Servers, Box::new(|seed| classic::servers_with_memory(true, seed).1)),
        ("servers-cbs-mrs", SchedulerKind::Servers, Box::new(|seed| classic::cbs_servers_under_mrs(seed).1)),
        ("pfp-mg-groups", SchedulerKind::Pfp, Box::new(|seed| classic::system_with_memory_groups(seed).1)),
    ];
    let mut json = Vec::new();
    for (name, kind, make) in cases {
        let systems: Vec<TaskSystem> = (0..n).map(|seed| make(seed)).collect();
        let tasks: usize = systems.iter().map(|s| s.tasks.len()).sum();
        let mut schedulable = 0usize;
        let mut rates: Vec<f64> = (0..REPEATS)
            .map(|_| {
                schedulable = 0;
                let start = Instant::now();
                for s in &systems {
                    let a = analyze(black_box(s), kind).expect("generated systems are analyzable");
                    schedulable += (a.schedulable == Some(true)) as usize;
                }
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        let (min, median) = (rates[0], rates[REPEATS / 2]);
        println!("{name:15} {n} systems ({:.1} tasks each, {:.1}% schedulable): {min:.0} / {median:.0} systems/s (min / median of {REPEATS})", tasks as f64 / n as f64, 100.0 * schedulable as f64 / n as f64);
        json.push(format!("\"{name}\": {{\"systems\": {n}, \"tasks_per_system\": {:.2}, \"schedulable\": {schedulable}, \"min\": {min:.0}, \"median\": {median:.0}}}", tasks as f64 / n as f64));
    }
    println!("{{{}}}", json.join(", "));
}
