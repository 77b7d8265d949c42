//! What both server schedulers share ([`super::cbs`], [`super::periodic_server`]):
//! per core, which server holds it, and the hand-over of a core: the job the
//! old holder was running goes back to its ready queue. For CBS it also drains
//! the holder's CPU budget and knows when it runs out ([`Reservation`]); the
//! periodic servers' budgets are `regulate::mrs_cpu::MrsCpuRules`.

use super::queue::CoreQueue;
use crate::sim::job::{JobId, NONE_U64};

/// A server's local scheduler: the queue of its tasks' jobs.
pub trait ServerQueue {
    fn queue(&mut self) -> &mut CoreQueue;
}

impl ServerQueue for CoreQueue {
    fn queue(&mut self) -> &mut CoreQueue {
        self
    }
}

/// A CPU reservation: a remaining budget and a queue of its tasks' jobs.
pub trait Reservation: ServerQueue {
    fn budget_left(&mut self) -> &mut u64;
}

#[derive(Debug, Clone)]
pub struct ServerCores {
    /// Per core: the server holding it.
    pub holder: Vec<Option<usize>>,
    /// Per core: when the holder's budget runs out (set by [`Self::hand_over`]).
    pub exhaust_at: Vec<u64>,
}

impl ServerCores {
    pub fn new(cores: usize) -> Self {
        ServerCores { holder: vec![None; cores], exhaust_at: vec![NONE_U64; cores] }
    }

    /// Charge `dt` of CPU time to every holder (running a job or idling).
    pub fn drain<S: Reservation>(&self, servers: &mut [S], dt: u64) {
        for &h in self.holder.iter().flatten() {
            let q = servers[h].budget_left();
            *q = q.saturating_sub(dt);
        }
    }

    pub fn next_exhaustion(&self) -> u64 {
        self.exhaust_at.iter().copied().min().unwrap_or(NONE_U64)
    }

    /// Give `core` to `best` at `now`, its budget running out `budget_left` later; returns the job it runs.
    pub fn hand_over<S: Reservation>(&mut self, core: usize, best: Option<usize>, now: u64, servers: &mut [S]) -> Option<JobId> {
        self.exhaust_at[core] = match best {
            Some(i) => now + *servers[i].budget_left(),
            None => NONE_U64,
        };
        self.switch(core, best, servers)
    }

    /// Give `core` to `best` (the old holder's running job goes back to its
    /// queue) and return the job `best` runs.
    pub fn switch<S: ServerQueue>(&mut self, core: usize, best: Option<usize>, servers: &mut [S]) -> Option<JobId> {
        if let Some(old) = self.holder[core] {
            if Some(old) != best {
                servers[old].queue().yield_core();
            }
        }
        self.holder[core] = best;
        best.and_then(|i| servers[i].queue().dispatch())
    }

    /// Per core, the holding server's index.
    pub fn fill(&self, out: &mut [Option<u32>]) {
        for (o, h) in out.iter_mut().zip(&self.holder) {
            *o = h.map(|i| i as u32);
        }
    }
}
