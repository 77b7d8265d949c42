//! Who holds a memory budget, decided once from the file: the simulator's
//! adapters (`sim::regulate`) and the runtime's session (`criticore-rt`)
//! both take their entities from [`plan`], and both take an entity's
//! criticality and deadline at time t from [`running`].
//!
//! - MemGuard: one entity per `[[regulation.group]]` in file order, else one
//!   per core (mcti-task-isolation §4 rule 1: a budget per core).
//! - MCTI: one entity per core (§4; budget groups are a MemGuard option).
//! - MRS: one entity per server (mrs-multi-resource-server §III rule 1).
//! - The bandwidth monitor: the real-time task, then each best-effort core
//!   (blin-bandwidth-monitor §3.3 suspends them together); no budgets.

use crate::error::FieldError;
use crate::model::{RegulationKind, TaskSystem};

/// What one budget covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A core: whatever runs on it is charged to it.
    Core(usize),
    /// A `[[regulation.group]]`: its tasks, wherever they run.
    Group(usize),
    /// A server: the cores it holds, while it holds them.
    Server(usize),
    /// The bandwidth monitor's real-time task.
    MonitorTask(usize),
    /// A best-effort core of the bandwidth monitor.
    BestEffortCore(usize),
}

/// One budget entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub name: String,
    pub holder: Holder,
    /// Memory requests allowed per period (None: no budget, or MRS's unlimited).
    pub budget: Option<u64>,
    /// The tasks the file places in it (on its core, in its group or server);
    /// a task of no core (global scheduling) is charged, in the simulator, to
    /// the core it runs on, and has no entity of its own here.
    pub tasks: Vec<usize>,
    /// The highest MCTI criticality of its tasks (0 = none critical).
    pub criticality: u32,
}

/// The entities of one regulation kind, in the order the rules number them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityPlan {
    pub kind: RegulationKind,
    /// Regulation period M (MemGuard, MCTI; 0 where the kind has none).
    pub period_ns: u64,
    pub entities: Vec<Entity>,
}

impl EntityPlan {
    /// Per entity, its budget per period (0 for none).
    pub fn budgets(&self) -> Vec<u64> {
        self.entities.iter().map(|e| e.budget.unwrap_or(0)).collect()
    }

    /// Per task, the entity of its group (group entities only; None otherwise).
    pub fn group_of_task(&self, tasks: usize) -> Option<Vec<Option<usize>>> {
        if !self.entities.iter().any(|e| matches!(e.holder, Holder::Group(_))) {
            return None;
        }
        let mut of = vec![None; tasks];
        for (k, e) in self.entities.iter().enumerate() {
            for &t in &e.tasks {
                of[t] = Some(k);
            }
        }
        Some(of)
    }
}

/// The entities `kind` makes of `system`'s `[regulation]` (and servers).
pub fn plan(system: &TaskSystem, kind: RegulationKind) -> Result<EntityPlan, FieldError> {
    let reg = system.regulation.as_ref().ok_or_else(|| FieldError::new("regulation", "the file has no [regulation] table"))?;
    let crit = |tasks: &[usize]| tasks.iter().map(|&t| system.tasks[t].criticality).max().unwrap_or(0);
    let entity = |name: String, holder, budget, tasks: Vec<usize>| Entity { name, holder, budget, criticality: crit(&tasks), tasks };
    let on_core = |c: usize| -> Vec<usize> { (0..system.tasks.len()).filter(|&t| core_of(system, t) == Some(c)).collect() };
    let entities = match kind {
        RegulationKind::Memguard | RegulationKind::Mcti if !reg.groups.is_empty() => {
            if kind == RegulationKind::Mcti {
                return Err(FieldError::new("regulation.group", "MCTI budgets are per core; budget groups are a MemGuard option"));
            }
            reg.groups.iter().enumerate().map(|(g, group)| entity(group.name.clone(), Holder::Group(g), Some(group.budget), group.tasks.clone())).collect()
        }
        RegulationKind::Memguard | RegulationKind::Mcti => {
            if reg.budgets.len() != system.platform.cores {
                return Err(FieldError::new("regulation.budgets", "MemGuard and MCTI need one budget per core in the file's [regulation] table"));
            }
            (0..system.platform.cores).map(|c| entity(format!("core{c}"), Holder::Core(c), Some(reg.budgets[c]), on_core(c))).collect()
        }
        RegulationKind::Mrs => {
            if system.servers.is_empty() {
                return Err(FieldError::new("server", "MRS memory budgets need [[server]] tables (mrs-multi-resource-server §III)"));
            }
            system
                .servers
                .iter()
                .enumerate()
                .map(|(s, sv)| entity(sv.name.clone(), Holder::Server(s), sv.memory_budget, (0..system.tasks.len()).filter(|&t| system.tasks[t].server == Some(s)).collect()))
                .collect()
        }
        RegulationKind::Monitor => {
            let m = reg.monitor.as_ref().ok_or_else(|| FieldError::new("regulation.rt_task", "the bandwidth monitor needs rt_task, be_cores, threshold and overhead_table"))?;
            let rt = m.rt_task;
            let mut entities = vec![Entity { name: system.tasks[rt].name.clone(), holder: Holder::MonitorTask(rt), budget: None, tasks: vec![rt], criticality: 1 }];
            for &c in &m.be_cores {
                let tasks: Vec<usize> = on_core(c).into_iter().filter(|&t| t != rt).collect();
                entities.push(Entity { name: format!("core{c}"), holder: Holder::BestEffortCore(c), budget: None, tasks, criticality: 0 });
            }
            entities
        }
    };
    Ok(EntityPlan { kind, period_ns: if matches!(kind, RegulationKind::Memguard | RegulationKind::Mcti) { reg.period_ns } else { 0 }, entities })
}

/// The core a task is placed on: its own, or its server's.
pub fn core_of(system: &TaskSystem, task: usize) -> Option<usize> {
    let t = &system.tasks[task];
    t.core.or(t.server.map(|s| system.servers[s].core))
}

/// A job an entity runs at time t, as MCTI sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Its task's criticality (0 = not critical).
    pub criticality: u32,
    /// Its absolute deadline (u64::MAX: none known).
    pub deadline_ns: u64,
}

/// L_k(t) and D_k(t) (mcti-task-isolation §4): the criticality and the
/// deadline of the job entity k runs at t; (0, u64::MAX) when it runs none.
/// A simulated core runs one job at a time. A runtime group may have several
/// jobs in progress at once (its processes share the core's CPU and are
/// stopped together): it counts as running the most critical of them, the
/// earliest deadline among those, so that rule 4 never stops a critical
/// job with a non-critical one (docs/runtime.md, MCTI).
pub fn running(jobs: impl IntoIterator<Item = Job>) -> (u32, u64) {
    jobs.into_iter().fold((0, u64::MAX), |(c, d), j| match j.criticality.cmp(&c) {
        std::cmp::Ordering::Greater => (j.criticality, j.deadline_ns),
        std::cmp::Ordering::Equal => (c, d.min(j.deadline_ns)),
        std::cmp::Ordering::Less => (c, d),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system(text: &str) -> TaskSystem {
        crate::parse_task_system(text, crate::Format::Toml, "t.toml").unwrap()
    }

    const TASKS: &str = "[platform]\ncores = 2\n\
        [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"1ms\"\n\
        [[task]]\nname = \"b\"\ncore = 1\nlevel = \"B\"\nperiod = \"10ms\"\npet = \"1ms\"\n\
        [[task]]\nname = \"c\"\ncore = 1\nperiod = \"10ms\"\npet = \"1ms\"\n\
        [[task]]\nname = \"g\"\nperiod = \"10ms\"\npet = \"1ms\"\n";

    fn outline(p: &EntityPlan) -> Vec<(&str, Option<u64>, Vec<usize>, u32)> {
        p.entities.iter().map(|e| (e.name.as_str(), e.budget, e.tasks.clone(), e.criticality)).collect()
    }

    #[test]
    fn per_core_entities_hold_the_tasks_placed_on_each_core() {
        let s = system(&format!("{TASKS}[regulation]\nkind = \"memguard\"\nbudgets = [10, 20]\n"));
        let p = plan(&s, RegulationKind::Memguard).unwrap();
        // "g" has no core: charged to whichever core runs it, listed nowhere.
        // Core 1 holds a Level-B task: criticality 2 (A = 3, B = 2, C = 1, none = 0).
        assert_eq!(outline(&p), vec![("core0", Some(10), vec![0], 0), ("core1", Some(20), vec![1, 2], 2)]);
        assert_eq!(p.group_of_task(4), None);
        assert_eq!(plan(&s, RegulationKind::Mcti).unwrap().entities, p.entities);
    }

    #[test]
    fn groups_follow_the_file_and_are_not_mcti_entities() {
        let s = system(&format!("{TASKS}[regulation]\nkind = \"memguard\"\n[[regulation.group]]\nname = \"x\"\ntasks = [\"c\", \"g\"]\nbudget = 5\n"));
        let p = plan(&s, RegulationKind::Memguard).unwrap();
        assert_eq!(outline(&p), vec![("x", Some(5), vec![2, 3], 0)]);
        assert_eq!(p.group_of_task(4), Some(vec![None, None, Some(0), Some(0)]));
        assert_eq!(plan(&s, RegulationKind::Mcti).unwrap_err().field, "regulation.group");
        assert_eq!(plan(&s, RegulationKind::Mrs).unwrap_err().field, "server");
    }

    #[test]
    fn a_runtime_group_runs_its_most_critical_job_then_earliest_deadline() {
        let j = |criticality, deadline_ns| Job { criticality, deadline_ns };
        assert_eq!(running([]), (0, u64::MAX));
        assert_eq!(running([j(0, 50)]), (0, 50));
        assert_eq!(running([j(0, 10), j(2, 90), j(2, 70), j(1, 5)]), (2, 70));
    }
}
