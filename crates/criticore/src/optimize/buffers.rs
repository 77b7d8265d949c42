//! Phase 2 of the optimizer (mc2-io-ipc-os-isolation §6.1): where each IPC and
//! I/O buffer goes under a scheme, once phase 1 has placed the tasks.
//!
//! - IPC, x = R: each Level-A/B buffer in a DRAM bank drawn uniformly from
//!   all banks, unmanaged. The MC² map (docs/references.md, MC²: OS banks 0–1, Level C 2–3,
//!   core p bank 4+p on the i.MX6) gives the last m banks to the cores and
//!   the rest to Level C and the OS. x = C: unmanaged in
//!   Level C. x = O: CE when both tasks share a core, else CL (phase 3 decides
//!   how many fit in the lock region; the rest fall back to SBP, §6.1).
//! - I/O, y = R: a uniformly drawn bank, as for IPC; C: Level C; A/B-ALL: the
//!   task's own bank; A/B-LP / A/B-SP: within each level, the ⌈k/2⌉ I/O tasks
//!   with the longest / shortest periods (ties: file order) in their own bank,
//!   the rest in Level C.
//! - Level-C buffers are always in Level C (Table 1).

use super::scheme::{IoPolicy, IpcPolicy, Scheme};
use crate::model::{IpcMethod, Level, Partition, TaskSystem};
use rand::Rng;

/// Decide every buffer of `system` (tasks already placed) under `scheme`.
pub fn place(system: &mut TaskSystem, scheme: Scheme, rng: &mut impl Rng) {
    let m = system.platform.cores;
    let banks = (system.platform.dram.banks as usize).max(m + 1);
    let random_partition = |rng: &mut dyn rand::RngCore| {
        let b = rng.random_range(0..banks);
        if b + m >= banks { Partition::Core(b + m - banks) } else { Partition::LevelC }
    };
    // IPC.
    for i in 0..system.tasks.len() {
        let Some(mut link) = system.tasks[i].ipc else { continue };
        let ab = matches!(system.tasks[i].level, Some(Level::A | Level::B));
        let same_core = system.tasks[i].core.is_some() && system.tasks[i].core == system.tasks[link.to].core;
        (link.method, link.buffer) = match (ab, scheme.ipc) {
            (false, _) => (None, Some(Partition::LevelC)),
            (true, IpcPolicy::Random) => (None, Some(random_partition(rng))),
            (true, IpcPolicy::LevelC) => (None, Some(Partition::LevelC)),
            (true, IpcPolicy::Optimized) if same_core => (Some(IpcMethod::Ce), None),
            (true, IpcPolicy::Optimized) => (Some(IpcMethod::Cl), None),
        };
        system.tasks[i].ipc = Some(link);
    }
    // I/O: which Level-A/B I/O tasks keep their buffer in their own bank.
    let mut own = vec![false; system.tasks.len()];
    match scheme.io {
        IoPolicy::All => own.fill(true),
        IoPolicy::LongPeriods | IoPolicy::ShortPeriods => {
            for level in [Level::A, Level::B] {
                let mut io_tasks: Vec<usize> = system.at_level(level).filter(|&i| system.tasks[i].io.is_some()).collect();
                // Stable sort: ties keep file order.
                io_tasks.sort_by_key(|&i| system.tasks[i].period_ns);
                if scheme.io == IoPolicy::LongPeriods {
                    io_tasks.sort_by_key(|&i| std::cmp::Reverse(system.tasks[i].period_ns));
                }
                for &i in io_tasks.iter().take(io_tasks.len().div_ceil(2)) {
                    own[i] = true;
                }
            }
        }
        IoPolicy::Random | IoPolicy::LevelC => {}
    }
    for i in 0..system.tasks.len() {
        let t = &system.tasks[i];
        let Some(mut io) = t.io else { continue };
        let ab = matches!(t.level, Some(Level::A | Level::B));
        io.buffer = Some(match (ab, scheme.io) {
            (false, _) => Partition::LevelC,
            (true, IoPolicy::Random) => random_partition(rng),
            (true, _) if own[i] => Partition::Core(t.core.expect("phase 1 placed every Level-A/B task")),
            (true, _) => Partition::LevelC,
        });
        system.tasks[i].io = Some(io);
    }
}
