//! Fluid memory model, its equations (docs/memory-model.md).
//! The simulator solves them over time (`sim::memory::fluid`); the analysis
//! takes their worst case (`analysis::memory`).
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

use crate::model::{AccessPattern, Arbiter, IpcMethod, Level, Partition, TaskSystem};

/// Where a task's lines live in the LLC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// A partition of the allocation.
    Alloc(Partition),
    /// No allocation: the whole LLC, shared by everyone.
    Shared,
    /// Partitions the allocation does not list: the leftover ways, shared.
    Remainder,
}

#[derive(Debug, Clone)]
pub(crate) struct PhaseMem {
    /// Cumulative work at which the phase ends (u64::MAX for the last).
    pub(crate) end_work_ns: u64,
    /// LLC references per ns of work (including CE buffer references).
    pub(crate) refs_per_ns: f64,
    pub(crate) read_fraction: f64,
    /// Compute share c = 1 − a·m₀·t₀ − (uncacheable reads)·L, alone in the partition.
    pub(crate) compute: f64,
}

#[derive(Debug, Clone)]
pub(crate) struct TaskMem {
    pub(crate) phases: Vec<PhaseMem>,
    /// Working set including a CE buffer.
    pub(crate) wss: f64,
    pub(crate) pattern: AccessPattern,
    pub(crate) part: Part,
    /// Capacity of the partition in bytes.
    pub(crate) capacity: f64,
    /// Index of the task's bank set in `Fluid::bank_sets`.
    pub(crate) banks: usize,
    /// Uncacheable reads of the Level-C banks per ns of work: SBP buffer
    /// references plus the lines system calls touch.
    pub(crate) extra_refs_per_ns: f64,
    /// The system calls' kernel lines per ns of work (part of `extra_refs_per_ns`).
    pub(crate) kernel_lines_per_ns: f64,
    /// Kernel lines a running task keeps in the LLC (system calls).
    pub(crate) os_footprint: f64,
}

#[derive(Debug, Clone)]
pub(crate) struct DeviceMem {
    pub(crate) period_ns: u64,
    /// Length of one transfer.
    pub(crate) active_ns: u64,
    pub(crate) requests_per_ns: f64,
    pub(crate) banks: usize,
    /// Share of CPU 0 its interrupt handlers take.
    pub(crate) irq_share: f64,
}

/// The fluid model's terms for one task system: where each task's lines
/// live, what each phase issues, the bus and DRAM constants. The simulator
/// solves the flows from these; the analysis bounds them (`worst_case`).
#[derive(Debug, Clone)]
pub struct FluidRules {
    pub(crate) line_bytes: f64,
    /// S: bus time of one line.
    pub(crate) service_ns: f64,
    pub(crate) read_latency_ns: f64,
    pub(crate) row_conflict_ns: f64,
    pub(crate) arbiter: Arbiter,
    pub(crate) os_isolation: bool,
    pub(crate) tasks: Vec<TaskMem>,
    pub(crate) devices: Vec<DeviceMem>,
    pub(crate) bank_sets: Vec<(Vec<u64>, u32)>,
    pub(crate) level_c_banks: usize,
    /// R·|B_a ∩ B_b| / (|B_a|·|B_b|) for bank sets a, b: `coeff[a * bank_sets.len() + b]`.
    pub(crate) coeff: Vec<f64>,
}

pub(crate) fn miss_ratio(pattern: AccessPattern, cache: f64, wss: f64) -> f64 {
    if wss <= 0.0 || cache >= wss {
        return 0.0;
    }
    match pattern {
        AccessPattern::Random => 1.0 - cache / wss,
        AccessPattern::Stream => 1.0,
    }
}

fn bank_set(banks: &[u32], total: u32) -> (Vec<u64>, u32) {
    let mut set = vec![0u64; (total as usize).div_ceil(64)];
    for &b in banks {
        set[b as usize / 64] |= 1 << (b % 64);
    }
    (set, banks.len() as u32)
}

impl FluidRules {
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
                        kernel_lines_per_ns: 0.0,
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
                    kernel_lines_per_ns: sys_lines,
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
        let mut rules = FluidRules {
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
        };
        // Isolated compute share of every phase (per job it only depends on the phase).
        for i in 0..rules.tasks.len() {
            let tm = &rules.tasks[i];
            let m0 = miss_ratio(tm.pattern, tm.capacity, tm.wss);
            let compute: Vec<f64> = tm
                .phases
                .iter()
                .map(|ph| (1.0 - ph.refs_per_ns * m0 * rules.isolated_miss_ns(ph.read_fraction) - tm.extra_refs_per_ns * rules.read_latency_ns).max(0.0))
                .collect();
            for (ph, c) in rules.tasks[i].phases.iter_mut().zip(compute) {
                ph.compute = c;
            }
        }
        rules
    }

    /// Isolated cost of one miss for a read fraction rf.
    pub(crate) fn isolated_miss_ns(&self, rf: f64) -> f64 {
        rf * self.read_latency_ns + (1.0 - rf) * self.service_ns
    }

    /// Lines of task `i` its partition can hold for it: min(WSS, partition);
    /// none for a stream larger than its partition (it misses everything anyway).
    pub(crate) fn cached_lines(&self, i: usize) -> f64 {
        let tm = &self.tasks[i];
        if tm.phases.is_empty() || (tm.pattern == AccessPattern::Stream && tm.wss > tm.capacity) {
            return 0.0;
        }
        tm.wss.min(tm.capacity) / self.line_bytes
    }

    /// LLC references task `i` makes from work `from` to work `to` of a job.
    pub(crate) fn refs_between(&self, i: usize, from: u64, to: u64) -> f64 {
        let mut start = 0u64;
        let mut refs = 0.0;
        for ph in &self.tasks[i].phases {
            let (a, b) = (start.max(from), ph.end_work_ns.min(to));
            if b > a {
                refs += (b - a) as f64 * ph.refs_per_ns;
            }
            start = ph.end_work_ns;
        }
        refs
    }

    /// Reload rule (docs/memory-model.md item 6): a job coming back to its
    /// core (resumed, or a new job of its task) reloads the lines it had
    /// cached that the `brought_in` lines since it (its task) left could
    /// have evicted, and that it still uses: at most its cached lines and
    /// its references left (|UCB ∩ ECB|, a useful block being one it
    /// references again; docs/references.md, CRPD).
    pub(crate) fn reload_lines(&self, i: usize, brought_in: f64, refs_left: f64) -> f64 {
        brought_in.max(0.0).min(self.cached_lines(i)).min(refs_left)
    }

    /// Whether nothing can ever evict task `i`'s lines: every task of its
    /// partition fits in it together (kernel footprints included without OS
    /// isolation), and no system call brings kernel lines into it.
    pub(crate) fn never_evicted(&self, i: usize) -> bool {
        let tm = &self.tasks[i];
        let mates: f64 = self.tasks.iter().filter(|o| o.part == tm.part).map(|o| o.wss).sum();
        if self.os_isolation {
            return mates <= tm.capacity;
        }
        let kernel: f64 = self.tasks.iter().map(|o| o.os_footprint).sum();
        mates + kernel <= tm.capacity && self.tasks.iter().all(|o| o.kernel_lines_per_ns == 0.0)
    }

    /// The most lines a new job of task `i` reloads at its start
    /// (docs/memory-model.md item 6): none where nothing can evict its
    /// lines. Where one other task j of its partition has memory, j's set
    /// fits in the partition and no kernel lines land, between i's jobs only
    /// j runs there, missing on nothing but its reloads, and only one of
    /// those sees lines brought in before j last left (i's; j's own come
    /// before its next mark): at most j's cached lines are brought in.
    pub(crate) fn cold_lines(&self, i: usize, refs: f64) -> f64 {
        if self.never_evicted(i) {
            return 0.0;
        }
        let tm = &self.tasks[i];
        let mut mates = (0..self.tasks.len()).filter(|&j| j != i && self.tasks[j].part == tm.part && !self.tasks[j].phases.is_empty());
        let kernel = !self.os_isolation && self.tasks.iter().any(|o| o.kernel_lines_per_ns > 0.0);
        let brought_in = match (mates.next(), mates.next()) {
            (Some(j), None) if !kernel && self.tasks[j].wss <= self.tasks[j].capacity => self.cached_lines(j),
            _ => f64::INFINITY,
        };
        self.reload_lines(i, brought_in, refs)
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
    /// The part of `time_per_work` that is bus wait and row conflicts (the
    /// contention other cores' traffic causes), at their worst.
    pub contention_per_work: f64,
    /// Requests per ns of work with no co-runner running (the LLC partition
    /// to itself): the rest of `requests_per_work` needs a co-runner running.
    pub alone_requests_per_work: f64,
    /// `time_per_work` at the alone miss ratio (no co-runner running; waits
    /// and conflicts still at their worst).
    pub alone_time_per_work: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorstCase {
    pub phases: Vec<WorstPhase>,
    /// Work added when the job resumes after a preemption (the reload), ns.
    pub reload_work_ns: u64,
    /// Work added when a job starts and its task's lines may have been
    /// evicted since its last job (the same rule, once per job), ns.
    pub cold_work_ns: u64,
    /// Work all of a job's resumptions add together, ns: its reloads and its
    /// start's reload miss at most once per reference, so beyond the cold
    /// start charged above at most its references less those lines.
    pub job_reload_work_ns: u64,
    /// Most requests per ns of wall time a job can issue (no wait, no
    /// conflict, no interrupt share, its worst miss ratio).
    pub fastest_request_rate: f64,
}

impl FluidRules {
    /// Bounds of every term of the per-miss time, taken one by one: the
    /// smallest LLC share (the m − 1 largest co-runners of its partition and,
    /// without OS isolation, its own and the m − 1 largest co-runners' kernel
    /// footprints pressing on it),
    /// the arbiter's longest wait (round robin, FCFS, aging: (n − 1)·S with
    /// n ≤ m + devices, and at most the queue's S·ρ/(1 − ρ) at the most bus
    /// share ρ the co-runners can use, [`FluidRules::fair_wait_ns`]; TDMA
    /// m·S/2; fixed priority ρ ≤ 0.999 plus half a line),
    /// a row conflict with probability p ≤ 1 and at most what the
    /// co-runners can open rows with ([`FluidRules::row_conflicts_ns`]), and CPU 0's interrupt share
    /// taken from every task. `pet_ns` per task is the work a job does;
    /// `corunner(i, j)`: task j may run while task i does (on another core),
    /// so only those press on i's LLC share, queue before it and open rows
    /// in its banks; `apart(i, j)` the same for every task that may ever
    /// run beside i (a superset: a view may leave co-runners out and charge
    /// them otherwise), which bounds how fast each co-runner issues.
    pub fn worst_case(&self, pet_ns: &[u64], cores: usize, corunner: impl Fn(usize, usize) -> bool, apart: impl Fn(usize, usize) -> bool) -> Vec<WorstCase> {
        let wait = self.worst_wait_ns(cores);
        let fastest: Vec<f64> = (0..self.tasks.len()).map(|j| self.fastest_request_rate(j, cores, &apart)).collect();
        if matches!(self.arbiter, Arbiter::FixedPriority | Arbiter::Tdma) {
            return self.worst_case_waiting(pet_ns, cores, &corunner, &fastest, |_| wait);
        }
        let loads: Vec<f64> = fastest.iter().map(|r| r * self.service_ns).collect();
        self.worst_case_waiting(pet_ns, cores, &corunner, &fastest, |i| self.fair_wait_ns(i, wait, cores, &loads, &corunner))
    }

    /// Task i's row-conflict time per request, for its requests to its own
    /// banks and its uncacheable ones (Level C's): R·p, p at most 1 and at
    /// most what the DMA devices and the m − 1 busiest of its co-runners can
    /// open rows with, each at its fastest request rate (`fastest`) times
    /// the largest of its streams' coefficients R·|B ∩ B'|/(|B|·|B'|) (item
    /// 4 of docs/memory-model.md).
    fn row_conflicts_ns(&self, i: usize, cores: usize, fastest: &[f64], corunner: &impl Fn(usize, usize) -> bool) -> (f64, f64) {
        let nb = self.bank_sets.len();
        let coeff = |a: usize, b: usize| self.coeff[a * nb + b];
        let lc = self.level_c_banks;
        let p = |own: usize| -> f64 {
            let dma: f64 = self.devices.iter().map(|d| d.requests_per_ns * coeff(own, d.banks)).sum();
            (dma + self.busiest(i, cores, corunner, |j| fastest[j] * coeff(own, self.tasks[j].banks).max(coeff(own, lc)))).min(1.0)
        };
        (p(self.tasks[i].banks) * self.row_conflict_ns, p(lc) * self.row_conflict_ns)
    }

    /// A fair arbiter's longest wait for task i's requests: at most one
    /// round (`round_ns`), and at most the single-server queue's S·ρ/(1 − ρ)
    /// (item 3 of docs/memory-model.md) at the most bus share ρ the others
    /// can use, every DMA device at its rate and the m − 1 busiest of i's
    /// co-runners at their fastest (`loads`: fastest request rate × S; each
    /// other core runs one of them at a time).
    fn fair_wait_ns(&self, i: usize, round_ns: f64, cores: usize, loads: &[f64], corunner: &impl Fn(usize, usize) -> bool) -> f64 {
        let rho = self.devices.iter().map(|d| d.requests_per_ns * self.service_ns).sum::<f64>() + self.busiest(i, cores, corunner, |j| loads[j]);
        if rho >= 0.999 {
            return round_ns;
        }
        round_ns.min(self.service_ns * rho / (1.0 - rho))
    }

    /// The sum of the m − 1 largest `value(j)` over task i's co-runners j:
    /// each other core runs one of them at a time.
    fn busiest(&self, i: usize, cores: usize, corunner: &impl Fn(usize, usize) -> bool, value: impl Fn(usize) -> f64) -> f64 {
        let mut values: Vec<f64> = (0..self.tasks.len()).filter(|&j| j != i && corunner(i, j)).map(value).collect();
        values.sort_by(|a, b| b.total_cmp(a));
        values.iter().take(cores.saturating_sub(1)).sum()
    }

    /// The arbiter's longest wait per request (see [`FluidRules::worst_case`]).
    fn worst_wait_ns(&self, cores: usize) -> f64 {
        let s = self.service_ns;
        match self.arbiter {
            Arbiter::FixedPriority => s * 0.999 / 0.001 + 0.5 * s,
            Arbiter::Tdma => 0.5 * cores as f64 * s,
            _ => (cores + self.devices.len()).saturating_sub(1) as f64 * s,
        }
    }

    /// As [`FluidRules::worst_case`] under MCTI (mcti-task-isolation §4 rule
    /// 5, §5.2.2): the interconnect may be the platform's arbiter or, while a
    /// core overloads, fixed priority, where a request waits behind the
    /// traffic of cores ranked at or above its own (any other core, at worst)
    /// plus half a line. That traffic is bounded by what the other cores can
    /// issue: per core, the fastest request rate of a task placed there,
    /// (a·m + e)/(c + a·m·t₀ + e·L) at its worst miss ratio m and its
    /// isolated miss cost t₀ (no wait, no conflict, no interrupt share), so
    /// ρ = Σ those rates × S; at ρ ≥ 0.999 (or with DMA devices, which go
    /// ahead of every core) the model's cap. `core_of[i]`: task i's core.
    /// Property 1 ranks a core running a non-critical task 0, below every
    /// critical one: a critical task waits only behind the cores' critical
    /// tasks (`critical[i]`), and with no critical task no core ever
    /// overloads, so the arbiter serves throughout.
    pub fn worst_case_mcti(&self, pet_ns: &[u64], cores: usize, corunner: impl Fn(usize, usize) -> bool, core_of: &[Option<usize>], critical: &[bool]) -> Vec<WorstCase> {
        let s = self.service_ns;
        let fastest: Vec<f64> = (0..self.tasks.len()).map(|i| self.fastest_request_rate(i, cores, &corunner)).collect();
        let per_core = |only_critical: bool| -> Vec<f64> {
            (0..cores).map(|k| (0..self.tasks.len()).filter(|&j| core_of[j] == Some(k) && (critical[j] || !only_critical)).map(|j| fastest[j]).fold(0.0, f64::max) * s).collect()
        };
        let (any, critical_only) = (per_core(false), per_core(true));
        let round = self.worst_wait_ns(cores);
        let loads: Vec<f64> = fastest.iter().map(|r| r * s).collect();
        let overloads = critical.iter().any(|&c| c);
        self.worst_case_waiting(pet_ns, cores, &corunner, &fastest, |i| {
            let fair = if matches!(self.arbiter, Arbiter::FixedPriority | Arbiter::Tdma) { round } else { self.fair_wait_ns(i, round, cores, &loads, &corunner) };
            if !overloads {
                return fair;
            }
            let ranked = if critical[i] { &critical_only } else { &any };
            let rho: f64 = match core_of[i] {
                Some(c) if self.devices.is_empty() && core_of.iter().all(Option::is_some) => (0..cores).filter(|&k| k != c).map(|k| ranked[k]).sum(),
                _ => 1.0,
            };
            let fixed = if rho < 0.999 { s * rho / (1.0 - rho) } else { s * 0.999 / 0.001 } + 0.5 * s;
            fair.max(fixed)
        })
    }

    /// The most requests per ns of wall time task i can issue: its worst miss
    /// ratio at its isolated miss cost, no wait, no conflict, no interrupt
    /// share, (a·m + e)/(c + a·m·t₀ + e·L).
    fn fastest_request_rate(&self, i: usize, cores: usize, corunner: &impl Fn(usize, usize) -> bool) -> f64 {
        let (miss, m0) = self.worst_miss(i, cores, corunner);
        self.fastest_at(i, miss, m0)
    }

    /// [`FluidRules::fastest_request_rate`] at miss ratios found already.
    fn fastest_at(&self, i: usize, miss: f64, m0: f64) -> f64 {
        let tm = &self.tasks[i];
        tm.phases
            .iter()
            .map(|ph| {
                let compute = (1.0 - ph.refs_per_ns * m0 * self.isolated_miss_ns(ph.read_fraction) - tm.extra_refs_per_ns * self.read_latency_ns).max(0.0);
                let issued = ph.refs_per_ns * miss + tm.extra_refs_per_ns;
                let time = compute + ph.refs_per_ns * miss * self.isolated_miss_ns(ph.read_fraction) + tm.extra_refs_per_ns * self.read_latency_ns;
                if issued > 0.0 {
                    issued / time.max(1e-12)
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max)
    }

    /// Task i's miss ratio at its smallest LLC share beside its co-runners,
    /// and alone in its partition.
    fn worst_miss(&self, i: usize, cores: usize, corunner: &impl Fn(usize, usize) -> bool) -> (f64, f64) {
        let (worst, m0, _) = self.worst_and_alone_miss(i, cores, corunner);
        (worst, m0)
    }

    /// As [`FluidRules::worst_miss`], and the miss ratio with no co-runner
    /// running (its own kernel lines still pressing, without OS isolation).
    fn worst_and_alone_miss(&self, i: usize, cores: usize, corunner: &impl Fn(usize, usize) -> bool) -> (f64, f64, f64) {
        let tm = &self.tasks[i];
        (self.miss_beside(i, None, cores, corunner), miss_ratio(tm.pattern, tm.capacity, tm.wss), self.alone_miss(i))
    }

    /// Task i's miss ratio with no co-runner running (its own kernel lines
    /// still pressing, without OS isolation).
    fn alone_miss(&self, i: usize) -> f64 {
        let tm = &self.tasks[i];
        let alone = tm.wss + if self.os_isolation { 0.0 } else { tm.os_footprint };
        miss_ratio(tm.pattern, self.share(i, alone), tm.wss)
    }

    /// Task i's LLC share with `pressure` bytes pressing on its partition.
    fn share(&self, i: usize, pressure: f64) -> f64 {
        let tm = &self.tasks[i];
        if pressure <= tm.capacity { tm.wss } else { tm.capacity * tm.wss / pressure }
    }

    /// Task i's miss ratio at its smallest LLC share while its co-runners
    /// run: the m − 1 largest working sets of its partition among them
    /// (and, without OS isolation, its own and their m − 1 largest kernel
    /// footprints), task `with` one of them where given.
    fn miss_beside(&self, i: usize, with: Option<usize>, cores: usize, corunner: &impl Fn(usize, usize) -> bool) -> f64 {
        let tm = &self.tasks[i];
        // The k largest (none on two cores beside `with`: nothing to collect).
        let largest = |v: &mut dyn Iterator<Item = f64>, k: usize| -> f64 {
            if k == 0 {
                return 0.0;
            }
            let mut v: Vec<f64> = v.collect();
            v.sort_by(|a, b| b.total_cmp(a));
            v.iter().take(k).sum()
        };
        let beside = |j: usize| j != i && Some(j) != with && corunner(i, j);
        let rest = cores.saturating_sub(1 + with.is_some() as usize);
        let with_wss = with.map_or(0.0, |j| if self.tasks[j].part == tm.part { self.tasks[j].wss } else { 0.0 });
        let mut others = self.tasks.iter().enumerate().filter(|&(j, o)| beside(j) && o.part == tm.part).map(|(_, o)| o.wss);
        let os = if self.os_isolation {
            0.0
        } else {
            tm.os_footprint + with.map_or(0.0, |j| self.tasks[j].os_footprint) + largest(&mut self.tasks.iter().enumerate().filter(|&(j, _)| beside(j)).map(|(_, o)| o.os_footprint), rest)
        };
        let pressure = tm.wss + with_wss + largest(&mut others, rest) + os;
        miss_ratio(tm.pattern, self.share(i, pressure), tm.wss)
    }

    /// The most requests per ns of work task i issues above its alone count
    /// (`worst_case`'s `alone_requests_per_work`) while task j runs on
    /// another core: j one of its m − 1 co-runners (the others the largest).
    pub fn excess_beside(&self, i: usize, j: usize, cores: usize, corunner: impl Fn(usize, usize) -> bool) -> f64 {
        let alone = self.alone_miss(i);
        let miss = self.miss_beside(i, Some(j), cores, &corunner);
        self.tasks[i].phases.iter().map(|ph| ph.refs_per_ns * (miss - alone.min(miss))).fold(0.0, f64::max)
    }

    /// Whether task j running on another core can raise task i's misses
    /// above its alone ratio: it shares i's partition, or, without OS
    /// isolation, its kernel lines press on every partition.
    pub fn presses_on(&self, i: usize, j: usize) -> bool {
        let (ti, tj) = (&self.tasks[i], &self.tasks[j]);
        !ti.phases.is_empty() && !tj.phases.is_empty() && (ti.part == tj.part || (!self.os_isolation && tj.os_footprint > 0.0))
    }

    /// The fewest requests per ns of wall time task j issues while task i
    /// runs beside it on another core: its miss ratio at the LLC share left
    /// with at least i's working set (and kernel lines) pressing on its
    /// partition, over its longest time per ns of work (`worst_case`'s,
    /// `time_per_work`). 0 when i may leave j its whole working set (j may
    /// then run beside i without issuing anything).
    pub fn least_rate_beside(&self, j: usize, i: usize, worst_j: &WorstCase) -> f64 {
        let (tj, ti) = (&self.tasks[j], &self.tasks[i]);
        if tj.phases.is_empty() {
            return 0.0;
        }
        let os = if self.os_isolation { 0.0 } else { tj.os_footprint + ti.os_footprint };
        let pressure = tj.wss + if ti.part == tj.part { ti.wss } else { 0.0 } + os;
        let share = if pressure <= tj.capacity { tj.wss } else { tj.capacity * tj.wss / pressure };
        let miss = miss_ratio(tj.pattern, share, tj.wss);
        tj.phases
            .iter()
            .zip(&worst_j.phases)
            .filter(|(_, w)| w.work_ns > 0)
            .map(|(ph, w)| (ph.refs_per_ns * miss + tj.extra_refs_per_ns) / w.time_per_work)
            .reduce(f64::min)
            .unwrap_or(0.0)
    }

    fn worst_case_waiting(&self, pet_ns: &[u64], cores: usize, corunner: &impl Fn(usize, usize) -> bool, fastest: &[f64], wait_of: impl Fn(usize) -> f64) -> Vec<WorstCase> {
        let s = self.service_ns;
        let irq = (1.0 - self.devices.iter().map(|d| d.irq_share).sum::<f64>()).max(1e-9);
        self.tasks
            .iter()
            .enumerate()
            .map(|(i, tm)| {
                if tm.phases.is_empty() {
                    return WorstCase {
                        phases: vec![WorstPhase { work_ns: pet_ns[i], time_per_work: 1.0 / irq, requests_per_work: 0.0, min_request_rate: 0.0, contention_per_work: 0.0, alone_requests_per_work: 0.0, alone_time_per_work: 1.0 / irq }],
                        reload_work_ns: 0,
                        cold_work_ns: 0,
                        job_reload_work_ns: 0,
                        fastest_request_rate: 0.0,
                    };
                }
                let (miss, m0, alone) = self.worst_and_alone_miss(i, cores, corunner);
                let wait = wait_of(i);
                let (conflict, conflict_extra) = self.row_conflicts_ns(i, cores, fastest, corunner);
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
                        let per_miss = rf * (self.read_latency_ns + wait) + (1.0 - rf) * (s + wait) + conflict;
                        let per_extra = self.read_latency_ns + wait + conflict_extra;
                        let time = compute + ph.refs_per_ns * miss * per_miss + tm.extra_refs_per_ns * per_extra;
                        let time_per_work = time.max(1e-12) / irq;
                        let min_request_rate = (ph.refs_per_ns * m0 + tm.extra_refs_per_ns) / time_per_work;
                        let requests_per_work = ph.refs_per_ns * miss + tm.extra_refs_per_ns;
                        let contention_per_work = (ph.refs_per_ns * miss * (wait + conflict) + tm.extra_refs_per_ns * (wait + conflict_extra)) / irq;
                        let alone_requests_per_work = (ph.refs_per_ns * alone.min(miss) + tm.extra_refs_per_ns).min(requests_per_work);
                        let alone_time_per_work = ((compute + ph.refs_per_ns * alone.min(miss) * per_miss + tm.extra_refs_per_ns * per_extra).max(1e-12) / irq).min(time_per_work);
                        WorstPhase { work_ns, time_per_work, requests_per_work, min_request_rate, contention_per_work, alone_requests_per_work, alone_time_per_work }
                    })
                    .collect();
                let worst_rf = tm.phases.iter().map(|ph| self.isolated_miss_ns(ph.read_fraction)).fold(0.0, f64::max);
                // A resumption or a job's start reloads at most the job's
                // references (the simulator caps by those left in its PET).
                let refs = self.refs_between(i, 0, pet_ns[i]);
                let reload = (self.reload_lines(i, f64::INFINITY, refs) * worst_rf).round() as u64;
                let cold = self.cold_lines(i, refs);
                let job_reload_work_ns = ((refs - cold).max(0.0) * worst_rf).ceil() as u64;
                WorstCase { phases, reload_work_ns: reload, cold_work_ns: (cold * worst_rf).ceil() as u64, job_reload_work_ns, fastest_request_rate: self.fastest_at(i, miss, m0) }
            })
            .collect()
    }
}
