//! Constant Bandwidth Server with SCHED_DEADLINE semantics
//! (mcti-task-isolation §2, §6.1.1; Abeni & Buttazzo 1998): each server has a
//! budget Q per period P and a scheduling deadline d; servers on a core run by
//! EDF on d; tasks inside a server by fixed priority.
//!
//! - Wake-up: when a job arrives at an idle server at time t and the server's
//!   remaining budget q would overrun its bandwidth before d
//!   (q·P > (d − t)·Q, or d ≤ t), the server restarts: d = t + P, q = Q
//!   (Linux `dl_entity_overflow`).
//! - Hard reservation: a server whose budget is exhausted is throttled until
//!   its deadline, then replenished: q = Q, d = d + P.

use super::priority::fixed;
use crate::policy::fixed_priority_ranks;
use super::queue::CoreQueue;
use super::server_cores::{Reservation, ServerCores, ServerQueue};
use super::Scheduler;
use crate::policy::server_of_tasks;
use crate::error::FieldError;
use crate::model::TaskSystem;
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};

struct CbsServer {
    core: usize,
    budget_ns: u64,
    period_ns: u64,
    /// Remaining budget q.
    q: u64,
    /// Scheduling deadline d.
    d: u64,
    throttled: bool,
    pending: usize,
    queue: CoreQueue,
}

impl ServerQueue for CbsServer {
    fn queue(&mut self) -> &mut CoreQueue {
        &mut self.queue
    }
}

impl Reservation for CbsServer {
    fn budget_left(&mut self) -> &mut u64 {
        &mut self.q
    }
}

pub struct Cbs {
    servers: Vec<CbsServer>,
    server_of: Vec<usize>,
    rank: Vec<u64>,
    cores: ServerCores,
}

impl Cbs {
    pub fn new(system: &TaskSystem) -> Result<Self, FieldError> {
        let server_of = server_of_tasks(system)?;
        let all: Vec<usize> = (0..system.tasks.len()).collect();
        Ok(Cbs {
            servers: system
                .servers
                .iter()
                .map(|s| CbsServer {
                    core: s.core,
                    budget_ns: s.budget_ns,
                    period_ns: s.period_ns,
                    q: s.budget_ns,
                    d: 0,
                    throttled: false,
                    pending: 0,
                    queue: CoreQueue::default(),
                })
                .collect(),
            server_of,
            rank: fixed_priority_ranks(system, &all),
            cores: ServerCores::new(system.platform.cores),
        })
    }
}

impl Scheduler for Cbs {
    fn release(&mut self, now: u64, id: JobId, job: &Job) {
        let s = &mut self.servers[self.server_of[job.task as usize]];
        if s.pending == 0 && !s.throttled {
            let overflow = s.d <= now || (s.q as u128) * (s.period_ns as u128) > ((s.d - now) as u128) * (s.budget_ns as u128);
            if overflow {
                s.d = now + s.period_ns;
                s.q = s.budget_ns;
            }
        }
        s.pending += 1;
        s.queue.release(fixed(&self.rank, job, id));
    }

    fn complete(&mut self, _now: u64, id: JobId, job: &Job, _core: usize) {
        let s = &mut self.servers[self.server_of[job.task as usize]];
        s.pending -= 1;
        s.queue.complete(id);
    }

    fn advance(&mut self, from: u64, to: u64) {
        self.cores.drain(&mut self.servers, to - from);
    }

    fn next_timer(&self) -> u64 {
        let replenish = self.servers.iter().filter(|s| s.throttled).map(|s| s.d).min().unwrap_or(NONE_U64);
        self.cores.next_exhaustion().min(replenish)
    }

    fn timer(&mut self, now: u64) {
        for c in 0..self.cores.holder.len() {
            if self.cores.exhaust_at[c] <= now {
                if let Some(h) = self.cores.holder[c] {
                    if self.servers[h].q == 0 {
                        self.servers[h].throttled = true;
                    }
                }
                self.cores.exhaust_at[c] = NONE_U64;
            }
        }
        for s in &mut self.servers {
            if s.throttled && s.d <= now {
                s.throttled = false;
                s.q = s.budget_ns;
                s.d += s.period_ns;
            }
        }
    }

    fn dispatch(&mut self, now: u64, _jobs: &Jobs, running: &mut [Option<JobId>]) {
        for c in 0..running.len() {
            let best = (0..self.servers.len())
                .filter(|&i| {
                    let s = &self.servers[i];
                    s.core == c && s.pending > 0 && !s.throttled && s.q > 0
                })
                .min_by_key(|&i| (self.servers[i].d, i))
                // Equal deadlines do not preempt the server holding the core.
                .map(|i| match self.cores.holder[c] {
                    Some(h) if h != i && self.servers[h].d == self.servers[i].d && self.servers[h].pending > 0 && !self.servers[h].throttled && self.servers[h].q > 0 => h,
                    _ => i,
                });
            running[c] = self.cores.hand_over(c, best, now, &mut self.servers);
        }
    }

    fn deplete_server(&mut self, _now: u64, server: u32) {
        // Treated as a budget exhaustion: throttled until the server deadline.
        let s = &mut self.servers[server as usize];
        s.q = 0;
        s.throttled = true;
    }

    fn servers_on_cores(&self, out: &mut [Option<u32>]) {
        self.cores.fill(out);
    }
}
