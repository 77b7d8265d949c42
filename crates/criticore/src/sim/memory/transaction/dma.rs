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
    /// Periodic transfers: (lines per transfer, period); None = continuous.
    transfer: Option<(u64, u64)>,
}

impl DmaStream {
    /// Write `pages` (each `page_bytes`) over and over at `bytes_per_s`.
    pub fn new(pages: &[u64], page_bytes: u64, line_bytes: u64, bytes_per_s: f64) -> DmaStream {
        assert!(bytes_per_s > 0.0 && !pages.is_empty());
        let lines = pages.iter().flat_map(|&p| (0..page_bytes / line_bytes).map(move |k| p + k * line_bytes)).collect();
        DmaStream { lines, pos: 0, gap_ps: (line_bytes as f64 / bytes_per_s * 1e12).round() as u64, written: 0, transfer: None }
    }

    /// A device (`[[device]]`): a transfer of `bytes` at `bytes_per_s` starts
    /// every `period_ps`, the first at time 0 (mc2-io §3.2; docs/memory-model.md item 9).
    pub fn periodic(pages: &[u64], page_bytes: u64, line_bytes: u64, bytes_per_s: f64, bytes: u64, period_ps: u64) -> DmaStream {
        let mut d = DmaStream::new(pages, page_bytes, line_bytes, bytes_per_s);
        d.transfer = Some((bytes.div_ceil(line_bytes).max(1), period_ps));
        d
    }
}

impl Workload for DmaStream {
    fn next(&mut self) -> Option<Access> {
        let addr = self.lines[self.pos];
        self.pos = (self.pos + 1) % self.lines.len();
        // Before the first line of each transfer after the first: the idle rest of the period.
        let gap = match self.transfer {
            Some((n, period)) if self.written > 0 && self.written % n == 0 => period.saturating_sub((n - 1) * self.gap_ps),
            Some(_) if self.written == 0 => 0,
            _ => self.gap_ps,
        };
        self.written += 1;
        Some(Access { uncached: true, posted: true, ..Access::user(addr, true, gap) })
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

    #[test]
    fn periodic_transfers_start_every_period() {
        // 3 lines (96 B) at 100 MB/s (320 ns a line) every 10 µs: lines at 0, 320, 640 ns, then 10,000 ns.
        let mut d = DmaStream::periodic(&[0x1000], 4096, 32, 100e6, 96, 10_000_000);
        let starts: Vec<u64> = (0..7)
            .scan(0u64, |t, _| {
                *t += d.next().unwrap().compute_ps;
                Some(*t)
            })
            .collect();
        assert_eq!(starts, vec![0, 320_000, 640_000, 10_000_000, 10_320_000, 10_640_000, 20_000_000]);
    }
}
