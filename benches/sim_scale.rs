//! Engine-only G-EDF timing for `benches/sim_scale.py` (issue 13): what the
//! harness sets beside SchedCAT's simulation-only time, on the same systems.
//!
//!   cargo bench -p criticore --bench sim_scale -- MANIFEST PASSES REPEATS
//!
//! MANIFEST has one `path horizon_ns` per line (criticore TOML files). Each
//! system is parsed once; then REPEATS + 1 samples (the first a warm-up) of
//! PASSES summary-only, CPU-only G-EDF runs (`sim::simulate_into` with
//! nothing kept). One JSON line per system: completed jobs, deadline misses,
//! events and the wall seconds of each sample.

use criticore::sim::sched::SchedulerKind;
use criticore::sim::sink::{Discard, ToTheEnd};
use criticore::sim::{self, SimConfig};
use criticore::{parse_task_system, Format};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [manifest, passes, repeats] = &args[..] else {
        eprintln!("usage: sim_scale MANIFEST PASSES REPEATS");
        std::process::exit(2);
    };
    let (passes, repeats): (u32, u32) = (passes.parse().expect("PASSES"), repeats.parse().expect("REPEATS"));
    for line in std::fs::read_to_string(manifest).expect("read the manifest").lines().filter(|l| !l.trim().is_empty()) {
        let (path, horizon) = line.rsplit_once(' ').expect("path horizon_ns");
        let text = std::fs::read_to_string(path).expect("read a system");
        let system = parse_task_system(&text, Format::Toml, path).expect("a valid system");
        let mut config = SimConfig::new(horizon.parse().expect("horizon_ns"));
        config.memory = false;
        let mut seconds = Vec::new();
        let mut last = None;
        for _ in 0..=repeats {
            let start = Instant::now();
            for _ in 0..passes {
                last = Some(sim::simulate_into(&system, SchedulerKind::Gedf, &config, &mut Discard, &mut ToTheEnd).expect("simulates"));
            }
            seconds.push(start.elapsed().as_secs_f64());
        }
        let r = last.expect("at least one pass");
        let misses: u64 = r.per_task.iter().map(|s| s.misses).sum();
        println!(
            "{{\"file\":{:?},\"jobs\":{},\"deadline_misses\":{},\"events\":{},\"seconds\":{:?}}}",
            path,
            r.completed(),
            misses,
            r.events,
            &seconds[1..]
        );
    }
}
