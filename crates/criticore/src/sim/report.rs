//! The simulation summary: per task and per level, serializable for `--json`
//! and the CLI tables.

use super::SimResult;
use crate::model::TaskSystem;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Stats {
    pub released: u64,
    pub completed: u64,
    pub deadline_misses: u64,
    pub unfinished: u64,
    /// Release of the oldest job unfinished at the end (None: none is).
    pub oldest_unfinished_release_ns: Option<u64>,
    /// Of the jobs that finished (0 when none did: see `completed`).
    pub max_response_ns: u64,
    pub mean_response_ns: f64,
    pub max_tardiness_ns: u64,
    pub preemptions: u64,
    pub migrations: u64,
    /// Memory requests of all jobs, finished or not.
    pub memory_requests: u64,
    /// Time all jobs spent stalled on memory or by a regulator.
    pub memory_stall_ns: u64,
    /// Releases lost to activation limits (left out when none were).
    #[serde(skip_serializing_if = "is_zero")]
    pub lost_activations: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskReport {
    pub task: String,
    /// "A"…"D", or "-" for a task outside MC².
    pub level: String,
    pub core: Option<usize>,
    pub server: Option<String>,
    /// A background task: no jobs, only its memory requests and stalls count.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
    #[serde(flatten)]
    pub stats: Stats,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SimReport {
    pub scheduler: String,
    /// Simulated time (less than asked for when the run was stopped).
    pub duration_ns: u64,
    /// The run was stopped before its end (Ctrl-C): statistics up to `duration_ns`.
    pub partial: bool,
    pub events: u64,
    #[serde(flatten)]
    pub total: Stats,
    pub per_task: Vec<TaskReport>,
    pub per_level: BTreeMap<String, Stats>,
    /// Present when a regulator ran.
    pub regulation: Option<RegulationReport>,
    /// The file's cause-effect chains, measured (left out when it has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<ChainReport>,
}

/// One chain's latencies in the run (`sim::chains`): how many of each were
/// seen, and their largest, mean and 99th-percentile values (ns; None when
/// none was seen).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChainReport {
    pub chain: String,
    pub tasks: Vec<String>,
    pub reactions: u64,
    pub max_reaction_ns: Option<u64>,
    pub mean_reaction_ns: Option<u64>,
    pub p99_reaction_ns: Option<u64>,
    pub outputs: u64,
    pub max_data_age_ns: Option<u64>,
    pub mean_data_age_ns: Option<u64>,
    pub p99_data_age_ns: Option<u64>,
}

/// (max, mean, 99th percentile, nearest rank) of `xs`.
fn summary(xs: &[u64]) -> (Option<u64>, Option<u64>, Option<u64>) {
    if xs.is_empty() {
        return (None, None, None);
    }
    let mut v = xs.to_vec();
    v.sort_unstable();
    let mean = (v.iter().map(|&x| x as u128).sum::<u128>() / v.len() as u128) as u64;
    let p99 = v[(v.len() * 99).div_ceil(100).max(1) - 1];
    (v.last().copied(), Some(mean), Some(p99))
}

/// Time and count of each regulator state, per core (or per server for MRS).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StateTotals {
    pub state: String,
    /// Core index, server index for "depleted", MemGuard group index for "held".
    pub index: u32,
    pub intervals: u64,
    pub total_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RegulationReport {
    pub states: Vec<StateTotals>,
    /// Regulator-specific results (the monitor's parallelism).
    pub details: Option<serde_json::Value>,
    /// Per regulated entity (MemGuard group or core, MCTI core, MRS server),
    /// numbered as the runtime's groups; empty for the monitor.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<crate::sim::regulate::EntityTotals>,
}

fn merge(into: &mut Stats, s: &Stats) {
    let completed = into.completed + s.completed;
    if completed > 0 {
        into.mean_response_ns =
            (into.mean_response_ns * into.completed as f64 + s.mean_response_ns * s.completed as f64) / completed as f64;
    }
    into.released += s.released;
    into.completed = completed;
    into.deadline_misses += s.deadline_misses;
    into.unfinished += s.unfinished;
    into.oldest_unfinished_release_ns = match (into.oldest_unfinished_release_ns, s.oldest_unfinished_release_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    into.max_response_ns = into.max_response_ns.max(s.max_response_ns);
    into.max_tardiness_ns = into.max_tardiness_ns.max(s.max_tardiness_ns);
    into.preemptions += s.preemptions;
    into.migrations += s.migrations;
    into.memory_requests += s.memory_requests;
    into.memory_stall_ns += s.memory_stall_ns;
    into.lost_activations += s.lost_activations;
}

pub fn report(system: &TaskSystem, result: &SimResult) -> SimReport {
    let per_task: Vec<TaskReport> = system
        .tasks
        .iter()
        .zip(&result.per_task)
        .map(|(t, s)| TaskReport {
            task: t.name.clone(),
            level: t.level.map_or("-".to_string(), |l| l.to_string()),
            core: t.core,
            server: t.server.map(|i| system.servers[i].name.clone()),
            background: t.is_background(),
            stats: Stats {
                released: s.released,
                completed: s.completed,
                deadline_misses: s.misses,
                unfinished: s.unfinished,
                oldest_unfinished_release_ns: s.oldest_unfinished_release_ns,
                max_response_ns: s.max_response_ns,
                mean_response_ns: s.mean_response_ns(),
                max_tardiness_ns: s.max_tardiness_ns,
                preemptions: s.preemptions,
                migrations: s.migrations,
                memory_requests: s.memory_requests.round() as u64,
                memory_stall_ns: s.memory_stall_ns.round() as u64,
                lost_activations: s.lost_activations,
            },
        })
        .collect();
    let mut per_level: BTreeMap<String, Stats> = BTreeMap::new();
    let mut total = Stats::default();
    for t in &per_task {
        merge(per_level.entry(t.level.clone()).or_default(), &t.stats);
        merge(&mut total, &t.stats);
    }
    let regulation = (!result.regulator_states.is_empty() || result.regulator_report.is_some() || !result.regulator_entities.is_empty()).then(|| {
        RegulationReport {
            states: result
                .regulator_states
                .iter()
                .map(|(&(state, index), &(intervals, total_ns))| StateTotals { state: state.to_string(), index, intervals, total_ns })
                .collect(),
            details: result.regulator_report.clone(),
            entities: result.regulator_entities.clone(),
        }
    });
    SimReport {
        scheduler: result.scheduler.clone(),
        duration_ns: result.duration_ns,
        partial: result.partial,
        events: result.events,
        total,
        per_task,
        per_level,
        regulation,
        chains: system
            .chains
            .iter()
            .zip(&result.chains)
            .map(|(c, m)| {
                let (max_reaction_ns, mean_reaction_ns, p99_reaction_ns) = summary(&m.reaction_ns);
                let (max_data_age_ns, mean_data_age_ns, p99_data_age_ns) = summary(&m.data_age_ns);
                ChainReport {
                    chain: c.name.clone(),
                    tasks: c.tasks.iter().map(|&t| system.tasks[t].name.clone()).collect(),
                    reactions: m.reaction_ns.len() as u64,
                    max_reaction_ns,
                    mean_reaction_ns,
                    p99_reaction_ns,
                    outputs: m.data_age_ns.len() as u64,
                    max_data_age_ns,
                    mean_data_age_ns,
                    p99_data_age_ns,
                }
            })
            .collect(),
    }
}
