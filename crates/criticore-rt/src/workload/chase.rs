//! Loaded latency: a pointer-chasing victim against load generators on other
//! cores, like Intel MLC's loaded-latency mode and IsolBench's `latency`
//! (docs/references.md, Runtime §3). The victim walks a random cyclic
//! permutation of the lines of a buffer far larger than the LLC, one
//! dependent load per line, so every access waits for memory and none can be
//! prefetched; the loads run `load::run` in threads pinned to their cores.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::os::counter_page::now_ns;
use crate::os::launch::pin_current_thread;
use crate::workload::load::{self, LoadSpec};

/// One point of the curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadedLatency {
    /// Mean ns per dependent access of the victim.
    pub latency_ns: f64,
    /// Bytes per second all loads moved together.
    pub load_bytes_per_s: f64,
}

/// A random cyclic permutation over `lines` lines of `line_bytes` (Sattolo's
/// algorithm: one cycle through every line), as the index of the next line
/// stored in each line's first word.
fn ring(lines: usize, words_per_line: usize, seed: u64) -> Vec<u64> {
    let order = load::permutation(lines, seed, true);
    let mut buf = vec![0u64; lines * words_per_line];
    for k in 0..lines {
        let (from, to) = (order[k], order[(k + 1) % lines]);
        buf[from * words_per_line] = (to * words_per_line) as u64;
    }
    buf
}

/// Chase pointers on the calling thread for `duration_ns`: mean ns per access.
pub fn chase(buffer_bytes: usize, line_bytes: usize, duration_ns: u64) -> f64 {
    let words = line_bytes / 8;
    let buf = ring(buffer_bytes / line_bytes, words, 0x9E37_79B9_7F4A_7C15);
    let mut at = 0usize;
    // Warm the TLB and page tables: one pass, untimed.
    for _ in 0..buf.len() / words {
        at = buf[at] as usize;
    }
    let start = now_ns();
    let mut steps = 0u64;
    loop {
        for _ in 0..1024 {
            at = unsafe { *buf.get_unchecked(at) } as usize;
        }
        steps += 1024;
        let now = now_ns();
        if now - start >= duration_ns {
            std::hint::black_box(at);
            return (now - start) as f64 / steps as f64;
        }
    }
}

/// The victim on `victim_cpu`, one load per CPU of `load_cpus` (each `spec`).
pub fn loaded_latency(victim_cpu: usize, load_cpus: &[usize], spec: &LoadSpec, buffer_bytes: usize, duration_ns: u64) -> io::Result<LoadedLatency> {
    pin_current_thread(&[victim_cpu]).map_err(io::Error::other)?;
    let stop = AtomicBool::new(false);
    let spec = LoadSpec { duration_ns: None, ..spec.clone() };
    std::thread::scope(|s| {
        let handles: Vec<_> = load_cpus
            .iter()
            .map(|&cpu| {
                let (spec, stop) = (&spec, &stop);
                s.spawn(move || -> io::Result<f64> {
                    pin_current_thread(&[cpu]).map_err(io::Error::other)?;
                    let r = load::run(spec, None, stop, |_| {})?;
                    Ok(r.bandwidth(spec.line_bytes))
                })
            })
            .collect();
        // Let the loads reach their rate before timing the victim.
        std::thread::sleep(std::time::Duration::from_millis(if load_cpus.is_empty() { 0 } else { 20 }));
        let latency_ns = chase(buffer_bytes, spec.line_bytes, duration_ns);
        stop.store(true, Ordering::Relaxed);
        let mut load_bytes_per_s = 0.0;
        for h in handles {
            load_bytes_per_s += h.join().map_err(|_| io::Error::other("a load thread panicked"))??;
        }
        Ok(LoadedLatency { latency_ns, load_bytes_per_s })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_visits_every_line_once() {
        let words = 8;
        let buf = ring(1000, words, 7);
        let mut seen = vec![false; 1000];
        let mut at = 0usize;
        for _ in 0..1000 {
            assert!(!seen[at / words], "line {} visited twice", at / words);
            seen[at / words] = true;
            at = buf[at] as usize;
        }
        assert_eq!(at, 0, "one cycle through all lines");
        assert!(seen.iter().all(|&s| s));
    }
}
