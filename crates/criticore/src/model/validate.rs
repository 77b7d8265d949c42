//! Rules that involve more than one field: unique names and the MC² period
//! structure of each core (mc2-hardware-management §2: Level-A and -B tasks on
//! a core have harmonic periods, and Level-B periods are integer multiples of
//! the core's Level-A hyperperiod).

use super::{units::format_duration_ns, Level, TaskSystem};
use crate::error::{quote, FieldError, FieldResult};
use std::collections::HashMap;

pub fn validate(system: &TaskSystem) -> FieldResult<()> {
    unique_names(system)?;
    unique_server_names_and_kinds(system)?;
    every_task_in_a_server(system)?;
    for core in 0..system.platform.cores {
        core_periods(system, core)?;
    }
    Ok(())
}

fn unique_names(system: &TaskSystem) -> FieldResult<()> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, task) in system.tasks.iter().enumerate() {
        if let Some(first) = seen.insert(task.name.as_str(), i) {
            return Err(FieldError::new(
                format!("task[{i}].name"),
                format!("duplicate task name {} (also task[{first}])", quote(&task.name)),
            ));
        }
    }
    Ok(())
}

/// With servers, every task runs in one (the server schedulers need it).
fn every_task_in_a_server(system: &TaskSystem) -> FieldResult<()> {
    if system.servers.is_empty() {
        return Ok(());
    }
    match system.tasks.iter().position(|t| t.server.is_none()) {
        Some(i) => Err(FieldError::new(format!("task[{i}].server"), "a system with servers needs a server for every task")),
        None => Ok(()),
    }
}

fn unique_server_names_and_kinds(system: &TaskSystem) -> FieldResult<()> {
    for (i, server) in system.servers.iter().enumerate() {
        if let Some(first) = system.servers[..i].iter().position(|s| s.name == server.name) {
            return Err(FieldError::new(
                format!("server[{i}].name"),
                format!("duplicate server name {} (also server[{first}])", quote(&server.name)),
            ));
        }
        // One node-scheduling policy per system: FP over periodic servers or EDF over CBS servers.
        if let Some(other) = system.servers[..i].iter().find(|s| s.kind != server.kind) {
            return Err(FieldError::new(
                format!("server[{i}].kind"),
                format!("server {} is of another kind; all servers of a system are periodic or all are cbs", quote(&other.name)),
            ));
        }
    }
    Ok(())
}

/// Level-A hyperperiod of a core (lcm of its Level-A periods; the largest one
/// when periods are harmonic). None when the core has no Level-A task.
pub fn level_a_hyperperiod_ns(system: &TaskSystem, core: usize) -> Option<u64> {
    system.on_core(core, Level::A).map(|i| system.tasks[i].period_ns).reduce(lcm)
}

pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Least common multiple, saturating at u64::MAX.
pub fn lcm(a: u64, b: u64) -> u64 {
    (a / gcd(a, b)).saturating_mul(b)
}

fn core_periods(system: &TaskSystem, core: usize) -> FieldResult<()> {
    let mut ab: Vec<usize> = system
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.level.is_some_and(Level::is_partitioned) && t.core == Some(core))
        .map(|(i, _)| i)
        .collect();
    ab.sort_by_key(|&i| (system.tasks[i].period_ns, i));
    for pair in ab.windows(2) {
        let (short, long) = (&system.tasks[pair[0]], &system.tasks[pair[1]]);
        if long.period_ns % short.period_ns != 0 {
            return Err(FieldError::new(
                format!("task[{}].period", pair[1]),
                format!(
                    "{} is not harmonic with {} ({}) on core {core}: Level-A/B periods on a core must divide one another (mc2-hardware-management §2)",
                    format_duration_ns(long.period_ns),
                    quote(&short.name),
                    format_duration_ns(short.period_ns)
                ),
            ));
        }
    }
    if let Some(hyper) = level_a_hyperperiod_ns(system, core) {
        for i in system.on_core(core, Level::B) {
            let period = system.tasks[i].period_ns;
            if period % hyper != 0 {
                return Err(FieldError::new(
                    format!("task[{i}].period"),
                    format!(
                        "{} is not a multiple of core {core}'s Level-A hyperperiod {} (mc2-hardware-management §2)",
                        format_duration_ns(period),
                        format_duration_ns(hyper)
                    ),
                ));
            }
        }
    }
    Ok(())
}
