//! The load microbenchmark of blin-bandwidth-monitor §3.1 (Fig. 4): per
//! iteration, `writes` lines written then `reads` lines read (writes + reads
//! = 10), walking a buffer far larger than the LLC, then a wait loop of
//! `delay` iterations. Writes stream (full lines, no allocation: the A9's
//! write-streaming mode) and are posted; reads miss and wait. The Fig. 5 peak
//! of 2,020 MB/s is write-only with no delay (`Machine::line_transfer_ps`).

use super::workload::{Access, Workload};

pub struct BandwidthLoad {
    pages: Vec<u64>,
    page_bytes: u64,
    line_bytes: u64,
    lines: u64,
    writes: u32,
    reads: u32,
    /// Wait-loop time after each iteration.
    delay_ps: u64,
    /// Work per access (the loop's own instructions).
    compute_ps: u64,
    pos: u64,
    k: u32,
    iterations: u64,
}

impl BandwidthLoad {
    /// `delay` wait-loop iterations of `iteration_ps` each.
    pub fn new(pages: &[u64], page_bytes: u64, line_bytes: u64, writes: u32, reads: u32, delay: u64, iteration_ps: u64, compute_ps: u64) -> BandwidthLoad {
        assert!(writes + reads > 0 && !pages.is_empty());
        BandwidthLoad {
            pages: pages.to_vec(),
            page_bytes,
            line_bytes,
            lines: pages.len() as u64 * page_bytes / line_bytes,
            writes,
            reads,
            delay_ps: delay * iteration_ps,
            compute_ps,
            pos: 0,
            k: 0,
            iterations: 0,
        }
    }
}

impl Workload for BandwidthLoad {
    fn next(&mut self) -> Option<Access> {
        let off = (self.pos % self.lines) * self.line_bytes;
        let addr = self.pages[(off / self.page_bytes) as usize] + off % self.page_bytes;
        self.pos += 1;
        let write = self.k < self.writes;
        let first = self.k == 0 && self.iterations > 0;
        self.k += 1;
        if self.k == self.writes + self.reads {
            self.k = 0;
            self.iterations += 1;
        }
        let compute_ps = self.compute_ps + if first { self.delay_ps } else { 0 };
        Some(if write { Access { uncached: true, posted: true, ..Access::user(addr, true, compute_ps) } } else { Access::user(addr, false, compute_ps) })
    }

    fn iterations(&self) -> u64 {
        self.iterations
    }
}

#[cfg(test)]
mod tests {
    use super::super::page_alloc::{List, ListBanks, PageAllocator};
    use super::super::system::{Machine, System};
    use super::*;

    /// MB/s of one load alone on core 0 of the i.MX6 model over 200 µs.
    fn bandwidth(writes: u32, reads: u32, delay: u64) -> f64 {
        let m = Machine::imx6(false);
        let mut alloc = PageAllocator::new(m.map.clone(), ListBanks::mc2_canonical(4));
        let pages = alloc.alloc(List::LevelC, &(0..16).collect::<Vec<_>>(), 8 << 20).unwrap();
        let mut sys = System::new(m.clone(), 1);
        // A wait-loop iteration: two instructions at 800 MHz.
        sys.run_on(0, Box::new(BandwidthLoad::new(&pages, 4096, 32, writes, reads, delay, 2_500, 1_250)), 0xffff, 0xffff, false);
        let t = 200_000_000;
        sys.run(t);
        sys.core_stats(0).requests as f64 * 32.0 / (t as f64 / 1e12) / 1e6
    }

    #[test]
    fn fig5_write_only_reaches_the_bus_peak_and_reads_or_delays_lower_it() {
        // blin §3.1: 2,020 MB/s write-only with no wait loop.
        let peak = bandwidth(10, 0, 0);
        assert!((peak / 2020.0 - 1.0).abs() < 0.03, "{peak} MB/s");
        // Reads wait for memory: "substantially lower".
        let mixed = bandwidth(5, 5, 0);
        let reads = bandwidth(0, 10, 0);
        assert!(reads < mixed && mixed < 0.7 * peak, "reads {reads} mixed {mixed}");
        // The wait loop lowers it monotonically.
        let slow: Vec<f64> = [0, 100, 1000, 8000].iter().map(|&d| bandwidth(10, 0, d)).collect();
        assert!(slow.windows(2).all(|w| w[1] < w[0]), "{slow:?}");
    }
}
