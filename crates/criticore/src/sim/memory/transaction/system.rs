//! The request-level memory system: cores with private L1s run their
//! workloads reference by reference through the shared LLC; every LLC miss
//! (and every dirty eviction) is a request that waits for the bus arbiter,
//! crosses the bus in one line time, and is served by the DRAM controller.
//! A core keeps up to `mlp` read misses outstanding (its loads are
//! independent, as in the µB loop) and blocks when it has that many; stores
//! and write-backs are posted.
//!
//! Events are kept in time order, so the shared LLC, the bus and the banks
//! see references in the order they happen. A core runs ahead inline while
//! its references hit and the next one starts no later than the next pending
//! event (a reference's own hit path, ≤ L1 + LLC latency, may overlap one).
//! Pending events are few (one per core, its outstanding reads, the bus and
//! the controller), so they live in small arrays scanned for the minimum
//! instead of a heap; ties go controller, bus, read completions, cores.

use super::arbiter::{BusArbiter, Waiting};
use super::cache::{Cache, Lookup, Replacement};
use super::dram::{Controller, DramStats, Request, Scheduler, Timing};
use super::workload::{Access, Workload};
use super::address::AddressMap;
use crate::model::Arbiter;

/// The i.MX6 MMDC's row-activation overhead beyond JEDEC tRC, fitted so the
/// µB of mc2-hardware-management Fig. 5(f) (16 colours × 2 ways, cache
/// isolation, unmanaged banks) takes the paper's 1,159 ms (`criticore calibrate`).
pub const IMX6_MMDC_OVERHEAD_PS: u64 = 44_000;

/// Geometry and timing of the modelled machine.
#[derive(Debug, Clone)]
pub struct Machine {
    pub cores: usize,
    /// Private L1 data cache per core: (bytes, ways); None = no L1 modelled.
    pub l1: Option<(u64, u32)>,
    pub l1_hit_ps: u64,
    pub llc_bytes: u64,
    pub llc_ways: u32,
    pub line_bytes: u64,
    pub replacement: Replacement,
    /// Time from an L1 miss to LLC data on a hit (also the tag check before a miss goes out).
    pub llc_hit_ps: u64,
    /// Bus time of one request (one line at the bus's peak rate).
    pub line_transfer_ps: u64,
    /// Controller front end and PHY, each way (request in, data back).
    pub frontend_ps: u64,
    pub timing: Timing,
    pub scheduler: Scheduler,
    pub arbiter: Arbiter,
    pub map: AddressMap,
    /// Cycles for a switch to fixed-priority arbitration to take effect (MCTI: about 40).
    pub priority_switch_ps: u64,
    /// Read misses a core may have outstanding before it stalls.
    pub mlp: u32,
    /// Posted requests (store fills, write-backs) a core may have on their
    /// way to the controller before it stalls (store and eviction buffers);
    /// 0 = unbounded.
    pub write_buffer: u32,
}

impl Machine {
    /// The i.MX6 of MC²: four Cortex-A9 at 800 MHz with 32 KiB 4-way L1 data
    /// caches, the 1 MiB 16-way PL310 (mc2-hardware-management §3), DDR3-1066,
    /// a round-robin interconnect moving 32 B lines at 2,020 MB/s
    /// (blin-bandwidth-monitor §2.3). Latencies are docs/calibration.md's
    /// transaction-model rows.
    pub fn imx6(interleaved_banks: bool) -> Machine {
        Machine {
            cores: 4,
            l1: Some((32 << 10, 4)),
            l1_hit_ps: 5_000,
            llc_bytes: 1 << 20,
            llc_ways: 16,
            line_bytes: 32,
            replacement: Replacement::PseudoRandom,
            llc_hit_ps: 35_700,
            line_transfer_ps: 15_842, // 32 B / 2.02 GB/s
            frontend_ps: 30_000,
            // JEDEC DDR3-1066 plus the MMDC's per-activation overhead, fitted to
            // Fig. 5(f)'s 1,159 ms (docs/calibration.md, T-rows).
            timing: Timing { t_ctrl: IMX6_MMDC_OVERHEAD_PS, ..Timing::named("ddr3-1066").unwrap() },
            scheduler: Scheduler::FrFcfs,
            arbiter: Arbiter::RoundRobin,
            map: AddressMap::imx6(interleaved_banks),
            priority_switch_ps: 40 * 1_250, // 40 cycles at 800 MHz (mcti-task-isolation)
            mlp: 1,
            // The A9's store buffer and the PL310's line-fill and eviction buffers.
            write_buffer: 8,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CoreStats {
    pub references: u64,
    pub l1_hits: u64,
    pub llc_hits: u64,
    pub llc_misses: u64,
    /// Requests this core sent to memory (read misses, uncached, posted writes, write-backs).
    pub requests: u64,
    /// Time blocked on read misses.
    pub stall_ps: u64,
    /// Part of the stall spent waiting for the bus.
    pub bus_wait_ps: u64,
    /// When the workload ran out (None: still running).
    pub finished_ps: Option<u64>,
    /// When its first iteration ended (the cold one).
    pub first_iteration_ps: Option<u64>,
}

struct Core {
    workload: Option<Box<dyn Workload>>,
    user_mask: u32,
    kernel_mask: u32,
    l1: Option<Cache>,
    blocked_since: Option<u64>,
    outstanding: u32,
    /// A reference whose start was past the horizon: it runs at the next step.
    pending: Option<Access>,
    /// The workload ended with reads still outstanding.
    draining: bool,
    /// Posted requests not yet picked by the controller, and since when the
    /// core waits for its full write buffer.
    posted: u32,
    write_blocked_since: Option<u64>,
    stats: CoreStats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Core(usize),
    /// Read completion: index into `wakes`.
    Wake(usize),
    Bus,
    Ctrl,
}

#[derive(Clone, Copy)]
struct Pending {
    waiting: Waiting,
    addr: u64,
    write: bool,
    /// The core waits for this read.
    blocking: bool,
}

pub struct System {
    pub machine: Machine,
    decoder: super::address::Decoder,
    llc: Cache,
    cores: Vec<Core>,
    ctrl: Controller,
    bus: BusArbiter,
    bus_waiting: Vec<Pending>,
    bus_free: u64,
    bus_at: u64,
    ctrl_at: u64,
    /// Next step of each core (IDLE: blocked or done).
    core_at: Vec<u64>,
    /// Outstanding read completions (time, core).
    wakes: Vec<(u64, usize)>,
    now: u64,
    /// Measured cores not yet finished.
    unfinished: usize,
    /// Scratch for the arbiter.
    scratch_idx: Vec<usize>,
    scratch_w: Vec<Waiting>,
    /// (time it takes effect, priorities) of a pending arbiter switch (MCTI).
    switch: Option<(u64, Option<Vec<u32>>)>,
    base_arbiter: Arbiter,
    /// Cores whose end stops the run.
    measured: Vec<bool>,
    /// End of the current `run`: cores run inline no further.
    limit: u64,
}

const IDLE: u64 = u64::MAX;
/// Request id bit of a posted request whose core counts it in its write buffer.
const POSTED: u64 = 1 << 63;

impl System {
    pub fn new(machine: Machine, seed: u64) -> System {
        let llc = Cache::new(machine.llc_bytes, machine.llc_ways, machine.line_bytes, machine.replacement, seed ^ 0x5eed);
        let cores = (0..machine.cores)
            .map(|c| Core {
                workload: None,
                user_mask: llc.all_ways(),
                kernel_mask: llc.all_ways(),
                l1: machine.l1.map(|(b, w)| Cache::new(b, w, machine.line_bytes, Replacement::Lru, seed + c as u64)),
                blocked_since: None,
                outstanding: 0,
                pending: None,
                draining: false,
                posted: 0,
                write_blocked_since: None,
                stats: CoreStats::default(),
            })
            .collect();
        let ctrl = Controller::new(machine.timing, machine.map.banks(), machine.scheduler);
        let bus = BusArbiter::new(machine.arbiter, machine.cores, machine.line_transfer_ps);
        let machine_cores = machine.cores;
        System {
            decoder: machine.map.decoder(),
            base_arbiter: machine.arbiter,
            measured: vec![false; machine.cores],
            machine,
            llc,
            cores,
            ctrl,
            bus,
            bus_waiting: Vec::new(),
            bus_free: 0,
            bus_at: IDLE,
            ctrl_at: IDLE,
            core_at: vec![IDLE; machine_cores],
            wakes: Vec::new(),
            now: 0,
            unfinished: 0,
            scratch_idx: Vec::new(),
            scratch_w: Vec::new(),
            switch: None,
            limit: IDLE,
        }
    }

    /// Run `workload` on `core` with LLC way masks for user and kernel code
    /// (the lockdown registers of the running task and of the OS). A
    /// `measured` core's end ends the run.
    pub fn run_on(&mut self, core: usize, workload: Box<dyn Workload>, user_mask: u32, kernel_mask: u32, measured: bool) {
        let c = &mut self.cores[core];
        assert!(c.workload.is_none() && !c.draining, "core {core} is still running a workload");
        c.workload = Some(workload);
        c.user_mask = user_mask;
        c.kernel_mask = kernel_mask;
        c.stats.finished_ps = None;
        c.stats.first_iteration_ps = None;
        if measured {
            self.unfinished += 1;
        }
        self.measured[core] = measured;
        self.core_at[core] = self.now;
    }

    /// A context switch on `core`: it runs `workload` (None: nothing) from
    /// now with these way masks, or, if it waits for a read, from when the
    /// read returns. Not measured.
    pub fn switch(&mut self, core: usize, workload: Option<Box<dyn Workload>>, user_mask: u32, kernel_mask: u32) {
        let c = &mut self.cores[core];
        if self.measured[core] {
            // Still counted as unfinished unless its workload (and its reads) ended.
            if c.workload.is_some() || c.draining {
                self.unfinished -= 1;
            }
            self.measured[core] = false;
        }
        let runs = workload.is_some();
        c.workload = workload;
        // A reference deferred at the horizon belonged to the job switched out.
        c.pending = None;
        c.user_mask = user_mask;
        c.kernel_mask = kernel_mask;
        c.draining = false;
        let waits = c.blocked_since.is_some() || c.write_blocked_since.is_some();
        self.core_at[core] = if runs && !waits { self.now } else { IDLE };
    }

    /// Load `addr` into the LLC, locked in one of `way_mask`'s ways (CL buffers).
    pub fn lock_line(&mut self, addr: u64, way_mask: u32) -> bool {
        self.llc.lock(addr, way_mask)
    }

    /// Switch the bus to fixed priority (Some) or back to the platform arbiter
    /// (None); takes effect `priority_switch_ps` later (MCTI §5.2.2).
    pub fn set_bus_priority(&mut self, priority: Option<Vec<u32>>) {
        self.switch = Some((self.now + self.machine.priority_switch_ps, priority));
    }

    pub fn now_ps(&self) -> u64 {
        self.now
    }

    pub fn core_stats(&self, core: usize) -> CoreStats {
        self.cores[core].stats
    }

    pub fn dram_stats(&self) -> DramStats {
        self.ctrl.stats
    }

    pub fn llc(&self) -> &Cache {
        &self.llc
    }

    /// The earliest pending event, ties in the documented order.
    #[inline]
    fn next_event(&self) -> Option<(u64, Ev)> {
        let mut best = (self.ctrl_at, Ev::Ctrl);
        if self.bus_at < best.0 {
            best = (self.bus_at, Ev::Bus);
        }
        for (i, &(t, _)) in self.wakes.iter().enumerate() {
            if t < best.0 {
                best = (t, Ev::Wake(i));
            }
        }
        for (c, &t) in self.core_at.iter().enumerate() {
            if t < best.0 {
                best = (t, Ev::Core(c));
            }
        }
        (best.0 != IDLE).then_some(best)
    }

    /// Earliest pending event time (the limit of a core's inline run).
    #[inline]
    fn horizon(&self) -> u64 {
        let w = self.wakes.iter().map(|x| x.0).min().unwrap_or(IDLE);
        let c = self.core_at.iter().copied().min().unwrap_or(IDLE);
        self.ctrl_at.min(self.bus_at).min(w).min(c)
    }

    /// Run until every measured core's workload has ended (or `limit_ps`;
    /// then the clock stands at `limit_ps` and cores stop inline there).
    pub fn run(&mut self, limit_ps: u64) {
        self.limit = limit_ps;
        loop {
            let Some((t, ev)) = self.next_event() else {
                if limit_ps != IDLE {
                    self.now = self.now.max(limit_ps);
                }
                return;
            };
            if t > limit_ps {
                self.now = limit_ps;
                return;
            }
            self.now = t;
            match ev {
                Ev::Core(c) => {
                    self.core_at[c] = IDLE;
                    self.step_core(c, t)
                }
                Ev::Wake(i) => {
                    let (_, c) = self.wakes.swap_remove(i);
                    let core = &mut self.cores[c];
                    core.outstanding -= 1;
                    if core.draining && core.outstanding == 0 {
                        core.draining = false;
                        core.stats.finished_ps = Some(t);
                        core.stats.first_iteration_ps.get_or_insert(t);
                        if self.measured[c] {
                            self.unfinished -= 1;
                        }
                    }
                    if let Some(s) = core.blocked_since.take() {
                        core.stats.stall_ps += t - s;
                        self.step_core(c, t)
                    }
                }
                Ev::Bus => {
                    self.bus_at = IDLE;
                    self.grant_bus(t)
                }
                Ev::Ctrl => {
                    self.ctrl_at = IDLE;
                    self.serve_dram(t)
                }
            }
            if self.unfinished == 0 && self.measured.iter().any(|&m| m) {
                return;
            }
        }
    }

    fn step_core(&mut self, c: usize, mut t: u64) {
        let mut horizon = self.horizon().min(self.limit);
        loop {
            let core = &mut self.cores[c];
            if self.machine.write_buffer > 0 && core.posted >= self.machine.write_buffer && (core.workload.is_some() || core.pending.is_some()) {
                // The store and eviction buffers are full: wait until one drains.
                core.write_blocked_since = Some(t);
                return;
            }
            // A reference deferred at the horizon starts now; else take the next one.
            let a = match core.pending.take() {
                Some(a) => a,
                None => {
                    let Some(w) = core.workload.as_mut() else { return };
                    let Some(a) = w.next() else {
                        core.workload = None;
                        if core.outstanding > 0 {
                            core.draining = true;
                        } else {
                            core.stats.finished_ps = Some(t);
                            core.stats.first_iteration_ps.get_or_insert(t);
                            if self.measured[c] {
                                self.unfinished -= 1;
                            }
                        }
                        return;
                    };
                    if core.stats.first_iteration_ps.is_none() && w.iterations() > 0 {
                        core.stats.first_iteration_ps = Some(t);
                    }
                    t += a.compute_ps;
                    // Start no reference after another pending event: it might use the LLC or bus first.
                    if t > horizon {
                        core.pending = Some(a);
                        self.core_at[c] = t;
                        return;
                    }
                    a
                }
            };
            self.cores[c].stats.references += 1;
            if let Some(read) = self.reference(c, a, &mut t) {
                // Anything sent to memory may be served before this core's next reference.
                horizon = horizon.min(t);
                let core = &mut self.cores[c];
                if read {
                    core.outstanding += 1;
                    if core.outstanding >= self.machine.mlp {
                        core.blocked_since = Some(t);
                        return;
                    }
                }
            }
        }
    }

    /// One reference at `*t`; advances `*t` by the hit latencies. Returns
    /// Some(true) if the core now waits for memory.
    #[inline]
    fn reference(&mut self, c: usize, a: Access, t: &mut u64) -> Option<bool> {
        let m = &self.machine;
        let (l1_hit, llc_hit) = (m.l1_hit_ps, m.llc_hit_ps);
        if a.uncached {
            return Some(self.memory(c, a.addr, a.write, !a.posted, *t));
        }
        let core = &mut self.cores[c];
        let mask = if a.kernel { core.kernel_mask } else { core.user_mask };
        if let Some(l1) = core.l1.as_mut() {
            *t += l1_hit;
            match l1.access(a.addr, a.write, u32::MAX) {
                Lookup::Hit => {
                    core.stats.l1_hits += 1;
                    return None;
                }
                Lookup::Miss { writeback: Some(wb) } => {
                    // Dirty L1 victim written into the LLC.
                    if let Lookup::Miss { writeback: Some(wb2) } = self.llc.access(wb, true, mask) {
                        self.memory(c, wb2, true, false, *t);
                    }
                }
                _ => {}
            }
        }
        *t += llc_hit;
        match self.llc.access(a.addr, a.write, mask) {
            Lookup::Hit => {
                self.cores[c].stats.llc_hits += 1;
                None
            }
            Lookup::Miss { writeback } => {
                self.cores[c].stats.llc_misses += 1;
                if let Some(wb) = writeback {
                    self.memory(c, wb, true, false, *t);
                }
                // A store miss fills its line through the write buffer (posted; the
                // core waits only when the buffer is full): write streams reach the
                // bus peak, as blin's load does (P7).
                Some(self.memory(c, a.addr, false, !a.write, *t))
            }
            Lookup::Bypass => {
                self.cores[c].stats.llc_misses += 1;
                Some(self.memory(c, a.addr, a.write, !a.write, *t))
            }
        }
    }

    /// A request from core `c` to memory at `t`. Returns `blocking`.
    fn memory(&mut self, c: usize, addr: u64, write: bool, blocking: bool, t: u64) -> bool {
        self.cores[c].stats.requests += 1;
        if !blocking && self.machine.write_buffer > 0 {
            self.cores[c].posted += 1;
        }
        let p = Pending { waiting: Waiting { core: c, since: t }, addr, write, blocking };
        // Fast path: a free bus and nobody else waiting. No core issues before
        // `t` any more (cores run inline only up to the next event), so the
        // arbiter would grant this request now.
        if self.bus_waiting.is_empty() && self.bus_free <= t && self.bus.kind != Arbiter::Tdma && self.switch.is_none() {
            self.send(p, t);
        } else {
            self.bus_waiting.push(p);
            self.schedule_bus(t.max(self.bus_free));
        }
        blocking
    }

    fn schedule_bus(&mut self, t: u64) {
        let t = if self.bus.kind == Arbiter::Tdma {
            let w: Vec<Waiting> = self.bus_waiting.iter().map(|p| p.waiting).collect();
            self.bus.earliest(t, &w)
        } else {
            t
        };
        if t < self.bus_at {
            self.bus_at = t;
        }
    }

    fn apply_switch(&mut self, t: u64) {
        if let Some((at, _)) = &self.switch {
            if *at <= t {
                let (_, prio) = self.switch.take().unwrap();
                match prio {
                    Some(p) => {
                        self.bus.kind = Arbiter::FixedPriority;
                        self.bus.priority = p;
                    }
                    None => self.bus.kind = self.base_arbiter,
                }
            }
        }
    }

    fn grant_bus(&mut self, t: u64) {
        if self.bus_waiting.is_empty() {
            return;
        }
        if t < self.bus_free {
            self.schedule_bus(self.bus_free);
            return;
        }
        self.apply_switch(t);
        // Only requests issued by now compete (a core running ahead inline may have queued later ones).
        let i = if self.bus_waiting.len() == 1 && self.bus.kind != Arbiter::Tdma {
            if self.bus_waiting[0].waiting.since > t {
                self.schedule_bus(self.bus_waiting[0].waiting.since);
                return;
            }
            0
        } else {
            let (mut idx, mut w) = (std::mem::take(&mut self.scratch_idx), std::mem::take(&mut self.scratch_w));
            idx.clear();
            w.clear();
            for (k, p) in self.bus_waiting.iter().enumerate() {
                if p.waiting.since <= t {
                    idx.push(k);
                    w.push(p.waiting);
                }
            }
            let pick = if w.is_empty() { None } else { self.bus.pick(t, &w) };
            let next = match pick {
                Some(i) => Ok(idx[i]),
                None if w.is_empty() => Err(self.bus_waiting.iter().map(|p| p.waiting.since).min().unwrap()),
                None => Err(self.bus.earliest(t + 1, &w)),
            };
            (self.scratch_idx, self.scratch_w) = (idx, w);
            match next {
                Ok(i) => i,
                Err(at) => {
                    self.schedule_bus(at);
                    return;
                }
            }
        };
        let p = self.bus_waiting.swap_remove(i);
        self.send(p, t);
        if !self.bus_waiting.is_empty() {
            self.schedule_bus(self.bus_free);
        }
    }

    /// Grant `p` the bus at `t`: it reaches the controller one line time and
    /// the front end later.
    #[inline]
    fn send(&mut self, p: Pending, t: u64) {
        if p.blocking {
            self.cores[p.waiting.core].stats.bus_wait_ps += t - p.waiting.since;
        }
        let m = &self.machine;
        self.bus_free = t + m.line_transfer_ps;
        let arrival = self.bus_free + m.frontend_ps;
        let id = if p.blocking {
            p.waiting.core as u64 + 1
        } else if m.write_buffer > 0 {
            POSTED | (p.waiting.core as u64 + 1)
        } else {
            0
        };
        self.ctrl.push(Request { id, bank: self.decoder.bank(p.addr), row: self.decoder.row(p.addr), write: p.write, arrival });
        let at = self.ctrl.next_pick_at();
        if self.ctrl.queued() == 1 && at == arrival && self.ctrl_at == IDLE {
            // Alone in an idle controller: it is picked on arrival whatever
            // else comes (later requests arrive later), so serve it now.
            self.serve_dram(arrival);
        } else {
            self.ctrl_at = self.ctrl_at.min(at);
        }
    }

    fn serve_dram(&mut self, t: u64) {
        if let Some(s) = self.ctrl.serve_one(t) {
            if s.id & POSTED != 0 {
                // A posted request left the controller's queue: its buffer entry is free.
                let c = (s.id & !POSTED) as usize - 1;
                let core = &mut self.cores[c];
                core.posted -= 1;
                if let Some(since) = core.write_blocked_since.take() {
                    let at = t.max(since);
                    core.stats.stall_ps += at - since;
                    if core.blocked_since.is_none() {
                        self.core_at[c] = self.core_at[c].min(at);
                    }
                }
            } else if s.id > 0 {
                self.wakes.push((s.done + self.machine.frontend_ps, s.id as usize - 1));
            }
        }
        let at = self.ctrl.next_pick_at();
        if at != u64::MAX {
            self.ctrl_at = self.ctrl_at.min(at.max(t));
        }
    }
}

/// Replay `(address, write)` requests straight into the DRAM controller, as
/// the peers' trace front ends do: closed loop, at most `queue` requests
/// waiting, a new one entering as soon as one leaves (benches/dram_peers.py).
/// Returns the controller's statistics and the simulated time in ps.
pub fn replay_closed_loop(requests: impl IntoIterator<Item = (u64, bool)>, map: &AddressMap, timing: Timing, scheduler: Scheduler, queue: usize) -> (DramStats, u64) {
    let mut ctrl = Controller::new(timing, map.banks(), scheduler);
    let mut now = 0u64;
    let mut end = 0u64;
    let mut it = requests.into_iter().peekable();
    loop {
        while ctrl.queued() < queue.max(1) {
            match it.next() {
                Some((addr, write)) => ctrl.push(Request { id: 0, bank: map.bank(addr), row: map.row(addr), write, arrival: now }),
                None => break,
            }
        }
        if ctrl.queued() == 0 {
            break;
        }
        let at = ctrl.next_pick_at();
        let s = ctrl.serve_one(at).expect("a request has arrived");
        now = at.max(now);
        end = end.max(s.done);
    }
    (ctrl.stats, end)
}

#[cfg(test)]
mod tests {
    use super::super::workload::Trace;
    use super::*;

    fn quiet_machine() -> Machine {
        let mut m = Machine::imx6(false);
        m.timing.t_refi = 0;
        m
    }

    fn reads(addrs: &[u64], compute_ps: u64) -> Box<dyn Workload> {
        Box::new(Trace::new(addrs.iter().map(|&addr| Access::user(addr, false, compute_ps)).collect()))
    }

    #[test]
    fn one_read_miss_alone_costs_the_sum_of_its_stages() {
        let m = quiet_machine();
        let mut s = System::new(m.clone(), 1);
        s.run_on(0, reads(&[0x10_0000], 0), 0xffff, 0xffff, true);
        s.run(u64::MAX);
        let st = s.core_stats(0);
        // L1 + LLC tag check, bus, front end, DRAM miss (tRCD + CL + burst), front end back.
        let dram = m.timing.t_rcd + m.timing.cl + m.timing.t_burst;
        let expect = m.l1_hit_ps + m.llc_hit_ps + m.line_transfer_ps + 2 * m.frontend_ps + dram;
        assert_eq!(st.finished_ps, Some(expect));
        assert_eq!((st.llc_misses, st.requests, s.dram_stats().misses), (1, 1, 1));
        // The second time it hits in L1.
        let mut s = System::new(m.clone(), 1);
        s.run_on(0, reads(&[0x10_0000, 0x10_0004], 0), 0xffff, 0xffff, true);
        s.run(u64::MAX);
        assert_eq!(s.core_stats(0).finished_ps, Some(expect + m.l1_hit_ps));
    }

    #[test]
    fn two_cores_missing_at_once_share_the_bus_and_the_bank() {
        let m = quiet_machine();
        let mut s = System::new(m.clone(), 1);
        // Same bank (bank bits 27-29 zero), different rows (8 KiB apart).
        s.run_on(0, reads(&[0x0], 0), 0xffff, 0xffff, true);
        s.run_on(1, reads(&[0x2000], 0), 0xffff, 0xffff, true);
        s.run(u64::MAX);
        let (a, b) = (s.core_stats(0), s.core_stats(1));
        let first = a.finished_ps.unwrap().min(b.finished_ps.unwrap());
        let second = a.finished_ps.unwrap().max(b.finished_ps.unwrap());
        assert_eq!(a.bus_wait_ps + b.bus_wait_ps, m.line_transfer_ps, "one waits one line time");
        assert_eq!(s.dram_stats().conflicts, 1);
        // The second also waits for the conflict: PRE after tRAS, ACT after tRC.
        assert!(second - first >= m.timing.t_rc - (m.timing.t_rcd + m.timing.cl + m.timing.t_burst));
    }

    #[test]
    fn mcti_switch_to_fixed_priority_takes_effect_after_the_configured_delay() {
        let mut m = quiet_machine();
        m.arbiter = Arbiter::Fcfs;
        let mut s = System::new(m.clone(), 1);
        s.set_bus_priority(Some(vec![1, 5, 1, 1]));
        assert_eq!(s.switch.as_ref().unwrap().0, 50_000);
        s.apply_switch(49_999);
        assert_eq!(s.bus.kind, Arbiter::Fcfs);
        s.apply_switch(50_000);
        assert_eq!(s.bus.kind, Arbiter::FixedPriority);
        assert_eq!(s.bus.priority, vec![1, 5, 1, 1]);
    }

    #[test]
    fn closed_loop_replay_of_a_stream_mostly_hits_rows() {
        let map = AddressMap { page_shift: 12, colour_bits: vec![], bank_bits: vec![vec![13], vec![14], vec![15]], row_shift: 13, size_bytes: 1 << 30 };
        let t = Timing { t_refi: 0, ..Timing::named("ddr3-1600").unwrap() };
        // 64 B lines: 128 per 8 KiB row.
        let (st, end) = replay_closed_loop((0..100_000u64).map(|k| (k * 64, false)), &map, t, Scheduler::FrFcfs, 32);
        assert_eq!(st.reads, 100_000);
        assert!((st.row_hit_rate() - 127.0 / 128.0).abs() < 1e-3, "{}", st.row_hit_rate());
        // Data-bus bound: one burst (5 ns) per request, plus at most one PRE + ACT
        // per row of 128 lines that the pick-in-order controller does not hide.
        let per = end as f64 / 100_000.0;
        let bound = t.t_burst as f64 + (t.t_rp + t.t_rcd) as f64 / 128.0;
        assert!(per >= t.t_burst as f64 && per <= bound, "{per} ps per request");
    }
}
