//! The crossbar of a scratchpad platform (docs/memory-model.md, "Scratchpad
//! platforms"; issue 27, Build 3). Each memory has one port behind its own
//! arbiter; an access from core c to memory m takes the path's latency
//! L(c, m) in cycles and holds m's port for all of it. Cores are in order: a
//! core has at most one access outstanding, so under round-robin or FCFS an
//! access waits at most for one access of each other core that uses the
//! same memory. Under fixed priority (lower core index first) only the
//! highest-priority user of a port has such a bound.
//!
//! A runnable's PET is its computation; its label accesses add their
//! latency and waiting on top. Per runnable: its accesses per run to each
//! memory (a label of s bytes takes ⌈s / width⌉ accesses). The simulator
//! (`sim::memory::crossbar`) solves the waiting for who runs now; the
//! analysis charges each job the worst waiting here.

use std::convert::Infallible;
use crate::model::scratchpad::{task_copies, Copies};
use crate::model::{Arbiter, Part, Region, Task, TaskSystem};

/// A runnable's (or a task's) accesses per run, by memory: (memory, accesses).
pub type Accesses = Vec<(usize, u64)>;

pub struct Crossbar {
    pub clock_hz: u64,
    /// Per memory, per core: cycles of one access.
    pub latency: Vec<Vec<u64>>,
    pub arbiter: Vec<Arbiter>,
    /// Per task, per runnable (in order): accesses per run by memory.
    pub runnables: Vec<Vec<Accesses>>,
    /// Per task: its copy-in's and copy-out's accesses (implicit
    /// communication, `model::scratchpad::task_copies`; empty: none).
    pub copy_in: Vec<Accesses>,
    pub copy_out: Vec<Accesses>,
    /// Per memory, per core: whether a task of that core (or one that may
    /// run anywhere) accesses it.
    pub users: Vec<Vec<bool>>,
}

impl Crossbar {
    /// None for a platform without memories.
    pub fn new(system: &TaskSystem) -> Option<Crossbar> {
        let p = &system.platform;
        if p.memories.is_empty() {
            return None;
        }
        let clock_hz = p.clock_hz.expect("the parser requires a clock with memories");
        let copies: Vec<Option<Copies>> = system.tasks.iter().map(|t| task_copies(p, &system.labels, t)).collect();
        let runnables: Vec<Vec<Accesses>> = system.tasks.iter().zip(&copies).map(|(t, copies)| t.runnables.iter().map(|r| {
            let mut by_memory: Accesses = Vec::new();
            for a in &r.accesses {
                let label = &system.labels[a.label];
                // Implicit communication: to the task's copy.
                let m = copies.as_ref().map_or(label.memory, |c| c.memory);
                let n = (a.reads + a.writes).saturating_mul(p.memories[m].accesses_of(label.size_bytes));
                match by_memory.iter_mut().find(|(x, _)| *x == m) {
                    Some((_, k)) => *k += n,
                    None => by_memory.push((m, n)),
                }
            }
            by_memory.sort_unstable();
            by_memory
        }).collect()).collect();
        let (copy_in, copy_out): (Vec<Accesses>, Vec<Accesses>) = copies.into_iter().map(|c| c.map_or_else(Default::default, |c| (c.copy_in, c.copy_out))).unzip();
        let mut users = vec![vec![false; p.cores]; p.memories.len()];
        for (i, t) in system.tasks.iter().enumerate() {
            for &(m, n) in runnables[i].iter().chain([&copy_in[i], &copy_out[i]]).flatten() {
                if n > 0 {
                    match t.core {
                        Some(c) => users[m][c] = true,
                        None => users[m].iter_mut().for_each(|u| *u = true),
                    }
                }
            }
        }
        Some(Crossbar { clock_hz, latency: p.memories.iter().map(|m| m.latency_cycles.clone()).collect(), arbiter: p.memories.iter().map(|m| m.arbiter).collect(), runnables, copy_in, copy_out, users })
    }

    /// Nanoseconds of `cycles`, rounded up (exact).
    pub fn ns_ceil(&self, cycles: u64) -> u64 {
        crate::model::scratchpad::cycles_ns_ceil(cycles, self.clock_hz)
    }

    /// Nanoseconds per cycle (the simulator's flows).
    pub fn ns_per_cycle(&self) -> f64 {
        1e9 / self.clock_hz as f64
    }

    /// The most cycles one access from core `c` to memory `m` waits for the
    /// port: RR/FCFS one access of each other user; fixed priority one
    /// lower-priority access under way, and None if a higher-priority core
    /// uses the port (it may keep it busy for as long as it issues).
    pub fn worst_wait_cycles(&self, c: usize, m: usize) -> Option<u64> {
        let others = self.users[m].iter().enumerate().filter(|&(d, &u)| u && d != c);
        match self.arbiter[m] {
            Arbiter::FixedPriority => {
                if self.users[m][..c].iter().any(|&u| u) {
                    return None;
                }
                Some(others.map(|(d, _)| self.latency[m][d]).max().unwrap_or(0))
            }
            _ => Some(others.map(|(d, _)| self.latency[m][d]).sum()),
        }
    }

    /// Cycles of accesses `a` from core `c` alone (no waiting).
    pub fn alone_cycles(&self, a: &Accesses, c: usize) -> u64 {
        a.iter().map(|&(m, n)| n.saturating_mul(self.latency[m][c])).sum()
    }

    /// Cycles of accesses `a` from core `c` with each access's worst wait
    /// for its port; Err(memory) whose wait has no bound.
    pub fn worst_cycles(&self, a: &Accesses, c: usize) -> Result<u64, usize> {
        a.iter().try_fold(0u64, |sum, &(m, n)| {
            let wait = self.worst_wait_cycles(c, m).ok_or(m)?;
            Ok(sum.saturating_add(n.saturating_mul(self.latency[m][c] + wait)))
        })
    }

    /// The tasks with their runnables' PETs grown by their worst access
    /// times on their cores (for the CPU-only analyses: a job's demand with
    /// its accesses' latency and worst waiting), and a task without
    /// runnables unchanged. Err: (task, memory) whose waiting has no bound.
    pub fn charged(&self, system: &TaskSystem) -> Result<TaskSystem, (usize, usize)> {
        self.grown(system, |a, c| self.worst_cycles(a, c))
    }

    /// As [`Crossbar::charged`] with each access at its latency alone (the
    /// waiting bounded apart, per window: `analysis::port_waits`).
    pub fn charged_alone(&self, system: &TaskSystem) -> TaskSystem {
        let Ok(grown) = self.grown::<Infallible>(system, |a, c| Ok(self.alone_cycles(a, c)));
        grown
    }

    /// Each runnable's and copy's PET grown by `cycles` of its accesses on
    /// the worst core its task may run on (global tasks: any), and by 1 ns
    /// if it makes any: the simulator times events in whole ns, so a phase
    /// that ends inside a ns runs to its end at the phase's own rate (less
    /// than 1 ns late per phase with accesses: docs/analysis.md).
    fn grown<E>(&self, system: &TaskSystem, cycles: impl Fn(&Accesses, usize) -> Result<u64, E>) -> Result<TaskSystem, (usize, E)> {
        let mut out = system.clone();
        for (i, t) in out.tasks.iter_mut().enumerate() {
            let ns = |a: &Accesses| -> Result<u64, (usize, E)> {
                let mut worst = 0;
                for c in cores_of(&system.tasks[i], system.platform.cores) {
                    worst = worst.max(cycles(a, c).map_err(|e| (i, e))?);
                }
                Ok(if worst == 0 { 0 } else { self.ns_ceil(worst) + 1 })
            };
            let mut grown = 0u64;
            for (k, r) in t.runnables.iter_mut().enumerate() {
                let ns = ns(&self.runnables[i][k])?;
                r.pet_ns = r.pet_ns.saturating_add(ns);
                grown = grown.saturating_add(ns);
            }
            let (copy_in, copy_out) = (ns(&self.copy_in[i])?, ns(&self.copy_out[i])?);
            t.copy_in_ns = t.copy_in_ns.saturating_add(copy_in);
            t.copy_out_ns = t.copy_out_ns.saturating_add(copy_out);
            grow_pets(t, grown.saturating_add(copy_in).saturating_add(copy_out));
        }
        Ok(out)
    }

    /// A task's accesses per job, by memory (its copies' with them).
    pub fn task_accesses(&self, i: usize) -> Accesses {
        sum_of(self.runnables[i].iter().chain([&self.copy_in[i], &self.copy_out[i]]))
    }

    /// The accesses of a region of task `i` (`Task::regions`).
    pub fn region_accesses(&self, i: usize, region: &Region) -> Accesses {
        match region.part {
            Part::CopyIn => self.copy_in[i].clone(),
            Part::CopyOut => self.copy_out[i].clone(),
            Part::Runnable(k) => self.runnables[i][k].clone(),
            Part::Body => sum_of(self.runnables[i].iter()),
            Part::Job => self.task_accesses(i),
        }
    }
}

/// Accesses added up by memory.
pub fn sum_of<'a>(parts: impl Iterator<Item = &'a Accesses>) -> Accesses {
    let mut out: Accesses = Vec::new();
    for &(m, n) in parts.flatten() {
        match out.iter_mut().find(|(x, _)| *x == m) {
            Some((_, k)) => *k = k.saturating_add(n),
            None => out.push((m, n)),
        }
    }
    out.sort_unstable();
    out
}

/// The cores task `t` may run on.
fn cores_of(t: &Task, cores: usize) -> impl Iterator<Item = usize> {
    match t.core {
        Some(c) => c..c + 1,
        None => 0..cores,
    }
}

/// A task's PET at every level grown by `ns`.
fn grow_pets(t: &mut Task, ns: u64) {
    for p in t.pet_ns.0.iter_mut().flatten() {
        *p = p.saturating_add(ns);
    }
}
