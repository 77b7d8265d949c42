//! Scratchpad memories behind a crossbar in the simulator
//! (`interference::crossbar`, docs/memory-model.md "Scratchpad platforms"):
//! a job runs its runnables in order, each a phase whose label accesses are
//! spread evenly over its work; while it runs, its core progresses at
//!
//!   x_c = 1 / (1 + Σ_m a_{c,m} (L_{c,m} + W_{c,m}))
//!
//! with a_{c,m} the phase's accesses to memory m per ns of work, L the
//! path's latency and W the mean wait at m's port. A core d is at m's port
//! (waiting or served) for the share o_{d,m} = min(1, x_d a_{d,m} (L + W))
//! of its time and holds it for b_{d,m} = x_d a_{d,m} L; it issues r_{d,m} =
//! x_d a_{d,m} accesses per ns. An access waits, per other core, for that
//! core's access in the port's queue ahead of it, and one access of d
//! delays at most one of c's (c has one outstanding): round-robin and FCFS
//! W_{c,m} = Σ_{d≠c} min(o_{d,m}, r_{d,m} / r_{c,m}) L_{d,m} (at most the
//! analysis's one access of each other user, and over any window at most
//! d's accesses in it); fixed priority (lower core first) the higher cores'
//! share stretched by the port time they leave, and one lower core's access
//! under way. Solved by damped iteration once
//! per (task, phase) on each core, and remembered.

use super::{Flows, MemoryContext, MemoryModel};
use crate::interference::crossbar::Crossbar;
use crate::model::{Arbiter, TaskSystem};
use crate::sim::draws::{Draws, Shape};
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
use std::collections::HashMap;
use std::sync::Arc;

/// One phase of a task's jobs (its copy-in, a runnable, its copy-out):
/// its accesses by memory.
struct Phase {
    /// Its work at the PET.
    len_ns: u64,
    accesses: Vec<(usize, u64)>,
    /// The runnable it is (its time may be drawn), if one.
    runnable: Option<usize>,
}

pub struct CrossbarModel {
    x: Crossbar,
    ns_per_cycle: f64,
    /// Per task: its phases in order (empty: no accesses, rate 1).
    phases: Vec<Vec<Phase>>,
    /// Per task: where each phase ends at the PETs (work), for bisection.
    ends: Vec<Vec<u64>>,
    /// Per task: how a job shorter than its PETs splits its time.
    shapes: Vec<Shape>,
    draws: Option<Arc<Draws>>,
    memo: HashMap<Vec<u64>, Vec<f64>>,
    key: Vec<u64>,
    /// Per core: the accesses per ns of work by memory of what runs now.
    intensity: Vec<Vec<(usize, f64)>>,
    /// Per core: where its job's phase ends (work), if before its end.
    phase_end: Vec<Option<u64>>,
    /// Per core: what runs now, as (phase code, its length) (a part of `key`).
    core_key: Vec<(u64, u64)>,
    scratch: Scratch,
    next_event: u64,
}

/// Solved flows remembered at most (then the memo starts over).
const MEMO_ENTRIES: usize = 1 << 16;

impl CrossbarModel {
    /// `draws`: the run's drawn runnable times (`ExecModel::Drawn`), if so.
    pub fn new(system: &TaskSystem, draws: Option<Arc<Draws>>) -> Option<Self> {
        let x = Crossbar::new(system)?;
        let phases: Vec<Vec<Phase>> = system
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if x.task_accesses(i).is_empty() {
                    return Vec::new();
                }
                let copy = |len_ns: u64, accesses: &Vec<(usize, u64)>| Phase { len_ns, accesses: accesses.clone(), runnable: None };
                std::iter::once(copy(t.copy_in_ns, &x.copy_in[i]))
                    .chain(t.runnables.iter().zip(&x.runnables[i]).enumerate().map(|(k, (r, a))| Phase { len_ns: r.pet_ns, accesses: a.clone(), runnable: Some(k) }))
                    .chain(std::iter::once(copy(t.copy_out_ns, &x.copy_out[i])))
                    .collect()
            })
            .collect();
        let ends = phases
            .iter()
            .map(|ps| ps.iter().scan(0, |end, p: &Phase| {
                *end += p.len_ns;
                Some(*end)
            }).collect())
            .collect();
        let cores = system.platform.cores;
        Some(CrossbarModel {
            ends,
            shapes: system.tasks.iter().map(Shape::of).collect(),
            ns_per_cycle: x.ns_per_cycle(),
            x,
            phases,
            draws,
            memo: HashMap::new(),
            key: Vec::new(),
            intensity: vec![Vec::new(); cores],
            phase_end: vec![None; cores],
            core_key: vec![(0, 0); cores],
            scratch: Scratch::default(),
            next_event: NONE_U64,
        })
    }

    /// The job's phase now (None: past them all, a job given more time
    /// than its PETs), the work (ns at rate 1) it lasts in this job and
    /// where it ends; None if its task accesses nothing. A drawn runnable
    /// lasts its draw; a zero-length phase's accesses go with no work (none).
    fn phase_of(&self, job: &Job) -> Option<(Option<usize>, u64, u64)> {
        let phases = &self.phases[job.task as usize];
        if phases.is_empty() {
            return None;
        }
        let done = job.exec_ns - job.remaining_ns;
        let draws = self.draws.as_ref().filter(|d| d.draws(job.task));
        let ends = &self.ends[job.task as usize];
        // Its own work (reloads aside): a job shorter than its PETs runs its
        // runnables shortened (`Shape::runnable_ns`), as its regions do.
        let own = job.exec_ns - job.reload_ns;
        if draws.is_none() && own >= ends.last().copied().unwrap_or(0) {
            // At the PETs: the first phase ending after `done`, by bisection.
            let k = ends.partition_point(|&e| e <= done);
            return Some(phases.get(k).map_or((None, 0, u64::MAX), |p| (Some(k), p.len_ns, ends[k])));
        }
        let mut start = 0;
        for (k, p) in phases.iter().enumerate() {
            let len = match p.runnable {
                Some(r) => draws.and_then(|d| d.runnable_ns(job.task, job.number, r)).unwrap_or_else(|| self.shapes[job.task as usize].runnable_ns(r, own)),
                None => p.len_ns,
            };
            let end = start + len;
            if done < end {
                return Some((Some(k), len, end));
            }
            start = end;
        }
        Some((None, 0, u64::MAX))
    }

    /// Solve rate, requests per ns and stall per core for `self.intensity`
    /// (as `out`: rates, then requests per ns, then stalls, per core).
    fn solve(&mut self, allowed: &[bool], out: &mut Vec<f64>) {
        let cores = self.intensity.len();
        let memories = self.x.latency.len();
        let l = |m: usize, c: usize| self.x.latency[m][c] as f64 * self.ns_per_cycle;
        let Scratch { x, wait, next_wait, port, last } = &mut self.scratch;
        x.clear();
        x.resize(cores, 1.0);
        // Waits flat, per core its memories in `intensity`'s order.
        wait.clear();
        wait.resize(self.intensity.iter().map(Vec::len).sum(), 0.0);
        last.resize(cores, ((NONE_U64, 0), 1.0, Vec::new()));
        // Warm start: a core running what it ran at the last solve starts
        // from that solve's rate and waits (most events change one core).
        let mut k0 = 0;
        for c in 0..cores {
            let n = self.intensity[c].len();
            if last[c].0 == self.core_key[c] && last[c].2.len() == n {
                x[c] = last[c].1;
                wait[k0..k0 + n].copy_from_slice(&last[c].2);
            }
            k0 += n;
        }
        next_wait.clone_from(wait);
        for _ in 0..500 {
            // Each core's share at each memory's port (o), holding it (b), and its accesses per ns (r).
            port.clear();
            port.resize(cores * memories, (0.0, 0.0, 0.0));
            let mut k0 = 0;
            for d in 0..cores {
                for (k, &(m, a)) in self.intensity[d].iter().enumerate() {
                    if allowed[d] {
                        port[d * memories + m] = ((x[d] * a * (l(m, d) + wait[k0 + k])).min(1.0), (x[d] * a * l(m, d)).min(1.0), x[d] * a);
                    }
                }
                k0 += self.intensity[d].len();
            }
            let mut change: f64 = 0.0;
            let mut k0 = 0;
            for c in 0..cores {
                for (k, &(m, a)) in self.intensity[c].iter().enumerate() {
                    // One access of d delays at most one of c's (c has one
                    // outstanding): c's accesses wait for d's at most d's
                    // accesses per c access, r_d / r_c.
                    let r_c = x[c] * a;
                    let per = |o: f64, r_d: f64| if r_c > 0.0 { o.min(r_d / r_c) } else { o };
                    let others = (0..cores).filter(|&d| d != c).map(|d| (d, port[d * memories + m]));
                    let w = match self.x.arbiter[m] {
                        Arbiter::FixedPriority => {
                            let (mut ahead, mut held, mut below) = (0.0, 0.0, 0.0f64);
                            for (d, (o, b, r_d)) in others {
                                if d < c {
                                    ahead += o * l(m, d);
                                    held += b;
                                } else {
                                    below = below.max(per(b, r_d) * l(m, d));
                                }
                            }
                            (ahead + below) / (1.0 - held).max(1e-3)
                        }
                        _ => others.map(|(d, (o, _, r_d))| per(o, r_d) * l(m, d)).sum(),
                    };
                    let i = k0 + k;
                    next_wait[i] = 0.5 * wait[i] + 0.5 * w;
                    change = change.max((next_wait[i] - wait[i]).abs());
                }
                k0 += self.intensity[c].len();
            }
            std::mem::swap(wait, next_wait);
            let mut k0 = 0;
            for c in 0..cores {
                let per_work: f64 = self.intensity[c].iter().zip(&wait[k0..]).map(|(&(m, a), w)| a * (l(m, c) + w)).sum();
                k0 += self.intensity[c].len();
                x[c] = 1.0 / (1.0 + per_work);
            }
            if change < 1e-9 {
                break;
            }
        }
        let mut k0 = 0;
        for c in 0..cores {
            let n = self.intensity[c].len();
            last[c].0 = self.core_key[c];
            last[c].1 = x[c];
            last[c].2.clear();
            last[c].2.extend_from_slice(&wait[k0..k0 + n]);
            k0 += n;
        }
        out.clear();
        out.resize(3 * cores, 0.0);
        for c in 0..cores {
            let rate = if allowed[c] { x[c] } else { 0.0 };
            out[c] = rate;
            out[cores + c] = rate * self.intensity[c].iter().map(|&(_, a)| a).sum::<f64>();
            out[2 * cores + c] = 1.0 - rate;
        }
    }
}

/// `CrossbarModel::solve`'s buffers, kept from solve to solve.
#[derive(Default)]
struct Scratch {
    x: Vec<f64>,
    wait: Vec<f64>,
    next_wait: Vec<f64>,
    port: Vec<(f64, f64, f64)>,
    /// Per core: what it ran at the last solve (`core_key`), its rate and waits.
    last: Vec<((u64, u64), f64, Vec<f64>)>,
}

impl MemoryModel for CrossbarModel {
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        self.key.clear();
        self.next_event = NONE_U64;
        for (c, &on) in running.iter().enumerate() {
            self.intensity[c].clear();
            self.phase_end[c] = None;
            let phase = on.filter(|_| ctx.allowed[c]).and_then(|id| {
                let job = jobs.get(id);
                self.phase_of(job).map(|p| (job, p))
            });
            let code = match phase {
                None | Some((_, (None, _, _))) => on.map_or(0, |_| if ctx.allowed[c] { 2 } else { 1 }),
                Some((job, (Some(k), len, end))) => {
                    self.phase_end[c] = Some(end).filter(|&e| e < job.exec_ns);
                    let accesses = &self.phases[job.task as usize][k].accesses;
                    let per_ns = 1.0 / len.max(1) as f64;
                    self.intensity[c].extend(accesses.iter().map(|&(m, n)| (m, n as f64 * per_ns)));
                    if accesses.is_empty() { 2 } else { ((job.task as u64 + 1) << 32) | k as u64 }
                }
            };
            let len = self.intensity[c].first().map_or(0, |_| phase.map_or(0, |(_, (_, len, _))| len.max(1)));
            self.core_key[c] = (code, len);
            self.key.push(code);
            if len > 0 {
                self.key.push(len);
            }
        }
        let m = running.len();
        let put = |solved: &[f64], flows: &mut Flows| {
            flows.rate.copy_from_slice(&solved[..m]);
            flows.requests_per_ns.copy_from_slice(&solved[m..2 * m]);
            flows.stall.copy_from_slice(&solved[2 * m..3 * m]);
        };
        match self.memo.get(&self.key) {
            Some(solved) => put(solved, flows),
            None => {
                let mut solved = Vec::with_capacity(3 * m);
                self.solve(ctx.allowed, &mut solved);
                put(&solved, flows);
                if self.memo.len() >= MEMO_ENTRIES {
                    self.memo.clear();
                }
                self.memo.insert(self.key.clone(), solved);
            }
        }
        // The next runnable boundary: the flows change there.
        for (c, (&on, &end)) in running.iter().zip(&self.phase_end).enumerate() {
            if let (Some(id), Some(end)) = (on, end) {
                self.next_event = self.next_event.min(jobs.get(id).reaches(now, end, flows.rate[c]));
            }
        }
    }

    fn next_event(&self) -> u64 {
        self.next_event
    }
}
