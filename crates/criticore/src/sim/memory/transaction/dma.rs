//! A DMA engine as a bus master (mc2-io-ipc-os-isolation §3.2, §5.3): it
//! writes a device's data into its buffer's pages, one uncacheable line at a
//! time at the device's bandwidth, posted (nobody waits), cycling over the
//! buffer. DMA pages are uncacheable, so the LLC is untouched (§3.1,
//! footnote 5); the traffic meets the cores on the bus and in the banks.

use super::workload::{Access, Workload};

pub struct DmaStream {
    lines: Vec<u64>,
    pos: usize,
    gap_ps: u64,
    written: u64,
}

impl DmaStream {
    /// Write `pages` (each `page_bytes`) over and over at `bytes_per_s`.
    pub fn new(pages: &[u64], page_bytes: u64, line_bytes: u64, bytes_per_s: f64) -> DmaStream {
        assert!(bytes_per_s > 0.0 && !pages.is_empty());
        let lines = pages.iter().flat_map(|&p| (0..page_bytes / line_bytes).map(move |k| p + k * line_bytes)).collect();
        DmaStream { lines, pos: 0, gap_ps: (line_bytes as f64 / bytes_per_s * 1e12).round() as u64, written: 0 }
    }
}

impl Workload for DmaStream {
    fn next(&mut self) -> Option<Access> {
        let addr = self.lines[self.pos];
        self.pos = (self.pos + 1) % self.lines.len();
        self.written += 1;
        Some(Access { uncached: true, posted: true, ..Access::user(addr, true, self.gap_ps) })
    }

    /// Passes over the buffer.
    fn iterations(&self) -> u64 {
        self.written / self.lines.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_at_the_bandwidth_uncached_and_posted() {
        // 32 B every 320 ns = 100 MB/s.
        let mut d = DmaStream::new(&[0x1000], 4096, 32, 100e6);
        let a = d.next().unwrap();
        assert_eq!((a.addr, a.write, a.uncached, a.posted, a.compute_ps), (0x1000, true, true, true, 320_000));
        for _ in 0..127 {
            d.next();
        }
        assert_eq!(d.iterations(), 1);
        assert_eq!(d.next().unwrap().addr, 0x1000);
    }
}
