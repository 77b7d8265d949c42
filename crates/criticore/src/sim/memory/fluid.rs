//! Fluid memory model (DESIGN.md "Simulator"; docs/memory-model.md).
//!
//! A job's PET is its execution time alone with its own LLC partition. Per ns
//! of that isolated work a job in phase p makes `a` LLC references, a share m
//! of which miss. A miss costs the core t = rf·(L + W) + (1 − rf)·(S + W) + p·R:
//! reads stall for the DRAM latency L, writes are posted and cost only the bus
//! time S of one line; W is the wait for the bus behind other traffic and p·R
//! the row-buffer conflicts with traffic sharing a bank. Alone, W = p = 0 and
//! the isolated miss ratio m₀ gives the compute share c = 1 − a·m₀·t₀, so the
//! job runs at rate 1. With co-runners it runs at rate 1 / (c + a·m·t + …).
//!
//! - LLC: a job's partition (ways × colours of its allocation, mc2-hardware-
//!   management §3, Fig. 4) is shared with the co-runners in the same partition
//!   in proportion to working-set sizes. Without OS isolation the kernel lines
//!   of system calls press on every partition (the OS may use any colour,
//!   Appendix); with it they stay in the OS partition. Miss curve: `random` misses 1 − size/WSS;
//!   `stream` misses everything until the whole WSS fits (LRU).
//! - IPC buffers (mc2-io-ipc-os-isolation §4.2): SBP accesses are uncacheable
//!   reads of the Level-C banks; CE buffers are part of the working set in the
//!   core's own partition and bank; CL buffers are locked in the LLC and hit.
//! - Bus: traffic ahead ρ = Σ r·S delays a request by W = S·ρ/(1 − ρ); round
//!   robin (and aging, FCFS) caps W at (n − 1)·S for n requesting cores;
//!   fixed priority counts higher and equal priorities, plus half a line of
//!   blocking by a lower one; TDMA waits half a round, m·S/2. DMA transfers go
//!   ahead of every core.
//! - DRAM banks: traffic on a shared bank opens another row with probability
//!   ∝ its request rate; p·R extra per request. DMA buffers (§4.3) live in a
//!   partition's banks and cause such conflicts, never LLC evictions (§3.1 fn 5).
//! - Interrupts of DMA transfers run on CPU 0 (§3.2) and take their share of it.
//!
//! Rates and request rates are solved together by damped fixed-point iteration.
//! The flows depend only on who runs where, in which phase, what the regulator
//! stalls, the DMA transfers under way and the bus priorities: each such
//! combination is solved once per simulation and remembered.

use super::{Flows, MemoryContext, MemoryModel};
use crate::model::{AccessPattern, Arbiter, IpcMethod, Level, Partition, TaskSystem};
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Where a task's lines live in the LLC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// A partition of the allocation.
    Alloc(Partition),
    /// No allocation: the whole LLC, shared by everyone.
    Shared,
    /// Partitions the allocation does not list: the leftover ways, shared.
    Remainder,
}

#[derive(Debug, Clone)]
struct PhaseMem {
    /// Cumulative work at which the phase ends (u64::MAX for the last).
    end_work_ns: u64,
    /// LLC references per ns of work (including CE buffer references).
    refs_per_ns: f64,
    read_fraction: f64,
    /// Compute share c = 1 − a·m₀·t₀ − (uncacheable reads)·L, alone in the partition.
    compute: f64,
}

#[derive(Debug, Clone)]
struct TaskMem {
    phases: Vec<PhaseMem>,
    /// Working set including a CE buffer.
    wss: f64,
    pattern: AccessPattern,
    part: Part,
    /// Capacity of the partition in bytes.
    capacity: f64,
    /// Index of the task's bank set in `Fluid::bank_sets`.
    banks: usize,
    /// Uncacheable reads of the Level-C banks per ns of work: SBP buffer
    /// references plus the lines system calls touch.
    extra_refs_per_ns: f64,
    /// Kernel lines a running task keeps in the LLC (system calls).
    os_footprint: f64,
}

#[derive(Debug, Clone)]
struct DeviceMem {
    period_ns: u64,
    /// Length of one transfer.
    active_ns: u64,
    requests_per_ns: f64,
    banks: usize,
    /// Share of CPU 0 its interrupt handlers take.
    irq_share: f64,
}

/// One stream of memory traffic: which banks, how many requests per ns.
#[derive(Debug, Clone, Copy)]
struct Stream {
    banks: usize,
    rate: f64,
}

/// What the fixed point needs of the job on one active core.
#[derive(Debug, Clone, Copy, Default)]
struct CoreMem {
    task: usize,
    refs: f64,
    extra: f64,
    read_fraction: f64,
    compute: f64,
    miss: f64,
    banks: usize,
    /// Share of the core left by interrupt handlers (CPU 0).
    irq: f64,
}

/// Steps of the fixed point the Anderson acceleration combines.
const WINDOW: usize = 4;

/// Numbers (key and flows) the memo keeps at most, 4 MB; then it starts over.
const MEMO_WORDS: usize = 1 << 19;

/// FxHash-style hasher for the memo's keys (short slices of u64; no need for DoS resistance).
#[derive(Default)]
struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub struct Fluid {
    line_bytes: f64,
    /// S: bus time of one line.
    service_ns: f64,
    read_latency_ns: f64,
    row_conflict_ns: f64,
    arbiter: Arbiter,
    os_isolation: bool,
    tasks: Vec<TaskMem>,
    devices: Vec<DeviceMem>,
    bank_sets: Vec<(Vec<u64>, u32)>,
    level_c_banks: usize,
    /// R·|B_a ∩ B_b| / (|B_a|·|B_b|) for bank sets a, b: `coeff[a * bank_sets.len() + b]`.
    coeff: Vec<f64>,
    next_event: u64,
    /// Flows already solved, by key (see `build_key`): the flows are a function of it.
    memo: HashMap<Box<[u64]>, Box<[f64]>, BuildHasherDefault<KeyHasher>>,
    // Scratch, reused from call to call.
    key: Vec<u64>,
    /// Rate, requests per ns and stall of every core (3 × m).
    solved: Vec<f64>,
    dma: Vec<Stream>,
    irq_share: f64,
    core: Vec<CoreMem>,
    active: Vec<usize>,
    k_mm: Vec<f64>,
    k_me: Vec<f64>,
    k_em: Vec<f64>,
    /// Fixed-priority bus: core d goes ahead of core c (`ahead[c * m + d]`).
    ahead: Vec<bool>,
    dma_main: Vec<f64>,
    dma_extra: Vec<f64>,
    main_r: Vec<f64>,
    extra_r: Vec<f64>,
    load: Vec<f64>,
    /// Fixed point: the rates x, the last G(x) and G(x) − x, and the differences
    /// of the last WINDOW steps (`d_f[j * m + c]`).
    x: Vec<f64>,
    g_prev: Vec<f64>,
    f_prev: Vec<f64>,
    d_f: Vec<f64>,
    d_g: Vec<f64>,
}

fn miss_ratio(pattern: AccessPattern, cache: f64, wss: f64) -> f64 {
    if wss <= 0.0 || cache >= wss {
        return 0.0;
    }
    match pattern {
        AccessPattern::Random => 1.0 - cache / wss,
        AccessPattern::Stream => 1.0,
    }
}

/// Least-squares weights γ of the Anderson step over the first `columns`
/// stored differences (normal equations, Gaussian elimination with partial
/// pivoting); None if they are (nearly) dependent.
fn anderson_weights(active: &[usize], d_f: &[f64], f: &[f64], m: usize, columns: usize) -> Option<[f64; WINDOW]> {
    let mut gamma = [0.0; WINDOW];
    if columns == 0 {
        return Some(gamma);
    }
    let mut a = [[0.0; WINDOW + 1]; WINDOW];
    for i in 0..columns {
        for j in 0..=i {
            let v: f64 = active.iter().map(|&c| d_f[i * m + c] * d_f[j * m + c]).sum();
            (a[i][j], a[j][i]) = (v, v);
        }
        a[i][columns] = active.iter().map(|&c| d_f[i * m + c] * f[c]).sum();
    }
    let scale = (0..columns).map(|i| a[i][i]).fold(0.0, f64::max);
    if !scale.is_finite() || scale <= 0.0 {
        return None;
    }
    for k in 0..columns {
        let p = (k..columns).max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs())).unwrap();
        if a[p][k].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(k, p);
        for i in k + 1..columns {
            let factor = a[i][k] / a[k][k];
            let pivot_row = a[k];
            for (x, p) in a[i].iter_mut().zip(pivot_row).skip(k).take(columns + 1 - k) {
                *x -= factor * p;
            }
        }
    }
    for k in (0..columns).rev() {
        let mut v = a[k][columns];
        for j in k + 1..columns {
            v -= a[k][j] * gamma[j];
        }
        gamma[k] = v / a[k][k];
    }
    gamma.iter().all(|g| g.is_finite()).then_some(gamma)
}

fn bank_set(banks: &[u32], total: u32) -> (Vec<u64>, u32) {
    let mut set = vec![0u64; (total as usize).div_ceil(64)];
    for &b in banks {
        set[b as usize / 64] |= 1 << (b % 64);
    }
    (set, banks.len() as u32)
}

impl Fluid {
    pub fn new(system: &TaskSystem) -> Self {
        let p = &system.platform;
        let all_banks: Vec<u32> = (0..p.dram.banks).collect();
        let alloc = system.allocation.as_ref();
        let ways_of = |part: Partition| -> f64 {
            let Some(a) = alloc else { return 1.0 };
            if a.llc_ways.is_empty() {
                return 1.0;
            }
            let listed = a.ways_of(part).map(|w| w as f64);
            // A partition the allocation leaves out shares the ways nobody was given.
            let given: f64 = a.llc_ways.iter().map(|(_, w)| *w as f64).sum();
            listed.unwrap_or((p.llc.ways as f64 - given).max(0.0)) / p.llc.ways as f64
        };
        let colors_of = |part: Partition| -> f64 {
            match alloc.and_then(|a| a.llc_colors.iter().find(|(q, _)| *q == part)) {
                Some((_, cs)) => cs.len() as f64 / p.llc.colors as f64,
                None => 1.0,
            }
        };
        let mut bank_sets: Vec<(Vec<u64>, u32)> = Vec::new();
        let mut banks_of = |part: Partition| -> usize {
            let list = alloc.and_then(|a| a.banks.iter().find(|(q, _)| *q == part)).map_or(all_banks.clone(), |(_, b)| b.clone());
            let set = bank_set(&list, p.dram.banks);
            match bank_sets.iter().position(|s| *s == set) {
                Some(i) => i,
                None => {
                    bank_sets.push(set);
                    bank_sets.len() - 1
                }
            }
        };
        let level_c_banks = banks_of(Partition::LevelC);
        let line = p.llc.line_bytes as f64;
        let tasks = system
            .tasks
            .iter()
            .map(|t| {
                let partition = match (t.level, t.core) {
                    (Some(Level::A | Level::B), Some(c)) => Partition::Core(c),
                    // A pinned task outside MC² uses its core's partition if the allocation has one.
                    // Level D stays in the Level-C partition: MC² schedules it globally.
                    (None, Some(c)) if alloc.is_some_and(|a| a.mentions(Partition::Core(c))) => Partition::Core(c),
                    _ => Partition::LevelC,
                };
                // Partitions the allocation leaves out share the ways nobody was given, together.
                let part = match alloc {
                    None => Part::Shared,
                    Some(a) if !a.llc_ways.is_empty() && !a.llc_ways.iter().any(|(q, _)| *q == partition) => Part::Remainder,
                    Some(_) => Part::Alloc(partition),
                };
                let capacity = p.llc.size_bytes as f64 * if alloc.is_some() { ways_of(partition) * colors_of(partition) } else { 1.0 };
                let banks = banks_of(partition);
                let Some(m) = &t.memory else {
                    return TaskMem {
                        phases: Vec::new(),
                        wss: 0.0,
                        pattern: AccessPattern::Random,
                        part,
                        capacity,
                        banks,
                        extra_refs_per_ns: 0.0,
                        os_footprint: 0.0,
                    };
                };
                let (ce_refs, ce_bytes, sbp_refs) = match &m.ipc {
                    Some(ipc) => match ipc.method {
                        IpcMethod::Ce => (ipc.accesses_per_ms / 1e6, ipc.bytes as f64, 0.0),
                        IpcMethod::Sbp => (0.0, 0.0, ipc.accesses_per_ms / 1e6),
                        IpcMethod::Cl => (0.0, 0.0, 0.0),
                    },
                    None => (0.0, 0.0, 0.0),
                };
                let (sys_lines, os_footprint) = match &m.syscalls {
                    Some(s) => (s.per_ms / 1e6 * s.footprint_bytes as f64 / line, s.footprint_bytes as f64),
                    None => (0.0, 0.0),
                };
                let phases = m
                    .phases
                    .iter()
                    .zip(m.phase_ends())
                    .map(|(ph, end)| PhaseMem { end_work_ns: end, refs_per_ns: ph.accesses_per_ms / 1e6 + ce_refs, read_fraction: ph.read_fraction, compute: 0.0 })
                    .collect();
                TaskMem {
                    phases,
                    wss: m.wss_bytes as f64 + ce_bytes,
                    pattern: m.pattern,
                    part,
                    capacity,
                    banks,
                    extra_refs_per_ns: sbp_refs + sys_lines,
                    os_footprint,
                }
            })
            .collect();
        let devices = system
            .devices
            .iter()
            .map(|d| DeviceMem {
                period_ns: d.period_ns,
                active_ns: ((d.bytes as u128 * 1_000_000_000).div_ceil(d.bandwidth_bytes_per_s as u128) as u64).max(1),
                requests_per_ns: d.bandwidth_bytes_per_s as f64 / line / 1e9,
                banks: banks_of(if alloc.is_some() { d.buffer } else { Partition::LevelC }),
                irq_share: d.irq_ns as f64 / d.period_ns as f64,
            })
            .collect();
        let m = p.cores;
        let row_conflict_ns = p.dram.row_conflict_ns as f64;
        let coeff = bank_sets
            .iter()
            .flat_map(|(sa, ca)| {
                bank_sets.iter().map(move |(sb, cb)| {
                    let shared: u32 = sa.iter().zip(sb).map(|(x, y)| (x & y).count_ones()).sum();
                    row_conflict_ns * shared as f64 / ((*ca).max(1) as f64 * (*cb).max(1) as f64)
                })
            })
            .collect();
        let mut fluid = Fluid {
            line_bytes: line,
            service_ns: p.line_service_ns(),
            read_latency_ns: p.dram.read_latency_ns as f64,
            row_conflict_ns: p.dram.row_conflict_ns as f64,
            arbiter: p.bus.arbiter,
            os_isolation: alloc.is_some_and(|a| a.os_isolation),
            tasks,
            devices,
            bank_sets,
            level_c_banks,
            coeff,
            next_event: NONE_U64,
            memo: HashMap::default(),
            key: Vec::new(),
            solved: vec![0.0; 3 * m],
            dma: Vec::new(),
            irq_share: 0.0,
            core: vec![CoreMem::default(); m],
            active: Vec::with_capacity(m),
            k_mm: vec![0.0; m * m],
            k_me: vec![0.0; m * m],
            k_em: vec![0.0; m * m],
            ahead: vec![false; m * m],
            dma_main: vec![0.0; m],
            dma_extra: vec![0.0; m],
            main_r: vec![0.0; m],
            extra_r: vec![0.0; m],
            load: vec![0.0; m],
            x: vec![0.0; m],
            g_prev: vec![0.0; m],
            f_prev: vec![0.0; m],
            d_f: vec![0.0; WINDOW * m],
            d_g: vec![0.0; WINDOW * m],
        };
        // Isolated compute share of every phase (per job it only depends on the phase).
        for i in 0..fluid.tasks.len() {
            let tm = &fluid.tasks[i];
            let m0 = miss_ratio(tm.pattern, tm.capacity, tm.wss);
            let compute: Vec<f64> = tm
                .phases
                .iter()
                .map(|ph| (1.0 - ph.refs_per_ns * m0 * fluid.isolated_miss_ns(ph.read_fraction) - tm.extra_refs_per_ns * fluid.read_latency_ns).max(0.0))
                .collect();
            for (ph, c) in fluid.tasks[i].phases.iter_mut().zip(compute) {
                ph.compute = c;
            }
        }
        fluid
    }

    /// Isolated cost of one miss for a read fraction rf.
    fn isolated_miss_ns(&self, rf: f64) -> f64 {
        rf * self.read_latency_ns + (1.0 - rf) * self.service_ns
    }

    fn phase<'a>(tm: &'a TaskMem, job: &Job) -> &'a PhaseMem {
        let done = job.exec_ns - job.remaining_ns;
        tm.phases.iter().find(|p| p.end_work_ns > done).unwrap_or_else(|| tm.phases.last().expect("phases are non-empty"))
    }
}

/// One task's worst case under this model, for the analysis
/// (docs/analysis.md, "Memory stalls"): whatever runs on the other cores, a
/// ns of the task's work takes at most `time_per_work` ns and issues at most
/// `requests_per_work` requests.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstPhase {
    /// Work of the phase, ns (the last one to the end of the PET).
    pub work_ns: u64,
    pub time_per_work: f64,
    pub requests_per_work: f64,
    /// Fewest requests per ns of wall time while the job runs (its isolated
    /// miss ratio at its slowest rate): 0 for a phase that may issue none.
    pub min_request_rate: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorstCase {
    pub phases: Vec<WorstPhase>,
    /// Work added when the job resumes after a preemption (the reload), ns.
    pub reload_work_ns: u64,
}

impl Fluid {
    /// Bounds of every term of the per-miss time, taken one by one: the
    /// smallest LLC share (the m − 1 largest co-runners of its partition and,
    /// without OS isolation, its own and the m − 1 largest co-runners' kernel
    /// footprints pressing on it),
    /// the arbiter's longest wait (round robin, FCFS, aging: (n − 1)·S with
    /// n ≤ m + devices; TDMA m·S/2; fixed priority ρ ≤ 0.999 plus half a line),
    /// a row conflict on every request (p ≤ 1), and CPU 0's interrupt share
    /// taken from every task. `pet_ns` per task is the work a job does;
    /// `corunner(i, j)`: task j may run while task i does (on another core),
    /// so only those press on i's LLC share.
    pub fn worst_case(&self, pet_ns: &[u64], cores: usize, corunner: impl Fn(usize, usize) -> bool) -> Vec<WorstCase> {
        let s = self.service_ns;
        let n = cores + self.devices.len();
        let wait = match self.arbiter {
            Arbiter::FixedPriority => s * 0.999 / 0.001 + 0.5 * s,
            Arbiter::Tdma => 0.5 * cores as f64 * s,
            _ => n.saturating_sub(1) as f64 * s,
        };
        let irq = (1.0 - self.devices.iter().map(|d| d.irq_share).sum::<f64>()).max(1e-9);
        let largest = |mut v: Vec<f64>, k: usize| -> f64 {
            v.sort_by(|a, b| b.total_cmp(a));
            v.iter().take(k).sum()
        };
        self.tasks
            .iter()
            .enumerate()
            .map(|(i, tm)| {
                if tm.phases.is_empty() {
                    return WorstCase { phases: vec![WorstPhase { work_ns: pet_ns[i], time_per_work: 1.0 / irq, requests_per_work: 0.0, min_request_rate: 0.0 }], reload_work_ns: 0 };
                }
                let beside = |j: usize| j != i && corunner(i, j);
                let others: Vec<f64> = self.tasks.iter().enumerate().filter(|&(j, o)| beside(j) && o.part == tm.part).map(|(_, o)| o.wss).collect();
                let os = if self.os_isolation {
                    0.0
                } else {
                    tm.os_footprint + largest(self.tasks.iter().enumerate().filter(|&(j, _)| beside(j)).map(|(_, o)| o.os_footprint).collect(), cores.saturating_sub(1))
                };
                let pressure = tm.wss + largest(others, cores.saturating_sub(1)) + os;
                let share = if pressure <= tm.capacity { tm.wss } else { tm.capacity * tm.wss / pressure };
                let miss = miss_ratio(tm.pattern, share, tm.wss);
                let m0 = miss_ratio(tm.pattern, tm.capacity, tm.wss);
                let mut start = 0u64;
                let phases = tm
                    .phases
                    .iter()
                    .map(|ph| {
                        let end = ph.end_work_ns.min(pet_ns[i]);
                        let work_ns = end.saturating_sub(start);
                        start = start.max(end);
                        let rf = ph.read_fraction;
                        let compute = (1.0 - ph.refs_per_ns * m0 * self.isolated_miss_ns(rf) - tm.extra_refs_per_ns * self.read_latency_ns).max(0.0);
                        let per_miss = rf * (self.read_latency_ns + wait) + (1.0 - rf) * (s + wait) + self.row_conflict_ns;
                        let per_extra = self.read_latency_ns + wait + self.row_conflict_ns;
                        let time = compute + ph.refs_per_ns * miss * per_miss + tm.extra_refs_per_ns * per_extra;
                        let time_per_work = time.max(1e-12) / irq;
                        let min_request_rate = (ph.refs_per_ns * m0 + tm.extra_refs_per_ns) / time_per_work;
                        WorstPhase { work_ns, time_per_work, requests_per_work: ph.refs_per_ns * miss + tm.extra_refs_per_ns, min_request_rate }
                    })
                    .collect();
                let reload = if tm.pattern == AccessPattern::Stream && tm.wss > tm.capacity {
                    0
                } else {
                    let worst_rf = tm.phases.iter().map(|ph| self.isolated_miss_ns(ph.read_fraction)).fold(0.0, f64::max);
                    (tm.wss.min(tm.capacity) / self.line_bytes * worst_rf).round() as u64
                };
                WorstCase { phases, reload_work_ns: reload }
            })
            .collect()
    }
}

impl Fluid {
    /// The inputs the flows depend on, as `self.key`: per core idle, stalled,
    /// running a task without memory demand, or running (task, phase); the DMA
    /// transfers under way; the bus priorities if the regulator imposes them.
    /// Also fills `self.dma`, `self.irq_share` and the DMA part of `next_event`.
    fn build_key(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext) {
        self.key.clear();
        self.dma.clear();
        self.next_event = NONE_U64;
        self.irq_share = 0.0;
        let mut word = 0u64;
        for (i, d) in self.devices.iter().enumerate() {
            let offset = now % d.period_ns;
            self.irq_share += d.irq_share;
            if offset < d.active_ns {
                self.dma.push(Stream { banks: d.banks, rate: d.requests_per_ns });
                self.next_event = self.next_event.min(now - offset + d.active_ns);
                word |= 1 << (i % 64);
            } else {
                self.next_event = self.next_event.min(now - offset + d.period_ns);
            }
            if i % 64 == 63 {
                self.key.push(word);
                word = 0;
            }
        }
        self.key.push(word);
        for (c, &on) in running.iter().enumerate() {
            let code = match on {
                None => 0,
                Some(_) if !ctx.allowed[c] => 1,
                Some(id) => {
                    let job = jobs.get(id);
                    let tm = &self.tasks[job.task as usize];
                    if tm.phases.is_empty() {
                        2
                    } else {
                        ((job.task as u64 + 1) << 32) | Self::phase_index(tm, job) as u64
                    }
                }
            };
            self.key.push(code);
        }
        match ctx.bus_priority {
            Some(p) => {
                self.key.push(1);
                self.key.extend(p.iter().map(|&x| x as u64));
            }
            None => self.key.push(0),
        }
    }

    fn phase_index(tm: &TaskMem, job: &Job) -> usize {
        let done = job.exec_ns - job.remaining_ns;
        tm.phases.iter().position(|p| p.end_work_ns > done).unwrap_or(tm.phases.len() - 1)
    }

    /// Solve the flows for the inputs in `self.key` (and `self.dma`) into
    /// `self.solved`: rate, requests per ns and stall of every core.
    fn solve(&mut self, m: usize, bus_priority: Option<&[u32]>) {
        let s = self.service_ns;
        let dma_offset = self.devices.len() / 64 + 1;
        let dma_load: f64 = self.dma.iter().map(|x| x.rate * s).sum();
        let irq_factor = |c: usize| if c == 0 { (1.0 - self.irq_share).max(0.0) } else { 1.0 };
        let (rate_out, rest) = self.solved.split_at_mut(m);
        let (requests_out, stall_out) = rest.split_at_mut(m);
        // 1. Who issues memory traffic, and its isolated behaviour.
        self.active.clear();
        for c in 0..m {
            requests_out[c] = 0.0;
            match self.key[dma_offset + c] {
                0 => (rate_out[c], stall_out[c]) = (1.0, 0.0),
                1 => (rate_out[c], stall_out[c]) = (0.0, 1.0),
                2 => (rate_out[c], stall_out[c]) = (irq_factor(c), 1.0 - irq_factor(c)),
                code => {
                    let task = (code >> 32) as usize - 1;
                    let tm = &self.tasks[task];
                    let ph = &tm.phases[(code & 0xffff_ffff) as usize];
                    self.core[c] = CoreMem {
                        task,
                        refs: ph.refs_per_ns,
                        extra: tm.extra_refs_per_ns,
                        read_fraction: ph.read_fraction,
                        compute: ph.compute,
                        miss: 0.0,
                        banks: tm.banks,
                        irq: irq_factor(c),
                    };
                    self.active.push(c);
                }
            }
        }
        // 2. LLC sharing within each partition, in proportion to working sets.
        //    Without OS isolation the kernel lines of system calls press on every
        //    partition (the OS may use any colour); with it they stay in the OS partition.
        let os_everywhere: f64 = if self.os_isolation { 0.0 } else { self.active.iter().map(|&d| self.tasks[self.core[d].task].os_footprint).sum() };
        for &c in &self.active {
            let tm = &self.tasks[self.core[c].task];
            let mut pressure: f64 =
                self.active.iter().map(|&d| &self.tasks[self.core[d].task]).filter(|other| other.part == tm.part).map(|other| other.wss).sum();
            pressure += if self.os_isolation { 0.0 } else { os_everywhere };
            let share = if pressure <= tm.capacity { tm.wss } else { tm.capacity * tm.wss / pressure };
            self.core[c].miss = miss_ratio(tm.pattern, share, tm.wss);
        }
        // 3. Bus and bank contention: damped fixed point on request rates.
        //    Everything but the request rates is computed once, before the iteration:
        //    k[(c, d)] = R·|B_c ∩ B_d| / (|B_c|·|B_d|) for c's main/extra stream vs d's,
        //    and which cores are ahead of c on a fixed-priority bus.
        let nb = self.bank_sets.len();
        let coeff = |a: usize, b: usize| self.coeff[a * nb + b];
        let lc = self.level_c_banks;
        let k_ee = coeff(lc, lc);
        let fixed = bus_priority.is_some() || self.arbiter == Arbiter::FixedPriority;
        let priority = |c: usize| -> u32 {
            match bus_priority {
                Some(p) => p[c],
                None => (m - c) as u32, // fixed priority by core: core 0 highest
            }
        };
        for &c in &self.active {
            let bc = self.core[c].banks;
            for &d in &self.active {
                if d == c {
                    continue;
                }
                let bd = self.core[d].banks;
                self.k_mm[c * m + d] = coeff(bc, bd);
                self.k_me[c * m + d] = coeff(bc, lc);
                self.k_em[c * m + d] = coeff(lc, bd);
                self.ahead[c * m + d] = fixed && priority(d) >= priority(c);
            }
            self.dma_main[c] = self.dma.iter().map(|x| x.rate * coeff(bc, x.banks)).sum();
            self.dma_extra[c] = self.dma.iter().map(|x| x.rate * coeff(lc, x.banks)).sum();
            self.main_r[c] = self.core[c].refs * self.core[c].miss;
            self.extra_r[c] = self.core[c].extra;
        }
        // Inactive cores issue nothing (their terms in the sums below would be 0).
        //
        // The unknowns are the rates x; a core's request rates are x·a·m and x·(extra).
        // The model's iteration is the damped map G(x) = (x + F(x))/2 from x = 1, stopped
        // when G changes every core's requests by less than 1e-9 (relative). It is run
        // here with Anderson acceleration (the next x mixes the last WINDOW steps of G so
        // as to cancel their residuals), and the same stopping rule; the result is F(x)
        // at the last x, as before.
        let n_dma = self.dma.len();
        let tdma_wait = 0.5 * m as f64 * s;
        for &c in &self.active {
            self.x[c] = 1.0;
        }
        let (mut columns, mut slot) = (0usize, 0usize);
        for iteration in 0..60 {
            let mut total_load = 0.0;
            let mut requesting = 0;
            for &c in &self.active {
                let cm = &self.core[c];
                self.main_r[c] = self.x[c] * (cm.refs * cm.miss);
                self.extra_r[c] = self.x[c] * cm.extra;
                let l = (self.main_r[c] + self.extra_r[c]) * s;
                self.load[c] = l;
                total_load += l;
                requesting += (l > 0.0) as usize;
            }
            let n = requesting + n_dma;
            let mut max_change: f64 = 0.0;
            for &c in &self.active {
                let wait = if fixed {
                    // DMA, higher and equal priorities go first (equals share round robin);
                    // a lower one blocks for at most the line in service.
                    let (mut ahead, mut lower) = (0.0, 0.0);
                    for &d in &self.active {
                        if d == c {
                            continue;
                        }
                        if self.ahead[c * m + d] {
                            ahead += self.load[d];
                        } else {
                            lower += self.load[d];
                        }
                    }
                    let rho = (dma_load + ahead).min(0.999);
                    s * rho / (1.0 - rho) + 0.5 * s * f64::min(lower, 1.0)
                } else if self.arbiter == Arbiter::Tdma {
                    tdma_wait
                } else {
                    let rho = (dma_load + total_load - self.load[c]).min(0.999);
                    (s * rho / (1.0 - rho)).min(n.saturating_sub(1) as f64 * s)
                };
                let (mut p_main, mut p_extra) = (self.dma_main[c], self.dma_extra[c]);
                for &d in &self.active {
                    if d != c {
                        p_main += self.k_mm[c * m + d] * self.main_r[d] + self.k_me[c * m + d] * self.extra_r[d];
                        p_extra += self.k_em[c * m + d] * self.main_r[d] + k_ee * self.extra_r[d];
                    }
                }
                let cm = &self.core[c];
                let rf = cm.read_fraction;
                let per_miss = rf * (self.read_latency_ns + wait) + (1.0 - rf) * (s + wait) + p_main.min(1.0) * self.row_conflict_ns;
                let per_extra = self.read_latency_ns + wait + p_extra.min(1.0) * self.row_conflict_ns;
                let rc = cm.irq / (cm.compute + cm.refs * cm.miss * per_miss + cm.extra * per_extra).max(1e-12);
                rate_out[c] = rc;
                let (new_main, new_extra) = (rc * cm.refs * cm.miss, rc * cm.extra);
                let before = self.main_r[c] + self.extra_r[c];
                let next = 0.5 * (self.main_r[c] + new_main) + 0.5 * (self.extra_r[c] + new_extra);
                max_change = max_change.max((next - before).abs() / before.max(1e-9));
            }
            if max_change < 1e-9 {
                break;
            }
            // Anderson step: g = G(x), f = g − x; with the differences ΔF, ΔG of the
            // last steps, γ = argmin |f − ΔF·γ| and x ← g − ΔG·γ.
            for &c in &self.active {
                let g = 0.5 * (self.x[c] + rate_out[c]);
                let f = g - self.x[c];
                if iteration > 0 {
                    self.d_f[slot * m + c] = f - self.f_prev[c];
                    self.d_g[slot * m + c] = g - self.g_prev[c];
                }
                (self.f_prev[c], self.g_prev[c]) = (f, g);
            }
            if iteration > 0 {
                slot = (slot + 1) % WINDOW;
                columns = (columns + 1).min(WINDOW);
            }
            let gamma = anderson_weights(&self.active, &self.d_f, &self.f_prev, m, columns);
            let mut ok = gamma.is_some();
            if let Some(gamma) = gamma {
                for &c in &self.active {
                    let mut x = self.g_prev[c];
                    for (j, w) in gamma.iter().enumerate().take(columns) {
                        x -= w * self.d_g[j * m + c];
                    }
                    ok &= x.is_finite() && x > 0.0;
                    self.x[c] = x;
                }
            }
            if !ok {
                // Ill-conditioned or out of range: a plain damped step, history forgotten.
                for &c in &self.active {
                    self.x[c] = self.g_prev[c];
                }
                (columns, slot) = (0, 0);
            }
        }
        // 4. Results.
        for &c in &self.active {
            let cm = &self.core[c];
            let rc = rate_out[c];
            requests_out[c] = rc * (cm.refs * cm.miss + cm.extra);
            stall_out[c] = (1.0 - rc * cm.compute).clamp(0.0, 1.0);
        }
    }
}

impl MemoryModel for Fluid {
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        let m = running.len();
        // The flows are a function of the key alone (who runs where in which
        // phase, the stalls, DMA, the bus priorities): solve each key once.
        self.build_key(now, running, jobs, ctx);
        match self.memo.get(self.key.as_slice()) {
            Some(v) => self.solved.copy_from_slice(v),
            None => {
                self.solve(m, ctx.bus_priority);
                if self.memo.len() * (self.key.len() + self.solved.len()) >= MEMO_WORDS {
                    self.memo.clear();
                }
                self.memo.insert(self.key.clone().into_boxed_slice(), self.solved.clone().into_boxed_slice());
            }
        }
        flows.rate.copy_from_slice(&self.solved[..m]);
        flows.requests_per_ns.copy_from_slice(&self.solved[m..2 * m]);
        flows.stall.copy_from_slice(&self.solved[2 * m..]);
        // The next phase boundary.
        for (c, &on) in running.iter().enumerate() {
            let Some(id) = on else { continue };
            let rc = flows.rate[c];
            let job = jobs.get(id);
            let tm = &self.tasks[job.task as usize];
            if !ctx.allowed[c] || tm.phases.is_empty() {
                continue;
            }
            let ph = Self::phase(tm, job);
            if ph.end_work_ns != u64::MAX && ph.end_work_ns < job.exec_ns {
                let left = (ph.end_work_ns - (job.exec_ns - job.remaining_ns)) as f64;
                self.next_event = self.next_event.min(now.saturating_add((left / rc).ceil() as u64));
            }
        }
    }

    fn next_event(&self) -> u64 {
        self.next_event
    }

    /// Cache-related preemption delay, bounded as in the MC² study
    /// (notes/mc2-analysis-reference.md): reload what the job had cached and
    /// would have hit, min(WSS, partition), at the isolated miss cost.
    fn resume_penalty_ns(&mut self, job: &Job) -> u64 {
        let tm = &self.tasks[job.task as usize];
        if tm.phases.is_empty() {
            return 0;
        }
        // A stream larger than its partition misses everything anyway: nothing to reload.
        if tm.pattern == AccessPattern::Stream && tm.wss > tm.capacity {
            return 0;
        }
        let ph = Self::phase(tm, job);
        let lines = tm.wss.min(tm.capacity) / self.line_bytes;
        (lines * self.isolated_miss_ns(ph.read_fraction)).round() as u64
    }
}
