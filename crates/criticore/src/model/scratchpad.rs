//! Scratchpad platforms (issue 27, Build 3; docs/format.md
//! `[[platform.memory]]`, `[[label]]`): memories local to a core or global,
//! reached through a crossbar with one arbiter per target memory, and the
//! labels placed in them that runnables read and write. Only what the file
//! says; the costs it implies are `interference::crossbar`'s.

use super::Arbiter;
use serde::Serialize;

/// A memory behind the crossbar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Memory {
    pub name: String,
    /// The core it is local to (its LRAM); None: global.
    pub core: Option<usize>,
    pub size_bytes: u64,
    /// Cycles one access takes from each core (the path's latency), during
    /// which it holds the memory's port.
    pub latency_cycles: Vec<u64>,
    /// Bytes one access moves: a label of s bytes takes ⌈s / width⌉ accesses.
    pub width_bytes: u64,
    /// Who gets the port next among waiting cores.
    pub arbiter: Arbiter,
}

/// A label (a named variable) and the memory it is placed in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    pub name: String,
    pub size_bytes: u64,
    /// Index into `Platform::memories`.
    pub memory: usize,
}

/// A runnable's accesses to one label per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LabelAccess {
    /// Index into `TaskSystem::labels`.
    pub label: usize,
    pub reads: u64,
    pub writes: u64,
}

impl Memory {
    /// Accesses one access of a label of `size_bytes` makes.
    pub fn accesses_of(&self, size_bytes: u64) -> u64 {
        size_bytes.div_ceil(self.width_bytes).max(1)
    }
}

/// The arbiters a memory's port may have (the crossbar's).
pub const PORT_ARBITERS: [Arbiter; 3] = [Arbiter::RoundRobin, Arbiter::Fcfs, Arbiter::FixedPriority];
