//! Memory models: how fast each running job progresses, given what runs on
//! the other cores. After every scheduling decision the engine asks for each
//! core's progress rate (work per ns), memory-request rate (LLC misses per ns)
//! and stalled share of time, and computes the next completion exactly from
//! them. [`CpuOnly`] has no memory interference (every job at rate 1);
//! [`fluid::Fluid`] is the default model of docs/memory-model.md.

pub mod crossbar;
pub mod fluid;
pub mod transaction;

use crate::sim::job::{Job, JobId, Jobs, NONE_U64};

/// What the regulator imposes on the memory system at this instant.
pub struct MemoryContext<'a> {
    /// Cores allowed to progress (a stalled core issues no requests).
    pub allowed: &'a [bool],
    /// Fixed bus priorities (higher wins) while MCTI's overload rule holds; None = the platform arbiter.
    pub bus_priority: Option<&'a [u32]>,
}

/// Per-core flows between two events.
#[derive(Debug, Clone, Default)]
pub struct Flows {
    /// Work per ns of the job on each core (0 where idle or stalled).
    pub rate: Vec<f64>,
    /// Memory requests (LLC misses) per ns.
    pub requests_per_ns: Vec<f64>,
    /// Share of wall time the job is stalled on memory (or by the regulator).
    pub stall: Vec<f64>,
}

impl Flows {
    pub fn new(cores: usize) -> Self {
        Flows { rate: vec![1.0; cores], requests_per_ns: vec![0.0; cores], stall: vec![0.0; cores] }
    }
}

pub trait MemoryModel {
    /// False for a model without interference (lets the engine skip it).
    fn interferes(&self) -> bool {
        true
    }
    /// Fill `flows` for the jobs now running.
    fn flows(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows);
    /// Next time flows change by themselves (a job crossing a phase boundary); NONE_U64 if never.
    fn next_event(&self) -> u64 {
        NONE_U64
    }
    /// A job left its core at `now` with work left (preempted): its cached
    /// lines may be evicted until it resumes (the model may mark the job).
    fn preempted(&mut self, _now: u64, _job: &mut Job) {}
    /// Extra work a job needs when it resumes at `now` after a preemption,
    /// or starts (cache reload).
    fn resume_penalty_ns(&mut self, _now: u64, _job: &mut Job) -> u64 {
        0
    }
    /// A job was released: whether it must be asked [`MemoryModel::resume_penalty_ns`]
    /// when it first runs (the model may mark the job).
    fn released(&mut self, _job: &mut Job) -> bool {
        false
    }
    /// A job finished at `now`: its task's lines were last used then.
    fn completed(&mut self, _now: u64, _job: &Job) {}
}

/// No memory interference: jobs progress at rate 1 and issue no requests.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuOnly;

impl MemoryModel for CpuOnly {
    fn interferes(&self) -> bool {
        false
    }

    fn flows(&mut self, _now: u64, _running: &[Option<JobId>], _jobs: &Jobs, ctx: &MemoryContext, flows: &mut Flows) {
        for (c, allowed) in ctx.allowed.iter().enumerate() {
            flows.rate[c] = if *allowed { 1.0 } else { 0.0 };
            flows.stall[c] = if *allowed { 0.0 } else { 1.0 };
            flows.requests_per_ns[c] = 0.0;
        }
    }
}
