//! Hierarchical idling periodic servers (mrs-multi-resource-server §II-B, §III):
//! per core a node scheduler picks, by fixed priority, among the servers that
//! have budget left; the chosen server's local scheduler runs its tasks by
//! fixed priority. Rules for the CPU budget:
//! - Rule 1: at each server period start, q = Q (and m = M).
//! - Rule 2: a server with q > 0 is ready; the node scheduler runs the
//!   highest-priority ready server.
//! - Rule 3: execution time is charged to q.
//! - Rule 5: a server whose budget is depleted is suspended until its next period.
//! - Rule 6: a scheduled server with budget but no ready task idles its budget
//!   away (lower-priority servers do not run meanwhile).
//!
//! The memory budget (Rule 4, and Rule 5's "either budget") is charged by the
//! MRS regulator of the memory issue; here q alone governs.

use super::priority::{fixed, fixed_priority_ranks};
use super::queue::CoreQueue;
use super::server_cores::{Reservation, ServerCores};
use super::{server_of_tasks, Scheduler};
use crate::error::FieldError;
use crate::model::TaskSystem;
use crate::sim::job::{Job, JobId, Jobs, NONE_U64};

struct PeriodicServer {
    core: usize,
    priority: i64,
    budget_ns: u64,
    period_ns: u64,
    q: u64,
    next_replenish: u64,
    queue: CoreQueue,
}

impl Reservation for PeriodicServer {
    fn budget_left(&mut self) -> &mut u64 {
        &mut self.q
    }

    fn queue(&mut self) -> &mut CoreQueue {
        &mut self.queue
    }
}

pub struct PeriodicServers {
    servers: Vec<PeriodicServer>,
    server_of: Vec<usize>,
    rank: Vec<u64>,
    cores: ServerCores,
}

impl PeriodicServers {
    pub fn new(system: &TaskSystem) -> Result<Self, FieldError> {
        let server_of = server_of_tasks(system)?;
        let all: Vec<usize> = (0..system.tasks.len()).collect();
        Ok(PeriodicServers {
            servers: system
                .servers
                .iter()
                .map(|s| PeriodicServer {
                    core: s.core,
                    priority: s.priority,
                    budget_ns: s.budget_ns,
                    period_ns: s.period_ns,
                    q: s.budget_ns,
                    next_replenish: s.period_ns,
                    queue: CoreQueue::default(),
                })
                .collect(),
            server_of,
            rank: fixed_priority_ranks(system, &all),
            cores: ServerCores::new(system.platform.cores),
        })
    }
}

impl Scheduler for PeriodicServers {
    fn release(&mut self, _now: u64, id: JobId, job: &Job) {
        let key = fixed(&self.rank, job, id);
        self.servers[self.server_of[job.task as usize]].queue.release(key);
    }

    fn complete(&mut self, _now: u64, id: JobId, job: &Job, _core: usize) {
        self.servers[self.server_of[job.task as usize]].queue.complete(id);
    }

    fn advance(&mut self, from: u64, to: u64) {
        // Rule 3 and Rule 6: the holder's budget drains whether it runs a task or idles.
        self.cores.drain(&mut self.servers, to - from);
    }

    fn next_timer(&self) -> u64 {
        let replenish = self.servers.iter().map(|s| s.next_replenish).min().unwrap_or(NONE_U64);
        self.cores.next_exhaustion().min(replenish)
    }

    fn timer(&mut self, now: u64) {
        for s in &mut self.servers {
            while s.next_replenish <= now {
                s.q = s.budget_ns; // Rule 1
                s.next_replenish += s.period_ns;
            }
        }
        for e in &mut self.cores.exhaust_at {
            if *e <= now {
                *e = NONE_U64;
            }
        }
    }

    fn dispatch(&mut self, now: u64, _jobs: &Jobs, running: &mut [Option<JobId>]) {
        for c in 0..running.len() {
            // Rule 2: highest-priority server with budget, ties by file order.
            let best = (0..self.servers.len())
                .filter(|&i| self.servers[i].core == c && self.servers[i].q > 0)
                .min_by_key(|&i| (std::cmp::Reverse(self.servers[i].priority), i));
            running[c] = self.cores.hand_over(c, best, now, &mut self.servers);
        }
    }

    fn deplete_server(&mut self, server: u32) {
        // MRS rule 5: either budget depleted → both are, until the next period.
        self.servers[server as usize].q = 0;
    }

    fn servers_on_cores(&self, out: &mut [Option<u32>]) {
        self.cores.fill(out);
    }
}
