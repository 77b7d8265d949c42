//! What both server schedulers share ([`super::cbs`], [`super::periodic_server`]):
//! per core, which server holds it and when that server's CPU budget runs out.
//! A server's budget drains while it holds its core, and the job it was
//! running goes back to its ready queue when it loses the core.

use super::queue::CoreQueue;
use crate::sim::job::{JobId, NONE_U64};

/// A CPU reservation: a remaining budget and a queue of its tasks' jobs.
pub trait Reservation {
    fn budget_left(&mut self) -> &mut u64;
    fn queue(&mut self) -> &mut CoreQueue;
}

#[derive(Debug, Clone)]
pub struct ServerCores {
    /// Per core: the server holding it.
    pub holder: Vec<Option<usize>>,
    /// Per core: when the holder's budget runs out.
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

    /// Give `core` to `best` at `now` and return the job it runs.
    pub fn hand_over<S: Reservation>(&mut self, core: usize, best: Option<usize>, now: u64, servers: &mut [S]) -> Option<JobId> {
        if let Some(old) = self.holder[core] {
            if Some(old) != best {
                servers[old].queue().yield_core();
            }
        }
        self.holder[core] = best;
        let (job, exhaust) = match best {
            Some(i) => {
                let left = *servers[i].budget_left();
                (servers[i].queue().dispatch(), now + left)
            }
            None => (None, NONE_U64),
        };
        self.exhaust_at[core] = exhaust;
        job
    }

    /// Per core, the holding server's index.
    pub fn fill(&self, out: &mut [Option<u32>]) {
        for (o, h) in out.iter_mut().zip(&self.holder) {
            *o = h.map(|i| i as u32);
        }
    }
}
