//! The analysis report: configuration (i)'s per-level detail, the four
//! configurations of mc2-hardware-management §4.3, and the Level-A tables, with
//! task names instead of indices. Serialized as the `analyze --json` object
//! (schema in docs/format.md).

use super::level_a::{self, CoreTest, NoTable};
use super::level_c::LevelCTest;
use super::mc2::{self, Mc2Result};
use super::Provisioning;
use crate::model::{Level, TaskSystem};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct AnalysisReport {
    pub cores: usize,
    /// Schedulable at every level under configuration (i), the file's own.
    pub schedulable: bool,
    pub levels: LevelsReport,
    pub configurations: ConfigurationsReport,
    pub level_a_tables: Vec<TableReport>,
    /// Level-D tasks: best effort, not analyzed.
    pub best_effort: Vec<String>,
    /// Tasks without an MC² level: not analyzed. Empty through
    /// [`super::analyze`], which refuses such a file; kept in the JSON schema.
    pub no_level: Vec<String>,
    /// Per task, its response bound under configuration (i) (`mc2_bounds.rs`),
    /// in the classic tests' row layout (`analyze --check-sim`).
    pub tasks: Vec<super::classic::TaskBound>,
}

#[derive(Debug, Clone, Serialize)]
#[allow(non_snake_case)]
pub struct LevelsReport {
    pub A: PartitionedLevelReport,
    pub B: PartitionedLevelReport,
    pub C: GlobalLevelReport,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionedLevelReport {
    pub schedulable: bool,
    pub per_core: Vec<CoreReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoreReport {
    pub core: usize,
    pub tasks: Vec<String>,
    pub utilization: f64,
    pub schedulable: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoreSupplyReport {
    pub core: usize,
    pub capacity: f64,
    pub supply_delay_ns: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TardinessReport {
    pub task: String,
    pub bound_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GlobalLevelReport {
    pub schedulable: bool,
    pub tasks: Vec<String>,
    pub total_utilization: f64,
    pub supply: f64,
    pub per_core: Vec<CoreSupplyReport>,
    pub max_task_utilization: f64,
    pub largest_utilization_sum: f64,
    pub largest_pet_sum_ns: u64,
    pub capacity_condition: bool,
    pub tardiness_condition: bool,
    pub x_ns: Option<f64>,
    pub tardiness_bounds: Vec<TardinessReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LevelVerdicts {
    #[serde(rename = "A")]
    pub a: bool,
    #[serde(rename = "B")]
    pub b: bool,
    #[serde(rename = "C")]
    pub c: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigurationReport {
    pub label: &'static str,
    pub available: bool,
    /// Why the configuration could not be evaluated (a PET the file lacks).
    pub reason: Option<String>,
    pub total_utilization: Option<f64>,
    pub schedulable: Option<bool>,
    pub levels: Option<LevelVerdicts>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigurationsReport {
    pub mc2_isolated: ConfigurationReport,
    pub mc2_unmanaged: ConfigurationReport,
    pub isolated_only: ConfigurationReport,
    pub neither: ConfigurationReport,
}

#[derive(Debug, Clone, Serialize)]
pub struct SlotReport {
    pub task: String,
    pub job: u64,
    pub start_ns: u64,
    pub length_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    pub core: usize,
    /// 0 when the core has no Level-A task.
    pub hyperperiod_ns: u64,
    /// None when no table could be synthesized (`note` says why).
    pub slots: Option<Vec<SlotReport>>,
    pub note: Option<String>,
}

fn names(system: &TaskSystem, indices: &[usize]) -> Vec<String> {
    indices.iter().map(|&i| system.tasks[i].name.clone()).collect()
}

fn core_reports(system: &TaskSystem, tests: &[CoreTest]) -> PartitionedLevelReport {
    PartitionedLevelReport {
        schedulable: tests.iter().all(|t| t.schedulable),
        per_core: tests
            .iter()
            .map(|t| CoreReport {
                core: t.core,
                tasks: names(system, &t.tasks),
                utilization: t.utilization,
                schedulable: t.schedulable,
            })
            .collect(),
    }
}

fn global_report(system: &TaskSystem, c: &LevelCTest) -> GlobalLevelReport {
    GlobalLevelReport {
        schedulable: c.schedulable(),
        tasks: names(system, &c.tasks),
        total_utilization: c.total_utilization,
        supply: c.supply,
        per_core: c
            .per_core
            .iter()
            .map(|s| CoreSupplyReport { core: s.core, capacity: s.capacity, supply_delay_ns: s.supply_delay_ns })
            .collect(),
        max_task_utilization: c.max_task_utilization,
        largest_utilization_sum: c.largest_utilization_sum,
        largest_pet_sum_ns: c.largest_pet_sum_ns,
        capacity_condition: c.capacity_condition,
        tardiness_condition: c.tardiness_condition,
        x_ns: c.x_ns,
        tardiness_bounds: c
            .tasks
            .iter()
            .zip(&c.tardiness_bounds_ns)
            .map(|(&i, &bound_ns)| TardinessReport { task: system.tasks[i].name.clone(), bound_ns })
            .collect(),
    }
}

fn missing_pet_reason(system: &TaskSystem, prov: Provisioning) -> String {
    match system.tasks.iter().position(|t| matches!(t.level, Some(Level::A | Level::B | Level::C)) && prov.unmanaged && t.pet_unmanaged_ns.is_none()) {
        Some(i) => format!("task[{i}] (\"{}\") has no pet_unmanaged", system.tasks[i].name),
        None => "a PET this configuration needs is missing".to_string(),
    }
}

fn configuration(system: &TaskSystem, prov: Provisioning, label: &'static str) -> ConfigurationReport {
    match mc2::analyze(system, prov) {
        Some(r) => ConfigurationReport {
            label,
            available: true,
            reason: None,
            total_utilization: Some(r.total_utilization),
            schedulable: Some(r.schedulable()),
            levels: Some(LevelVerdicts {
                a: r.level_schedulable(Level::A),
                b: r.level_schedulable(Level::B),
                c: r.level_schedulable(Level::C),
            }),
        },
        None => ConfigurationReport {
            label,
            available: false,
            reason: Some(missing_pet_reason(system, prov)),
            total_utilization: None,
            schedulable: None,
            levels: None,
        },
    }
}

/// Analyze a task system: configuration (i) in detail plus all four configurations.
pub fn report(system: &TaskSystem) -> AnalysisReport {
    let prov = Provisioning::MC2_ISOLATED;
    let main: Mc2Result = mc2::analyze(system, prov).expect("validated files carry every Level-ℓ PET a Level-ℓ test needs");
    let tables: Vec<_> = (0..system.platform.cores).map(|core| level_a::table(system, core, prov)).collect();
    let tasks = super::mc2_bounds::task_bounds_with(system, prov, &main, &tables.iter().map(|t| t.as_ref().ok().cloned()).collect::<Vec<_>>());
    let level_a_tables = tables
        .into_iter()
        .enumerate()
        .map(|(core, table)| {
            let note = table.as_ref().err().map(|why| match why {
                NoTable::MissingPet => "a Level-A PET is missing".to_string(),
                NoTable::Overloaded => "Level A does not fit on this core".to_string(),
                NoTable::TooLarge { jobs } => format!(
                    "the Level-A hyperperiod holds {jobs} jobs, more than the {} a table is synthesized for",
                    level_a::MAX_TABLE_JOBS
                ),
            });
            let table = table.ok();
            TableReport {
                core,
                hyperperiod_ns: table.as_ref().map_or(0, |t| t.hyperperiod_ns),
                slots: table.map(|t| {
                    t.slots
                        .iter()
                        .map(|s| SlotReport {
                            task: system.tasks[s.task].name.clone(),
                            job: s.job,
                            start_ns: s.start_ns,
                            length_ns: s.length_ns,
                        })
                        .collect()
                }),
                note,
            }
        })
        .collect();
    AnalysisReport {
        cores: system.platform.cores,
        schedulable: main.schedulable(),
        levels: LevelsReport {
            A: core_reports(system, &main.level_a),
            B: core_reports(system, &main.level_b),
            C: global_report(system, &main.level_c),
        },
        configurations: ConfigurationsReport {
            mc2_isolated: configuration(system, Provisioning::MC2_ISOLATED, "(i) MC² analysis, hardware isolation"),
            mc2_unmanaged: configuration(system, Provisioning::MC2_UNMANAGED, "(ii) MC² analysis, no isolation"),
            isolated_only: configuration(system, Provisioning::ISOLATED_ONLY, "(iii) isolation, no MC² analysis"),
            neither: configuration(system, Provisioning::NEITHER, "(iv) neither"),
        },
        level_a_tables,
        best_effort: system.tasks.iter().filter(|t| t.level == Some(Level::D)).map(|t| t.name.clone()).collect(),
        no_level: system.tasks.iter().filter(|t| t.level.is_none()).map(|t| t.name.clone()).collect(),
        tasks,
    }
}
