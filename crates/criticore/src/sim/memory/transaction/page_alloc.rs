//! Physical page frames and the MC² page allocator
//! (mc2-io-ipc-os-isolation §4.1, Figs. 6–7; mc2-hardware-management §3).
//!
//! Free frames are sorted into pools by (colour, bank), as MC² and PALLOC do.
//! Above the pools sit the m + 1 free lists of Fig. 7: one per CPU for its
//! Level-A/B bank(s), one for Level C and the OS. An allocation takes from the
//! Level-C list unless the request carries the criticality flag (the GFP bit
//! of §4.1), in which case it takes from the requesting CPU's Level-A/B list.
//! A task's pages are spread round-robin over the colours and banks it may
//! use, as MC² does to keep the benefit of bank interleaving (mc2-hw §3).
//! Objects smaller than a page come from per-CPU, per-list small-object pools
//! (the slab caches of a real kernel), so kernel data lands in the right banks.

use super::address::AddressMap;

/// Which of the m + 1 lists a request draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum List {
    /// CPU p's Level-A/B list (the GFP flag set by a task on CPU p).
    LevelAB(usize),
    /// Level C and the OS: the default.
    LevelC,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("CPU {cpu}'s Level-A/B banks {banks:?} have no free page in colours {colours:?}")]
    LevelABFull { cpu: usize, banks: Vec<u32>, colours: Vec<u32> },
    #[error("the Level-C/OS banks {banks:?} have no free page in colours {colours:?}")]
    LevelCFull { banks: Vec<u32>, colours: Vec<u32> },
    #[error("no colour allowed for this request")]
    NoColour,
}

/// Banks of each list, and the colours a list's pages may have by default.
#[derive(Debug, Clone)]
pub struct ListBanks {
    /// Level-A/B banks of each CPU.
    pub level_ab: Vec<Vec<u32>>,
    /// Level-C / OS banks.
    pub level_c: Vec<u32>,
}

impl ListBanks {
    /// The canonical MC² allocation (mc2-hardware-management Fig. 4; docs/references.md, MC²: MC² kernel facts):
    /// CPU p's A/B bank 4 + p, Level C banks 2–3, the OS banks 0–1 (the OS
    /// draws from the Level-C list here, whose banks are 0–3).
    pub fn mc2_canonical(cpus: usize) -> ListBanks {
        ListBanks { level_ab: (0..cpus).map(|p| vec![4 + p as u32]).collect(), level_c: vec![0, 1, 2, 3] }
    }
}

#[derive(Debug, Clone)]
pub struct PageAllocator {
    map: AddressMap,
    /// Free page numbers per pool, index colour * banks + bank; popped from the end.
    pools: Vec<Vec<u64>>,
    lists: ListBanks,
    /// Round-robin cursor per list over its (bank, colour) pools.
    cursor: std::collections::HashMap<(List, u64), usize>,
    /// Small-object pools: (list, cpu) -> (current page address, bytes used).
    slabs: std::collections::HashMap<(List, usize), (u64, u64)>,
    /// Owner of every page handed out (which list), for checks.
    owner: std::collections::HashMap<u64, List>,
}

impl PageAllocator {
    /// Every frame of the banks named in `lists` sorted into its pool.
    /// Frames of banks no list names stay out (e.g. kernel text).
    pub fn new(map: AddressMap, lists: ListBanks) -> PageAllocator {
        let (colours, banks) = (map.colours() as usize, map.banks() as usize);
        let mut used = vec![false; banks];
        for b in lists.level_ab.iter().flatten().chain(&lists.level_c) {
            used[*b as usize] = true;
        }
        let mut pools = vec![Vec::new(); colours * banks];
        // Highest frame first so that pops hand out low addresses first.
        for page in (0..map.pages()).rev() {
            let a = page << map.page_shift;
            let b = map.bank(a) as usize;
            if used[b] {
                pools[map.colour(a) as usize * banks + b].push(page);
            }
        }
        PageAllocator { map, pools, lists, cursor: Default::default(), slabs: Default::default(), owner: Default::default() }
    }

    pub fn map(&self) -> &AddressMap {
        &self.map
    }

    /// Banks a list draws from.
    pub fn banks_of(&self, list: List) -> &[u32] {
        match list {
            List::LevelAB(p) => &self.lists.level_ab[p],
            List::LevelC => &self.lists.level_c,
        }
    }

    /// The list a request goes to: Level C unless the criticality flag (GFP bit) is set.
    pub fn list_for(cpu: usize, gfp_level_ab: bool) -> List {
        if gfp_level_ab {
            List::LevelAB(cpu)
        } else {
            List::LevelC
        }
    }

    pub fn free_pages(&self, list: List, colours: &[u32]) -> usize {
        let banks = self.map.banks() as usize;
        self.banks_of(list).iter().flat_map(|&b| colours.iter().map(move |&c| c as usize * banks + b as usize)).map(|i| self.pools[i].len()).sum()
    }

    /// One page from `list` in one of `colours`, round-robin over the list's
    /// (bank, colour) pools. Returns the page's physical address.
    pub fn alloc_page(&mut self, list: List, colours: &[u32]) -> Result<u64, AllocError> {
        if colours.is_empty() {
            return Err(AllocError::NoColour);
        }
        let nb = self.map.banks() as usize;
        let banks: Vec<u32> = self.banks_of(list).to_vec();
        let key = (list, colours.iter().fold(0u64, |m, &c| m | 1 << c));
        let n = banks.len() * colours.len();
        let start = *self.cursor.get(&key).unwrap_or(&0);
        for k in 0..n {
            let i = (start + k) % n;
            // Banks vary fastest, so consecutive pages alternate banks.
            let (b, c) = (banks[i % banks.len()], colours[(i / banks.len()) % colours.len()]);
            if let Some(page) = self.pools[c as usize * nb + b as usize].pop() {
                self.cursor.insert(key, i + 1);
                self.owner.insert(page, list);
                return Ok(page << self.map.page_shift);
            }
        }
        Err(match list {
            List::LevelAB(cpu) => AllocError::LevelABFull { cpu, banks, colours: colours.to_vec() },
            List::LevelC => AllocError::LevelCFull { banks, colours: colours.to_vec() },
        })
    }

    /// `bytes` of pages (rounded up), as a list of page addresses.
    pub fn alloc(&mut self, list: List, colours: &[u32], bytes: u64) -> Result<Vec<u64>, AllocError> {
        let page = 1u64 << self.map.page_shift;
        (0..bytes.div_ceil(page)).map(|_| self.alloc_page(list, colours)).collect()
    }

    /// An object of `bytes` (≤ a page) from CPU `cpu`'s small-object pool of `list`.
    pub fn alloc_object(&mut self, list: List, cpu: usize, colours: &[u32], bytes: u64) -> Result<u64, AllocError> {
        let page = 1u64 << self.map.page_shift;
        let bytes = bytes.clamp(1, page).next_multiple_of(8);
        let slot = self.slabs.get(&(list, cpu)).copied();
        let (base, used) = match slot {
            Some((base, used)) if used + bytes <= page => (base, used),
            _ => (self.alloc_page(list, colours)?, 0),
        };
        self.slabs.insert((list, cpu), (base, used + bytes));
        Ok(base + used)
    }

    /// Return a page to its pool.
    pub fn free_page(&mut self, addr: u64) {
        let page = addr >> self.map.page_shift;
        if self.owner.remove(&page).is_some() {
            let nb = self.map.banks() as usize;
            self.pools[self.map.colour(addr) as usize * nb + self.map.bank(addr) as usize].push(page);
        }
    }

    /// Which list a handed-out page came from.
    pub fn owner(&self, addr: u64) -> Option<List> {
        self.owner.get(&(addr >> self.map.page_shift)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_map() -> AddressMap {
        // 64 MiB, 8 banks of 8 MiB (bits 23..25), 16 colours (bits 12..15).
        AddressMap { page_shift: 12, colour_bits: (12..16).map(|b| vec![b]).collect(), bank_bits: vec![vec![23], vec![24], vec![25]], row_shift: 13, size_bytes: 64 << 20 }
    }

    #[test]
    fn lists_never_hand_a_cpus_ab_page_to_another_cpu_and_level_c_is_the_default() {
        let mut a = PageAllocator::new(small_map(), ListBanks::mc2_canonical(4));
        let all: Vec<u32> = (0..16).collect();
        for cpu in 0..4 {
            for _ in 0..300 {
                let p = a.alloc_page(PageAllocator::list_for(cpu, true), &all).unwrap();
                assert_eq!(a.map().bank(p), 4 + cpu as u32, "CPU {cpu}'s A/B page from its own bank");
                assert_eq!(a.owner(p), Some(List::LevelAB(cpu)));
            }
            // Without the flag: Level C, whatever the CPU.
            let p = a.alloc_page(PageAllocator::list_for(cpu, false), &all).unwrap();
            assert!(a.map().bank(p) < 4);
        }
    }

    #[test]
    fn colour_and_bank_of_every_page_follow_the_address_bits() {
        let mut a = PageAllocator::new(small_map(), ListBanks::mc2_canonical(4));
        let colours = [2, 3];
        let pages = a.alloc(List::LevelAB(1), &colours, 100 * 4096).unwrap();
        assert_eq!(pages.len(), 100);
        for &p in &pages {
            assert_eq!(p & 0xfff, 0);
            let colour = ((p >> 12) & 0xf) as u32;
            let bank = ((p >> 23) & 0x7) as u32;
            assert_eq!((a.map().colour(p), a.map().bank(p)), (colour, bank));
            assert!(colours.contains(&colour) && bank == 5);
        }
        // Spread evenly over the allowed colours.
        let c2 = pages.iter().filter(|&&p| a.map().colour(p) == 2).count();
        assert_eq!(c2, 50);
        let mut seen = pages.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 100, "no page handed out twice");
    }

    #[test]
    fn level_c_pages_alternate_over_its_banks() {
        let mut a = PageAllocator::new(small_map(), ListBanks { level_ab: vec![vec![4]], level_c: vec![2, 3] });
        let p = a.alloc(List::LevelC, &[8], 4 * 4096).unwrap();
        let banks: Vec<u32> = p.iter().map(|&x| a.map().bank(x)).collect();
        assert_eq!(banks, vec![2, 3, 2, 3]);
    }

    #[test]
    fn a_full_ab_bank_is_a_clean_error() {
        let mut a = PageAllocator::new(small_map(), ListBanks::mc2_canonical(2));
        // Bank 8 MiB, one colour = 8 MiB / 16 = 128 pages.
        assert_eq!(a.free_pages(List::LevelAB(0), &[0]), 128);
        a.alloc(List::LevelAB(0), &[0], 128 * 4096).unwrap();
        let e = a.alloc_page(List::LevelAB(0), &[0]).unwrap_err();
        assert_eq!(e, AllocError::LevelABFull { cpu: 0, banks: vec![4], colours: vec![0] });
        assert!(e.to_string().contains("CPU 0's Level-A/B banks [4]"));
        // The other CPU and Level C are unaffected.
        assert!(a.alloc_page(List::LevelAB(1), &[0]).is_ok());
        assert!(a.alloc_page(List::LevelC, &[0]).is_ok());
        // A freed page can be taken again.
        let p = a.alloc_page(List::LevelAB(1), &[0]).unwrap();
        a.free_page(p);
        assert_eq!(a.alloc_page(List::LevelAB(1), &[0]).unwrap(), p);
    }

    #[test]
    fn small_objects_share_pages_of_their_list() {
        let mut a = PageAllocator::new(small_map(), ListBanks::mc2_canonical(2));
        let o1 = a.alloc_object(List::LevelAB(1), 1, &[0, 1], 100).unwrap();
        let o2 = a.alloc_object(List::LevelAB(1), 1, &[0, 1], 100).unwrap();
        assert_eq!(o2, o1 + 104);
        assert_eq!(a.map().bank(o1), 5);
        let k = a.alloc_object(List::LevelC, 1, &[0, 1], 100).unwrap();
        assert!(a.map().bank(k) < 4);
        // A page fills up, then a new one is taken.
        let mut last = o2;
        for _ in 0..40 {
            last = a.alloc_object(List::LevelAB(1), 1, &[0, 1], 100).unwrap();
        }
        assert_ne!(last >> 12, o1 >> 12);
    }
}
