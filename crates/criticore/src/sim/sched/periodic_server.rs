//! Hierarchical idling periodic servers (mrs-multi-resource-server §II-B, §III):
//! per core a node scheduler picks, by fixed priority, among the servers that
//! have budget left; the chosen server's local scheduler runs its tasks by
//! fixed priority.
//!
//! The node schedulers and the CPU budgets (rules 1, 2, 3, 5, 6) are
//! `regulate::mrs_cpu::MrsCpuRules`, driven here by the simulation clock:
//! which server holds a core and when its budget runs out depend on time
//! alone (rule 6: a server idles its budget away when it has no ready task),
//! so the job a server runs is charged exactly the wall time the rules charge.
//! What stays here is each server's local scheduler (its ready queue) and the
//! hand-over of a core between servers.
//!
//! The memory budget (Rule 4, and Rule 5's "either budget") is charged by the
//! MRS regulator of the memory issue, which reports depletions
//! ([`Scheduler::deplete_server`]).

use super::priority::fixed;
use crate::policy::fixed_priority_ranks;
use super::queue::CoreQueue;
use super::server_cores::ServerCores;
use super::Scheduler;
use crate::policy::server_of_tasks;
use crate::error::FieldError;
use crate::model::TaskSystem;
use crate::regulate::mrs_cpu::{MrsCpuRules, MrsServer};
use crate::sim::job::{Job, JobId, Jobs};

pub struct PeriodicServers {
    rules: MrsCpuRules,
    /// Per server: the ready queue of its local scheduler.
    queues: Vec<CoreQueue>,
    server_of: Vec<usize>,
    rank: Vec<u64>,
    /// Per core: the server holding it (its running job is in its queue).
    cores: ServerCores,
}

impl PeriodicServers {
    pub fn new(system: &TaskSystem) -> Result<Self, FieldError> {
        let server_of = server_of_tasks(system)?;
        let all: Vec<usize> = (0..system.tasks.len()).collect();
        let servers: Vec<MrsServer> = system.servers.iter().map(|s| MrsServer::new(s.core, s.priority, s.period_ns, s.budget_ns)).collect();
        Ok(PeriodicServers {
            rules: MrsCpuRules::new(&servers),
            queues: vec![CoreQueue::default(); servers.len()],
            server_of,
            rank: fixed_priority_ranks(system, &all),
            cores: ServerCores::new(system.platform.cores),
        })
    }
}

impl Scheduler for PeriodicServers {
    fn release(&mut self, _now: u64, id: JobId, job: &Job) {
        let key = fixed(&self.rank, job, id);
        self.queues[self.server_of[job.task as usize]].release(key);
    }

    fn complete(&mut self, _now: u64, id: JobId, job: &Job, _core: usize) {
        self.queues[self.server_of[job.task as usize]].complete(id);
    }

    fn advance(&mut self, _from: u64, to: u64) {
        // MRS §III rules 3 and 6: the holder's budget drains whether it runs a task or idles.
        self.rules.advance(to);
    }

    fn next_timer(&self) -> u64 {
        // A period start (MRS §III rule 1) or a holder's depletion (rule 5);
        // now, while a core is not held by the server the rules run there: at
        // time 0 before the first dispatch (a server idles from its first
        // period on, released tasks or not: rule 6).
        let stale = self.cores.holder.iter().enumerate().any(|(c, &h)| h != self.rules.running(c));
        if stale {
            self.rules.now_ns()
        } else {
            self.rules.next_event_ns()
        }
    }

    fn timer(&mut self, now: u64) {
        self.rules.advance(now);
    }

    fn dispatch(&mut self, _now: u64, _jobs: &Jobs, running: &mut [Option<JobId>]) {
        for (c, run) in running.iter_mut().enumerate() {
            // MRS §III rule 2: highest-priority server with budget, ties by file order.
            *run = self.cores.switch(c, self.rules.running(c), &mut self.queues);
        }
    }

    fn deplete_server(&mut self, now: u64, server: u32) {
        // MRS §III rule 5: either budget depleted → both are, until the next period.
        self.rules.deplete(server as usize, now);
    }

    fn servers_on_cores(&self, out: &mut [Option<u32>]) {
        self.cores.fill(out);
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::{simulate, sched::SchedulerKind, ServerSegment, SimConfig, SimResult};

    const MS: u64 = 1_000_000;

    fn run(text: &str, ms: u64) -> SimResult {
        let system = crate::parse_task_system(text, crate::Format::Toml, "t.toml").unwrap();
        let mut config = SimConfig::new(ms * MS);
        config.record_jobs = true;
        config.record_segments = true;
        simulate(&system, SchedulerKind::Servers, &config).unwrap()
    }

    /// (server, start ms, end ms) of the server segments on core 0.
    fn servers(r: &SimResult) -> Vec<(u32, f64, f64)> {
        let mut v: Vec<&ServerSegment> = r.server_segments.iter().filter(|s| s.core == 0).collect();
        v.sort_by_key(|s| s.start_ns);
        v.iter().map(|s| (s.server, s.start_ns as f64 / MS as f64, s.end_ns as f64 / MS as f64)).collect()
    }

    #[test]
    fn a_server_idles_from_time_0_before_any_release() {
        // s: Q = 3, P = 10. t: released at 2, 2 ms of work. Rule 6: s holds the
        // core from 0 and idles 0–2 (q = 1 at 2); t#1 runs 2–3, s is depleted
        // at 3 (Rule 5); 10: refilled, t#1 finishes at 11; s idles 11–13.
        let r = run(
            "[platform]\ncores = 1\n[[server]]\nname = \"s\"\ncore = 0\nperiod = \"10ms\"\nbudget = \"3ms\"\n\
             [[task]]\nname = \"t\"\nserver = \"s\"\nperiod = \"20ms\"\noffset = \"2ms\"\npet = \"2ms\"\n",
            20,
        );
        assert_eq!(servers(&r), vec![(0, 0.0, 3.0), (0, 10.0, 13.0)]);
        let job = &r.records[0];
        assert_eq!((job.release_ns, job.start_ns, job.finish_ns, job.preemptions), (2 * MS, 2 * MS, 11 * MS, 1));
    }

    #[test]
    fn a_depleted_memory_budget_suspends_the_server_until_its_next_period() {
        // hi: P = 10, Q = 5, M = 2000, priority 2; its task issues 1 request/µs
        // (1000 accesses/ms, each a miss, the task at rate 1) and never ends.
        // lo: P = 10, Q = 4, priority 1, a CPU-only task that never ends.
        // 0–2 hi runs until its 2000 requests are spent (Rule 5: its 3 ms of CPU
        // budget left are discarded); 2–6 lo (Q = 4); 6–10 none. Every period alike.
        let r = run(
            "[platform]\ncores = 1\n[regulation]\nkind = \"mrs\"\n\
             [[server]]\nname = \"hi\"\ncore = 0\nperiod = \"10ms\"\nbudget = \"5ms\"\npriority = 2\nmemory_budget = 2000\n\
             [[server]]\nname = \"lo\"\ncore = 0\nperiod = \"10ms\"\nbudget = \"4ms\"\npriority = 1\n\
             [[task]]\nname = \"th\"\nserver = \"hi\"\nperiod = \"100ms\"\npet = \"100ms\"\n\
             memory = { wss = \"64MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 1000 }\n\
             [[task]]\nname = \"tl\"\nserver = \"lo\"\nperiod = \"100ms\"\npet = \"100ms\"\n",
            30,
        );
        let (hi, lo) = (0, 1);
        assert_eq!(servers(&r), vec![(hi, 0.0, 2.0), (lo, 2.0, 6.0), (hi, 10.0, 12.0), (lo, 12.0, 16.0), (hi, 20.0, 22.0), (lo, 22.0, 26.0)]);
    }
}
