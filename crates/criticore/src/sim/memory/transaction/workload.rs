//! What a core does, one memory reference at a time: the micro-benchmarks
//! the papers measure with, over physical pages from the page allocator.

/// SplitMix64: seeded, fast enough to draw one number per reference.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (Lemire's multiply-shift; bias below 2^-32 for n < 2^32).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        (((self.next_u64() >> 32) * n) >> 32) as u64
    }
}

/// One reference: `compute_ps` of work before it, then a load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub addr: u64,
    pub write: bool,
    pub compute_ps: u64,
    /// Kernel code (system calls): uses the OS's LLC ways under OS isolation.
    pub kernel: bool,
    /// An uncacheable page (SBP buffers, DMA buffers): straight to memory.
    /// The core waits for an uncached write too (strongly-ordered memory), unless `posted`.
    pub uncached: bool,
    /// A write nobody waits for (a DMA engine's).
    pub posted: bool,
}

impl Access {
    /// A cacheable user-mode reference.
    pub fn user(addr: u64, write: bool, compute_ps: u64) -> Access {
        Access { addr, write, compute_ps, kernel: false, uncached: false, posted: false }
    }
}

pub trait Workload: Send {
    fn next(&mut self) -> Option<Access>;
    /// Completed iterations (the unit the papers time).
    fn iterations(&self) -> u64;
}

/// The µB task of mc2-hardware-management §4.1: each iteration reads every
/// line of the working set exactly once, in a fresh random order ("a
/// randomly chosen sequence of word addresses that align with the first word
/// in a cache line"); `iterations` of them (500 in the paper), or endlessly
/// (the stress-inducing tasks: the same loop over 1 MiB). Optionally a dummy
/// system call between iterations reads `syscall_lines` kernel lines (§4.2:
/// "allocated and read 16 pages").
pub struct MicroBenchmark {
    /// Physical page of each virtual page; line k is in page k >> lines_per_page_shift.
    pages: Vec<u64>,
    per_page_shift: u32,
    line_shift: u32,
    order: Vec<u32>,
    pos: usize,
    done: u64,
    limit: Option<u64>,
    compute_ps: u64,
    rng: SplitMix,
    syscall_lines: Vec<u64>,
    syscall_pos: usize,
    in_syscall: bool,
    write: bool,
    sequential: bool,
    uncached: bool,
}

impl MicroBenchmark {
    /// `pages`: the working set's physical pages (WSS = pages × page size,
    /// the last page possibly partly used: `wss_bytes`).
    pub fn new(pages: &[u64], page_bytes: u64, wss_bytes: u64, line_bytes: u64, compute_ps: u64, iterations: Option<u64>, seed: u64) -> MicroBenchmark {
        let per_page = page_bytes / line_bytes;
        let n = wss_bytes / line_bytes;
        assert!(per_page.is_power_of_two() && n.div_ceil(per_page) <= pages.len() as u64);
        let mut mb = MicroBenchmark {
            order: (0..n as u32).collect(),
            pages: pages.to_vec(),
            per_page_shift: per_page.trailing_zeros(),
            line_shift: line_bytes.trailing_zeros(),
            pos: 0,
            done: 0,
            limit: iterations,
            compute_ps,
            rng: SplitMix::new(seed),
            syscall_lines: Vec::new(),
            syscall_pos: 0,
            in_syscall: false,
            write: false,
            sequential: false,
            uncached: false,
        };
        mb.shuffle();
        mb
    }

    /// A dummy system call after every iteration, reading these kernel pages.
    pub fn with_syscall(mut self, kernel_pages: &[u64], page_bytes: u64, line_bytes: u64) -> MicroBenchmark {
        self.syscall_lines = kernel_pages.iter().flat_map(|&p| (0..page_bytes / line_bytes).map(move |k| p + k * line_bytes)).collect();
        self
    }

    /// Stores instead of loads (mc2-io's Synthetic task).
    pub fn writing(mut self) -> MicroBenchmark {
        self.write = true;
        self
    }

    /// Lines in address order every iteration (a copy loop).
    pub fn sequential(mut self) -> MicroBenchmark {
        self.sequential = true;
        self.order.sort_unstable();
        self
    }

    /// An uncacheable buffer (a frame buffer the camera writes by DMA).
    pub fn uncached(mut self) -> MicroBenchmark {
        self.uncached = true;
        self
    }

    fn shuffle(&mut self) {
        if self.sequential {
            return;
        }
        // Fisher–Yates.
        for i in (1..self.order.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            self.order.swap(i, j);
        }
    }
}

impl Workload for MicroBenchmark {
    fn next(&mut self) -> Option<Access> {
        if self.limit.is_some_and(|l| self.done >= l) {
            return None;
        }
        if self.in_syscall {
            let addr = self.syscall_lines[self.syscall_pos];
            self.syscall_pos += 1;
            if self.syscall_pos == self.syscall_lines.len() {
                self.syscall_pos = 0;
                self.in_syscall = false;
                self.done += 1;
            }
            return Some(Access { kernel: true, ..Access::user(addr, false, self.compute_ps) });
        }
        let k = self.order[self.pos] as u64;
        let addr = self.pages[(k >> self.per_page_shift) as usize] + ((k & ((1 << self.per_page_shift) - 1)) << self.line_shift);
        self.pos += 1;
        if self.pos == self.order.len() {
            self.pos = 0;
            self.shuffle();
            if self.syscall_lines.is_empty() {
                self.done += 1;
            } else {
                self.in_syscall = true;
            }
        }
        Some(Access { uncached: self.uncached, ..Access::user(addr, self.write, self.compute_ps) })
    }

    fn iterations(&self) -> u64 {
        self.done
    }
}

/// Extra references mixed into a [`Profile`]: kernel lines of system calls,
/// or an uncacheable buffer (SBP IPC), walked cyclically.
#[derive(Debug, Clone)]
pub struct Extra {
    /// Line addresses.
    pub lines: std::sync::Arc<[u64]>,
    /// Share of all references that go here.
    pub share: f64,
    pub kernel: bool,
    pub uncached: bool,
}

/// (draw threshold, line addresses, next index, kernel, uncached).
type ExtraState = (u64, std::sync::Arc<[u64]>, usize, bool, bool);

/// A task's memory profile as a reference stream (the transaction model of
/// `criticore simulate --memory transaction`, docs/memory-model.md): each
/// reference is a line of the working set, uniformly at random (`random`)
/// or the next line of a cyclic sweep (`stream`), a store with probability
/// 1 − `read_fraction`, after `compute_ps` of work; a share of the
/// references goes to the `extras` instead. Endless unless `limit` is given.
pub struct Profile {
    pages: std::sync::Arc<[u64]>,
    per_page_shift: u32,
    line_shift: u32,
    lines: u64,
    stream: bool,
    pos: u64,
    rng: SplitMix,
    compute_ps: u64,
    /// A reference is a store if a 32-bit draw is below this.
    store_below: u64,
    extras: Vec<ExtraState>,
    taken: u64,
    limit: Option<u64>,
}

impl Profile {
    /// `pages`: physical pages of the working set of `lines` lines; `start`:
    /// the sweep's first line (stream).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pages: std::sync::Arc<[u64]>,
        page_bytes: u64,
        line_bytes: u64,
        lines: u64,
        stream: bool,
        read_fraction: f64,
        compute_ps: u64,
        start: u64,
        seed: u64,
        extras: &[Extra],
        limit: Option<u64>,
    ) -> Profile {
        let per_page = page_bytes / line_bytes;
        assert!(per_page.is_power_of_two() && lines >= 1 && lines.div_ceil(per_page) <= pages.len() as u64);
        let scale = (1u64 << 32) as f64;
        let mut cumulative = 0.0;
        let extras = extras
            .iter()
            .filter(|e| e.share > 0.0 && !e.lines.is_empty())
            .map(|e| {
                cumulative += e.share;
                ((cumulative.min(1.0) * scale) as u64, e.lines.clone(), 0, e.kernel, e.uncached)
            })
            .collect();
        Profile {
            pages,
            per_page_shift: per_page.trailing_zeros(),
            line_shift: line_bytes.trailing_zeros(),
            lines,
            stream,
            pos: start % lines,
            rng: SplitMix::new(seed),
            compute_ps,
            store_below: ((1.0 - read_fraction).clamp(0.0, 1.0) * scale) as u64,
            extras,
            taken: 0,
            limit,
        }
    }

    #[inline]
    fn line_addr(&self, k: u64) -> u64 {
        self.pages[(k >> self.per_page_shift) as usize] + ((k & ((1 << self.per_page_shift) - 1)) << self.line_shift)
    }
}

impl Workload for Profile {
    #[inline]
    fn next(&mut self) -> Option<Access> {
        if self.limit.is_some_and(|l| self.taken >= l) {
            return None;
        }
        self.taken += 1;
        if !self.extras.is_empty() {
            let draw = self.rng.next_u64() >> 32;
            if let Some(e) = self.extras.iter_mut().find(|e| draw < e.0) {
                let addr = e.1[e.2];
                e.2 = (e.2 + 1) % e.1.len();
                return Some(Access { addr, write: false, compute_ps: self.compute_ps, kernel: e.3, uncached: e.4, posted: false });
            }
        }
        let k = if self.stream {
            let k = self.pos;
            self.pos = if k + 1 == self.lines { 0 } else { k + 1 };
            k
        } else {
            self.rng.below(self.lines)
        };
        let write = self.store_below > 0 && (self.store_below >= 1 << 32 || (self.rng.next_u64() >> 32) < self.store_below);
        Some(Access::user(self.line_addr(k), write, self.compute_ps))
    }

    fn iterations(&self) -> u64 {
        if self.stream {
            self.taken / self.lines
        } else {
            0
        }
    }
}

/// A fixed list of references (trace replay, tests).
pub struct Trace {
    accesses: std::vec::IntoIter<Access>,
    total: u64,
    taken: u64,
}

impl Trace {
    pub fn new(accesses: Vec<Access>) -> Trace {
        let total = accesses.len() as u64;
        Trace { accesses: accesses.into_iter(), total, taken: 0 }
    }
}

impl Workload for Trace {
    fn next(&mut self) -> Option<Access> {
        let a = self.accesses.next()?;
        self.taken += 1;
        Some(a)
    }

    fn iterations(&self) -> u64 {
        (self.taken == self.total) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_once_per_iteration_in_a_new_order() {
        let pages = [0x10000u64, 0x30000];
        let mut mb = MicroBenchmark::new(&pages, 4096, 8192, 32, 1000, Some(3), 1);
        let mut iters = Vec::new();
        for _ in 0..3 {
            let it: Vec<u64> = (0..256).map(|_| mb.next().unwrap().addr).collect();
            let mut sorted = it.clone();
            sorted.sort();
            let expect: Vec<u64> = (0..128).map(|k| 0x10000 + 32 * k).chain((0..128).map(|k| 0x30000 + 32 * k)).collect();
            assert_eq!(sorted, expect);
            iters.push(it);
        }
        assert_ne!(iters[0], iters[1]);
        assert_eq!(mb.iterations(), 3);
        assert_eq!(mb.next(), None);
    }

    #[test]
    fn syscall_lines_follow_each_iteration_as_kernel_references() {
        let mut mb = MicroBenchmark::new(&[0], 4096, 64, 32, 0, Some(2), 1).with_syscall(&[0x8000], 4096, 32);
        let a: Vec<Access> = std::iter::from_fn(|| mb.next()).collect();
        // 2 user lines + 128 kernel lines, twice.
        assert_eq!(a.len(), 2 * 130);
        assert!(a[..2].iter().all(|x| !x.kernel) && a[2..130].iter().all(|x| x.kernel && x.addr >= 0x8000));
    }
}
