//! Scheduling policies, the part decided from the file alone before any job
//! runs: which scheduler, the fixed-priority order, which server holds a
//! task, the PET each task is provisioned with and MC²'s Level-A
//! cyclic-executive table. The analysis bounds what these policies do and the
//! simulator (`sim::sched`) carries them out, so both read them from here.
//!
//! - [`pet`]: the PET a task runs at (conditioned by its cost curve under the
//!   allocation, [`cost`]): analysis, simulator and runtime read it.
//! - [`provisioning`]: the PETs a configuration charges (mc2-hardware-management §4.3).
//! - [`utilization`]: the exact uniprocessor test Σ eᵢ/Tᵢ ≤ 1 a Level-A table rests on.
//! - [`activation`]: multiple-activation limits (which releases are lost).
//! - [`cyclic_executive`]: the Level-A table (mc2-hardware-management §2).

pub mod activation;
pub mod exact;
pub mod cost;
pub mod cyclic_executive;
pub mod pet;
pub mod provisioning;
pub mod utilization;

use crate::error::FieldError;
use crate::model::TaskSystem;

/// The schedulers a task-system file can be run under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulerKind {
    /// MC² composite: A table, B RM per core, C G-EDF, D best effort.
    Mc2,
    /// Partitioned fixed priority.
    Pfp,
    /// Partitioned EDF.
    Pedf,
    /// Global EDF.
    Gedf,
    /// Global fixed priority.
    Gfp,
    /// Reservation servers (periodic idling servers or CBS, per the file).
    Servers,
}

impl SchedulerKind {
    pub const NAMES: [(&'static str, SchedulerKind); 6] = [
        ("mc2", SchedulerKind::Mc2),
        ("pfp", SchedulerKind::Pfp),
        ("pedf", SchedulerKind::Pedf),
        ("gedf", SchedulerKind::Gedf),
        ("gfp", SchedulerKind::Gfp),
        ("servers", SchedulerKind::Servers),
    ];

    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).unwrap_or("?")
    }

    /// What the file implies: servers → servers; MC² levels → mc2; every task
    /// on a core → pfp; otherwise gedf.
    pub fn implied_by(system: &TaskSystem) -> Self {
        if !system.servers.is_empty() {
            SchedulerKind::Servers
        } else if system.tasks.iter().any(|t| t.level.is_some()) {
            SchedulerKind::Mc2
        } else if system.tasks.iter().all(|t| t.core.is_some()) {
            SchedulerKind::Pfp
        } else {
            SchedulerKind::Gedf
        }
    }
}

/// Cooperative and non-preemptive tasks (`preemption`) run, and are
/// analyzed, under partitioned fixed priority only (OSEK's model); any other
/// scheduler refuses them rather than preempt them anyway.
pub fn require_preemptive_unless_pfp(system: &TaskSystem, kind: SchedulerKind) -> Result<(), FieldError> {
    if kind == SchedulerKind::Pfp {
        return Ok(());
    }
    let Some(i) = system.tasks.iter().position(|t| t.limited_preemption()) else { return Ok(()) };
    let t = &system.tasks[i];
    let (field, what) = match t.preemption {
        crate::model::Preemption::Preemptive if crate::model::scratchpad::copies_labels(&system.platform, t) => {
            ("communication", "tasks that copy their labels (implicit or LET communication on a scratchpad platform: non-preemptive copies; communication = \"explicit\" has none)".to_string())
        }
        crate::model::Preemption::Preemptive => (if t.copy_in_ns > 0 { "copy_in" } else { "copy_out" }, "tasks with non-preemptive copies".to_string()),
        p => ("preemption", format!("{} tasks", p.name())),
    };
    Err(FieldError::new(format!("task[{i}].{field}"), format!("{what} run under pfp only (limited preemption is simulated and analyzed for partitioned fixed priority), not {}", kind.name())))
}

/// The server of every task; with servers, every task needs one.
pub fn server_of_tasks(system: &TaskSystem) -> Result<Vec<usize>, FieldError> {
    system
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| t.server.ok_or_else(|| FieldError::new(format!("task[{i}].server"), "with servers, every task needs a server")))
        .collect()
}

/// Fixed-priority rank of every task (0 = most important): explicit
/// `priority` first (higher number wins), then tasks without one. Ties,
/// among equal explicit priorities as among tasks without one, go by period
/// (shorter first, rate-monotonic), then by file order (docs/format.md).
pub fn fixed_priority_ranks(system: &TaskSystem, tasks: &[usize]) -> Vec<u64> {
    let mut order: Vec<usize> = tasks.to_vec();
    order.sort_by_key(|&i| {
        let t = &system.tasks[i];
        (std::cmp::Reverse(t.priority.map_or(i128::MIN, |p| p as i128)), t.period_ns, i)
    });
    let mut rank = vec![u64::MAX; system.tasks.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r as u64;
    }
    rank
}
