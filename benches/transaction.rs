//! Transaction (request-level) memory model throughput (issue 11): memory
//! requests simulated per wall second on one thread.
//!
//! Run with `cargo bench -p criticore --bench transaction`.
//!
//! - `ub-loaded`: the µB of mc2-hardware-management §4.1 (256 KiB, 1 colour
//!   × 1 way, unmanaged: nearly every reference misses) beside three stress
//!   tasks, 4 cores through L1, LLC, bus arbiter and one DRAM bank.
//! - `ub-cached`: the same µB alone with 16 colours × 16 ways (every
//!   reference after the first iteration hits the LLC).
//! - `replay-stream`, `replay-random`: 1 M requests (80 % reads) straight into
//!   the DRAM controller, closed loop with 32 in the queue (the peers' trace
//!   mode, benches/dram_peers.py).
//!
//! SAMPLES samples each; min / median of references and requests per second.
//! The last line is one JSON object. TRANSACTION_CASES=ub-loaded,replay-random
//! (comma-separated) times only those (for profiling).

use criticore::sim::memory::transaction::address::AddressMap;
use criticore::sim::memory::transaction::dram::{Scheduler, Timing};
use criticore::sim::memory::transaction::mc2_ub::{run_point, Isolation, UbPoint, UbSettings};
use criticore::sim::memory::transaction::system::replay_closed_loop;
use criticore::sim::memory::transaction::workload::SplitMix;
use std::hint::black_box;
use std::time::Instant;

const SAMPLES: usize = 5;

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2])
}

fn main() {
    let only = std::env::var("TRANSACTION_CASES").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o.split(',').any(|c| c == name));
    let mut json = Vec::new();
    println!("| case | references/s (min / median) | memory requests/s (min / median) |");
    println!("|---|---:|---:|");
    for (name, colours, ways, iso) in [("ub-loaded", 1, 1, Isolation::Unmanaged), ("ub-cached", 16, 16, Isolation::Idle)] {
        if !wanted(name) {
            continue;
        }
        let s = UbSettings::imx6(20, 1, 1);
        let p = UbPoint { wss_bytes: 256 << 10, colours, ways, isolation: iso };
        black_box(run_point(&s, p)); // warm the allocator cache
        let (mut refs, mut reqs) = (Vec::new(), Vec::new());
        for _ in 0..SAMPLES {
            let t = Instant::now();
            let r = black_box(run_point(&s, p));
            let el = t.elapsed().as_secs_f64();
            refs.push(r.references as f64 / el);
            reqs.push(r.requests as f64 / el);
        }
        let (a, b) = (stats(refs), stats(reqs));
        println!("| {name} | {:.2} M / {:.2} M | {:.2} M / {:.2} M |", a.0 / 1e6, a.1 / 1e6, b.0 / 1e6, b.1 / 1e6);
        json.push(format!("\"{name}\": {{\"refs_per_s_median\": {:.0}, \"requests_per_s_median\": {:.0}}}", a.1, b.1));
    }
    let map = AddressMap { page_shift: 12, colour_bits: vec![], bank_bits: vec![vec![13], vec![14], vec![15]], row_shift: 13, size_bytes: 1 << 30 };
    let timing = Timing::named("ddr3-1600").unwrap();
    for name in ["replay-stream", "replay-random"] {
        if !wanted(name) {
            continue;
        }
        let n = 1_000_000u64;
        let mut rng = SplitMix::new(7);
        let trace: Vec<(u64, bool)> = (0..n)
            .map(|k| {
                let addr = if name == "replay-stream" { k * 64 } else { rng.below(1 << 24) * 64 };
                (addr, rng.below(100) >= 80)
            })
            .collect();
        let mut reqs = Vec::new();
        for _ in 0..SAMPLES {
            let t = Instant::now();
            let (st, _) = black_box(replay_closed_loop(trace.iter().copied(), &map, timing, Scheduler::FrFcfs, 32));
            let el = t.elapsed().as_secs_f64();
            reqs.push((st.reads + st.writes) as f64 / el);
        }
        let b = stats(reqs);
        println!("| {name} | — | {:.2} M / {:.2} M |", b.0 / 1e6, b.1 / 1e6);
        json.push(format!("\"{name}\": {{\"requests_per_s_median\": {:.0}}}", b.1));
    }
    println!("{{{}}}", json.join(", "));
}
