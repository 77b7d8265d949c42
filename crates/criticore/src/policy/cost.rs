//! The study's cost model (mc2-io-ipc-os-isolation §6.1 "Task-system
//! generation" and "Overhead accounting"; every constant with its source in
//! docs/study-model.md).
//!
//! A task with a [`CostCurve`] carries idle-system PETs: full LLC, no
//! competing work, no I/O or IPC interference. Its *conditioned* PET at level
//! ℓ with w LLC ways, once cores and buffers are placed, is
//!
//! ```text
//! C^ℓ(w) = PET^ℓ · g(w) · (1 + ρ) · (1 + a_bus·φ(D)) · (1 + κ·e^(−r·w))  +  σ^ℓ·Δ  +  I
//! g(w)   = 1 + (s − 1)·e^(−r·w),   r = ln((s − 1)/ε) / wss_ways      (docs/references.md, MC²)
//! φ(x)   = 1 − e^(−x / D₀)                                          (§6.1: negative exponential in bandwidth)
//! ```
//!
//! - ρ: reload factor for Level-B and -C tasks (Table 3 cat. 4); Level A is
//!   never preempted by B (§4.2 CE paragraph), so ρ = 0 there.
//! - D: total DMA bandwidth; κ: row-buffer conflicts on the task's banks from
//!   DMA into them (a_bank·φ(D_bank), Obs. 5) plus CPU-sourced interference
//!   from other cores' tasks using buffers in them (a_cpu, Obs. 3). Both only
//!   hit misses, hence e^(−r·w), the task's extra-miss share (Fig. 13(b)).
//! - Δ: Level-B-valued IPC and I/O buffer costs relative to a buffer in the
//!   task's own bank (§6.1: "CE ... unchanged execution costs"); σ^ℓ scales it
//!   like the PETs (A: 1.5, B: 1, C: PET^C/PET^B).
//! - I: interrupts. Level-A/B tasks on CPU 0 are charged the most interrupts
//!   that can arrive within their period (§6.1). Level-C jobs may run on any
//!   CPU, so each is charged the same way (the task-centric method of
//!   Brandenburg et al. 2011, the simplest of the techniques §6.1 cites).

use crate::model::{IoKind, IpcMethod, Level, Partition, StudyCosts, Task, TaskSystem};

/// ε of the cost-vs-ways curve: the cost is within ε of its floor at the WSS (docs/references.md, MC²: Cost versus LLC ways).
pub const CURVE_EPS: f64 = 1e-6;
/// Level-A PETs are Level-B PETs inflated by 50% (mc2-io-ipc-os-isolation §2).
pub const LEVEL_A_INFLATION: f64 = 1.5;

/// Messages a communicating task sends (or receives) per job. Assumed: §5.1's
/// Sender sends 100 per run; the study's rate is not given (docs/study-model.md).
pub const IPC_MESSAGES_PER_JOB: f64 = 10.0;
/// SBP time to send or receive one message: fixed part and per byte. Assumed
/// from Fig. 8's magnitude (uncached 32-byte lines at ≈ 120 ns each); the
/// platform's `costs` may replace them (`imx6-transaction`, fitted).
pub const SBP_FIXED_NS: f64 = StudyCosts::ASSUMED.sbp_fixed_ns;
pub const SBP_NS_PER_BYTE: f64 = StudyCosts::ASSUMED.sbp_ns_per_byte;
/// Obs. 1: CE and CL times as fractions of SBP, midpoints of the ranges
/// (CE send 9.2–12.9%, receive 29.2–40.5%; CL send 2.7–5.4%, receive 10.6–15.9%).
pub const CE_SEND: f64 = (0.092 + 0.129) / 2.0;
pub const CE_RECEIVE: f64 = (0.292 + 0.405) / 2.0;
pub const CL_SEND: f64 = (0.027 + 0.054) / 2.0;
pub const CL_RECEIVE: f64 = (0.106 + 0.159) / 2.0;

/// Copy rate of I/O data from a buffer in the task's own bank: Obs. 2,
/// Framecopy 640×480 (614 400 B at 2 B/pixel) takes 2925.67 µs under Managed.
pub const COPY_BYTES_PER_S: f64 = 614_400.0 / 2_925.67e-6;
/// Obs. 2: the same copy from Level-C banks (Unmanaged) takes 5321.33 µs: +81.9%.
pub const CPU_SOURCED_COPY: f64 = 5_321.33 / 2_925.67 - 1.0;
/// Obs. 3: CPU-sourced interference from another core's buffer accesses
/// inflated Matrix's MOET by 6%.
pub const CPU_SOURCED_BANK: f64 = StudyCosts::ASSUMED.cpu_sourced_bank;
/// DMA-sourced interference (Obs. 4–6; Figs. 13–14 are figures only, so the
/// amplitudes are assumed): bus contention for every task, row-buffer
/// conflicts for tasks whose banks receive the DMA, both saturating in D₀.
pub const DMA_BUS: f64 = StudyCosts::ASSUMED.dma_bus;
pub const DMA_BANK: f64 = StudyCosts::ASSUMED.dma_bank;
pub const DMA_SCALE_BYTES_PER_S: f64 = StudyCosts::ASSUMED.dma_scale_bytes_per_s;
/// Interrupt handling per I/O transfer (measured in §6.1 but not reported; assumed).
pub const IRQ_DIRECT_NS: f64 = 2_000.0;
/// The camera's transfer raises one interrupt per USB packet (assumed total).
pub const IRQ_COPY_NS: f64 = 6_000.0;
/// The CPU that handles every interrupt (§3.2).
pub const IRQ_CPU: usize = 0;

/// φ(x) = 1 − e^(−x/D₀): DMA interference saturates with bandwidth (§6.1).
pub fn saturation(bytes_per_s: f64) -> f64 {
    saturation_at(bytes_per_s, DMA_SCALE_BYTES_PER_S)
}

fn saturation_at(bytes_per_s: f64, scale: f64) -> f64 {
    1.0 - (-bytes_per_s / scale).exp()
}

/// r of the cost-vs-ways curve: (s − 1)·e^(−r·wss) = ε.
pub fn decay_rate(slowdown: f64, wss_ways: u32) -> f64 {
    if slowdown <= 1.0 + CURVE_EPS {
        0.0
    } else {
        ((slowdown - 1.0) / CURVE_EPS).ln() / wss_ways.max(1) as f64
    }
}

/// SBP time for one message of `bytes`.
fn sbp_message_ns(k: &StudyCosts, bytes: u64) -> f64 {
    k.sbp_fixed_ns + k.sbp_ns_per_byte * bytes as f64
}

/// Where an IPC buffer is and how it is treated, resolved from the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IpcPlace {
    Sbp,
    Ce,
    Cl,
    /// Unmanaged, cacheable, in these banks.
    Unmanaged(Partition),
}

/// Per-task terms of the cost formula that do not depend on ways.
#[derive(Debug, Clone)]
struct TaskTerms {
    /// Idle PETs (ns) at A, B, C; None where not given.
    pet: [Option<f64>; 3],
    period_ns: f64,
    slowdown: f64,
    rate: f64,
    /// (1 + ρ)·(1 + a_bus·φ(D)).
    factor: f64,
    /// κ: interference on the task's banks, applied to its misses.
    bank: f64,
    /// Added to κ while some CL buffer is not locked (Level-C tasks, whose
    /// banks then hold those buffers under SBP).
    unlocked_bank: f64,
    /// Δ without the locked-buffer savings (Level-B ns).
    delta_ns: f64,
    /// Savings if this task's locked buffers are locked (≤ 0, Level-B ns), per link index.
    lock_savings: Vec<(usize, f64)>,
    /// Interrupt time per job (ns).
    irq_ns: f64,
}

/// The conditioned costs of one placed system (cores and buffers decided).
#[derive(Debug, Clone)]
pub struct CostModel {
    terms: Vec<TaskTerms>,
    /// Links placed with CL: (sending task, bytes), locked in this order while space allows.
    lockable: Vec<(usize, u64)>,
}

/// Level index 0..3 for A, B, C.
fn li(level: Level) -> usize {
    level.index()
}

impl CostModel {
    /// Build the model of a placed system. Tasks without a cost curve keep
    /// their PETs (g ≡ 1, no interference terms).
    pub fn new(system: &TaskSystem) -> CostModel {
        let tasks = &system.tasks;
        let cores = system.platform.cores;
        // DMA traffic per bank group and CPU-sourced cross-core users.
        let mut dma_core = vec![0.0f64; cores];
        let mut dma_level_c = 0.0f64;
        let mut foreign_users = vec![false; cores];
        let mut level_c_users = false; // A/B buffers in Level-C banks
        let mut dma_total = 0.0f64;
        let mut irq_events: Vec<(f64, f64)> = Vec::new(); // (period, irq ns)
        for t in tasks {
            let Some(io) = t.io else { continue };
            let bw = io.bandwidth_bytes_per_s as f64;
            dma_total += bw;
            let place = io_place(t);
            // Direct I/O lands in the task's buffer; the camera's DMA lands in
            // intermediate buffers that stay in Level C (§6.1).
            match (io.kind, place) {
                (IoKind::Direct, Partition::Core(q)) => dma_core[q] += bw,
                _ => dma_level_c += bw,
            }
            if is_ab(t) {
                match place {
                    Partition::Core(q) if Some(q) != t.core => foreign_users[q] = true,
                    Partition::Core(_) => {}
                    _ => level_c_users = true,
                }
                if io.kind == IoKind::Copy {
                    level_c_users = true;
                }
            }
            irq_events.push((t.period_ns as f64, if io.kind == IoKind::Direct { IRQ_DIRECT_NS } else { IRQ_COPY_NS }));
        }
        // IPC placement and who touches which banks.
        let places: Vec<Option<IpcPlace>> = tasks.iter().map(|t| t.ipc.map(|l| ipc_place(t, &tasks[l.to], l.method, l.buffer))).collect();
        for (i, t) in tasks.iter().enumerate() {
            let (Some(link), Some(place)) = (t.ipc, places[i]) else { continue };
            if !is_ab(t) {
                continue;
            }
            match place {
                IpcPlace::Sbp => level_c_users = true,
                IpcPlace::Unmanaged(Partition::Core(q)) => {
                    for end in [i, link.to] {
                        if tasks[end].core != Some(q) {
                            foreign_users[q] = true;
                        }
                    }
                }
                IpcPlace::Unmanaged(_) => level_c_users = true,
                // CL buffers touch the Level-C banks only when they do not fit
                // in the lock region (SBP fallback): see `unlocked_bank`.
                IpcPlace::Ce | IpcPlace::Cl => {}
            }
        }
        let any_cl = tasks.iter().zip(&places).any(|(t, p)| is_ab(t) && *p == Some(IpcPlace::Cl));
        let k = &system.platform.costs;
        let sat = |d: f64| saturation_at(d, k.dma_scale_bytes_per_s);
        let bus = 1.0 + k.dma_bus * sat(dma_total);
        let mut terms: Vec<TaskTerms> = tasks
            .iter()
            .map(|t| {
                let pet = [Level::A, Level::B, Level::C].map(|l| t.pet_ns.get(l).map(|p| p as f64));
                let (slowdown, rate, reload) = match t.cost {
                    Some(c) => (c.llc_slowdown, decay_rate(c.llc_slowdown, c.wss_ways), c.reload),
                    None => (1.0, 0.0, 0.0),
                };
                let reload = if matches!(t.level, Some(Level::B | Level::C)) { reload } else { 0.0 };
                let modeled = t.cost.is_some();
                let (bank, unlocked_bank) = if !modeled {
                    (0.0, 0.0)
                } else if is_ab(t) {
                    let q = t.core.unwrap_or(0);
                    (k.dma_bank * sat(dma_core[q]) + if foreign_users[q] { k.cpu_sourced_bank } else { 0.0 }, 0.0)
                } else if level_c_users {
                    (k.dma_bank * sat(dma_level_c) + k.cpu_sourced_bank, 0.0)
                } else {
                    // Unlocked CL buffers fall back to SBP in the Level-C banks.
                    (k.dma_bank * sat(dma_level_c), if any_cl { k.cpu_sourced_bank } else { 0.0 })
                };
                let charged = (is_ab(t) && t.core == Some(IRQ_CPU)) || t.level == Some(Level::C);
                let irq_ns = if modeled && charged {
                    // §6.1: the most interrupts that can delay a job within its period.
                    let p = t.period_ns as f64;
                    irq_events.iter().map(|&(tj, c)| ((p / tj).ceil() + 1.0) * c).sum()
                } else {
                    0.0
                };
                TaskTerms {
                    pet,
                    period_ns: t.period_ns as f64,
                    slowdown,
                    rate,
                    factor: if modeled { (1.0 + reload) * bus } else { 1.0 },
                    bank,
                    unlocked_bank,
                    delta_ns: if modeled { io_delta_ns(t) } else { 0.0 },
                    lock_savings: Vec::new(),
                    irq_ns,
                }
            })
            .collect();
        let mut lockable = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            let (Some(link), Some(place)) = (t.ipc, places[i]) else { continue };
            if t.cost.is_none() || !is_ab(t) {
                continue; // Level-C buffers are always in Level-C banks: in the idle cost
            }
            let msg = IPC_MESSAGES_PER_JOB * sbp_message_ns(&system.platform.costs, link.bytes);
            let receiver = link.to;
            // Δ relative to CE (the buffer in the tasks' own bank, §6.1).
            let (send, recv) = match place {
                IpcPlace::Ce => (0.0, 0.0),
                IpcPlace::Sbp | IpcPlace::Cl => (msg * (1.0 - CE_SEND), msg * (1.0 - CE_RECEIVE)),
                IpcPlace::Unmanaged(q) => {
                    let cost = |end: usize, share: f64| if Partition::Core(tasks[end].core.unwrap_or(usize::MAX)) == q { 0.0 } else { msg * (1.0 - share) };
                    (cost(i, CE_SEND), cost(receiver, CE_RECEIVE))
                }
            };
            terms[i].delta_ns += send;
            terms[receiver].delta_ns += recv;
            if place == IpcPlace::Cl {
                // Locked: from SBP down to CL (Obs. 1), when the lock region holds it.
                let k = lockable.len();
                terms[i].lock_savings.push((k, -msg * (1.0 - CL_SEND)));
                terms[receiver].lock_savings.push((k, -msg * (1.0 - CL_RECEIVE)));
                lockable.push((i, link.bytes));
            }
        }
        CostModel { terms, lockable }
    }

    /// κ of task `i` when the first `locked` CL buffers are locked.
    fn bank(&self, i: usize, locked: usize) -> f64 {
        let t = &self.terms[i];
        if locked < self.lockable.len() { t.bank + t.unlocked_bank } else { t.bank }
    }

    /// Whether locking changes task `i`'s cost (it sends or receives a CL buffer).
    pub fn has_lock_savings(&self, i: usize) -> bool {
        !self.terms[i].lock_savings.is_empty()
    }

    /// Number of buffers placed with CL.
    pub fn lockable_count(&self) -> usize {
        self.lockable.len()
    }

    /// Bytes of all buffers placed with CL.
    pub fn lockable_bytes(&self) -> u64 {
        self.lockable.iter().map(|&(_, b)| b).sum()
    }

    /// How many lockable buffers (in order) fit in `lock_bytes` of LLC.
    pub fn locked_count(&self, lock_bytes: u64) -> usize {
        let mut used = 0u64;
        self.lockable
            .iter()
            .take_while(|&&(_, b)| {
                used += b;
                used <= lock_bytes
            })
            .count()
    }

    /// The way- and lock-dependent parts of task `i`'s cost: the multiplier
    /// of its idle PETs, its Δ (Level-B ns) and Δ's scale per level (σ^ℓ).
    #[inline]
    fn parts(&self, i: usize, ways: u32, locked: usize) -> (f64, f64, [f64; 3]) {
        let t = &self.terms[i];
        let miss = (-t.rate * ways as f64).exp();
        let multiplier = (1.0 + (t.slowdown - 1.0) * miss) * t.factor * (1.0 + self.bank(i, locked) * miss);
        let mut delta = t.delta_ns;
        for &(k, saving) in &t.lock_savings {
            if k < locked {
                delta += saving;
            }
        }
        let c_scale = match (t.pet[2], t.pet[1]) {
            (Some(c), Some(b)) => c / b,
            _ => 1.0,
        };
        (multiplier, delta, [LEVEL_A_INFLATION, 1.0, c_scale])
    }

    /// Conditioned PETs (ns, real) of task `i` at levels A, B and C with
    /// `ways` LLC ways, when the first `locked` lockable buffers are locked;
    /// None where the task has no PET.
    pub fn pets_ns(&self, i: usize, ways: u32, locked: usize) -> [Option<f64>; 3] {
        let t = &self.terms[i];
        let (multiplier, delta, scale) = self.parts(i, ways, locked);
        // CL can undercut the idle (CE) cost; never below zero.
        [0, 1, 2].map(|l| t.pet[l].map(|pet| (pet * multiplier + scale[l] * delta).max(0.0) + t.irq_ns))
    }

    /// Conditioned PET of task `i` at one level; see [`CostModel::pets_ns`].
    pub fn pet_ns(&self, i: usize, level: Level, ways: u32, locked: usize) -> Option<f64> {
        self.pets_ns(i, ways, locked).get(li(level)).copied().flatten()
    }

    /// Conditioned utilization; see [`CostModel::pets_ns`].
    pub fn utilization(&self, i: usize, level: Level, ways: u32, locked: usize) -> Option<f64> {
        self.pet_ns(i, level, ways, locked).map(|c| c / self.terms[i].period_ns)
    }

    /// Conditioned utilizations at A, B, C (0 where the task has no PET):
    /// [`CostModel::pets_ns`] / T, the optimizer's hot loop.
    pub fn utilizations(&self, i: usize, ways: u32, locked: usize) -> [f64; 3] {
        let period = self.terms[i].period_ns;
        self.pets_ns(i, ways, locked).map(|c| c.map_or(0.0, |c| c / period))
    }
}

fn is_ab(t: &Task) -> bool {
    matches!(t.level, Some(Level::A | Level::B))
}

/// The partition holding a task's I/O buffer: Level-C tasks always use Level-C
/// banks; undecided buffers default to Level C (§4.1).
fn io_place(t: &Task) -> Partition {
    match (is_ab(t), t.io.and_then(|io| io.buffer)) {
        (true, Some(p)) => p,
        _ => Partition::LevelC,
    }
}

fn ipc_place(t: &Task, peer: &Task, method: Option<IpcMethod>, buffer: Option<Partition>) -> IpcPlace {
    match method {
        // CE without co-location cannot happen in a validated file; treat as SBP.
        Some(IpcMethod::Ce) if t.core.is_some() && t.core == peer.core => IpcPlace::Ce,
        Some(IpcMethod::Ce) | Some(IpcMethod::Sbp) => IpcPlace::Sbp,
        Some(IpcMethod::Cl) => IpcPlace::Cl,
        None => IpcPlace::Unmanaged(buffer.unwrap_or(Partition::LevelC)),
    }
}

/// Level-B-valued extra I/O time per job relative to a buffer in the task's
/// own bank (§6.1: every I/O job starts with a system call copying the data).
fn io_delta_ns(t: &Task) -> f64 {
    let Some(io) = t.io else { return 0.0 };
    let bytes = io.bandwidth_bytes_per_s as f64 * t.period_ns as f64 * 1e-9;
    let copy_ns = bytes / COPY_BYTES_PER_S * 1e9;
    let own_bank = matches!(io_place(t), Partition::Core(q) if Some(q) == t.core);
    // Obs. 2: the copy from other banks (Level C or another core's) is slower.
    let mut delta = if own_bank { 0.0 } else { CPU_SOURCED_COPY * copy_ns };
    if io.kind == IoKind::Copy {
        // The camera's intermediate USB buffers stay in Level C under every
        // scheme (§6.1): the copy out of them is always CPU-sourced.
        delta += CPU_SOURCED_COPY * copy_ns;
    }
    delta
}
