//! End-to-end latency bounds of cause-effect chains (docs/analysis.md,
//! "Cause-effect chains"; issue 27, Build 6), from the tasks' response
//! bounds R, periods T, largest extra separation J (sporadic) and offsets O.
//!
//! Davare et al. (DAC 2007) bound a chain of tasks that read at their
//! release or start and write at their finish by Σ (Tᵢ + Rᵢ); the maximum
//! reaction time and data age are Dürr et al.'s (EMSOFT 2019), each
//! bounded directly here (docs/references.md, "Cause-effect chains"). Per
//! task the write comes at most Eᵢ after its release: Rᵢ under implicit
//! communication, max(Tᵢ, Rᵢ) under LET (written at the end of the
//! period, or late). Then, the simulator's definitions (`sim::chains`):
//! - reaction ≤ (T₁ + J₁ + E₁) + Σ_{i≥2} (max(Tᵢ + Jᵢ, Oᵢ) + Eᵢ): the first
//!   task's next read comes within T₁ + J₁ of the one the input just missed,
//!   and each later task's first read after a write within Tᵢ + Jᵢ (or its
//!   first release, Oᵢ);
//! - data age ≤ Eₙ + Σ_{i<n} (Tᵢ + Jᵢ + Eᵢ): the value a read finds was
//!   written by a job released at most Tᵢ + Jᵢ + Eᵢ before it.
//!
//! No bound where a task of the chain has none, or may lose releases to
//! its activation limit (its next job may then come later than T + J).

use crate::model::{Arrival, Communication, TaskSystem};
use serde::Serialize;

/// One chain's bounds (ns; None with the reason in `note`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainBound {
    pub name: String,
    pub tasks: Vec<String>,
    pub reaction_ns: Option<u64>,
    pub data_age_ns: Option<u64>,
    pub note: Option<String>,
}

/// Every chain of `system`, `bound_of(i)` the response bound of task i.
pub fn bounds(system: &TaskSystem, bound_of: impl Fn(usize) -> Option<u64>) -> Vec<ChainBound> {
    system
        .chains
        .iter()
        .map(|c| {
            let tasks: Vec<String> = c.tasks.iter().map(|&t| system.tasks[t].name.clone()).collect();
            let mut terms = Vec::with_capacity(c.tasks.len());
            for &t in &c.tasks {
                let task = &system.tasks[t];
                let Some(r) = bound_of(t) else {
                    return unbounded(&c.name, tasks, format!("task {} has no response bound", task.name));
                };
                if task.activation_limit.is_some_and(|n| crate::policy::activation::jobs_active_at_most(r, task.period_ns) > n as u64) {
                    return unbounded(&c.name, tasks, format!("task {} may lose releases to its activation limit", task.name));
                }
                let jitter = match task.arrival {
                    Arrival::Sporadic { max_jitter_ns } => max_jitter_ns,
                    _ => 0,
                };
                let written = match task.communication {
                    Communication::Implicit | Communication::Explicit => r,
                    Communication::Let => r.max(task.period_ns),
                };
                terms.push((task.period_ns + jitter, task.offset_ns, written));
            }
            let n = terms.len();
            let reaction = terms.iter().enumerate().map(|(i, &(gap, offset, e))| if i == 0 { gap + e } else { gap.max(offset) + e }).sum();
            let data_age = terms[..n - 1].iter().map(|&(gap, _, e)| gap + e).sum::<u64>() + terms[n - 1].2;
            ChainBound { name: c.name.clone(), tasks, reaction_ns: Some(reaction), data_age_ns: Some(data_age), note: None }
        })
        .collect()
}

fn unbounded(name: &str, tasks: Vec<String>, why: String) -> ChainBound {
    ChainBound { name: name.to_string(), tasks, reaction_ns: None, data_age_ns: None, note: Some(why) }
}
