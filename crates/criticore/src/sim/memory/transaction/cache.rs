//! A set-associative cache (the LLC, and each core's private L1) with the
//! PL310's partitioning: per-core way masks restrict where a miss may
//! allocate, while a lookup hits in any way (lockdown by master,
//! mc2-hardware-management §3, Fig. 3a). Sets are selected by address bits,
//! so page colouring partitions them (Fig. 3b). Lines may be locked
//! (mc2-io-ipc-os-isolation §4.2, CL buffers): a locked line always hits and is
//! never evicted.

/// Which line of the allowed ways a miss evicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    /// The PL310 default: a pseudo-random way among the allowed, unlocked ones.
    PseudoRandom,
    /// Least recently used among the allowed, unlocked ways.
    Lru,
}

impl Replacement {
    pub const NAMES: [(&'static str, Replacement); 2] = [("pseudo-random", Replacement::PseudoRandom), ("lru", Replacement::Lru)];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    /// Allocated in a way; `writeback` is the address of a dirty line it evicted.
    Miss { writeback: Option<u64> },
    /// No allowed way (an empty mask, or every allowed way locked): served
    /// from memory without allocating.
    Bypass,
}

const INVALID: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct Cache {
    sets: usize,
    ways: usize,
    line_shift: u32,
    replacement: Replacement,
    /// Line address above the set bits (addr >> line_shift >> set bits) per
    /// set × way, INVALID when empty: 32 bits cover 128 GiB of 32 B lines.
    tags: Vec<u32>,
    /// Last use (LRU only; see `touch` for the wrap).
    stamp: Vec<u32>,
    /// Per set: ways holding a line, dirty ways, locked ways.
    valid: Vec<u32>,
    dirty: Vec<u32>,
    locked: Vec<u32>,
    set_bits: u32,
    clock: u32,
    rng: u64,
}

impl Cache {
    /// `size_bytes` / (`ways` × `line_bytes`) sets; both must be powers of two.
    pub fn new(size_bytes: u64, ways: u32, line_bytes: u64, replacement: Replacement, seed: u64) -> Cache {
        let ways = ways as usize;
        let sets = (size_bytes / (ways as u64 * line_bytes)) as usize;
        assert!(sets.is_power_of_two() && line_bytes.is_power_of_two() && (1..=32).contains(&ways));
        Cache {
            sets,
            ways,
            line_shift: line_bytes.trailing_zeros(),
            replacement,
            tags: vec![INVALID; sets * ways],
            stamp: vec![0; sets * ways],
            valid: vec![0; sets],
            dirty: vec![0; sets],
            locked: vec![0; sets],
            set_bits: sets.trailing_zeros(),
            clock: 0,
            rng: seed | 1,
        }
    }

    pub fn sets(&self) -> usize {
        self.sets
    }

    pub fn ways(&self) -> usize {
        self.ways
    }

    pub fn line_bytes(&self) -> u64 {
        1 << self.line_shift
    }

    /// Mask of every way.
    pub fn all_ways(&self) -> u32 {
        if self.ways == 32 {
            u32::MAX
        } else {
            (1u32 << self.ways) - 1
        }
    }

    /// (set, tag) of an address.
    #[inline]
    fn split(&self, addr: u64) -> (usize, u32) {
        let line = addr >> self.line_shift;
        ((line as usize) & (self.sets - 1), (line >> self.set_bits) as u32)
    }

    #[inline]
    fn find(&self, set: usize, tag: u32) -> Option<usize> {
        let base = set * self.ways;
        let row = &self.tags[base..base + self.ways];
        let w = row.iter().position(|&t| t == tag)?;
        (self.valid[set] & (1 << w) != 0).then_some(w)
    }

    #[inline]
    fn touch(&mut self, i: usize) {
        self.clock = self.clock.wrapping_add(1);
        if self.clock == 0 {
            // Wrapped: restart every stamp (LRU order within sets is lost once per 4 G references).
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.clock = 1;
        }
        self.stamp[i] = self.clock;
    }

    /// Read or write `addr`; a miss allocates in one of `way_mask`'s ways
    /// (write-back, write-allocate).
    #[inline]
    pub fn access(&mut self, addr: u64, write: bool, way_mask: u32) -> Lookup {
        let (set, tag) = self.split(addr);
        let base = set * self.ways;
        if let Some(w) = self.find(set, tag) {
            if self.replacement == Replacement::Lru {
                self.touch(base + w);
            }
            self.dirty[set] |= (write as u32) << w;
            return Lookup::Hit;
        }
        let Some(w) = self.victim(set, way_mask) else { return Lookup::Bypass };
        let i = base + w;
        let bit = 1u32 << w;
        let writeback = (self.valid[set] & self.dirty[set] & bit != 0).then(|| ((self.tags[i] as u64) << self.set_bits | set as u64) << self.line_shift);
        self.tags[i] = tag;
        self.valid[set] |= bit;
        self.dirty[set] = (self.dirty[set] & !bit) | ((write as u32) << w);
        if self.replacement == Replacement::Lru {
            self.touch(i);
        }
        Lookup::Miss { writeback }
    }

    /// True if `addr` is cached (no state change).
    pub fn contains(&self, addr: u64) -> bool {
        let (set, tag) = self.split(addr);
        self.find(set, tag).is_some()
    }

    #[inline]
    fn victim(&mut self, set: usize, way_mask: u32) -> Option<usize> {
        let base = set * self.ways;
        let allowed = way_mask & self.all_ways() & !self.locked[set];
        if allowed == 0 {
            return None;
        }
        // An empty allowed way first, as any real cache fills invalid lines first.
        let free = allowed & !self.valid[set];
        if free != 0 {
            return Some(free.trailing_zeros() as usize);
        }
        Some(match self.replacement {
            Replacement::Lru => {
                let mut best = usize::MAX;
                let mut oldest = u32::MAX;
                let mut m = allowed;
                while m != 0 {
                    let w = m.trailing_zeros() as usize;
                    if self.stamp[base + w] < oldest {
                        oldest = self.stamp[base + w];
                        best = w;
                    }
                    m &= m - 1;
                }
                best
            }
            Replacement::PseudoRandom => {
                // xorshift64: cheap and seeded, standing for the PL310's LFSR.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                let k = (((self.rng >> 32) * allowed.count_ones() as u64) >> 32) as u32;
                let mut m = allowed;
                for _ in 0..k {
                    m &= m - 1;
                }
                m.trailing_zeros() as usize
            }
        })
    }

    /// Load `addr` into one of `way_mask`'s ways and lock it there (a CL
    /// buffer). False if no allowed way is free of locked lines.
    pub fn lock(&mut self, addr: u64, way_mask: u32) -> bool {
        let (set, tag) = self.split(addr);
        let base = set * self.ways;
        if let Some(w) = self.find(set, tag) {
            if way_mask & (1 << w) != 0 {
                self.locked[set] |= 1 << w;
                return true;
            }
            self.valid[set] &= !(1 << w);
        }
        match self.victim(set, way_mask) {
            Some(w) => {
                self.tags[base + w] = tag;
                self.valid[set] |= 1 << w;
                self.locked[set] |= 1 << w;
                self.dirty[set] &= !(1 << w);
                true
            }
            None => false,
        }
    }

    /// Lines currently held.
    pub fn occupancy(&self) -> usize {
        self.valid.iter().map(|v| v.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 1 KiB, 4 ways, 32 B lines: 8 sets; set = bits 5..7.
    fn small(r: Replacement) -> Cache {
        Cache::new(1024, 4, 32, r, 7)
    }

    #[test]
    fn hit_after_miss_and_set_index_from_address_bits() {
        let mut c = small(Replacement::Lru);
        assert_eq!(c.sets(), 8);
        assert_eq!(c.access(0x1000, false, 0b1111), Lookup::Miss { writeback: None });
        assert_eq!(c.access(0x1004, false, 0b1111), Lookup::Hit, "same 32 B line");
        // 0x1000 and 0x1100 are both set 0 (bits 5..7 zero); five such lines overflow 4 ways.
        for k in 1..4 {
            c.access(0x1000 + k * 0x100, false, 0b1111);
        }
        assert!(c.contains(0x1000));
        c.access(0x1400, false, 0b1111);
        assert!(!c.contains(0x1000), "LRU evicts the oldest of the set");
        assert!(c.contains(0x1100));
    }

    #[test]
    fn way_mask_limits_allocation_but_not_hits() {
        let mut c = small(Replacement::Lru);
        // Core A allocates only in way 0: two lines of set 0 keep evicting each other.
        assert!(matches!(c.access(0x0, false, 0b0001), Lookup::Miss { .. }));
        assert!(matches!(c.access(0x100, false, 0b0001), Lookup::Miss { .. }));
        assert!(matches!(c.access(0x0, false, 0b0001), Lookup::Miss { .. }));
        // Core B (ways 1..3) hits A's line: lockdown restricts allocation only.
        assert_eq!(c.access(0x0, false, 0b1110), Lookup::Hit);
        assert_eq!(c.access(0x0, false, 0), Lookup::Hit);
        // An empty mask cannot allocate.
        assert_eq!(c.access(0x200, false, 0), Lookup::Bypass);
    }

    #[test]
    fn dirty_lines_are_written_back_once_when_evicted() {
        let mut c = small(Replacement::Lru);
        c.access(0x0, true, 0b0001);
        assert_eq!(c.access(0x100, false, 0b0001), Lookup::Miss { writeback: Some(0x0) });
        assert_eq!(c.access(0x200, false, 0b0001), Lookup::Miss { writeback: None });
    }

    #[test]
    fn locked_lines_always_hit_and_take_their_way_out_of_replacement() {
        let mut c = small(Replacement::PseudoRandom);
        assert!(c.lock(0x0, 0b0001));
        for k in 1..200u64 {
            c.access(k * 0x100, false, 0b1111);
        }
        assert_eq!(c.access(0x0, false, 0b1111), Lookup::Hit);
        // Only way 0 allowed and it is locked: bypass.
        assert_eq!(c.access(0x4000, false, 0b0001), Lookup::Bypass);
    }

    #[test]
    fn random_replacement_keeps_a_fitting_set_and_misses_a_larger_one_by_its_excess() {
        // 8 sets × 4 ways = 32 lines. A random walk over 32 lines that map evenly
        // fits; over 64 lines about half miss (cache share / WSS).
        let mut c = small(Replacement::PseudoRandom);
        let lines: Vec<u64> = (0..32).map(|k| k * 32).collect();
        for _ in 0..4 {
            for &a in &lines {
                c.access(a, false, 0b1111);
            }
        }
        assert!(lines.iter().all(|&a| c.access(a, false, 0b1111) == Lookup::Hit));
        let mut c = small(Replacement::PseudoRandom);
        let mut x = 12345u64;
        let (mut misses, n) = (0, 200_000);
        for i in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let a = (x >> 33) % 64 * 32;
            if c.access(a, false, 0b1111) != Lookup::Hit && i > 1000 {
                misses += 1;
            }
        }
        let ratio = misses as f64 / (n - 1001) as f64;
        assert!((ratio - 0.5).abs() < 0.03, "miss ratio {ratio}");
    }
}
