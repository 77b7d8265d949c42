//! The transaction model behind the engine's [`MemoryModel`] trait
//! (`criticore simulate --memory transaction`; docs/memory-model.md,
//! "Transaction model").
//!
//! The file's `[platform]` becomes a [`Machine`], every task's working set
//! is allocated in physical pages of its partition's colours and banks by the
//! MC² [`PageAllocator`], and each running job drives its core of one
//! [`System`] with a [`Profile`] reference stream. Time advances in quanta:
//! whenever the engine asks for the flows and what runs has changed (or the
//! last quantum is used up), the System runs one quantum ahead with the jobs
//! now running; what each core did in it gives the rates the engine uses
//! until the next event. The end of a quantum is an event (`next_event`).
//!
//! Work accounting: a job in a phase with r references per ns of work (LLC
//! references, plus kernel lines of system calls and SBP buffer reads) has
//! done 1/r ns of work per reference it issued. Its compute between two
//! references is calibrated once per task and phase by running it alone in
//! its partition (warm), so that alone it issues exactly r references per ns
//! and runs at rate 1; if the memory time alone exceeds 1/r, the compute is 0
//! and it runs slower than its PET even alone, as in the fluid model. The
//! caches and banks keep their state across quanta and preemptions, so the
//! reload after a preemption is simulated, not added (`resume_penalty_ns` is 0).

use std::sync::Arc;

use super::dma::DmaStream;
use super::address::AddressMap;
use super::dram::Timing;
use super::page_alloc::{List, ListBanks, PageAllocator};
use super::system::{Machine, System};
use super::workload::{Extra, Profile, Workload};
use crate::error::FieldError;
use crate::model::{AccessPattern, IpcMethod, Level, Partition, Platform, TaskSystem};
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
use crate::sim::memory::{Flows, MemoryContext, MemoryModel};

/// Default quantum: 20 µs.
pub const DEFAULT_QUANTUM_NS: u64 = 20_000;

/// References a calibration run measures per step.
const CALIBRATION_REFS: u64 = 20_000;

/// The ZCU102 of MCTI: four Cortex-A53 at 1.2 GHz with 32 KiB 4-way L1 data
/// caches, a 1 MiB 16-way shared L2 with 64 B lines, DDR4-2400 in 16 banks
/// (bank bits above the row bits, as the i.MX6 map without interleaving), a
/// round-robin interconnect at 4 GB/s (`Platform::preset("zcu102")`).
/// Latencies: 4 cycles for an L1 hit, 18 for an L2 hit, 25 ns of controller
/// front end each way (docs/memory-model.md, "Transaction model").
pub fn zcu102_machine() -> Machine {
    Machine {
        cores: 4,
        l1: Some((32 << 10, 4)),
        l1_hit_ps: 3_333,
        llc_bytes: 1 << 20,
        llc_ways: 16,
        line_bytes: 64,
        replacement: super::cache::Replacement::PseudoRandom,
        llc_hit_ps: 15_000,
        line_transfer_ps: 16_000, // 64 B / 4 GB/s
        frontend_ps: 25_000,
        timing: Timing::named("ddr4-2400").expect("built-in timing set"),
        scheduler: super::dram::Scheduler::FrFcfs,
        arbiter: crate::model::Arbiter::RoundRobin,
        map: AddressMap { page_shift: 12, colour_bits: (12..16).map(|b| vec![b]).collect(), bank_bits: (28..32).map(|b| vec![b]).collect(), row_shift: 13, size_bytes: 1 << 32 },
        priority_switch_ps: 40 * 833, // 40 cycles at 1.2 GHz
        mlp: 1,
        write_buffer: 8,
    }
}

fn log2_exact(x: u64, field: &str) -> Result<u32, FieldError> {
    if x == 0 || !x.is_power_of_two() {
        return Err(FieldError::new(field, format!("the transaction model needs a power of two, got {x}")));
    }
    Ok(x.trailing_zeros())
}

/// The machine of a file's `[platform]`: the i.MX6 model (or the ZCU102's,
/// for that preset's memory system) with the file's cores, LLC geometry,
/// banks, bus arbiter and bandwidth.
pub fn machine_for(p: &Platform) -> Result<Machine, FieldError> {
    let zcu = Platform::preset("zcu102").expect("built-in preset");
    let zcu_memory = p.llc == zcu.llc && p.dram == zcu.dram;
    // Its DRAM is timed cycle by cycle as one of these machines': a file that
    // states other latencies would get a machine it did not describe.
    if !zcu_memory {
        let imx6: Vec<Platform> = ["imx6", "imx6-transaction"].iter().map(|n| Platform::preset(n).expect("built-in preset")).collect();
        if !imx6.iter().any(|x| (x.dram.read_latency_ns, x.dram.row_conflict_ns) == (p.dram.read_latency_ns, p.dram.row_conflict_ns)) {
            let known: Vec<String> = imx6.iter().chain([&zcu]).map(|x| format!("{} / {} ns", x.dram.read_latency_ns, x.dram.row_conflict_ns)).collect();
            return Err(FieldError::new(
                "platform.dram.read_latency",
                format!(
                    "the transaction model times the DRAM of the i.MX6 or the ZCU102 (read latency / row conflict {}), not {} / {} ns: use --memory fluid, or one of those",
                    known.join(", "),
                    p.dram.read_latency_ns,
                    p.dram.row_conflict_ns
                ),
            ));
        }
    }
    let mut m = if zcu_memory { zcu102_machine() } else { Machine::imx6(false) };
    if p.cores > 32 {
        return Err(FieldError::new("platform.cores", "the transaction model supports at most 32 cores"));
    }
    m.cores = p.cores;
    m.llc_bytes = p.llc.size_bytes;
    m.llc_ways = p.llc.ways;
    m.line_bytes = p.llc.line_bytes;
    log2_exact(p.llc.line_bytes, "platform.llc.line")?;
    if p.llc.ways > 32 {
        return Err(FieldError::new("platform.llc.ways", "the transaction model supports at most 32 ways"));
    }
    log2_exact(p.llc.size_bytes / (p.llc.ways as u64 * p.llc.line_bytes).max(1), "platform.llc.size (sets)")?;
    if let Some((bytes, ways)) = m.l1 {
        if bytes / (ways as u64 * p.llc.line_bytes) == 0 {
            m.l1 = None;
        }
    }
    m.line_transfer_ps = ((p.llc.line_bytes as u128 * 1_000_000_000_000).div_ceil(p.bus.bandwidth_bytes_per_s.max(1) as u128) as u64).max(1);
    m.arbiter = p.bus.arbiter;
    let colour_bits = log2_exact(p.llc.colors as u64, "platform.llc.colors")?;
    let bank_bits = log2_exact(p.dram.banks as u64, "platform.dram.banks")?;
    let bank_shift = log2_exact(p.dram.bank_size_bytes, "platform.dram.bank_size")?;
    let page_shift = 12;
    if bank_shift < 20 || bank_shift + bank_bits > 40 {
        return Err(FieldError::new("platform.dram.bank_size", "the transaction model needs banks of 1 MiB to 1 TiB in all"));
    }
    m.map = AddressMap {
        page_shift,
        colour_bits: (page_shift..page_shift + colour_bits).map(|b| vec![b]).collect(),
        bank_bits: (bank_shift..bank_shift + bank_bits).map(|b| vec![b]).collect(),
        row_shift: 13,
        size_bytes: p.dram.bank_size_bytes << bank_bits,
    };
    Ok(m)
}

#[derive(Debug, Clone)]
struct PhaseTx {
    /// Cumulative work at which the phase ends (u64::MAX for the last).
    end_work_ns: u64,
    /// All references per ns of work (0: a CPU-only phase).
    refs_per_ns: f64,
    /// Working-set references per ns of work.
    user_per_ns: f64,
    read_fraction: f64,
    compute_ps: u64,
    extras: Vec<Extra>,
}

#[derive(Debug, Clone)]
struct TaskTx {
    pages: Arc<[u64]>,
    lines: u64,
    stream: bool,
    mask: u32,
    kernel_mask: u32,
    /// Kernel ways of the calibration run: the OS partition's, as under OS
    /// isolation (the PET does not include the OS's pressure on the partition).
    isolated_kernel_mask: u32,
    /// No phases: runs CPU-only.
    phases: Vec<PhaseTx>,
}

/// What a core runs, as far as the System is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum On {
    Idle,
    Stalled,
    /// A job without memory references (now).
    Cpu,
    Mem { task: u32, number: u32, phase: u32 },
}

pub struct TransactionModel {
    sys: System,
    page_bytes: u64,
    quantum_ns: u64,
    tasks: Vec<TaskTx>,
    on: Vec<On>,
    bus_priority: Option<Vec<u32>>,
    /// End of the current quantum (engine ns); NONE_U64 if none runs.
    window_end: u64,
    next_event: u64,
    /// The flows measured in the current quantum.
    measured: Flows,
    seed: u64,
    /// Quanta simulated, and the simulated time in them (ps).
    pub quanta: u64,
    pub simulated_ps: u64,
}

impl TransactionModel {
    /// Build the machine, allocate every task's pages and calibrate each
    /// task's compute per phase. `quantum_ns` > 0.
    pub fn new(system: &TaskSystem, quantum_ns: u64, seed: u64) -> Result<TransactionModel, FieldError> {
        if quantum_ns == 0 {
            return Err(FieldError::new("--quantum", "must be positive"));
        }
        let machine = machine_for(&system.platform)?;
        let p = &system.platform;
        let m = p.cores;
        let alloc = system.allocation.as_ref();
        let all_banks: Vec<u32> = (0..p.dram.banks).collect();
        let all_colours: Vec<u32> = (0..p.llc.colors).collect();
        let all_ways: u32 = if p.llc.ways == 32 { u32::MAX } else { (1u32 << p.llc.ways) - 1 };
        let banks_of = |part: Partition| -> Vec<u32> { alloc.and_then(|a| a.banks.iter().find(|(q, _)| *q == part)).map_or(all_banks.clone(), |(_, b)| b.clone()) };
        let colours_of = |part: Partition| -> Vec<u32> { alloc.and_then(|a| a.llc_colors.iter().find(|(q, _)| *q == part)).map_or(all_colours.clone(), |(_, c)| c.clone()) };
        // Contiguous way ranges from way 0: Level C, the OS, the lock region,
        // then each core's A/B partition (mc2-hardware-management Fig. 4);
        // partitions not listed share the ways nobody was given.
        let mut ranges: Vec<(Partition, u32)> = Vec::new();
        let mut remainder = all_ways;
        if let Some(a) = alloc.filter(|a| !a.llc_ways.is_empty()) {
            let mut order: Vec<Partition> = vec![Partition::LevelC, Partition::Os, Partition::Lock];
            order.extend((0..m).map(Partition::Core));
            let mut next = 0u32;
            for part in order {
                if let Some(w) = a.ways_of(part) {
                    let mask = if w == 0 { 0 } else { (((1u64 << w) - 1) << next) as u32 };
                    ranges.push((part, mask));
                    remainder &= !mask;
                    next += w;
                }
            }
        }
        let mask_of = |part: Partition| -> u32 {
            match alloc {
                Some(a) if !a.llc_ways.is_empty() => ranges.iter().find(|(q, _)| *q == part).map_or(remainder, |(_, mk)| *mk),
                _ => all_ways,
            }
        };
        let lists = ListBanks { level_ab: (0..m).map(|c| banks_of(Partition::Core(c))).collect(), level_c: banks_of(Partition::LevelC) };
        let mut pages = PageAllocator::new(machine.map.clone(), lists);
        let page_bytes = 1u64 << machine.map.page_shift;
        let line = machine.line_bytes;
        let os_isolation = alloc.is_some_and(|a| a.os_isolation);
        let os_part = if alloc.is_some_and(|a| a.mentions(Partition::Os)) { Partition::Os } else { Partition::LevelC };
        let lines_of = |addrs: &[u64], bytes: u64| -> Arc<[u64]> {
            let n = bytes.div_ceil(line).max(1);
            (0..n).map(|k| addrs[(k * line / page_bytes) as usize] + (k * line) % page_bytes).collect()
        };
        let mut tasks = Vec::with_capacity(system.tasks.len());
        for (i, t) in system.tasks.iter().enumerate() {
            let field = |f: &str| format!("task[{i}].{f}");
            let partition = match (t.level, t.core) {
                (Some(Level::A | Level::B), Some(c)) => Partition::Core(c),
                (None, Some(c)) if alloc.is_some_and(|a| a.mentions(Partition::Core(c))) => Partition::Core(c),
                _ => Partition::LevelC,
            };
            let list = match partition {
                Partition::Core(c) => PageAllocator::list_for(c, true),
                _ => List::LevelC,
            };
            let mask = mask_of(partition);
            let isolated_kernel_mask = mask_of(os_part);
            let kernel_mask = if os_isolation { isolated_kernel_mask } else { mask };
            let Some(mem) = &t.memory else {
                tasks.push(TaskTx { pages: Arc::from(Vec::new()), lines: 0, stream: false, mask, kernel_mask, isolated_kernel_mask, phases: Vec::new() });
                continue;
            };
            let colours = colours_of(partition);
            let (ce_bytes, ce_refs, sbp) = match &mem.ipc {
                Some(ipc) if ipc.method == IpcMethod::Ce => (ipc.bytes, ipc.accesses_per_ms / 1e6, None),
                Some(ipc) if ipc.method == IpcMethod::Sbp => (0, 0.0, Some((ipc.bytes, ipc.accesses_per_ms / 1e6))),
                _ => (0, 0.0, None),
            };
            let wss = (mem.wss_bytes + ce_bytes).max(line);
            let ws_pages = pages.alloc(list, &colours, wss).map_err(|e| FieldError::new(field("memory.wss"), format!("the transaction model cannot place the working set: {e}")))?;
            // SBP buffer: uncacheable, in the Level-C banks.
            let sbp = match sbp {
                Some((bytes, rate)) => {
                    let addrs = pages.alloc(List::LevelC, &colours_of(Partition::LevelC), bytes.max(1)).map_err(|e| FieldError::new(field("memory.ipc"), e.to_string()))?;
                    Some((lines_of(&addrs, bytes.max(1)), rate))
                }
                None => None,
            };
            // System calls: kernel pages from the Level-C list, in any colour
            // without OS isolation, in the OS partition's colours with it.
            let kernel = match &mem.syscalls {
                Some(s) if s.per_ms > 0.0 && s.footprint_bytes > 0 => {
                    let kc = if os_isolation { colours_of(os_part) } else { all_colours.clone() };
                    let addrs = pages.alloc(List::LevelC, &kc, s.footprint_bytes).map_err(|e| FieldError::new(field("memory.syscalls"), e.to_string()))?;
                    Some((lines_of(&addrs, s.footprint_bytes), s.per_ms / 1e6 * s.footprint_bytes.div_ceil(line) as f64))
                }
                _ => None,
            };
            let phases = mem
                .phases
                .iter()
                .zip(mem.phase_ends())
                .map(|(ph, end)| {
                    let user = ph.accesses_per_ms / 1e6 + ce_refs;
                    let extra_rates = [kernel.as_ref().map(|(l, r)| (l.clone(), *r, true, false)), sbp.as_ref().map(|(l, r)| (l.clone(), *r, false, true))];
                    let total = user + extra_rates.iter().flatten().map(|e| e.1).sum::<f64>();
                    let extras = if total > 0.0 {
                        extra_rates.into_iter().flatten().map(|(lines, r, kernel, uncached)| Extra { lines, share: r / total, kernel, uncached }).collect()
                    } else {
                        Vec::new()
                    };
                    PhaseTx { end_work_ns: end, refs_per_ns: total, user_per_ns: user, read_fraction: ph.read_fraction, compute_ps: 0, extras }
                })
                .collect();
            tasks.push(TaskTx {
                pages: Arc::from(ws_pages),
                lines: wss.div_ceil(line),
                stream: mem.pattern == AccessPattern::Stream,
                mask,
                kernel_mask,
                isolated_kernel_mask,
                phases,
            });
        }
        // Calibrate each task's compute per phase alone in its partition (in parallel).
        {
            use rayon::prelude::*;
            let jobs: Vec<(usize, usize)> = tasks.iter().enumerate().flat_map(|(i, t)| (0..t.phases.len()).map(move |k| (i, k))).collect();
            let computed: Vec<u64> = jobs.par_iter().map(|&(i, k)| calibrate(&machine, &tasks[i], k, page_bytes, seed ^ (i as u64 * 0x9e37) ^ k as u64)).collect();
            for (&(i, k), c) in jobs.iter().zip(computed) {
                tasks[i].phases[k].compute_ps = c;
            }
        }
        // DMA devices: bus masters of their own after the cores, writing their
        // buffers (in the banks of their `buffer` partition) from time 0.
        // Their interrupt handlers are not modelled here (fluid charges CPU 0).
        let mut full = machine.clone();
        full.cores += system.devices.len();
        let mut sys = System::new(full, seed ^ 0x7a5c);
        for (k, d) in system.devices.iter().enumerate() {
            let list = match d.buffer {
                Partition::Core(c) if c < m => List::LevelAB(c),
                _ => List::LevelC,
            };
            let buf = pages
                .alloc(list, &all_colours, d.bytes.max(line))
                .map_err(|e| FieldError::new(format!("device[{k}].buffer"), format!("the transaction model cannot place the buffer: {e}")))?;
            let stream = DmaStream::periodic(&buf, page_bytes, line, d.bandwidth_bytes_per_s as f64, d.bytes, d.period_ns * 1000);
            sys.run_on(m + k, Box::new(stream), 0, 0, false);
        }
        Ok(TransactionModel {
            sys,
            page_bytes,
            quantum_ns,
            tasks,
            on: vec![On::Idle; m],
            bus_priority: None,
            window_end: NONE_U64,
            next_event: NONE_U64,
            measured: Flows::new(m),
            seed,
            quanta: 0,
            simulated_ps: 0,
        })
    }

    /// Compute per reference of phase `k` of a task (ps), for the work between references.
    pub fn compute_ps(&self, task: usize, phase: usize) -> Option<u64> {
        self.tasks.get(task)?.phases.get(phase).map(|p| p.compute_ps)
    }

    pub fn machine(&self) -> &Machine {
        &self.sys.machine
    }

    fn phase_index(t: &TaskTx, job: &Job) -> usize {
        let done = job.exec_ns - job.remaining_ns;
        t.phases.iter().position(|p| p.end_work_ns > done).unwrap_or(t.phases.len() - 1)
    }

    /// Working-set references a job has made by the work it has done (its
    /// place in a stream).
    fn user_refs_done(t: &TaskTx, job: &Job) -> u64 {
        let done = job.exec_ns - job.remaining_ns;
        let mut start = 0u64;
        let mut refs = 0.0;
        for p in &t.phases {
            let end = p.end_work_ns.min(done);
            if end > start {
                refs += (end - start) as f64 * p.user_per_ns;
            }
            if p.end_work_ns >= done {
                break;
            }
            start = p.end_work_ns;
        }
        refs as u64
    }

    fn workload(&self, task: usize, job: &Job, phase: usize) -> Box<dyn Workload> {
        let t = &self.tasks[task];
        let ph = &t.phases[phase];
        let done = job.exec_ns - job.remaining_ns;
        let seed = self.seed ^ ((task as u64) << 40) ^ ((job.number as u64) << 20) ^ done.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let line = self.sys.machine.line_bytes;
        Box::new(Profile::new(
            t.pages.clone(),
            self.page_bytes,
            line,
            t.lines,
            t.stream,
            ph.read_fraction,
            ph.compute_ps,
            Self::user_refs_done(t, job),
            seed,
            &ph.extras,
            None,
        ))
    }
}

/// Compute between references (ps) so that the task, alone in its partition
/// with a warm cache, issues `refs_per_ns` references per ns: a few rounds of
/// c ← max(0, c + target − measured time per reference).
fn calibrate(machine: &Machine, t: &TaskTx, k: usize, page_bytes: u64, seed: u64) -> u64 {
    let ph = &t.phases[k];
    if ph.refs_per_ns <= 0.0 {
        return 0;
    }
    let target = 1000.0 / ph.refs_per_ns;
    let mut m = machine.clone();
    m.cores = 1;
    let mut sys = System::new(m, seed);
    // Warm up: every line once in order (at most twice the LLC's lines), extras included.
    let llc_lines = machine.llc_bytes / machine.line_bytes;
    let warm = t.lines.min(2 * llc_lines);
    let sweep = Profile::new(t.pages.clone(), page_bytes, machine.line_bytes, t.lines, true, ph.read_fraction, 0, 0, seed, &ph.extras, Some(warm));
    sys.run_on(0, Box::new(sweep), t.mask, t.isolated_kernel_mask, true);
    sys.run(u64::MAX);
    let mut compute = 0.0f64;
    for round in 0..4 {
        let start = sys.now_ps();
        let w = Profile::new(t.pages.clone(), page_bytes, machine.line_bytes, t.lines, t.stream, ph.read_fraction, compute.round() as u64, warm + round * CALIBRATION_REFS, seed + round + 1, &ph.extras, Some(CALIBRATION_REFS));
        sys.switch(0, None, t.mask, t.isolated_kernel_mask);
        sys.run_on(0, Box::new(w), t.mask, t.isolated_kernel_mask, true);
        sys.run(u64::MAX);
        let end = sys.core_stats(0).finished_ps.unwrap_or(sys.now_ps());
        let per = (end - start) as f64 / CALIBRATION_REFS as f64;
        let next = (compute + target - per).max(0.0);
        let settled = (next - compute).abs() <= 0.002 * target;
        compute = next;
        if settled {
            break;
        }
    }
    compute.round() as u64
}

impl MemoryModel for TransactionModel {
    #[allow(clippy::needless_range_loop)]
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        let m = running.len();
        let mut changed = false;
        let mut active = false;
        let prio_changed = match (&self.bus_priority, ctx.bus_priority) {
            (None, None) => false,
            (Some(a), Some(b)) => a.as_slice() != b,
            _ => true,
        };
        for c in 0..m {
            let on = match running[c] {
                None => On::Idle,
                Some(_) if !ctx.allowed[c] => On::Stalled,
                Some(id) => {
                    let job = jobs.get(id);
                    let t = &self.tasks[job.task as usize];
                    if t.phases.is_empty() {
                        On::Cpu
                    } else {
                        let k = Self::phase_index(t, job);
                        if t.phases[k].refs_per_ns > 0.0 {
                            On::Mem { task: job.task, number: job.number, phase: k as u32 }
                        } else {
                            On::Cpu
                        }
                    }
                }
            };
            active |= matches!(on, On::Mem { .. });
            if on != self.on[c] {
                changed = true;
                let workload = match (on, running[c]) {
                    (On::Mem { task, phase, .. }, Some(id)) => Some(self.workload(task as usize, jobs.get(id), phase as usize)),
                    _ => None,
                };
                let (user, kernel) = match (on, running[c]) {
                    (On::Mem { task, .. }, _) => (self.tasks[task as usize].mask, self.tasks[task as usize].kernel_mask),
                    _ => (0, 0),
                };
                self.sys.switch(c, workload, user, kernel);
                self.on[c] = on;
            }
        }
        if prio_changed {
            self.bus_priority = ctx.bus_priority.map(|p| p.to_vec());
            self.sys.set_bus_priority(self.bus_priority.clone());
            changed = true;
        }
        if !active {
            self.window_end = NONE_U64;
        } else if changed || now >= self.window_end {
            // A new quantum with what runs now.
            let q_ps = self.quantum_ns * 1000;
            let before: Vec<_> = (0..m).map(|c| self.sys.core_stats(c)).collect();
            let start = self.sys.now_ps();
            self.sys.run(start + q_ps);
            self.quanta += 1;
            self.simulated_ps += q_ps;
            let q = self.quantum_ns as f64;
            for c in 0..m {
                let (rate, requests, stall) = match self.on[c] {
                    On::Mem { task, phase, .. } => {
                        let (a, b) = (before[c], self.sys.core_stats(c));
                        let ph = &self.tasks[task as usize].phases[phase as usize];
                        let refs = (b.references - a.references) as f64;
                        let stall = (b.stall_ps - a.stall_ps) as f64 / q_ps as f64;
                        (refs / ph.refs_per_ns / q, (b.requests - a.requests) as f64 / q, stall.clamp(0.0, 1.0))
                    }
                    _ => (1.0, 0.0, 0.0),
                };
                self.measured.rate[c] = rate;
                self.measured.requests_per_ns[c] = requests;
                self.measured.stall[c] = stall;
            }
            self.window_end = now + self.quantum_ns;
        }
        for c in 0..m {
            (flows.rate[c], flows.requests_per_ns[c], flows.stall[c]) = match self.on[c] {
                On::Idle | On::Cpu => (1.0, 0.0, 0.0),
                On::Stalled => (0.0, 0.0, 1.0),
                On::Mem { .. } => (self.measured.rate[c], self.measured.requests_per_ns[c], self.measured.stall[c]),
            };
        }
        // The end of the quantum, and the next phase boundary.
        self.next_event = self.window_end;
        for (c, &on) in running.iter().enumerate() {
            let Some(id) = on else { continue };
            let rc = flows.rate[c];
            if rc <= 0.0 {
                continue;
            }
            let job = jobs.get(id);
            let t = &self.tasks[job.task as usize];
            if t.phases.is_empty() {
                continue;
            }
            let ph = &t.phases[Self::phase_index(t, job)];
            if ph.end_work_ns != u64::MAX && ph.end_work_ns < job.exec_ns {
                let left = (ph.end_work_ns - (job.exec_ns - job.remaining_ns)) as f64;
                self.next_event = self.next_event.min(now.saturating_add((left / rc).ceil() as u64));
            }
        }
    }

    fn next_event(&self) -> u64 {
        self.next_event
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RegulationKind;
    use crate::sim::sched::SchedulerKind;
    use crate::sim::{simulate, ExecModel, MemoryKind, SimConfig, SimResult};
    use crate::{parse_task_system, Format};

    const MS: u64 = 1_000_000;

    fn system(text: &str) -> TaskSystem {
        parse_task_system(text, Format::Toml, "test.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    fn run(sys: &TaskSystem, kind: MemoryKind, duration_ns: u64, regulation: Option<Option<RegulationKind>>, bin_ns: Option<u64>) -> SimResult {
        let config = SimConfig {
            exec: ExecModel::Pet(Level::C),
            record_jobs: true,
            memory_kind: kind,
            regulation,
            bandwidth_bin_ns: bin_ns,
            ..SimConfig::new(duration_ns)
        };
        simulate(sys, SchedulerKind::Pfp, &config).unwrap_or_else(|e| panic!("{e:?}"))
    }

    const TX: MemoryKind = MemoryKind::Transaction { quantum_ns: DEFAULT_QUANTUM_NS };

    const UB: &str = r#"
[[task]]
name = "ub"
core = 0
period = "50ms"
pet = "10ms"
memory = { wss = "256KiB", pattern = "random", read_fraction = 0.8, accesses_per_ms = 4000 }
"#;

    fn bombs() -> String {
        (1..4)
            .map(|c| {
                format!(
                    "\n[[task]]\nname = \"bomb{c}\"\ncore = {c}\nperiod = \"500ms\"\npet = \"500ms\"\nmemory = {{ wss = \"8MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 40000 }}\n"
                )
            })
            .collect()
    }

    /// Mean response of the µB task's jobs after the first (cold) one.
    fn warm_response_ms(r: &SimResult) -> f64 {
        let rs: Vec<f64> = r.records.iter().filter(|x| x.task == 0 && x.number > 1).map(|x| x.response_ns() as f64 / 1e6).collect();
        assert!(!rs.is_empty());
        rs.iter().sum::<f64>() / rs.len() as f64
    }

    fn platform(allocation: &str) -> String {
        format!("[platform]\npreset = \"sabre-lite\"\ncores = 4\n{allocation}\n")
    }

    const PARTITIONED: &str = "[allocation]\nllc_ways = { core0 = 4, core1 = 4, core2 = 4, core3 = 4 }\nbanks = { core0 = [4], core1 = [5], core2 = [6], core3 = [7] }";

    #[test]
    fn a_task_alone_whose_working_set_fits_its_partition_runs_at_its_pet() {
        // 256 KiB in 8 of the 16 ways (512 KiB): after the first, cold job every job takes its PET.
        let sys = system(&format!("{}{UB}", platform("[allocation]\nllc_ways = { core0 = 8 }\nbanks = { core0 = [4] }")));
        let r = run(&sys, TX, 300 * MS, None, None);
        for j in r.records.iter().filter(|x| x.number > 1) {
            let ratio = j.response_ns() as f64 / (10 * MS) as f64;
            assert!((ratio - 1.0).abs() < 0.02, "job {}: {} ns", j.number, j.response_ns());
        }
        assert!(r.records.len() >= 5);
        // The first job loads its working set: slower, by at most the 8,192 misses.
        let first = r.records[0].response_ns();
        assert!(first > 10 * MS && first < 10 * MS + 8192 * 300, "{first}");
        assert!(r.per_task[0].memory_requests > 8000.0);
    }

    #[test]
    fn memory_bombs_slow_a_task_more_without_partitions_than_with_them() {
        // 1 MiB random working set: 4 ways (256 KiB) hold a quarter of it, so it
        // misses even alone and meets the bombs on the bus.
        let ub = UB.replace("256KiB", "1MiB");
        let alone = warm_response_ms(&run(&system(&format!("{}{ub}", platform(PARTITIONED))), TX, 200 * MS, None, None));
        let part = warm_response_ms(&run(&system(&format!("{}{ub}{}", platform(PARTITIONED), bombs())), TX, 200 * MS, None, None));
        let unmanaged = warm_response_ms(&run(&system(&format!("{}{ub}{}", platform(""), bombs())), TX, 200 * MS, None, None));
        assert!((alone / 10.0 - 1.0).abs() < 0.03, "alone {alone} ms");
        assert!(part > 1.05 * alone, "partitioned {part} ms vs alone {alone} ms");
        assert!(unmanaged > 1.1 * part, "unmanaged {unmanaged} ms vs partitioned {part} ms");
    }

    #[test]
    fn dma_into_a_tasks_bank_slows_it_more_than_dma_elsewhere() {
        // mc2-io Obs. 4–5 under --memory transaction: 400 KB every 1 ms at 400 MB/s.
        let ub = UB.replace("256KiB", "1MiB");
        let device = |buffer: &str| format!("\n[[device]]\nname = \"ssd\"\nperiod = \"1ms\"\nbytes = \"400KB\"\nbandwidth = \"400MB/s\"\nbuffer = \"{buffer}\"\n");
        let run_with = |extra: &str| warm_response_ms(&run(&system(&format!("{}{ub}{extra}", platform(PARTITIONED))), TX, 200 * MS, None, None));
        let alone = run_with("");
        let elsewhere = run_with(&device("core3"));
        let own = run_with(&device("core0"));
        assert!(own > 1.05 * elsewhere, "own bank {own} ms, elsewhere {elsewhere} ms");
        assert!(elsewhere >= 0.99 * alone, "elsewhere {elsewhere} ms, alone {alone} ms");
    }

    #[test]
    fn memguard_keeps_every_core_within_its_budget_per_period() {
        let budgets = [20_000u64, 3_000, 3_000, 3_000];
        let reg = "[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\nbudgets = [20000, 3000, 3000, 3000]\n";
        let ub = UB.replace("256KiB", "1MiB");
        let sys = system(&format!("{}{reg}{ub}{}", platform(PARTITIONED), bombs()));
        let r = run(&sys, TX, 50 * MS, None, Some(MS));
        for (core, &qm) in budgets.iter().enumerate() {
            let peak = r.bandwidth[core].iter().copied().fold(0.0, f64::max);
            assert!(peak <= qm as f64 + 2.0, "core {core}: {peak} requests in a period, budget {qm}");
        }
        // The bombs are held at their budget in (nearly) every period.
        for core in 1..4 {
            let full = r.bandwidth[core].iter().filter(|&&b| b >= budgets[core] as f64 - 2.0).count();
            assert!(full >= 45, "core {core}: {full} full periods of 50");
        }
        // Unregulated, they issue far more.
        let free = run(&sys, TX, 10 * MS, Some(None), Some(MS));
        assert!(free.bandwidth[1].iter().copied().fold(0.0, f64::max) > 5.0 * budgets[1] as f64);
    }

    #[test]
    fn without_memory_profiles_fluid_and_transaction_agree_on_every_job() {
        let text = format!(
            "{}[[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"3ms\"\n[[task]]\nname = \"b\"\ncore = 0\nperiod = \"15ms\"\npet = \"6ms\"\n[[task]]\nname = \"c\"\ncore = 1\nperiod = \"7ms\"\npet = \"5ms\"\n",
            platform("")
        );
        let sys = system(&text);
        let f = run(&sys, MemoryKind::Fluid, 300 * MS, None, None);
        let t = run(&sys, TX, 300 * MS, None, None);
        let counts = |r: &SimResult| r.per_task.iter().map(|s| (s.released, s.completed, s.misses)).collect::<Vec<_>>();
        assert_eq!(counts(&f), counts(&t));
        assert_eq!(f.records, t.records);
    }

    #[test]
    fn a_preempted_job_reloads_only_what_a_preemptor_in_its_ways_evicted() {
        // One core under MC² (1 MiB LLC, 16 ways, 32 B lines): a Level-B sweeper,
        // 1 ms of work every 10 ms at 40,000 references per ms of a 2 MiB stream
        // (40,000 new lines, 1.25 MiB, a job), preempts a Level-C victim (8 ms of
        // work every 20 ms) once per job. The victim streams over 256 KiB (8,192
        // lines), reads only, 32,000 references a job: its first job loads the
        // set, and a later one misses only on lines someone else evicted (the
        // caches keep their state across preemptions).
        let text = |allocation: &str| {
            format!(
                "[platform]\npreset = \"sabre-lite\"\ncores = 1\n{allocation}\n\
                 [[task]]\nname = \"victim\"\nlevel = \"C\"\nperiod = \"20ms\"\npet = {{ C = \"8ms\" }}\n\
                 memory = {{ wss = \"256KiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 4000 }}\n\
                 [[task]]\nname = \"sweeper\"\nlevel = \"B\"\ncore = 0\nperiod = \"10ms\"\npet = {{ B = \"1ms\", C = \"1ms\" }}\n\
                 memory = {{ wss = \"2MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 40000 }}\n"
            )
        };
        let config = SimConfig { exec: ExecModel::Pet(Level::C), record_jobs: true, memory_kind: TX, ..SimConfig::new(200 * MS) };
        let victim_requests = |allocation: &str| -> Vec<u64> {
            let r = simulate(&system(&text(allocation)), SchedulerKind::Mc2, &config).unwrap_or_else(|e| panic!("{e:?}"));
            let jobs: Vec<_> = r.records.iter().filter(|j| j.task == 0 && j.number > 1).collect();
            assert!(jobs.len() >= 8 && jobs.iter().all(|j| j.preemptions == 1), "{jobs:?}");
            jobs.iter().map(|j| j.memory_requests).collect()
        };
        // The sweeper allocates only in core0's 8 ways, the victim's lines stay in
        // levelC's 8 (512 KiB): nothing of the victim's is evicted, no job after
        // the first issues a single request.
        let apart = victim_requests("[allocation]\nllc_ways = { core0 = 8, levelC = 8 }");
        assert!(apart.iter().all(|&n| n == 0), "{apart:?}");
        // Sharing all 16 ways, the sweeper's lines evict some of the victim's,
        // which it loads again after every preemption.
        let shared = victim_requests("");
        assert!(shared.iter().all(|&n| n > 0), "{shared:?}");
    }

    #[test]
    fn machines_of_both_presets_and_clean_errors() {
        let m = machine_for(&Platform::preset("imx6").unwrap()).unwrap();
        let imx6 = Machine::imx6(false);
        assert_eq!((m.map.clone(), m.line_transfer_ps, m.llc_bytes), (imx6.map, imx6.line_transfer_ps, imx6.llc_bytes));
        let z = machine_for(&Platform::preset("zcu102").unwrap()).unwrap();
        assert_eq!((z.line_bytes, z.map.banks(), z.map.colours(), z.timing.name), (64, 16, 16, "ddr4-2400"));
        assert!(z.map.bank_bits[0][0] > z.map.row_shift);
        let mut p = Platform::preset("imx6").unwrap();
        p.dram.banks = 6;
        assert_eq!(machine_for(&p).unwrap_err().field, "platform.dram.banks");
        // The fitted i.MX6 is the same machine; other DRAM latencies are none it has.
        assert!(machine_for(&Platform::preset("imx6-transaction").unwrap()).is_ok());
        let mut p = Platform::preset("imx6").unwrap();
        p.dram.read_latency_ns = 60;
        let e = machine_for(&p).unwrap_err();
        assert_eq!(e.field, "platform.dram.read_latency");
        assert!(e.reason.contains("not 60 / 30 ns: use --memory fluid"), "{}", e.reason);
        let mut z = Platform::preset("zcu102").unwrap();
        z.llc.ways = 8;
        assert_eq!(machine_for(&z).unwrap_err().field, "platform.dram.read_latency");
    }
}
