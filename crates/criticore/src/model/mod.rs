//! The one task-system model every part of criticore reads.
//!
//! A [`TaskSystem`] is a platform (cores, LLC, DRAM, bus), a list of tasks with
//! MC² criticality levels and per-level provisioned execution times (PETs,
//! mc2-hardware-management §2), and an optional allocation of LLC ways, page
//! colours and DRAM banks to partitions. All times are integer nanoseconds.

pub mod need;
pub mod overhead;
pub mod parse;
pub mod scratchpad;
pub mod units;
pub mod validate;
pub mod write;

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
    /// MCTI criticality of an MC² level (mcti-task-isolation §4: 0 = not critical).
    pub fn criticality(self) -> u32 {
        3 - self as u32
    }

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
/// Latencies are the fluid memory model's (docs/calibration.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dram {
    pub banks: u32,
    pub bank_size_bytes: u64,
    /// Time a core stalls on a read miss with no contention.
    pub read_latency_ns: u64,
    /// Extra latency of a row-buffer conflict with another core on the same bank.
    pub row_conflict_ns: u64,
}

impl Default for Dram {
    fn default() -> Self {
        Dram { banks: 8, bank_size_bytes: 128 << 20, read_latency_ns: 120, row_conflict_ns: 30 }
    }
}

/// The memory bus / interconnect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bus {
    pub arbiter: Arbiter,
    /// Peak transfer rate; one request moves one LLC line. Default: the SABRE
    /// Lite's 2,020 MB/s write-only peak (blin-bandwidth-monitor §2.3).
    pub bandwidth_bytes_per_s: u64,
}

impl Default for Bus {
    fn default() -> Self {
        Bus { arbiter: Arbiter::RoundRobin, bandwidth_bytes_per_s: 2_020_000_000 }
    }
}

/// The study cost model's interference constants (docs/study-model.md): how
/// much IPC, DMA and other cores' buffers cost on this board. The defaults are
/// the assumed values; `criticore calibrate` fits them to the transaction
/// model (preset `imx6-transaction`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StudyCosts {
    /// SBP time of one message: fixed part and per byte (mc2-io Fig. 8).
    pub sbp_fixed_ns: f64,
    pub sbp_ns_per_byte: f64,
    /// DMA amplitudes a_bus, a_bank and their saturation scale D₀ (Figs. 13–14).
    pub dma_bus: f64,
    pub dma_bank: f64,
    pub dma_scale_bytes_per_s: f64,
    /// Cross-core bank interference on misses (Obs. 3: Matrix +6%).
    pub cpu_sourced_bank: f64,
}

// The constants are finite numbers, so equality is an equivalence.
impl Eq for StudyCosts {}

impl StudyCosts {
    /// The assumed values (docs/study-model.md) and Obs. 3's 6%.
    pub const ASSUMED: StudyCosts = StudyCosts { sbp_fixed_ns: 1_000.0, sbp_ns_per_byte: 4.0, dma_bus: 0.15, dma_bank: 0.30, dma_scale_bytes_per_s: 100e6, cpu_sourced_bank: 0.06 };
}

impl Default for StudyCosts {
    fn default() -> Self {
        StudyCosts::ASSUMED
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Platform {
    pub cores: usize,
    pub llc: Llc,
    pub dram: Dram,
    pub bus: Bus,
    /// The cores' clock (`clock`), for costs given in cycles.
    pub clock_hz: Option<u64>,
    /// Instructions a core retires per cycle (`instructions_per_cycle`,
    /// exact: numerator, denominator), for runnables' needs in instructions.
    pub instructions_per_cycle: Option<(u64, u64)>,
    /// Scratchpad memories behind a crossbar (`[[platform.memory]]`); empty: the LLC/DRAM platform.
    pub memories: Vec<scratchpad::Memory>,
    /// Constants of the study's cost model (not read from files; set by the preset).
    #[serde(skip)]
    pub costs: StudyCosts,
}

impl Platform {
    /// A named platform's defaults (the file may override any field).
    /// `imx6` (the default): NXP i.MX6 / SABRE Lite of MC² and the bandwidth monitor;
    /// `zcu102`: Xilinx ZCU102 of MCTI (docs/calibration.md).
    pub fn preset(name: &str) -> Option<Platform> {
        match name {
            "imx6" | "sabre-lite" => Some(Platform { cores: 4, llc: Llc::default(), dram: Dram::default(), bus: Bus::default(), clock_hz: None, instructions_per_cycle: None, memories: Vec::new(), costs: StudyCosts::ASSUMED }),
            "zcu102" => Some(Platform {
                cores: 4,
                llc: Llc { size_bytes: 1 << 20, ways: 16, colors: 16, line_bytes: 64 },
                dram: Dram { banks: 16, bank_size_bytes: 256 << 20, read_latency_ns: 110, row_conflict_ns: 28 },
                bus: Bus { arbiter: Arbiter::RoundRobin, bandwidth_bytes_per_s: 4_000_000_000 },
                clock_hz: None,
                instructions_per_cycle: None,
                memories: Vec::new(),
                costs: StudyCosts::ASSUMED,
            }),
            // The i.MX6 with the fluid model's DRAM constants fitted to the
            // transaction model by `criticore calibrate` (docs/calibration.md).
            "imx6-transaction" => {
                let (read_latency_ns, row_conflict_ns, costs) = fitted(IMX6_TRANSACTION);
                Some(Platform { dram: Dram { read_latency_ns, row_conflict_ns, ..Dram::default() }, costs, ..Platform::preset("imx6")? })
            }
            _ => None,
        }
    }

    pub const PRESETS: [&'static str; 4] = ["imx6", "sabre-lite", "zcu102", "imx6-transaction"];

    /// Bus time to move one LLC line, in ns.
    pub fn line_service_ns(&self) -> f64 {
        self.llc.line_bytes as f64 * 1e9 / self.bus.bandwidth_bytes_per_s as f64
    }
}

/// The parameter set `criticore calibrate` writes (params/imx6-transaction.toml).
pub const IMX6_TRANSACTION: &str = include_str!("params/imx6-transaction.toml");

/// `[platform.dram] read_latency` and `row_conflict` (whole ns) and the
/// `[study]` constants of a parameter set (missing ones: the assumed values).
fn fitted(text: &str) -> (u64, u64, StudyCosts) {
    let v: toml::Value = text.parse().expect("built-in parameter set is TOML");
    let get = |k: &str| {
        let s = v["platform"]["dram"][k].as_str().expect("built-in parameter set names its DRAM constants");
        s.trim_end_matches("ns").parse::<u64>().expect("whole ns")
    };
    let a = StudyCosts::ASSUMED;
    let study = |k: &str, d: f64| v.get("study").and_then(|s| s.get(k)).and_then(|x| x.as_float().or(x.as_integer().map(|i| i as f64))).unwrap_or(d);
    let costs = StudyCosts {
        sbp_fixed_ns: study("sbp_fixed_ns", a.sbp_fixed_ns),
        sbp_ns_per_byte: study("sbp_ns_per_byte", a.sbp_ns_per_byte),
        dma_bus: study("dma_bus", a.dma_bus),
        dma_bank: study("dma_bank", a.dma_bank),
        dma_scale_bytes_per_s: study("dma_scale_bytes_per_s", a.dma_scale_bytes_per_s),
        cpu_sourced_bank: study("cpu_sourced_bank", a.cpu_sourced_bank),
    };
    (get("read_latency"), get("row_conflict"), costs)
}

/// How a task walks its working set (sets the LLC miss curve, docs/memory-model.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessPattern {
    /// Uniform random over the working set: misses fall linearly as the cache grows.
    Random,
    /// Cyclic sweep: with LRU, everything misses until the whole set fits.
    Stream,
}

/// One phase of constant memory behaviour (blin-bandwidth-monitor §3; the
/// three phases of `mser`, mcti-task-isolation §7.1.2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryPhase {
    /// Length in work (isolated execution time); None = the rest of the job.
    pub work_ns: Option<u64>,
    /// LLC references per millisecond of work.
    pub accesses_per_ms: f64,
    pub read_fraction: f64,
}

/// How an IPC buffer is placed (mc2-io-ipc-os-isolation §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IpcMethod {
    /// Selective LLC bypass: uncacheable, in the Level-C banks.
    Sbp,
    /// Concurrency elimination: in the core's own Level-A/B partition and bank.
    Ce,
    /// LLC locking: locked in the LLC, never misses.
    Cl,
}

impl IpcMethod {
    const NAMES: [(&'static str, IpcMethod); 3] = [("sbp", IpcMethod::Sbp), ("ce", IpcMethod::Ce), ("cl", IpcMethod::Cl)];

    /// The name used in task-system files.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, m)| *m == self).map(|(n, _)| *n).expect("every method is named")
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }
}

/// A task's accesses to an IPC buffer it shares with another task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IpcProfile {
    pub bytes: u64,
    /// Buffer references per millisecond of work.
    pub accesses_per_ms: f64,
    pub method: IpcMethod,
}

/// System calls a task makes (mc2-hardware-management §4.2: a dummy call
/// that allocates and reads 16 pages).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallProfile {
    /// Calls per millisecond of work.
    pub per_ms: f64,
    /// Kernel memory one call touches.
    pub footprint_bytes: u64,
}

/// Memory demand of a task; read by the simulator, ignored by the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryProfile {
    pub wss_bytes: u64,
    pub pattern: AccessPattern,
    /// At least one; the last one lasts to the end of the job.
    pub phases: Vec<MemoryPhase>,
    pub ipc: Option<IpcProfile>,
    pub syscalls: Option<SyscallProfile>,
}

impl MemoryProfile {
    /// Cumulative work at which each phase ends (u64::MAX for the last).
    pub fn phase_ends(&self) -> Vec<u64> {
        let mut end = 0u64;
        self.phases
            .iter()
            .map(|p| {
                end = p.work_ns.map_or(u64::MAX, |w| end.saturating_add(w));
                end
            })
            .collect()
    }
}

/// A DMA device: periodic transfers into a buffer (mc2-io-ipc-os-isolation §3.2, §5.3).
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub name: String,
    pub period_ns: u64,
    /// Bytes moved per transfer.
    pub bytes: u64,
    /// Transfer rate while a transfer is under way.
    pub bandwidth_bytes_per_s: u64,
    /// Partition whose banks hold the buffer (§4.3: Level C by default, or a core's A/B bank).
    pub buffer: Partition,
    /// Interrupt-handler time per transfer, on CPU 0 (§3.2: all interrupts go to one CPU).
    pub irq_ns: u64,
}

/// How a task's execution cost responds to its LLC ways, for the optimizer and
/// the schedulability study (mc2-io-ipc-os-isolation §6.1; docs/study-model.md).
/// With it, the task's `pet` values are its idle-system PETs: full LLC, no
/// competing work, no I/O or IPC interference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostCurve {
    /// s = C(0 ways) / C(all ways), the slowdown without LLC (docs/references.md, MC²: {1.16, 2.95, 15.68}).
    pub llc_slowdown: f64,
    /// Working-set size in LLC ways: the cost reaches its floor here.
    pub wss_ways: u32,
    /// Largest cache-reload time as a fraction of the cost (Table 3 category 4).
    pub reload: f64,
}

/// A message queue the task sends into; the receiver shares the period
/// (mc2-io-ipc-os-isolation §6.1 "Modeling IPC and devices").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpcLink {
    /// Receiving task (index into `TaskSystem::tasks`).
    pub to: usize,
    /// Message size (Table 3 category 5).
    pub bytes: u64,
    /// Management technique (§4.2); None = unmanaged: a cacheable buffer in
    /// `buffer`'s banks (schemes R and C of §6.1).
    pub method: Option<IpcMethod>,
    /// Unmanaged buffer's partition; None with no method = Level-C banks (§4.1 default).
    pub buffer: Option<Partition>,
}

/// Kind of I/O device a task reads from (§6.1: the SSD and the USB camera).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoKind {
    /// DMA straight into the task's buffer (like the SSD with O_DIRECT).
    Direct,
    /// DMA into intermediate kernel buffers, then copied (like the USB camera).
    Copy,
}

impl IoKind {
    /// The name used in task-system files.
    pub fn name(self) -> &'static str {
        match self {
            IoKind::Direct => "direct",
            IoKind::Copy => "copy",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [IoKind::Direct, IoKind::Copy].into_iter().find(|k| k.name() == name)
    }
}

/// A task's I/O: one transfer per job, copied into the task by a system call
/// at the start of the job (§6.1 "Overhead accounting").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoBuffer {
    /// Average data rate of the task's device (bytes per job / period).
    pub bandwidth_bytes_per_s: u64,
    pub kind: IoKind,
    /// Partition whose banks hold the buffer (§4.3); None = not decided.
    pub buffer: Option<Partition>,
}

/// How a task's jobs arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Every period from the offset.
    Periodic,
    /// At least a period apart; the extra separation is drawn uniformly in
    /// [0, max_jitter_ns] from the simulation's seed.
    Sporadic { max_jitter_ns: u64 },
    /// No jobs: one endless run from the offset (a load, rt-app's "run
    /// forever"). Charged everywhere else as busy all the time: period = PET
    /// = deadline = [`background_stand_in_ns`] (docs/format.md).
    Background,
}

/// The period, PET and deadline a background task is charged with: 1 s, or
/// 1 ns past the longest period, deadline or server period of the file. Any
/// value is the same "always busy" (PET = period); past the others, a
/// background task without a priority is last in rate-monotonic order.
pub fn background_stand_in_ns(tasks: &[Task], servers: &[Server]) -> u64 {
    let longest = tasks
        .iter()
        .filter(|t| t.arrival != Arrival::Background)
        .flat_map(|t| [t.period_ns, t.deadline_ns])
        .chain(servers.iter().map(|s| s.period_ns))
        .max()
        .unwrap_or(0);
    longest.saturating_add(1).max(1_000_000_000)
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub name: String,
    /// MC² level; None for tasks outside MC² (e.g. MRS or MCTI task sets).
    pub level: Option<Level>,
    /// Criticality for MCTI (0 = not critical): the numeric level from the
    /// file, or A = 3, B = 2, C = 1, D = 0 for MC² tasks.
    pub criticality: u32,
    /// Core of a partitioned task (Level A/B, a server's task, or pinned); None for global.
    pub core: Option<usize>,
    pub period_ns: u64,
    pub deadline_ns: u64,
    /// Release of the first job.
    pub offset_ns: u64,
    pub arrival: Arrival,
    /// Fixed priority, higher is more important (Linux convention, MRS Table V);
    /// None means rate-monotonic order (shorter period first).
    pub priority: Option<i64>,
    /// The server (index into `TaskSystem::servers`) this task runs in.
    pub server: Option<usize>,
    /// PETs measured with hardware isolation (the normal case).
    pub pet_ns: LevelPets,
    /// PETs measured without hardware isolation, if known.
    pub pet_unmanaged_ns: Option<LevelPets>,
    pub memory: Option<MemoryProfile>,
    /// Study cost model (optimizer, study); None = PETs are final.
    pub cost: Option<CostCurve>,
    /// Message queue this task sends into.
    pub ipc: Option<IpcLink>,
    pub io: Option<IoBuffer>,
    /// The program that does this task's work on a real machine
    /// (`criticore regulate`); None = not run by the runtime.
    pub command: Option<Vec<String>>,
    /// Named steps of every job, run in this order (Amalthea's runnables);
    /// their PETs sum to the task's. Empty: the job is one piece of work.
    pub runnables: Vec<Runnable>,
    /// Where a job may be preempted (OSEK's preemptive, cooperative and
    /// non-preemptive tasks).
    pub preemption: Preemption,
    /// OSEK's multiple-activation limit: at most this many jobs of the task
    /// active (released, unfinished) at once; a release beyond it is lost.
    /// None: no limit.
    pub activation_limit: Option<u32>,
    /// When its jobs read their inputs and write their outputs (the
    /// cause-effect chains' instants).
    pub communication: Communication,
    /// Implicit communication's copies (Amalthea's copy-in of the labels a
    /// job reads, at its start, and copy-out of those it writes, at its end):
    /// work at the job's start and end, part of its PET, each one
    /// non-preemptive region (docs/format.md `copy_in`).
    pub copy_in_ns: u64,
    pub copy_out_ns: u64,
}

/// A stretch of a job's work, in order: where it may be preempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Work at rate 1 (the last region lasts to the job's end).
    pub work_ns: u64,
    pub preemptible: bool,
    /// Which part of the job it is.
    pub part: Part,
}

/// The part of a job a region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    CopyIn,
    /// Runnable k (its time may be drawn).
    Runnable(usize),
    /// The work between the copies (its runnables, if any).
    Body,
    CopyOut,
    /// The whole job, copies and all (a non-preemptive task's).
    Job,
}

/// Where a task's jobs may be preempted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preemption {
    /// Anywhere (the default).
    #[default]
    Preemptive,
    /// Only between runnables (OSEK cooperative tasks): each runnable is a
    /// non-preemptive region; without runnables the whole job is one.
    Cooperative,
    /// Never: the whole job is one non-preemptive region.
    NonPreemptive,
}

impl Preemption {
    /// As the file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Preemption::Preemptive => "preemptive",
            Preemption::Cooperative => "cooperative",
            Preemption::NonPreemptive => "non-preemptive",
        }
    }
}

/// When a task's jobs read their inputs and write their outputs (Amalthea's
/// label access semantics; docs/format.md `communication`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Communication {
    /// Copy-in when the job starts, copy-out when it finishes (the default).
    #[default]
    Implicit,
    /// Each access where its runnable makes it: no copies (for chains, a
    /// job's reads and writes fall between its start and its finish, which
    /// the chains take as the instants).
    Explicit,
    /// Logical Execution Time: read at the release, written at the end of
    /// the period (or when the job finishes, if later: it was late).
    Let,
}

impl Communication {
    /// As the file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Communication::Implicit => "implicit",
            Communication::Explicit => "explicit",
            Communication::Let => "let",
        }
    }

    /// When a job released at `release_ns` that started at `start_ns` reads its inputs.
    pub fn read_ns(self, release_ns: u64, start_ns: u64) -> u64 {
        match self {
            Communication::Implicit | Communication::Explicit => start_ns,
            Communication::Let => release_ns,
        }
    }

    /// When a job of period `period_ns` released at `release_ns` that
    /// finished at `finish_ns` writes its outputs.
    pub fn write_ns(self, release_ns: u64, finish_ns: u64, period_ns: u64) -> u64 {
        match self {
            Communication::Implicit | Communication::Explicit => finish_ns,
            Communication::Let => finish_ns.max(release_ns + period_ns),
        }
    }
}

/// A cause-effect chain (docs/format.md `[[chain]]`): each task reads what
/// the task before it wrote; the first samples the input, the last writes
/// the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub name: String,
    /// Task indices, cause to effect.
    pub tasks: Vec<usize>,
}

/// A runnable: one named step of a task's jobs and its execution time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runnable {
    pub name: String,
    pub pet_ns: u64,
    /// Its time as a distribution up to the PET, for the simulator's draws
    /// (`need::Need`); None: always its PET.
    pub need: Option<need::Need>,
    /// Its label reads and writes per run (`reads`, `writes`).
    pub accesses: Vec<scratchpad::LabelAccess>,
}

impl Task {
    /// A job's regions in order (its PET at `level` split), or None if it
    /// may be preempted anywhere: a cooperative task's copies and runnables
    /// of nonzero work, each non-preemptive (it may be preempted between
    /// them); a non-preemptive task's whole job; a preemptive task's
    /// copy-in and copy-out, non-preemptive, around a preemptible body. The
    /// last region is the job's rest.
    pub fn regions(&self, level: Level) -> Option<Vec<Region>> {
        let np = |work_ns: u64, part: Part| Region { work_ns, preemptible: false, part };
        let pet = self.pet_at(level);
        let copies = self.copy_in_ns + self.copy_out_ns;
        let (copy_in, copy_out) = (np(self.copy_in_ns, Part::CopyIn), np(self.copy_out_ns, Part::CopyOut));
        let regions: Vec<Region> = match self.preemption {
            Preemption::Preemptive if copies == 0 => return None,
            Preemption::Preemptive => vec![copy_in, Region { work_ns: pet.saturating_sub(copies), preemptible: true, part: Part::Body }, copy_out],
            Preemption::Cooperative if !self.runnables.is_empty() => std::iter::once(copy_in)
                .chain(self.runnables.iter().enumerate().map(|(k, r)| np(r.pet_ns, Part::Runnable(k))))
                .chain(std::iter::once(copy_out))
                .collect(),
            Preemption::Cooperative if copies > 0 => vec![copy_in, np(pet.saturating_sub(copies), Part::Body), copy_out],
            _ => vec![np(pet, Part::Job)],
        };
        Some(regions.into_iter().filter(|r| r.work_ns > 0).collect())
    }

    /// Whether a job may be preempted only at some points of its work.
    pub fn limited_preemption(&self) -> bool {
        self.preemption != Preemption::Preemptive || self.copy_in_ns + self.copy_out_ns > 0
    }

    /// A job's named steps in order, as (name, work at rate 1): its copy-in,
    /// its runnables (or, with copies and none, its body under the task's
    /// name), its copy-out; empty for a job of one piece.
    pub fn steps(&self) -> Vec<(&str, u64)> {
        self.steps_with(|_, r| r.pet_ns, self.pet_at(Level::C))
    }

    /// `steps` with runnable k's time `runnable_ns(k, runnable)` (a draw, a
    /// shortened job's share), and a body without runnables `time_ns` less
    /// the copies.
    pub fn steps_with(&self, runnable_ns: impl Fn(usize, &Runnable) -> u64, time_ns: u64) -> Vec<(&str, u64)> {
        let copies = self.copy_in_ns + self.copy_out_ns;
        if self.runnables.is_empty() && copies == 0 {
            return Vec::new();
        }
        let body: Vec<(&str, u64)> = if self.runnables.is_empty() {
            vec![(self.name.as_str(), time_ns.min(self.pet_at(Level::C)).saturating_sub(copies))]
        } else {
            self.runnables.iter().enumerate().map(|(k, r)| (r.name.as_str(), runnable_ns(k, r))).collect()
        };
        std::iter::once(("copy-in", self.copy_in_ns)).chain(body).chain(std::iter::once(("copy-out", self.copy_out_ns))).filter(|&(_, w)| w > 0).collect()
    }

    /// A periodic MC² task with implicit deadline, no offset and RM priority.
    pub fn mc2(name: impl Into<String>, level: Level, core: Option<usize>, period_ns: u64, pet_ns: LevelPets) -> Task {
        Task {
            name: name.into(),
            level: Some(level),
            criticality: level.criticality(),
            core,
            period_ns,
            deadline_ns: period_ns,
            offset_ns: 0,
            arrival: Arrival::Periodic,
            priority: None,
            server: None,
            pet_ns,
            pet_unmanaged_ns: None,
            memory: None,
            cost: None,
            ipc: None,
            io: None,
            command: None,
            runnables: Vec::new(),
            preemption: Preemption::Preemptive,
            activation_limit: None,
            communication: Communication::Implicit,
            copy_in_ns: 0,
            copy_out_ns: 0,
        }
    }

    /// A load with no jobs (`arrival = "background"`).
    pub fn is_background(&self) -> bool {
        self.arrival == Arrival::Background
    }

    /// Period and relative deadline of the jobs as they run (simulator and
    /// runtime): a background task's one endless job never recurs nor is
    /// due (u64::MAX each), whatever its stand-in says.
    pub fn running_period_deadline_ns(&self) -> (u64, u64) {
        if self.is_background() {
            (u64::MAX, u64::MAX)
        } else {
            (self.period_ns, self.deadline_ns)
        }
    }

    /// A task's utilization with a given PET.
    pub fn utilization(&self, pet_ns: u64) -> f64 {
        pet_ns as f64 / self.period_ns as f64
    }

    /// The PET a job runs for when the system is exercised at `level`: the
    /// task's Level-`level` PET if it has one, else the PET of its own level
    /// (a Level-C task has no Level-B PET), else its most critical PET.
    pub fn pet_at(&self, level: Level) -> u64 {
        self.pet_ns
            .get(level)
            .or_else(|| self.level.and_then(|own| self.pet_ns.get(own)))
            .or_else(|| self.pet_ns.highest())
            .expect("validated tasks have at least one PET")
    }

}

/// Kind of a reservation server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerKind {
    /// Idling periodic server under fixed-priority node scheduling
    /// (mrs-multi-resource-server §II-B, §III rules 1–6).
    Periodic,
    /// Constant Bandwidth Server with SCHED_DEADLINE semantics (hard
    /// reservation, EDF among servers; mcti-task-isolation §2, §6.1.1).
    Cbs,
}

/// A CPU (and optionally memory) reservation on one core.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub name: String,
    pub core: usize,
    pub kind: ServerKind,
    pub period_ns: u64,
    /// CPU budget per period (Q_s).
    pub budget_ns: u64,
    /// Node-scheduler priority, higher is more important (periodic servers).
    pub priority: i64,
    /// Memory requests allowed per period (M_s, MRS); None = unlimited.
    pub memory_budget: Option<u64>,
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
    /// LLC ways holding locked buffers (LLC locking, mc2-io-ipc-os-isolation §4.2, §6.1).
    Lock,
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Partition::Core(c) => write!(f, "core{c}"),
            Partition::LevelC => f.write_str("levelC"),
            Partition::Os => f.write_str("os"),
            Partition::Lock => f.write_str("lock"),
        }
    }
}

/// Allocation of shared hardware to partitions; `optimize` writes one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    pub llc_ways: Vec<(Partition, u32)>,
    pub llc_colors: Vec<(Partition, Vec<u32>)>,
    pub banks: Vec<(Partition, Vec<u32>)>,
    /// OS isolation (mc2-hardware-management §3): kernel lines stay in the `os`
    /// partition (or Level C). Without it the OS may use any colour.
    pub os_isolation: bool,
}

impl Allocation {
    /// Ways given to `part`, if listed in `llc_ways`.
    pub fn ways_of(&self, part: Partition) -> Option<u32> {
        self.llc_ways.iter().find(|(q, _)| *q == part).map(|&(_, w)| w)
    }

    /// Whether any of ways, colours or banks is given for `part`.
    pub fn mentions(&self, part: Partition) -> bool {
        self.llc_ways.iter().any(|(q, _)| *q == part)
            || self.llc_colors.iter().any(|(q, _)| *q == part)
            || self.banks.iter().any(|(q, _)| *q == part)
    }
}

/// Which memory regulator the simulator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegulationKind {
    /// Per-core budget of Qm requests per period M; a core that exhausts it stalls.
    Memguard,
    /// MemGuard plus the memory-overload rule of mcti-task-isolation §4.
    Mcti,
    /// Per-server memory budgets of the Multi-Resource Server (mrs §III rules 4, 5).
    Mrs,
    /// The bandwidth monitor of blin-bandwidth-monitor §3.3.
    Monitor,
}

impl RegulationKind {
    pub const NAMES: [(&'static str, RegulationKind); 4] = [
        ("memguard", RegulationKind::Memguard),
        ("mcti", RegulationKind::Mcti),
        ("mrs", RegulationKind::Mrs),
        ("monitor", RegulationKind::Monitor),
    ];

    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).unwrap_or("?")
    }
}

/// Settings of the bandwidth monitor (blin-bandwidth-monitor §3.3).
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorConfig {
    /// The real-time task whose overhead is bounded.
    pub rt_task: usize,
    /// Best-effort cores, suspended together.
    pub be_cores: Vec<usize>,
    /// Sampling interval Δ (default 50 µs, §4.1).
    pub sample_ns: u64,
    /// Largest allowed overhead, e.g. 0.05.
    pub threshold: f64,
    /// Overhead-table file, as written in the task file (resolved by the front end).
    pub table_file: String,
}

/// A group of tasks sharing one memory budget (MemGuard per group; in the
/// runtime, the processes running those tasks).
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetGroup {
    pub name: String,
    pub tasks: Vec<usize>,
    /// Memory requests allowed per regulation period.
    pub budget: u64,
}

/// Options of MemGuard beyond strict reservation (regulate::memguard applies them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemguardOptions {
    pub reclaim: bool,
    /// The least a reclaiming entity takes from the pool (MemGuard's qmin).
    pub reclaim_min: f64,
    pub spare_sharing: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Regulation {
    pub kind: RegulationKind,
    /// Regulation period M (MemGuard, MCTI); synchronous on all cores.
    pub period_ns: u64,
    /// Qm per core: memory requests allowed per period.
    pub budgets: Vec<u64>,
    /// Budgets per group of tasks instead of per core (MemGuard); empty = per core.
    pub groups: Vec<BudgetGroup>,
    /// MemGuard's reclaim and spare sharing (regulate::memguard).
    pub memguard: MemguardOptions,
    pub monitor: Option<MonitorConfig>,
}

impl Regulation {
    /// The budgets the MemGuard rules hold: one per group, or one per core.
    pub fn entity_budgets(&self) -> Vec<u64> {
        if self.groups.is_empty() {
            self.budgets.clone()
        } else {
            self.groups.iter().map(|g| g.budget).collect()
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskSystem {
    pub platform: Platform,
    pub tasks: Vec<Task>,
    pub servers: Vec<Server>,
    pub allocation: Option<Allocation>,
    pub regulation: Option<Regulation>,
    pub devices: Vec<Device>,
    /// Cause-effect chains over the tasks.
    pub chains: Vec<Chain>,
    /// Labels placed in the platform's memories (`[[label]]`).
    pub labels: Vec<scratchpad::Label>,
}

impl TaskSystem {
    /// Indices of the tasks of `level` on `core`.
    pub fn on_core(&self, core: usize, level: Level) -> impl Iterator<Item = usize> + '_ {
        self.tasks
            .iter()
            .enumerate()
            .filter(move |(_, t)| t.level == Some(level) && t.core == Some(core))
            .map(|(i, _)| i)
    }

    /// Indices of the tasks of `level`.
    pub fn at_level(&self, level: Level) -> impl Iterator<Item = usize> + '_ {
        self.tasks.iter().enumerate().filter(move |(_, t)| t.level == Some(level)).map(|(i, _)| i)
    }
}

#[cfg(test)]
mod preset_tests {
    use super::*;

    #[test]
    fn imx6_transaction_reads_the_parameter_set_and_keeps_the_rest_of_the_imx6() {
        let p = Platform::preset("imx6-transaction").unwrap();
        let v: toml::Value = IMX6_TRANSACTION.parse().unwrap();
        let num = |k: &str| v["study"][k].as_float().or(v["study"][k].as_integer().map(|i| i as f64)).unwrap();
        assert_eq!(p.costs.dma_scale_bytes_per_s, num("dma_scale_bytes_per_s"));
        assert_eq!(p.costs.sbp_ns_per_byte, num("sbp_ns_per_byte"));
        assert_eq!(p.costs.cpu_sourced_bank, num("cpu_sourced_bank"));
        assert_eq!(format!("{}ns", p.dram.read_latency_ns), v["platform"]["dram"]["read_latency"].as_str().unwrap());
        let imx6 = Platform::preset("imx6").unwrap();
        assert_eq!((p.cores, &p.llc, &p.bus), (imx6.cores, &imx6.llc, &imx6.bus));
        assert_eq!(imx6.costs, StudyCosts::ASSUMED);
    }
}
