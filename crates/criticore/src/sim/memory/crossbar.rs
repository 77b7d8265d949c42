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
use crate::sim::draws::Draws;
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};
use std::collections::HashMap;

/// One runnable's phase of a task's jobs: its accesses by memory.
struct Phase {
    /// Its work at the PET.
    len_ns: u64,
    accesses: Vec<(usize, u64)>,
}

pub struct CrossbarModel {
    x: Crossbar,
    ns_per_cycle: f64,
    /// Per task: its runnables' phases (empty: no accesses, rate 1).
    phases: Vec<Vec<Phase>>,
    /// Per task: where each phase ends at the PETs (work, the copy-in first), for bisection.
    ends: Vec<Vec<u64>>,
    copy_in_ns: Vec<u64>,
    draws: Option<Draws>,
    memo: HashMap<Vec<u64>, Vec<f64>>,
    key: Vec<u64>,
    /// Per core: the accesses per ns of work by memory of what runs now.
    intensity: Vec<Vec<(usize, f64)>>,
    next_event: u64,
}

/// Solved flows remembered at most (then the memo starts over).
const MEMO_ENTRIES: usize = 1 << 16;

impl CrossbarModel {
    /// `draws`: the run's drawn runnable times (`ExecModel::Drawn`), if so.
    pub fn new(system: &TaskSystem, draws: Option<Draws>) -> Option<Self> {
        let x = Crossbar::new(system)?;
        let phases = system
            .tasks
            .iter()
            .zip(&x.runnables)
            .map(|(t, per_runnable)| {
                if per_runnable.iter().all(Vec::is_empty) {
                    return Vec::new();
                }
                t.runnables.iter().zip(per_runnable).map(|(r, a)| Phase { len_ns: r.pet_ns, accesses: a.clone() }).collect()
            })
            .collect();
        let ends = system
            .tasks
            .iter()
            .zip(&phases)
            .map(|(t, ps): (&crate::model::Task, &Vec<Phase>)| ps.iter().scan(t.copy_in_ns, |end, p| {
                *end += p.len_ns;
                Some(*end)
            }).collect())
            .collect();
        let cores = system.platform.cores;
        Some(CrossbarModel {
            ends,
            ns_per_cycle: x.ns_per_cycle(),
            x,
            phases,
            copy_in_ns: system.tasks.iter().map(|t| t.copy_in_ns).collect(),
            draws,
            memo: HashMap::new(),
            key: Vec::new(),
            intensity: vec![Vec::new(); cores],
            next_event: NONE_U64,
        })
    }

    /// The job's runnable now (None: its copy-in or copy-out, which make no
    /// accesses), the work (ns at rate 1) it lasts in this job and where it
    /// ends; None if its task accesses nothing. A drawn runnable lasts its
    /// draw; a zero-length one's accesses go with no work (none).
    fn phase_of(&self, job: &Job) -> Option<(Option<usize>, u64, u64)> {
        let t = job.task as usize;
        let phases = &self.phases[t];
        if phases.is_empty() {
            return None;
        }
        let done = job.exec_ns - job.remaining_ns;
        let mut start = self.copy_in_ns[t];
        if done < start {
            return Some((None, start, start));
        }
        if self.draws.is_none() {
            // At the PETs: the first phase ending after `done`, by bisection.
            let ends = &self.ends[t];
            let k = ends.partition_point(|&e| e <= done);
            return Some(match phases.get(k) {
                Some(p) => (Some(k), p.len_ns, ends[k]),
                None => (None, 0, u64::MAX),
            });
        }
        for (k, p) in phases.iter().enumerate() {
            let len = self.draws.as_ref().and_then(|d| d.runnable_ns(job.task, job.number, k)).unwrap_or(p.len_ns);
            let end = start + len;
            if done < end {
                return Some((Some(k), len, end));
            }
            start = end;
        }
        Some((None, 0, u64::MAX))
    }

    /// Solve rate, requests per ns and stall per core for `self.intensity`.
    fn solve(&self, allowed: &[bool]) -> Vec<f64> {
        let cores = self.intensity.len();
        let l = |m: usize, c: usize| self.x.latency[m][c] as f64 * self.ns_per_cycle;
        let mut x = vec![1.0; cores];
        let mut wait: Vec<Vec<f64>> = self.intensity.iter().map(|a| vec![0.0; a.len()]).collect();
        for _ in 0..500 {
            // Each core's share at a memory's port (o), holding it (b), and its accesses per ns (r).
            let at = |d: usize, m: usize, x: &[f64], wait: &[Vec<f64>]| -> (f64, f64, f64) {
                match self.intensity[d].iter().position(|&(n, _)| n == m) {
                    Some(k) if allowed[d] => {
                        let a = self.intensity[d][k].1;
                        ((x[d] * a * (l(m, d) + wait[d][k])).min(1.0), (x[d] * a * l(m, d)).min(1.0), x[d] * a)
                    }
                    _ => (0.0, 0.0, 0.0),
                }
            };
            let mut change: f64 = 0.0;
            let mut next_wait = wait.clone();
            for c in 0..cores {
                for (k, &(m, a)) in self.intensity[c].iter().enumerate() {
                    // One access of d delays at most one of c's (c has one
                    // outstanding): c's accesses wait for d's at most d's
                    // accesses per c access, r_d / r_c.
                    let r_c = x[c] * a;
                    let per = |o: f64, r_d: f64| if r_c > 0.0 { o.min(r_d / r_c) } else { o };
                    let w = match self.x.arbiter[m] {
                        Arbiter::FixedPriority => {
                            let (mut ahead, mut held, mut below) = (0.0, 0.0, 0.0f64);
                            for d in (0..cores).filter(|&d| d != c) {
                                let (o, b, r_d) = at(d, m, &x, &wait);
                                if d < c {
                                    ahead += o * l(m, d);
                                    held += b;
                                } else {
                                    below = below.max(per(b, r_d) * l(m, d));
                                }
                            }
                            (ahead + below) / (1.0 - held).max(1e-3)
                        }
                        _ => (0..cores)
                            .filter(|&d| d != c)
                            .map(|d| {
                                let (o, _, r_d) = at(d, m, &x, &wait);
                                per(o, r_d) * l(m, d)
                            })
                            .sum(),
                    };
                    next_wait[c][k] = 0.5 * wait[c][k] + 0.5 * w;
                    change = change.max((next_wait[c][k] - wait[c][k]).abs());
                }
            }
            wait = next_wait;
            for c in 0..cores {
                let per_work: f64 = self.intensity[c].iter().zip(&wait[c]).map(|(&(m, a), w)| a * (l(m, c) + w)).sum();
                x[c] = 1.0 / (1.0 + per_work);
            }
            if change < 1e-9 {
                break;
            }
        }
        let mut out = vec![0.0; 3 * cores];
        for c in 0..cores {
            let rate = if allowed[c] { x[c] } else { 0.0 };
            out[c] = rate;
            out[cores + c] = rate * self.intensity[c].iter().map(|&(_, a)| a).sum::<f64>();
            out[2 * cores + c] = 1.0 - rate;
        }
        out
    }
}

impl MemoryModel for CrossbarModel {
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        self.key.clear();
        self.next_event = NONE_U64;
        let mut ends = vec![None; running.len()];
        for (c, &on) in running.iter().enumerate() {
            self.intensity[c].clear();
            let phase = on.filter(|_| ctx.allowed[c]).and_then(|id| {
                let job = jobs.get(id);
                self.phase_of(job).map(|p| (job, p))
            });
            let code = match phase {
                None => on.map_or(0, |_| if ctx.allowed[c] { 2 } else { 1 }),
                Some((job, (None, _, end))) => {
                    ends[c] = Some(((job.exec_ns - job.remaining_ns) as f64 + job.work_carry, end)).filter(|_| end < job.exec_ns);
                    2
                }
                Some((job, (Some(k), len, end))) => {
                    let len = len.max(1) as f64;
                    self.intensity[c].extend(self.phases[job.task as usize][k].accesses.iter().map(|&(m, n)| (m, n as f64 / len)));
                    ends[c] = Some(((job.exec_ns - job.remaining_ns) as f64 + job.work_carry, end)).filter(|_| end < job.exec_ns);
                    self.key.push(len as u64);
                    ((job.task as u64 + 1) << 32) | k as u64
                }
            };
            self.key.push(code);
        }
        let solved = match self.memo.get(&self.key) {
            Some(v) => v.clone(),
            None => {
                let v = self.solve(ctx.allowed);
                if self.memo.len() >= MEMO_ENTRIES {
                    self.memo.clear();
                }
                self.memo.insert(self.key.clone(), v.clone());
                v
            }
        };
        let m = running.len();
        flows.rate.copy_from_slice(&solved[..m]);
        flows.requests_per_ns.copy_from_slice(&solved[m..2 * m]);
        flows.stall.copy_from_slice(&solved[2 * m..3 * m]);
        // The next runnable boundary: the flows change there.
        for (c, e) in ends.iter().enumerate() {
            if let Some((done, end)) = *e {
                if end as f64 > done && flows.rate[c] > 0.0 {
                    self.next_event = self.next_event.min(now.saturating_add(crate::sim::engine::ceil_ns((end as f64 - done) / flows.rate[c])));
                }
            }
        }
    }

    fn next_event(&self) -> u64 {
        self.next_event
    }
}
