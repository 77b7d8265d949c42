//! Discrete-event simulator (DESIGN.md "Simulator").
//!
//! A task system runs over time under one scheduler ([`sched`]), one memory
//! model ([`memory`]; [`memory::CpuOnly`] here: no interference) and one
//! regulator ([`regulate`]; none here). The engine ([`engine`]) moves time
//! from event to event; jobs progress at rates the memory model sets. Results
//! are per-task statistics, optional job records and execution segments, from
//! which [`report`] builds the summary and [`trace`] the Perfetto trace.

pub mod engine;
pub mod job;
pub mod memory;
pub mod regulate;
pub mod release;
pub mod report;
pub mod sched;
pub mod trace;

use crate::error::FieldError;
use crate::model::{Level, TaskSystem};
use job::JobRecord;
use sched::SchedulerKind;

/// How long each job runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExecModel {
    /// Exactly the task's PET at this level (see [`crate::model::Task::pet_at`]).
    Pet(Level),
    /// Uniform between `best_case_fraction` × PET and the PET at this level.
    Uniform { level: Level, best_case_fraction: f64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub duration_ns: u64,
    pub seed: u64,
    pub exec: ExecModel,
    /// Keep one record per finished job.
    pub record_jobs: bool,
    /// Keep execution segments (for traces and Gantt charts).
    pub record_segments: bool,
}

impl SimConfig {
    pub fn new(duration_ns: u64) -> Self {
        SimConfig { duration_ns, seed: 0, exec: ExecModel::Pet(Level::C), record_jobs: false, record_segments: false }
    }
}

/// Per-task statistics, always kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskStats {
    pub released: u64,
    pub completed: u64,
    /// Jobs that finished after their deadline, plus unfinished jobs whose
    /// deadline passed before the end of the run.
    pub misses: u64,
    /// Jobs still unfinished at the end.
    pub unfinished: u64,
    pub max_response_ns: u64,
    pub total_response_ns: u128,
    pub max_tardiness_ns: u64,
    pub preemptions: u64,
    pub migrations: u64,
}

impl TaskStats {
    pub fn add(&mut self, r: &JobRecord) {
        self.completed += 1;
        let response = r.response_ns();
        self.max_response_ns = self.max_response_ns.max(response);
        self.total_response_ns += response as u128;
        let tardiness = r.tardiness_ns();
        if tardiness > 0 {
            self.misses += 1;
        }
        self.max_tardiness_ns = self.max_tardiness_ns.max(tardiness);
        self.preemptions += r.preemptions as u64;
        self.migrations += r.migrations as u64;
    }

    pub fn mean_response_ns(&self) -> f64 {
        if self.completed == 0 {
            0.0
        } else {
            self.total_response_ns as f64 / self.completed as f64
        }
    }
}

/// A job running on a core over [start, end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub core: u32,
    pub task: u32,
    pub number: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A server holding a core over [start, end) (running a job or idling its budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerSegment {
    pub core: u32,
    pub server: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A job still unfinished at the end of the run (kept with job records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unfinished {
    pub task: u32,
    pub number: u32,
    pub release_ns: u64,
    pub deadline_ns: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    pub duration_ns: u64,
    pub scheduler: String,
    pub per_task: Vec<TaskStats>,
    pub records: Vec<JobRecord>,
    /// Jobs unfinished at the end, when job records are kept.
    pub unfinished: Vec<Unfinished>,
    pub segments: Vec<Segment>,
    pub server_segments: Vec<ServerSegment>,
    /// Engine iterations (one per distinct event time).
    pub events: u64,
}

impl SimResult {
    pub fn completed(&self) -> u64 {
        self.per_task.iter().map(|s| s.completed).sum()
    }
}

/// Simulate without memory interference or regulation (this engine).
pub fn simulate(system: &TaskSystem, kind: SchedulerKind, config: &SimConfig) -> Result<SimResult, FieldError> {
    let (mut mem, mut reg) = (memory::CpuOnly, regulate::Unregulated);
    let mut result = match kind {
        SchedulerKind::Gedf => engine::run(system, &mut sched::gedf::Gedf::new(system), &mut mem, &mut reg, config),
        SchedulerKind::Gfp => engine::run(system, &mut sched::gfp::Gfp::new(system), &mut mem, &mut reg, config),
        SchedulerKind::Pedf => engine::run(system, &mut sched::pedf::Pedf::new(system)?, &mut mem, &mut reg, config),
        SchedulerKind::Pfp => engine::run(system, &mut sched::pfp::Pfp::new(system)?, &mut mem, &mut reg, config),
        SchedulerKind::Mc2 => engine::run(system, &mut sched::mc2::Mc2::new(system)?, &mut mem, &mut reg, config),
        SchedulerKind::Servers => {
            if system.servers.iter().any(|s| s.kind == crate::model::ServerKind::Cbs) {
                engine::run(system, &mut sched::cbs::Cbs::new(system)?, &mut mem, &mut reg, config)
            } else {
                engine::run(system, &mut sched::periodic_server::PeriodicServers::new(system)?, &mut mem, &mut reg, config)
            }
        }
    };
    result.scheduler = kind.name().to_string();
    Ok(result)
}
