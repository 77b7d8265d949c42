//! Fluid memory model (DESIGN.md "Simulator"; docs/memory-model.md).
//!
//! A job's PET is its execution time alone with its own LLC partition. Per ns
//! of that isolated work a job in phase p makes `a` LLC references, a share m
//! of which miss. A miss costs the core t = rf·(L + W + B) + (1 − rf)·(S + W + B):
//! reads stall for the DRAM latency L, writes are posted and cost only the bus
//! time S of one line; W is the wait for the bus behind other cores and B the
//! row-buffer conflicts with cores sharing a bank. Alone, W = B = 0 and the
//! isolated miss ratio m₀ gives the compute share c = 1 − a·m₀·t₀, so the job
//! runs at rate 1. With co-runners it runs at rate 1 / (c + a·m·t).
//!
//! - LLC: a job's partition (ways × colours of its allocation, mc2-hardware-
//!   management §3, Fig. 4) is shared with the co-runners in the same partition
//!   in proportion to working-set sizes. Miss curve: `random` access misses
//!   1 − size/WSS; `stream` misses everything until the whole WSS fits (LRU).
//! - Bus: others' load ρ = Σ r·S delays a request by W = S·ρ/(1 − ρ); round
//!   robin (and aging, FCFS) caps W at (n − 1)·S for n requesting cores;
//!   fixed priority counts only higher-priority cores, plus half a line of
//!   blocking by a lower one; TDMA waits half a round, m·S/2, whatever the load.
//! - DRAM banks: a co-runner on a shared bank opens another row with
//!   probability ∝ its request rate; B = p·row_conflict.
//!
//! Rates and request rates are solved together by damped fixed-point iteration.

use super::{Flows, MemoryContext, MemoryModel};
use crate::model::{AccessPattern, Arbiter, Level, Partition, TaskSystem};
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};

/// Where a task's lines live in the LLC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// A partition of the allocation.
    Alloc(Partition),
    /// No allocation: the whole LLC, shared by everyone.
    Shared,
}

#[derive(Debug, Clone)]
struct PhaseMem {
    /// Cumulative work at which the phase ends (u64::MAX for the last).
    end_work_ns: u64,
    /// LLC references per ns of work.
    refs_per_ns: f64,
    read_fraction: f64,
}

#[derive(Debug, Clone)]
struct TaskMem {
    phases: Vec<PhaseMem>,
    wss: f64,
    pattern: AccessPattern,
    part: Part,
    /// Capacity of the partition in bytes.
    capacity: f64,
    /// Banks the task's pages live in (bit set).
    banks: Vec<u64>,
    bank_count: u32,
}

pub struct Fluid {
    line_bytes: f64,
    /// S: bus time of one line.
    service_ns: f64,
    read_latency_ns: f64,
    row_conflict_ns: f64,
    arbiter: Arbiter,
    tasks: Vec<TaskMem>,
    next_event: u64,
    // Scratch per core.
    refs: Vec<f64>,
    read_fraction: Vec<f64>,
    compute: Vec<f64>,
    miss: Vec<f64>,
    active: Vec<bool>,
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

fn bank_set(banks: &[u32], total: u32) -> (Vec<u64>, u32) {
    let mut set = vec![0u64; (total as usize).div_ceil(64)];
    for &b in banks {
        set[b as usize / 64] |= 1 << (b % 64);
    }
    (set, banks.len() as u32)
}

fn shared_banks(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x & y).count_ones()).sum()
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
            let listed = a.llc_ways.iter().find(|(q, _)| *q == part).map(|(_, w)| *w as f64);
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
        let banks_of = |part: Partition| -> Vec<u32> {
            alloc.and_then(|a| a.banks.iter().find(|(q, _)| *q == part)).map_or(all_banks.clone(), |(_, b)| b.clone())
        };
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
                let part = if alloc.is_some() { Part::Alloc(partition) } else { Part::Shared };
                let capacity = p.llc.size_bytes as f64 * if alloc.is_some() { ways_of(partition) * colors_of(partition) } else { 1.0 };
                let (banks, bank_count) = bank_set(&if alloc.is_some() { banks_of(partition) } else { all_banks.clone() }, p.dram.banks);
                let (phases, wss, pattern) = match &t.memory {
                    None => (Vec::new(), 0.0, AccessPattern::Random),
                    Some(m) => {
                        let mut end = 0u64;
                        let phases = m
                            .phases
                            .iter()
                            .map(|ph| {
                                end = ph.work_ns.map_or(u64::MAX, |w| end.saturating_add(w));
                                PhaseMem { end_work_ns: end, refs_per_ns: ph.accesses_per_ms / 1e6, read_fraction: ph.read_fraction }
                            })
                            .collect();
                        (phases, m.wss_bytes as f64, m.pattern)
                    }
                };
                TaskMem { phases, wss, pattern, part, capacity, banks, bank_count }
            })
            .collect();
        let m = p.cores;
        Fluid {
            line_bytes: p.llc.line_bytes as f64,
            service_ns: p.line_service_ns(),
            read_latency_ns: p.dram.read_latency_ns as f64,
            row_conflict_ns: p.dram.row_conflict_ns as f64,
            arbiter: p.bus.arbiter,
            tasks,
            next_event: NONE_U64,
            refs: vec![0.0; m],
            read_fraction: vec![0.0; m],
            compute: vec![0.0; m],
            miss: vec![0.0; m],
            active: vec![false; m],
        }
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

impl MemoryModel for Fluid {
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        let m = running.len();
        let s = self.service_ns;
        // 1. Who issues memory traffic, and its isolated behaviour.
        for c in 0..m {
            self.active[c] = false;
            flows.requests_per_ns[c] = 0.0;
            let Some(id) = running[c] else {
                flows.rate[c] = 1.0;
                flows.stall[c] = 0.0;
                continue;
            };
            if !ctx.allowed[c] {
                (flows.rate[c], flows.stall[c]) = (0.0, 1.0);
                continue;
            }
            let job = jobs.get(id);
            let tm = &self.tasks[job.task as usize];
            if tm.phases.is_empty() {
                (flows.rate[c], flows.stall[c]) = (1.0, 0.0);
                continue;
            }
            let ph = Self::phase(tm, job);
            self.active[c] = true;
            self.refs[c] = ph.refs_per_ns;
            self.read_fraction[c] = ph.read_fraction;
            let m0 = miss_ratio(tm.pattern, tm.capacity, tm.wss);
            self.compute[c] = (1.0 - ph.refs_per_ns * m0 * self.isolated_miss_ns(ph.read_fraction)).max(0.0);
        }
        // 2. LLC sharing within each partition, in proportion to working sets.
        for c in 0..m {
            if !self.active[c] {
                continue;
            }
            let tm = &self.tasks[jobs.get(running[c].unwrap()).task as usize];
            let pressure: f64 = (0..m)
                .filter(|&d| self.active[d])
                .map(|d| &self.tasks[jobs.get(running[d].unwrap()).task as usize])
                .filter(|other| other.part == tm.part)
                .map(|other| other.wss)
                .sum();
            let share = if pressure <= tm.capacity { tm.wss } else { tm.capacity * tm.wss / pressure };
            self.miss[c] = miss_ratio(tm.pattern, share, tm.wss);
        }
        // 3. Bus and bank contention: damped fixed point on request rates.
        let requesting = |r: &[f64]| r.iter().filter(|&&x| x > 0.0).count();
        let mut r: Vec<f64> = (0..m)
            .map(|c| if self.active[c] { self.refs[c] * self.miss[c] / (self.compute[c] + self.refs[c] * self.miss[c] * self.isolated_miss_ns(self.read_fraction[c])).max(1e-12) } else { 0.0 })
            .collect();
        let mut rate = vec![1.0; m];
        let priority = |c: usize| -> u32 {
            match ctx.bus_priority {
                Some(p) => p[c],
                None => (m - c) as u32, // fixed priority by core: core 0 highest
            }
        };
        let fixed = ctx.bus_priority.is_some() || self.arbiter == Arbiter::FixedPriority;
        for _ in 0..60 {
            let n = requesting(&r);
            let mut max_change: f64 = 0.0;
            let mut next = r.clone();
            for c in 0..m {
                if !self.active[c] {
                    continue;
                }
                let wait = if fixed {
                    // Higher and equal priorities go first (equals share round robin);
                    // a lower one blocks for at most the line in service.
                    let ahead: f64 = (0..m).filter(|&d| d != c && priority(d) >= priority(c)).map(|d| r[d] * s).sum();
                    let lower: f64 = (0..m).filter(|&d| d != c && priority(d) < priority(c)).map(|d| r[d] * s).sum();
                    let rho = ahead.min(0.999);
                    s * rho / (1.0 - rho) + 0.5 * s * lower.min(1.0)
                } else if self.arbiter == Arbiter::Tdma {
                    0.5 * m as f64 * s
                } else {
                    let rho = (0..m).filter(|&d| d != c).map(|d| r[d] * s).sum::<f64>().min(0.999);
                    (s * rho / (1.0 - rho)).min(n.saturating_sub(1) as f64 * s)
                };
                let tc = &self.tasks[jobs.get(running[c].unwrap()).task as usize];
                let conflict: f64 = (0..m)
                    .filter(|&d| d != c && self.active[d])
                    .map(|d| {
                        let td = &self.tasks[jobs.get(running[d].unwrap()).task as usize];
                        let shared = shared_banks(&tc.banks, &td.banks) as f64;
                        r[d] * self.row_conflict_ns * shared / (tc.bank_count.max(1) as f64 * td.bank_count.max(1) as f64)
                    })
                    .sum::<f64>()
                    .min(1.0);
                let rf = self.read_fraction[c];
                let per_miss = rf * (self.read_latency_ns + wait) + (1.0 - rf) * (s + wait) + conflict * self.row_conflict_ns;
                rate[c] = 1.0 / (self.compute[c] + self.refs[c] * self.miss[c] * per_miss).max(1e-12);
                let new_r = rate[c] * self.refs[c] * self.miss[c];
                next[c] = 0.5 * (r[c] + new_r);
                max_change = max_change.max((next[c] - r[c]).abs() / r[c].max(1e-9));
            }
            r = next;
            if max_change < 1e-9 {
                break;
            }
        }
        // 4. Results and the next phase boundary.
        self.next_event = NONE_U64;
        for c in 0..m {
            if !self.active[c] {
                continue;
            }
            let rc = rate[c];
            flows.rate[c] = rc;
            flows.requests_per_ns[c] = rc * self.refs[c] * self.miss[c];
            flows.stall[c] = (1.0 - rc * self.compute[c]).clamp(0.0, 1.0);
            let job = jobs.get(running[c].unwrap());
            let ph = Self::phase(&self.tasks[job.task as usize], job);
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
