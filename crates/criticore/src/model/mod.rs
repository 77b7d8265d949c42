//! The one task-system model every part of criticore reads.
//!
//! A [`TaskSystem`] is a platform (cores, LLC, DRAM, bus), a list of tasks with
//! MC² criticality levels and per-level provisioned execution times (PETs,
//! mc2-hardware-management §2), and an optional allocation of LLC ways, page
//! colours and DRAM banks to partitions. All times are integer nanoseconds.

pub mod parse;
pub mod units;
pub mod validate;

use serde::Serialize;
use std::fmt;

pub use parse::{parse_task_system, Format};

/// MC² criticality level, A (highest) to D (best effort), mc2-hardware-management §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Level {
    A,
    B,
    C,
    D,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::A, Level::B, Level::C, Level::D];
    /// The levels MC² analyzes (D has no guarantees).
    pub const ANALYZED: [Level; 3] = [Level::A, Level::B, Level::C];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "A" => Some(Level::A),
            "B" => Some(Level::B),
            "C" => Some(Level::C),
            "D" => Some(Level::D),
            _ => None,
        }
    }

    /// Levels A and B are partitioned onto cores; C is global; D is best effort.
    pub fn is_partitioned(self) -> bool {
        matches!(self, Level::A | Level::B)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Level::A => "A",
            Level::B => "B",
            Level::C => "C",
            Level::D => "D",
        };
        f.write_str(s)
    }
}

/// One provisioned execution time per level (None where not given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelPets(pub [Option<u64>; 4]);

impl LevelPets {
    pub fn get(&self, level: Level) -> Option<u64> {
        self.0[level.index()]
    }

    pub fn set(&mut self, level: Level, pet_ns: u64) {
        self.0[level.index()] = Some(pet_ns);
    }

    /// The PET of the most critical level given: what a task is provisioned
    /// with when MC² analysis is not used (mc2-hardware-management §4.3 (iii), (iv)).
    pub fn highest(&self) -> Option<u64> {
        self.0.iter().flatten().next().copied()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbiter {
    RoundRobin,
    Fcfs,
    Aging,
    FixedPriority,
    Tdma,
}

impl Arbiter {
    pub const NAMES: [(&'static str, Arbiter); 5] = [
        ("round-robin", Arbiter::RoundRobin),
        ("fcfs", Arbiter::Fcfs),
        ("aging", Arbiter::Aging),
        ("fixed-priority", Arbiter::FixedPriority),
        ("tdma", Arbiter::Tdma),
    ];
}

/// Shared last-level cache. Defaults are the i.MX6 PL310 (mc2-io-ipc-os-isolation §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Llc {
    pub size_bytes: u64,
    pub ways: u32,
    pub colors: u32,
    pub line_bytes: u64,
}

impl Default for Llc {
    fn default() -> Self {
        Llc { size_bytes: 1 << 20, ways: 16, colors: 16, line_bytes: 32 }
    }
}

/// DRAM: eight 128 MiB banks on the i.MX6 (mc2-io-ipc-os-isolation §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dram {
    pub banks: u32,
    pub bank_size_bytes: u64,
}

impl Default for Dram {
    fn default() -> Self {
        Dram { banks: 8, bank_size_bytes: 128 << 20 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Platform {
    pub cores: usize,
    pub llc: Llc,
    pub dram: Dram,
    pub bus_arbiter: Arbiter,
}

/// Memory demand of a task; read by the simulator, ignored by the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryProfile {
    pub wss_bytes: u64,
    pub accesses_per_ms: f64,
    pub read_fraction: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub name: String,
    pub level: Level,
    /// Core of a partitioned (Level-A/B) task; None for global levels.
    pub core: Option<usize>,
    pub period_ns: u64,
    pub deadline_ns: u64,
    /// PETs measured with hardware isolation (the normal case).
    pub pet_ns: LevelPets,
    /// PETs measured without hardware isolation, if known.
    pub pet_unmanaged_ns: Option<LevelPets>,
    pub memory: Option<MemoryProfile>,
}

impl Task {
    /// A task's utilization with a given PET.
    pub fn utilization(&self, pet_ns: u64) -> f64 {
        pet_ns as f64 / self.period_ns as f64
    }
}

/// A partition of the LLC or of DRAM, in MC²'s vocabulary (mc2-hardware-management Fig. 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Partition {
    /// Level-A/B partition of one core.
    Core(usize),
    /// Level C (shared with the OS unless the OS has its own).
    LevelC,
    /// OS partition (OS isolation, mc2-hardware-management §3).
    Os,
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Partition::Core(c) => write!(f, "core{c}"),
            Partition::LevelC => f.write_str("levelC"),
            Partition::Os => f.write_str("os"),
        }
    }
}

/// Allocation of shared hardware to partitions; `optimize` writes one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    pub llc_ways: Vec<(Partition, u32)>,
    pub llc_colors: Vec<(Partition, Vec<u32>)>,
    pub banks: Vec<(Partition, Vec<u32>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskSystem {
    pub platform: Platform,
    pub tasks: Vec<Task>,
    pub allocation: Option<Allocation>,
}

impl TaskSystem {
    /// Indices of the tasks of `level` on `core`.
    pub fn on_core(&self, core: usize, level: Level) -> impl Iterator<Item = usize> + '_ {
        self.tasks
            .iter()
            .enumerate()
            .filter(move |(_, t)| t.level == level && t.core == Some(core))
            .map(|(i, _)| i)
    }

    /// Indices of the tasks of `level`.
    pub fn at_level(&self, level: Level) -> impl Iterator<Item = usize> + '_ {
        self.tasks.iter().enumerate().filter(move |(_, t)| t.level == level).map(|(i, _)| i)
    }
}
