//! Bindings of the transaction memory model's experiments
//! (`criticore::sim::memory::transaction`): the µB sweep and the OS-isolation
//! runs of mc2-hardware-management §4, and the DRAM trace replay the peer
//! benchmark uses. Each call releases the GIL; the CLI calls the sweep in
//! chunks to show progress and stop on Ctrl-C.

use crate::option_error;
use criticore::sim::memory::transaction::address::AddressMap;
use criticore::sim::memory::transaction::cache::Replacement;
use criticore::sim::memory::transaction::dram::{Scheduler, Timing};
use criticore::sim::memory::transaction::mc2_io::{self, DmaBuffers, Placement};
use criticore::sim::memory::transaction::mc2_ub::{os_isolation, sweep, Isolation, UbPoint, UbSettings};
use criticore::sim::memory::transaction::system::Machine;
use criticore::sim::memory::transaction::system::replay_closed_loop;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::io::BufRead;

fn isolation(name: &str) -> PyResult<Isolation> {
    Isolation::ALL.into_iter().find(|i| i.name() == name).ok_or_else(|| {
        let names: Vec<&str> = Isolation::ALL.iter().map(|i| i.name()).collect();
        option_error("criticore experiment mc2-ub", "--isolation", format!("unknown configuration {name:?} (one of {})", names.join(", ")))
    })
}

fn settings(iterations: u64, runs: u32, seed: u64, replacement: &str) -> PyResult<UbSettings> {
    let mut s = UbSettings::imx6(iterations.max(2), runs.max(1), seed);
    s.machine.replacement = Replacement::NAMES
        .iter()
        .find(|(n, _)| *n == replacement)
        .map(|(_, r)| *r)
        .ok_or_else(|| option_error("criticore experiment mc2-ub", "--replacement", format!("unknown policy {replacement:?} (pseudo-random or lru)")))?;
    Ok(s)
}

/// Run µB points `(wss_bytes, colours, ways, isolation)` on the i.MX6 model.
/// Returns one dict per point: wss_bytes, colours, ways, isolation, wcet_ns,
/// acet_ns (for the paper's 500 iterations), llc_miss_ratio, requests, references.
#[pyfunction]
#[pyo3(signature = (points, iterations=20, runs=3, seed=1, replacement="pseudo-random"))]
pub fn mc2_ub<'py>(py: Python<'py>, points: Vec<(u64, u32, u32, String)>, iterations: u64, runs: u32, seed: u64, replacement: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let s = settings(iterations, runs, seed, replacement)?;
    let mut pts = Vec::with_capacity(points.len());
    for (wss_bytes, colours, ways, iso) in &points {
        if !(1..=16).contains(colours) || !(1..=16).contains(ways) {
            return Err(option_error("criticore experiment mc2-ub", "--colours/--ways", format!("colours and ways must be 1–16, got {colours} and {ways}")));
        }
        if *wss_bytes < 4096 || *wss_bytes > (64 << 20) || wss_bytes % 32 != 0 {
            return Err(option_error("criticore experiment mc2-ub", "--wss", format!("working set must be 4 KiB–64 MiB in whole lines, got {wss_bytes} B")));
        }
        pts.push(UbPoint { wss_bytes: *wss_bytes, colours: *colours, ways: *ways, isolation: isolation(iso)? });
    }
    let results = py.allow_threads(|| sweep(&s, &pts));
    results
        .iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("wss_bytes", r.point.wss_bytes)?;
            d.set_item("colours", r.point.colours)?;
            d.set_item("ways", r.point.ways)?;
            d.set_item("isolation", r.point.isolation.name())?;
            d.set_item("wcet_ns", r.wcet_ns)?;
            d.set_item("acet_ns", r.acet_ns)?;
            d.set_item("llc_miss_ratio", r.llc_miss_ratio)?;
            d.set_item("requests", r.requests)?;
            d.set_item("references", r.references)?;
            Ok(d)
        })
        .collect()
}

/// §4.2 / Appendix A: caller and victim execution times with and without OS isolation.
#[pyfunction]
#[pyo3(signature = (iterations=20, runs=3, seed=1))]
pub fn mc2_os<'py>(py: Python<'py>, iterations: u64, runs: u32, seed: u64) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let s = settings(iterations, runs, seed, "pseudo-random")?;
    let results = py.allow_threads(|| [false, true].map(|iso| os_isolation(&s, iso, true)));
    results
        .iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("os_isolation", r.os_isolation)?;
            d.set_item("caller_wcet_ns", r.caller_wcet_ns)?;
            d.set_item("caller_acet_ns", r.caller_acet_ns)?;
            d.set_item("victim_wcet_ns", r.victim_wcet_ns)?;
            d.set_item("victim_acet_ns", r.victim_acet_ns)?;
            Ok(d)
        })
        .collect()
}

/// Address mappings for trace replay, named like the peers' (row bits highest).
fn mapping(name: &str, banks: u32) -> PyResult<AddressMap> {
    let bank_bits = banks.trailing_zeros();
    match name {
        // 64 B bursts, 8 KiB rows: column bits 6..12, bank bits 13.., row above.
        "robaraco" | "rochrababgco" => Ok(AddressMap { page_shift: 12, colour_bits: vec![], bank_bits: (13..13 + bank_bits).map(|b| vec![b]).collect(), row_shift: 13, size_bytes: 1 << 34 }),
        _ => Err(option_error("dram_replay", "mapping", format!("unknown mapping {name:?} (robaraco)"))),
    }
}

/// Replay a trace (`R 0x…` / `W 0x…` per line) into the DRAM controller,
/// closed loop with `queue` requests waiting (benches/dram_peers.py).
#[pyfunction]
#[pyo3(signature = (trace_path, timing="ddr3-1600", scheduler="frfcfs", queue=32, mapping_name="robaraco", banks=8, refresh=true))]
pub fn dram_replay<'py>(py: Python<'py>, trace_path: &str, timing: &str, scheduler: &str, queue: usize, mapping_name: &str, banks: u32, refresh: bool) -> PyResult<Bound<'py, PyDict>> {
    let mut t = Timing::named(timing).ok_or_else(|| option_error(trace_path, "timing", format!("unknown timing set {timing:?} ({})", Timing::NAMES.join(", "))))?;
    if !refresh {
        t.t_refi = 0;
    }
    let sched = Scheduler::NAMES.iter().find(|(n, _)| *n == scheduler).map(|(_, s)| *s).ok_or_else(|| option_error(trace_path, "scheduler", format!("unknown scheduler {scheduler:?} (frfcfs or fcfs)")))?;
    if !banks.is_power_of_two() {
        return Err(option_error(trace_path, "banks", "must be a power of two"));
    }
    let map = mapping(mapping_name, banks)?;
    let file = std::fs::File::open(trace_path).map_err(|e| option_error(trace_path, "trace", e.to_string()))?;
    let mut reqs = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| option_error(trace_path, "trace", e.to_string()))?;
        let mut it = line.split_whitespace();
        let (Some(op), Some(addr)) = (it.next(), it.next()) else { continue };
        let write = match op {
            "R" => false,
            "W" => true,
            _ => return Err(option_error(trace_path, &format!("line {}", i + 1), format!("expected R or W, got {op:?}"))),
        };
        let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16).map_err(|_| option_error(trace_path, &format!("line {}", i + 1), format!("not a hex address: {addr:?}")))?;
        reqs.push((addr, write));
    }
    let start = std::time::Instant::now();
    let (st, end) = py.allow_threads(|| replay_closed_loop(reqs.iter().copied(), &map, t, sched, queue));
    let wall = start.elapsed().as_secs_f64();
    let d = PyDict::new(py);
    d.set_item("requests", st.reads + st.writes)?;
    d.set_item("reads", st.reads)?;
    d.set_item("row_hits", st.hits)?;
    d.set_item("row_misses", st.misses)?;
    d.set_item("row_conflicts", st.conflicts)?;
    d.set_item("mean_read_latency_ns", st.mean_read_latency_ns())?;
    d.set_item("simulated_ns", end as f64 / 1000.0)?;
    d.set_item("wall_s", wall)?;
    Ok(d)
}

/// mc2-io §5.1 (Fig. 8): mean ns of one send (`load_msg`) and one receive
/// (`do_msg_fill`) of `bytes` with the message buffer placed by `placement`
/// (sbp, ce, cl), on the i.MX6 model with a Level-C background load.
#[pyfunction]
#[pyo3(signature = (bytes, placement, messages=20, seed=1))]
pub fn mc2_io_ipc(py: Python<'_>, bytes: u64, placement: &str, messages: u64, seed: u64) -> PyResult<(f64, f64)> {
    let p = Placement::ALL.into_iter().find(|p| p.name() == placement).ok_or_else(|| option_error("mc2_io_ipc", "placement", format!("unknown placement {placement:?} (sbp, ce or cl)")))?;
    if bytes == 0 || bytes > 65536 {
        return Err(option_error("mc2_io_ipc", "bytes", "must be 1 B–64 KiB"));
    }
    let m = Machine::imx6(false);
    Ok(py.allow_threads(|| mc2_io::ipc(&m, bytes, p, messages.max(1), seed)))
}

/// mc2-io §5.3 (Figs. 13–14): Synthetic's ns per pass over 256 KiB with an
/// LLC region of `colours` × `ways`, beside DMA of `bytes_per_s` in total into
/// buffers in its own bank (`level_ab`) or the Level-C banks.
#[pyfunction]
#[pyo3(signature = (colours, ways, bytes_per_s, level_ab, iterations=4, seed=1))]
pub fn mc2_io_dma(py: Python<'_>, colours: u32, ways: u32, bytes_per_s: f64, level_ab: bool, iterations: u64, seed: u64) -> PyResult<f64> {
    if !(bytes_per_s >= 0.0 && bytes_per_s.is_finite()) {
        return Err(option_error("mc2_io_dma", "bytes_per_s", "must be a non-negative number"));
    }
    let m = Machine::imx6(false);
    let b = if level_ab { DmaBuffers::LevelAB } else { DmaBuffers::LevelC };
    Ok(py.allow_threads(|| mc2_io::dma(&m, colours, ways, bytes_per_s, b, iterations.max(2), seed)))
}

/// mc2-io §5.2 (Obs. 3): a Level-C task's ns per pass (random reads over
/// `wss`, `ways` of Level C) beside a frame copy whose buffer shares its bank
/// (`shared`) or not; `copy = False` runs it alone.
#[pyfunction]
#[pyo3(signature = (wss, ways, shared, copy=true, iterations=4, seed=1))]
pub fn mc2_io_cross_core(py: Python<'_>, wss: u64, ways: u32, shared: bool, copy: bool, iterations: u64, seed: u64) -> PyResult<f64> {
    let m = Machine::imx6(false);
    Ok(py.allow_threads(|| mc2_io::cross_core(&m, wss, ways, shared, copy, iterations.max(2), seed)))
}
