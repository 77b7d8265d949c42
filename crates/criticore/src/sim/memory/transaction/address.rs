//! Physical address decoding: which LLC colour, DRAM bank and row a physical
//! address falls in. Each colour or bank bit is one address bit, or several
//! XORed together as PALLOC's `use_mc_xor` supports
//! (docs/references.md, Runtime §4).

/// One output bit: the XOR of these address bits (one bit = a plain bit).
pub type BitFn = Vec<u32>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressMap {
    pub page_shift: u32,
    /// Colour = these bits, lowest first.
    pub colour_bits: Vec<BitFn>,
    /// Bank = these bits, lowest first.
    pub bank_bits: Vec<BitFn>,
    /// Row = the address above this bit, after removing plain bank bits.
    pub row_shift: u32,
    /// Bytes of physical memory.
    pub size_bytes: u64,
}

#[inline]
fn eval(addr: u64, bits: &[BitFn]) -> u32 {
    let mut v = 0;
    for (k, f) in bits.iter().enumerate() {
        let b = f.iter().fold(0u64, |acc, &bit| acc ^ (addr >> bit)) & 1;
        v |= (b as u32) << k;
    }
    v
}

impl AddressMap {
    /// The i.MX6 of MC² (docs/references.md, MC²: MC² kernel facts): colour bits 12–15
    /// (16 colours of a 1 MiB, 16-way, 32 B-line L2), 1 GiB in 8 banks.
    /// Bank interleaving off (mc2-hardware-management §3, as MC² runs it):
    /// banks are bits 27–29, each bank holds every colour. Interleaving on:
    /// successive pages go to different banks, so the bank bits overlap the
    /// colour bits (13–15 here) and each bank holds two colours, as §3 says.
    pub fn imx6(interleaved: bool) -> AddressMap {
        let bank_bits = if interleaved { vec![vec![13], vec![14], vec![15]] } else { vec![vec![27], vec![28], vec![29]] };
        // 8 KiB rows: a 64-bit DDR3 rank with 1 K columns per row.
        AddressMap { page_shift: 12, colour_bits: (12..16).map(|b| vec![b]).collect(), bank_bits, row_shift: 13, size_bytes: 1 << 30 }
    }

    pub fn colours(&self) -> u32 {
        1 << self.colour_bits.len()
    }

    pub fn banks(&self) -> u32 {
        1 << self.bank_bits.len()
    }

    #[inline]
    pub fn colour(&self, addr: u64) -> u32 {
        eval(addr, &self.colour_bits)
    }

    #[inline]
    pub fn bank(&self, addr: u64) -> u32 {
        eval(addr, &self.bank_bits)
    }

    /// Row within the bank: the address bits above `row_shift` with the plain
    /// bank bits squeezed out (XOR'd bank bits leave their inputs in place).
    #[inline]
    pub fn row(&self, addr: u64) -> u64 {
        let mut a = addr >> self.row_shift;
        let mut removed = 0;
        for f in &self.bank_bits {
            if let [b] = f[..] {
                if b >= self.row_shift {
                    let pos = b - self.row_shift - removed;
                    a = (a & ((1 << pos) - 1)) | ((a >> (pos + 1)) << pos);
                    removed += 1;
                }
            }
        }
        a
    }

    pub fn pages(&self) -> u64 {
        self.size_bytes >> self.page_shift
    }

    /// A decoder for the hot path: bank and row without walking the bit lists.
    pub fn decoder(&self) -> Decoder {
        let plain = self.bank_bits.len() <= 8 && self.bank_bits.iter().all(|f| f.len() == 1);
        let mut bits = [0u8; 8];
        if plain {
            for (k, f) in self.bank_bits.iter().enumerate() {
                bits[k] = f[0] as u8;
            }
        }
        Decoder { plain, n: self.bank_bits.len() as u8, bits, map: if plain { None } else { Some(Box::new(self.clone())) }, row_shift: self.row_shift }
    }
}

/// [`AddressMap::bank`] and [`AddressMap::row`] with plain bank bits kept in
/// a small array (XOR maps fall back to the map itself).
#[derive(Debug, Clone)]
pub struct Decoder {
    plain: bool,
    n: u8,
    bits: [u8; 8],
    map: Option<Box<AddressMap>>,
    row_shift: u32,
}

impl Decoder {
    #[inline]
    pub fn bank(&self, addr: u64) -> u32 {
        match &self.map {
            Some(m) => m.bank(addr),
            None => {
                let mut v = 0;
                for k in 0..self.n as usize {
                    v |= (((addr >> self.bits[k]) & 1) as u32) << k;
                }
                v
            }
        }
    }

    #[inline]
    pub fn row(&self, addr: u64) -> u64 {
        match &self.map {
            Some(m) => m.row(addr),
            None => {
                debug_assert!(self.plain);
                let mut a = addr >> self.row_shift;
                let mut removed = 0;
                for k in 0..self.n as usize {
                    let b = self.bits[k] as u32;
                    if b >= self.row_shift {
                        let pos = b - self.row_shift - removed;
                        a = (a & ((1 << pos) - 1)) | ((a >> (pos + 1)) << pos);
                        removed += 1;
                    }
                }
                a
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imx6_bits_without_interleaving() {
        let m = AddressMap::imx6(false);
        assert_eq!((m.colours(), m.banks()), (16, 8));
        // Page 5 of bank 3: 3 << 27 | 5 << 12.
        let a = (3u64 << 27) | (5 << 12) | 0x40;
        assert_eq!(m.colour(a), 5);
        assert_eq!(m.bank(a), 3);
        // The first 32 K pages are bank 0 (mc2-hardware-management §3).
        assert_eq!(m.bank((32 * 1024 - 1) << 12), 0);
        assert_eq!(m.bank((32 * 1024) << 12), 1);
        // Rows of 8 KiB inside the bank: bank bits squeezed out.
        assert_eq!(m.row(a), 2); // (5 << 12) >> 13
        assert_eq!(m.row((1 << 27) | (1 << 26)), 1 << 13);
    }

    #[test]
    fn imx6_interleaved_banks_hold_two_colours_each() {
        let m = AddressMap::imx6(true);
        let mut colours_of_bank = vec![std::collections::BTreeSet::new(); 8];
        for page in 0..4096u64 {
            let a = page << 12;
            colours_of_bank[m.bank(a) as usize].insert(m.colour(a));
        }
        for (b, c) in colours_of_bank.iter().enumerate() {
            assert_eq!(c.iter().copied().collect::<Vec<_>>(), vec![2 * b as u32, 2 * b as u32 + 1]);
        }
        // Successive page pairs go to different banks.
        assert_ne!(m.bank(0x2000), m.bank(0x4000));
    }

    #[test]
    fn the_decoder_agrees_with_the_map() {
        let xor = AddressMap { page_shift: 12, colour_bits: vec![], bank_bits: (0..4).map(|k| vec![13 + k, 17 + k]).collect(), row_shift: 18, size_bytes: 1 << 30 };
        for m in [AddressMap::imx6(false), AddressMap::imx6(true), xor] {
            let d = m.decoder();
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let a = (x >> 20) & ((1 << 30) - 1);
                assert_eq!((d.bank(a), d.row(a)), (m.bank(a), m.row(a)), "{a:#x}");
            }
        }
    }

    #[test]
    fn xor_bank_functions() {
        // Haswell E3-1230 style (docs/references.md, Runtime §4): bank k = bit (13+k) ^ bit (17+k).
        let m = AddressMap { page_shift: 12, colour_bits: vec![], bank_bits: (0..4).map(|k| vec![13 + k, 17 + k]).collect(), row_shift: 18, size_bytes: 1 << 30 };
        assert_eq!(m.bank(1 << 13), 1);
        assert_eq!(m.bank((1 << 13) | (1 << 17)), 0);
        assert_eq!(m.bank(1 << 20), 8);
        assert_eq!(m.row(3 << 18), 3, "XOR inputs stay in the row");
    }
}
