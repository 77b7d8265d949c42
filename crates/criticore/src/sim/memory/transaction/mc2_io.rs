//! The measurements of mc2-io-ipc-os-isolation §5 on the transaction model,
//! from which `criticore calibrate` fits the study's assumed constants
//! (docs/study-model.md):
//!
//! - §5.1, Fig. 8: `load_msg()` / `do_msg_fill()` times per message size
//!   under SBP, CE and CL, with a background load in Level C;
//! - §5.3, Figs. 13–14: a Synthetic task (random stores over 256 KiB) beside
//!   three DMA streams whose buffers are in its bank or in the Level-C banks;
//! - §5.2, Obs. 3: a Level-C task beside another core's frame copy whose
//!   frame buffer is in the Level-C banks (unmanaged) or in that core's bank.
//!
//! Partitions follow Fig. 4 as in `mc2_ub.rs`: core p's Level-A/B area is
//! colours 4p..4p+3 × ways 8–15 in bank 4 + p; Level C has ways 0–6 and
//! colours 8–15 in the Level-C/OS banks; ways 6–7 hold locked (CL) buffers.

use super::dma::DmaStream;
use super::ipc::{Direction, MessageCopy};
use super::mc2_ub::allocator;
use super::page_alloc::{List, ListBanks, PageAllocator};
use super::system::{Machine, System};
use super::workload::MicroBenchmark;

const AB_MASK: u32 = 0xff00;
const C_MASK: u32 = 0x003f;
const LOCK_MASK: u32 = 0x00c0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Sbp,
    Ce,
    Cl,
}

impl Placement {
    pub const ALL: [Placement; 3] = [Placement::Sbp, Placement::Ce, Placement::Cl];
    pub fn name(self) -> &'static str {
        match self {
            Placement::Sbp => "sbp",
            Placement::Ce => "ce",
            Placement::Cl => "cl",
        }
    }
}

fn ab_colours(core: usize) -> Vec<u32> {
    (4 * core as u32..4 * core as u32 + 4).collect()
}

fn level_c_colours() -> Vec<u32> {
    (8..16).collect()
}

/// Three 1 MiB stress loops in Level C on cores 1–3 (the background load).
fn level_c_background(sys: &mut System, alloc: &mut PageAllocator, m: &Machine, seed: u64, compute_ps: u64) {
    let page = 1u64 << m.map.page_shift;
    for core in 1..m.cores {
        let pages = alloc.alloc(List::LevelC, &level_c_colours(), 1 << 20).expect("background pages");
        let st = MicroBenchmark::new(&pages, page, 1 << 20, m.line_bytes, compute_ps, None, seed + core as u64);
        sys.run_on(core, Box::new(st), C_MASK, C_MASK, false);
    }
}

/// §5.1: mean time of one `load_msg()` and one `do_msg_fill()` of `bytes`
/// (ns), over `messages` of each, Sender then Receiver on core 0.
pub fn ipc(machine: &Machine, bytes: u64, placement: Placement, messages: u64, seed: u64) -> (f64, f64) {
    let m = machine;
    let page = 1u64 << m.map.page_shift;
    let mut alloc = allocator(m);
    let mut sys = System::new(m.clone(), seed);
    level_c_background(&mut sys, &mut alloc, m, seed, 34_060);
    let span = bytes.next_multiple_of(page);
    let send_user = alloc.alloc(List::LevelAB(0), &ab_colours(0), span).unwrap();
    let recv_user = alloc.alloc(List::LevelAB(0), &ab_colours(0), span).unwrap();
    let all: Vec<u32> = (0..m.map.colours()).collect();
    let (kernel, uncached) = match placement {
        Placement::Sbp => (alloc.alloc(List::LevelC, &all, span).unwrap(), true),
        Placement::Ce => (alloc.alloc(List::LevelAB(0), &ab_colours(0), span).unwrap(), false),
        Placement::Cl => (alloc.alloc(List::LevelC, &all, span).unwrap(), false),
    };
    if placement == Placement::Cl {
        for &p in &kernel {
            for k in 0..page / m.line_bytes {
                assert!(sys.lock_line(p + k * m.line_bytes, LOCK_MASK), "lock way full");
            }
        }
    }
    // The copy loop moves a line per two references, a few cycles each.
    let compute_ps = 2_500;
    let time = |sys: &mut System, dir, user: &[u64]| {
        let start = sys.now_ps();
        let w = MessageCopy::new(user, &kernel, page, bytes, m.line_bytes, dir, uncached, compute_ps, messages);
        sys.run_on(0, Box::new(w), AB_MASK, AB_MASK, true);
        sys.run(u64::MAX);
        (sys.core_stats(0).finished_ps.unwrap() - start) as f64 / 1000.0 / messages as f64
    };
    let send = time(&mut sys, Direction::Send, &send_user);
    let recv = time(&mut sys, Direction::Receive, &recv_user);
    (send, recv)
}

/// Where the DMA buffers of §5.3 live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaBuffers {
    /// In Synthetic's own Level-A/B bank.
    LevelAB,
    /// In the Level-C/OS banks.
    LevelC,
}

/// §5.3: Synthetic's time per pass over its 256 KiB (ns) on core 0, with
/// an LLC region of `colours` (of core 0's four, then Level C's) × `ways` (of
/// ways 8–15), beside three DMA streams of `total_bytes_per_s` together
/// (none if 0). Fig. 13(a) is a small region, (b) a large one.
pub fn dma(machine: &Machine, colours: u32, ways: u32, total_bytes_per_s: f64, buffers: DmaBuffers, iterations: u64, seed: u64) -> f64 {
    let mut m = machine.clone();
    let devices = 3;
    m.cores += devices; // the DMA engines are bus masters of their own
    let page = 1u64 << m.map.page_shift;
    let mut alloc = allocator(machine);
    let mut sys = System::new(m.clone(), seed);
    let wss = 256 << 10;
    let region: Vec<u32> = (0..colours.clamp(1, 16)).collect();
    let pages = alloc.alloc(List::LevelAB(0), &region, wss).unwrap();
    let synthetic = MicroBenchmark::new(&pages, page, wss, m.line_bytes, 34_060, Some(iterations), seed).writing();
    let mask = AB_MASK & (0xffff << (16 - ways.clamp(1, 8)));
    sys.run_on(0, Box::new(synthetic), mask, mask, true);
    if total_bytes_per_s > 0.0 {
        let all: Vec<u32> = (0..m.map.colours()).collect();
        for d in 0..devices {
            // 400 KB per transfer (§5.3); each device cycles over its own buffer.
            let list = if buffers == DmaBuffers::LevelAB { List::LevelAB(0) } else { List::LevelC };
            let buf = alloc.alloc(list, &all, 400 << 10).unwrap();
            let stream = DmaStream::new(&buf, page, m.line_bytes, total_bytes_per_s / devices as f64);
            sys.run_on(machine.cores + d, Box::new(stream), 0, 0, false);
        }
    }
    sys.run(u64::MAX);
    let st = sys.core_stats(0);
    let (first, end) = (st.first_iteration_ps.unwrap(), st.finished_ps.unwrap());
    (end - first) as f64 / 1000.0 / (iterations - 1).max(1) as f64
}

/// §5.2, Obs. 3: a Level-C task ("Matrix": random reads over `wss`, in
/// `ways` of Level C) on core 1, and on core 3 a frame copy (read a 600 KiB
/// frame buffer line by line) whose buffer is in the Level-C banks
/// (`shared_bank`) or in core 3's bank. Returns Matrix's time per pass (ns).
pub fn cross_core(machine: &Machine, wss: u64, ways: u32, shared_bank: bool, copy: bool, iterations: u64, seed: u64) -> f64 {
    let m = machine;
    let page = 1u64 << m.map.page_shift;
    let mut alloc = allocator(m);
    let mut sys = System::new(m.clone(), seed);
    // Matrix's pages in one Level-C bank so that a frame buffer there shares it.
    let lists = ListBanks { level_ab: (0..m.cores).map(|p| vec![4 + p as u32]).collect(), level_c: vec![2] };
    let mut c_alloc = PageAllocator::new(m.map.clone(), lists);
    let pages = c_alloc.alloc(List::LevelC, &level_c_colours(), wss).unwrap();
    let mask = C_MASK & ((1u32 << ways.clamp(1, 6)) - 1);
    let matrix = MicroBenchmark::new(&pages, page, wss, m.line_bytes, 34_060, Some(iterations), seed);
    sys.run_on(1, Box::new(matrix), mask, mask, true);
    if copy {
        let frame = 600 << 10;
        let fb = if shared_bank { c_alloc.alloc(List::LevelC, &level_c_colours(), frame).unwrap() } else { alloc.alloc(List::LevelAB(3), &ab_colours(3), frame).unwrap() };
        // The copy reads each line once per frame, in order, uncached (a frame buffer written by the camera's DMA).
        let reader = MicroBenchmark::new(&fb, page, frame, m.line_bytes, 5_000, None, seed + 3).sequential().uncached();
        sys.run_on(3, Box::new(reader), AB_MASK, AB_MASK, false);
    }
    sys.run(u64::MAX);
    let st = sys.core_stats(1);
    (st.finished_ps.unwrap() - st.first_iteration_ps.unwrap()) as f64 / 1000.0 / (iterations - 1).max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imx6() -> Machine {
        Machine::imx6(false)
    }

    #[test]
    fn obs1_cl_is_fastest_sbp_slowest() {
        // mc2-io Obs. 1: sending and receiving are fastest under CL, slowest under SBP.
        for bytes in [256, 4096] {
            let t: Vec<(f64, f64)> = Placement::ALL.iter().map(|&p| ipc(&imx6(), bytes, p, 20, 1)).collect();
            let (sbp, ce, cl) = (t[0], t[1], t[2]);
            assert!(cl.0 <= ce.0 && ce.0 < sbp.0, "send {bytes}: {t:?}");
            assert!(cl.1 <= ce.1 && ce.1 < sbp.1, "receive {bytes}: {t:?}");
            // Uncached copies are several times slower than cached ones (the paper: CE 9–41% of SBP).
            assert!(ce.0 / sbp.0 < 0.5 && ce.1 / sbp.1 < 0.6, "{t:?}");
        }
    }

    #[test]
    fn obs4_to_6_dma_slows_synthetic_more_when_its_buffers_share_its_bank() {
        let m = imx6();
        let idle = dma(&m, 4, 2, 0.0, DmaBuffers::LevelC, 4, 1);
        let c = dma(&m, 4, 2, 400e6, DmaBuffers::LevelC, 4, 1);
        let ab = dma(&m, 4, 2, 400e6, DmaBuffers::LevelAB, 4, 1);
        // Obs. 4: DMA slows it in both placements; Obs. 5: more in its own bank.
        assert!(c > idle && ab > c * 1.02, "idle {idle} C {c} A/B {ab}");
        // Obs. 6 (Fig. 13b): a large LLC region hides most of it.
        let big_idle = dma(&m, 8, 8, 0.0, DmaBuffers::LevelAB, 4, 1);
        let big_ab = dma(&m, 8, 8, 400e6, DmaBuffers::LevelAB, 4, 1);
        assert!(big_ab / big_idle < ab / idle, "small {} large {}", ab / idle, big_ab / big_idle);
    }

    #[test]
    fn obs3_a_frame_copy_in_a_level_c_bank_slows_a_level_c_task_a_little() {
        // mc2-io Obs. 3: +6% MOET. The model gives 0.3–2% (docs/calibration.md):
        // the copy's row hits and the task's conflicts interleave on the bank.
        let m = imx6();
        for (wss, ways) in [(512 << 10, 2), (64 << 10, 1)] {
            let apart = cross_core(&m, wss, ways, false, true, 4, 1);
            let shared = cross_core(&m, wss, ways, true, true, 4, 1);
            assert!(shared > apart * 1.002 && shared < apart * 1.06, "{wss} B, {ways} ways: apart {apart} shared {shared}");
        }
    }
}
