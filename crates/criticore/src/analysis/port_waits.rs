//! Waiting at a scratchpad platform's memory ports, per window, for the pfp
//! analysis (docs/analysis.md, "Scratchpad platforms";
//! `interference::crossbar`). A job's accesses are charged their latency
//! alone in its PET (`Crossbar::charged_alone`); the waiting is demand added
//! to the window. Under round-robin or FCFS each access from core c to
//! memory m waits for at most one access of each other core d, and each of
//! d's accesses delays at most one of c's (c has one outstanding), so in a
//! window of length w
//!
//!   wait(w) ≤ Σ_m Σ_{d≠c} min(N_c,m(w), N_d,m(w)) · L(d, m)
//!
//! with N_c,m the accesses to m of the window's own jobs (the job's, its
//! higher-priority ones', a blocking region's) and N_d,m(w) = Σ_{j on d}
//! ⌈(w + R_j)/T_j⌉ · A_j,m what d's tasks can issue in any window of w, given
//! their response bounds R_j (unbounded: N_d,m = ∞, one access of d per
//! access of c). The cores are analyzed in rounds, each with the bounds of
//! the round before; the first round has none (every access waits for
//! every other user). A fixed-priority port charges the highest-priority
//! core's accesses one lower access under way each (the others have no
//! bound: `Crossbar::worst_wait_cycles`).

use crate::interference::crossbar::{Accesses, Crossbar};
use crate::model::{Arbiter, TaskSystem};

pub struct PortWaits<'a> {
    pub crossbar: &'a Crossbar,
    /// Per task: its response bound from the round before (None: unbounded).
    responses: Vec<Option<u64>>,
    /// Per task: its accesses per job by memory.
    per_job: Vec<Accesses>,
    /// Per memory, per core: (task, accesses per job to the memory, period)
    /// of each task that may run on the core and accesses the memory.
    issuers: Vec<Vec<Vec<(usize, u64, u64)>>>,
    /// Per task: what its PET was charged for its accesses' latency, per
    /// job (for `--explain`, which shows it apart from the PET).
    pub access_ns: Vec<u64>,
}

/// The own side of a window: its tasks' accesses, counted per window.
pub struct Own {
    pub core: usize,
    /// (accesses per job by memory, period) of the task under analysis.
    pub task: (Accesses, u64),
    /// The same of each higher-priority task.
    pub higher: Vec<(Accesses, u64)>,
    /// A blocking region's accesses.
    pub blocking: Accesses,
}

impl<'a> PortWaits<'a> {
    pub fn new(crossbar: &'a Crossbar, system: &'a TaskSystem, responses: Vec<Option<u64>>, access_ns: Vec<u64>) -> Self {
        let per_job: Vec<Accesses> = (0..system.tasks.len()).map(|i| crossbar.task_accesses(i)).collect();
        let mut issuers = vec![vec![Vec::new(); system.platform.cores]; crossbar.latency.len()];
        for (j, (t, accesses)) in system.tasks.iter().zip(&per_job).enumerate() {
            for &(m, a) in accesses.iter().filter(|&&(_, a)| a > 0) {
                // A task that may run on any core may run on each.
                for (d, on_d) in issuers[m].iter_mut().enumerate() {
                    if t.core.is_none_or(|c| c == d) {
                        on_d.push((j, a, t.period_ns));
                    }
                }
            }
        }
        PortWaits { crossbar, responses, per_job, issuers, access_ns }
    }

    pub fn per_job(&self, i: usize) -> &Accesses {
        &self.per_job[i]
    }

    /// What core `d`'s tasks issue to memory `m` in any window of `w`; None if unbounded.
    fn others(&self, d: usize, m: usize, w: u64) -> Option<u128> {
        self.issuers[m][d].iter().try_fold(0u128, |n, &(j, a, period)| {
            let r = self.responses[j]?;
            Some(n + (w as u128 + r as u128).div_ceil(period as u128) * a as u128)
        })
    }

    /// Cycles of waiting in a window of length `w` ending with job `q` of
    /// the task under analysis (from 0).
    pub fn wait_cycles(&self, own: &Own, q: u64, w: u64) -> u128 {
        let mut cycles = 0u128;
        let count = |a: &Accesses, m: usize| a.iter().find(|(x, _)| *x == m).map_or(0, |&(_, n)| n as u128);
        for m in 0..self.crossbar.latency.len() {
            let mine = (q as u128 + 1) * count(&own.task.0, m)
                + own.higher.iter().map(|(a, t)| (w as u128).div_ceil(*t as u128) * count(a, m)).sum::<u128>()
                + count(&own.blocking, m);
            if mine == 0 {
                continue;
            }
            let users = (0..self.crossbar.users[m].len()).filter(|&d| d != own.core && self.crossbar.users[m][d]);
            match self.crossbar.arbiter[m] {
                // The highest-priority user only (analyze refuses the others): its worst wait per access.
                Arbiter::FixedPriority => cycles += mine * self.crossbar.worst_wait_cycles(own.core, m).unwrap_or(0) as u128,
                _ => {
                    for d in users {
                        let theirs = self.others(d, m, w).map_or(mine, |n| n.min(mine));
                        cycles += theirs * self.crossbar.latency[m][d] as u128;
                    }
                }
            }
        }
        cycles
    }

    /// Waiting's long-run share of the time (for the analysis's early
    /// exit): per memory and other core, the lesser of the two cores'
    /// access rates times that core's latency.
    pub fn share(&self, own: &Own) -> f64 {
        let rate = |a: &Accesses, t: u64, m: usize| a.iter().find(|(x, _)| *x == m).map_or(0.0, |&(_, n)| n as f64 / t as f64);
        let x = self.crossbar;
        let mut cycles_per_ns = 0.0;
        for m in 0..x.latency.len() {
            let mine = rate(&own.task.0, own.task.1, m) + own.higher.iter().map(|(a, t)| rate(a, *t, m)).sum::<f64>();
            let users = (0..x.users[m].len()).filter(|&d| d != own.core && x.users[m][d]);
            cycles_per_ns += match x.arbiter[m] {
                Arbiter::FixedPriority => mine * x.worst_wait_cycles(own.core, m).unwrap_or(0) as f64,
                _ => users
                    .map(|d| {
                        let theirs: f64 = self.issuers[m][d].iter().map(|&(_, a, period)| a as f64 / period as f64).sum();
                        mine.min(theirs) * x.latency[m][d] as f64
                    })
                    .sum(),
            };
        }
        cycles_per_ns * x.ns_per_cycle()
    }

    /// Nanoseconds of waiting in the window (rounded up).
    pub fn wait_ns(&self, own: &Own, q: u64, w: u64) -> u64 {
        let cycles = self.wait_cycles(own, q, w).min(u64::MAX as u128 / 2_000_000_000) as u64;
        self.crossbar.ns_ceil(cycles)
    }
}
