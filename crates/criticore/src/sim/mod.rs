//! Discrete-event simulator (docs/simulator.md).
//!
//! A task system runs over time under one scheduler ([`sched`]), one memory
//! model ([`memory`]; [`memory::CpuOnly`] here: no interference) and one
//! regulator ([`regulate`]; none here). The engine ([`engine`]) moves time
//! from event to event; jobs progress at rates the memory model sets. Results
//! are per-task statistics, optional job records and execution segments, from
//! which [`report`] builds the summary and [`trace`] the Perfetto trace.

pub mod chains;
pub mod draws;
pub mod engine;
pub mod job;
pub mod memory;
pub mod quad_heap;
pub mod regions;
pub mod regulate;
pub mod release;
pub mod report;
pub mod sched;
pub mod sink;
pub mod trace;

use crate::error::FieldError;
use crate::model::{Level, TaskSystem};
use job::JobRecord;
use std::sync::Arc;
use sched::SchedulerKind;

/// Which memory model runs when tasks have memory profiles (docs/memory-model.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// Rates solved at each event (the default).
    Fluid,
    /// Request-level: the transaction model run ahead in quanta of this many ns.
    Transaction { quantum_ns: u64 },
}

impl MemoryKind {
    pub const NAMES: [&'static str; 2] = ["fluid", "transaction"];
}

/// How long each job runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExecModel {
    /// Exactly the task's PET at this level (see [`crate::model::Task::pet_at`]).
    Pet(Level),
    /// Uniform between `best_case_fraction` × PET and the PET at this level.
    Uniform { level: Level, best_case_fraction: f64 },
    /// Each runnable with a `draw` from its distribution (`draws`), the rest
    /// at their PET at this level.
    Drawn(Level),
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
    /// Bin width of the per-core bandwidth series; None = no series.
    pub bandwidth_bin_ns: Option<u64>,
    /// Memory model: the fluid model when tasks have memory profiles, unless false.
    pub memory: bool,
    /// Which model `memory` selects.
    pub memory_kind: MemoryKind,
    /// Regulation: None = the file's `[regulation]`; Some(None) = none; Some(Some(kind)) = that kind.
    pub regulation: Option<Option<crate::model::RegulationKind>>,
    /// The bandwidth monitor's overhead table (read by the front end).
    pub overhead_table: Option<crate::model::overhead::OverheadTable>,
    /// Given execution times: job n of task i runs `given_exec_ns[i][n - 1]`
    /// where that exists (a replay of measured jobs), else as `exec` says.
    pub given_exec_ns: Vec<Vec<u64>>,
}

impl SimConfig {
    pub fn new(duration_ns: u64) -> Self {
        SimConfig {
            duration_ns,
            seed: 0,
            exec: ExecModel::Pet(crate::policy::pet::RUN_LEVEL),
            record_jobs: false,
            record_segments: false,
            bandwidth_bin_ns: None,
            memory: true,
            memory_kind: MemoryKind::Fluid,
            regulation: None,
            overhead_table: None,
            given_exec_ns: Vec::new(),
        }
    }
}

/// Per-task statistics, always kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskStats {
    pub released: u64,
    pub completed: u64,
    /// Jobs that finished after their deadline, plus unfinished jobs whose
    /// deadline passed before the end of the run.
    pub misses: u64,
    /// Jobs still unfinished at the end.
    pub unfinished: u64,
    /// Release of the oldest of them (None: every job released finished).
    pub oldest_unfinished_release_ns: Option<u64>,
    pub max_response_ns: u64,
    pub total_response_ns: u128,
    pub max_tardiness_ns: u64,
    pub preemptions: u64,
    pub migrations: u64,
    /// Memory requests of all the task's jobs, finished or not.
    pub memory_requests: f64,
    /// Time the task's jobs spent stalled (memory or regulator).
    pub memory_stall_ns: f64,
    /// Releases lost to the task's activation limit (never jobs).
    pub lost_activations: u64,
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

    /// A job left unfinished at the end, released at `release_ns`.
    pub fn left_unfinished(&mut self, release_ns: u64) {
        self.unfinished += 1;
        self.oldest_unfinished_release_ns = Some(self.oldest_unfinished_release_ns.map_or(release_ns, |r| r.min(release_ns)));
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

/// A job's progress over one of its segments, for a task with runnables
/// (`record_segments`): the work done at the segment's start and end, of
/// `exec_ns` in all (reloads included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkSpan {
    pub segment: Segment,
    pub work_start_ns: u64,
    pub work_end_ns: u64,
    pub exec_ns: u64,
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
    /// Work done over each segment of a task with runnables (with segments).
    pub work_spans: Vec<WorkSpan>,
    pub server_segments: Vec<ServerSegment>,
    /// Engine iterations (one per distinct event time).
    pub events: u64,
    /// Width of the bandwidth bins (0 = none kept).
    pub bandwidth_bin_ns: u64,
    /// Per core, memory requests in each bin.
    pub bandwidth: Vec<Vec<f64>>,
    /// Stalled / overload / suspended / depleted spans (kept by [`simulate`]).
    pub regulator_intervals: Vec<regulate::Interval>,
    /// Per (state, core or server): spans and their total time, always kept.
    pub regulator_states: std::collections::BTreeMap<(&'static str, u32), (u64, u64)>,
    /// The run was stopped before its duration; `duration_ns` is the time reached.
    pub partial: bool,
    pub regulator_report: Option<serde_json::Value>,
    /// Per regulated entity, its whole periods and time held.
    pub regulator_entities: Vec<regulate::EntityTotals>,
    /// Per cause-effect chain of the file, its measured latencies.
    pub chains: Vec<chains::ChainStats>,
    /// The seed of `ExecModel::Drawn`'s draws, if the run drew (the trace's steps).
    pub drawn_seed: Option<u64>,
}

impl SimResult {
    pub fn completed(&self) -> u64 {
        self.per_task.iter().map(|s| s.completed).sum()
    }
}

fn memory_model(system: &TaskSystem, config: &SimConfig, draws: Option<&Arc<draws::Draws>>) -> Result<Box<dyn memory::MemoryModel>, FieldError> {
    Ok(match config.memory_kind {
        _ if !config.memory => Box::new(memory::CpuOnly),
        MemoryKind::Transaction { .. } if !system.platform.memories.is_empty() => {
            return Err(FieldError::new("platform.memory", "the transaction model has no crossbar or scratchpad memories (it builds an LLC and DRAM): use the fluid model (--memory fluid)"))
        }
        MemoryKind::Fluid if !system.platform.memories.is_empty() => {
            Box::new(memory::crossbar::CrossbarModel::new(system, draws.cloned()).expect("a platform with memories has a crossbar"))
        }
        // Asked for explicitly: the transaction model even for CPU-only systems.
        MemoryKind::Transaction { quantum_ns } => Box::new(memory::transaction::model::TransactionModel::new(system, quantum_ns, config.seed)?),
        MemoryKind::Fluid if system.tasks.iter().any(|t| t.memory.is_some()) || !system.devices.is_empty() => Box::new(memory::fluid::Fluid::new(system)),
        MemoryKind::Fluid => Box::new(memory::CpuOnly),
    })
}

/// The regulator a simulation of `system` runs, over the entities
/// `regulate::entities::plan` decides (the runtime's groups are that plan too).
pub fn regulator(system: &TaskSystem, config: &SimConfig) -> Result<Box<dyn regulate::Regulator>, FieldError> {
    use crate::model::{Regulation, RegulationKind};
    let kind = match config.regulation {
        Some(k) => k,
        None => system.regulation.as_ref().map(|r| r.kind),
    };
    let Some(kind) = kind else { return Ok(Box::new(regulate::Unregulated)) };
    let file_config = system.regulation.as_ref().filter(|r| r.kind == kind || matches!((r.kind, kind), (RegulationKind::Memguard, RegulationKind::Mcti) | (RegulationKind::Mcti, RegulationKind::Memguard)));
    let needs_budgets = || -> Result<&Regulation, FieldError> {
        file_config.ok_or_else(|| FieldError::new("regulation.budgets", "MemGuard and MCTI need per-core budgets in the file's [regulation] table"))
    };
    let plan = || crate::regulate::entities::plan(system, kind);
    Ok(match kind {
        RegulationKind::Memguard => Box::new(regulate::memguard::Memguard::new(plan()?, needs_budgets()?, system.tasks.len(), system.platform.cores)),
        RegulationKind::Mcti => {
            let config = needs_budgets()?;
            Box::new(regulate::mcti::Mcti::new(plan()?, config, system.tasks.len(), system.platform.cores))
        }
        RegulationKind::Mrs => Box::new(regulate::mrs::Mrs::new(plan()?, system)),
        RegulationKind::Monitor => {
            let monitor = file_config
                .and_then(|r| r.monitor.as_ref())
                .ok_or_else(|| FieldError::new("regulation.rt_task", "the bandwidth monitor needs rt_task, be_cores, threshold and overhead_table"))?;
            let table = config
                .overhead_table
                .clone()
                .ok_or_else(|| FieldError::new("regulation.overhead_table", "the overhead table was not loaded"))?;
            if table.sample_ns != monitor.sample_ns {
                return Err(FieldError::new(
                    "regulation.sample",
                    format!(
                        "the overhead table was built for {} samples, the monitor samples every {}",
                        crate::model::units::format_duration_ns(table.sample_ns),
                        crate::model::units::format_duration_ns(monitor.sample_ns)
                    ),
                ));
            }
            let phases = system.tasks[monitor.rt_task].memory.as_ref().map_or(1, |m| m.phases.len());
            if table.phases.len() != phases {
                return Err(FieldError::new(
                    "regulation.overhead_table",
                    format!("the table has {} phase(s), the real-time task {}", table.phases.len(), phases),
                ));
            }
            let level = match config.exec {
                ExecModel::Pet(l) | ExecModel::Uniform { level: l, .. } | ExecModel::Drawn(l) => l,
            };
            let exec_ns = system.tasks[monitor.rt_task].pet_at(level);
            Box::new(regulate::monitor::Monitor::new(plan()?, system, monitor, table, exec_ns))
        }
    })
}

/// Simulate a task system under a scheduler, with the fluid memory model when
/// tasks have memory profiles and the file's (or the config's) regulator.
/// Everything the config asks for is kept in the result.
pub fn simulate(system: &TaskSystem, kind: SchedulerKind, config: &SimConfig) -> Result<SimResult, FieldError> {
    let mut kept = sink::Collect::default();
    let mut result = simulate_into(system, kind, config, &mut kept, &mut sink::ToTheEnd)?;
    result.records = kept.records;
    result.unfinished = kept.unfinished;
    result.segments = kept.segments;
    result.work_spans = kept.work_spans;
    result.server_segments = kept.server_segments;
    result.regulator_intervals = kept.intervals;
    result.bandwidth = kept.bandwidth;
    Ok(result)
}

/// The engine under `sched`; without interference or regulation the loop is
/// compiled for [`memory::CpuOnly`] and [`regulate::Unregulated`], whose
/// branches then vanish (neither is ever called by the loop in that case).
fn run<S: sched::Scheduler>(
    system: &TaskSystem,
    sched: &mut S,
    memory: &mut dyn memory::MemoryModel,
    regulator: &mut dyn regulate::Regulator,
    config: &SimConfig,
    draws: Option<&Arc<draws::Draws>>,
    sink: &mut dyn sink::Sink,
    progress: &mut dyn sink::Progress,
) -> SimResult {
    if !memory.interferes() && !regulator.is_active() {
        engine::run(system, sched, &mut memory::CpuOnly, &mut regulate::Unregulated, config, draws, sink, progress)
    } else {
        engine::run(system, sched, memory, regulator, config, draws, sink, progress)
    }
}

/// [`simulate`], handing records to `sink` as they close instead of keeping
/// them, and letting `progress` stop the run early (`partial` is then set).
pub fn simulate_into(
    system: &TaskSystem,
    kind: SchedulerKind,
    config: &SimConfig,
    sink: &mut dyn sink::Sink,
    progress: &mut dyn sink::Progress,
) -> Result<SimResult, FieldError> {
    crate::policy::require_preemptive_unless_pfp(system, kind)?;
    if system.chains.is_empty() {
        return simulate_kind(system, kind, config, sink, progress);
    }
    // Chains read every job of their tasks: the records go through a tap.
    let mut tap = chains::ChainTap::new(system, sink, config.record_jobs);
    let mut result = simulate_kind(system, kind, &SimConfig { record_jobs: true, ..config.clone() }, &mut tap, progress)?;
    result.chains = chains::measure(system, &tap.jobs);
    Ok(result)
}

fn simulate_kind(
    system: &TaskSystem,
    kind: SchedulerKind,
    config: &SimConfig,
    sink: &mut dyn sink::Sink,
    progress: &mut dyn sink::Progress,
) -> Result<SimResult, FieldError> {
    // One run's draws, read by the release, the regions and the memory model.
    let draws = matches!(config.exec, ExecModel::Drawn(_)).then(|| Arc::new(draws::Draws::new(system, config.seed)));
    let draws = draws.as_ref();
    let mut mem = memory_model(system, config, draws)?;
    let mut reg = regulator(system, config)?;
    let (mem, reg) = (mem.as_mut(), reg.as_mut());
    let mut result = match kind {
        SchedulerKind::Gedf => run(system, &mut sched::gedf::Gedf::new(system), mem, reg, config, draws, sink, progress),
        SchedulerKind::Gfp => run(system, &mut sched::gfp::Gfp::new(system), mem, reg, config, draws, sink, progress),
        SchedulerKind::Pedf => run(system, &mut sched::pedf::Pedf::new(system)?, mem, reg, config, draws, sink, progress),
        SchedulerKind::Pfp => run(system, &mut sched::pfp::Pfp::new(system)?, mem, reg, config, draws, sink, progress),
        SchedulerKind::Mc2 => run(system, &mut sched::mc2::Mc2::new(system)?, mem, reg, config, draws, sink, progress),
        SchedulerKind::Servers => {
            if system.servers.iter().any(|s| s.kind == crate::model::ServerKind::Cbs) {
                run(system, &mut sched::cbs::Cbs::new(system)?, mem, reg, config, draws, sink, progress)
            } else {
                run(system, &mut sched::periodic_server::PeriodicServers::new(system)?, mem, reg, config, draws, sink, progress)
            }
        }
    };
    result.scheduler = kind.name().to_string();
    Ok(result)
}
