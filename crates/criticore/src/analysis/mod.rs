//! Schedulability analysis. MC² (mc2-hardware-management §2, mc2-io-ipc-os-isolation §2;
//! conditions collected in docs/references.md (MC²: Per-level conditions), documented in
//! docs/analysis.md).
//!
//! Small pure functions over a [`TaskSystem`]: a per-core utilization test for
//! Level A (cyclic executive) and Level B (rate-monotonic, harmonic periods), a
//! restricted-supply G-EDF test with tardiness bounds for Level C, and the four
//! configurations of mc2-hardware-management §4.3. Results carry task indices;
//! [`report`] turns them into a named, serializable report. Every other
//! scheduler the simulator runs has its classic test in [`classic`], over
//! [`fp_rta`], [`edf_demand`], [`gfp_rta`] and [`supply`].

pub mod chains;
pub mod classic;
pub mod edf_demand;
pub mod fp_rta;
pub mod gfp_rta;
pub mod level_a;
pub mod level_b;
pub mod level_c;
pub mod mc2;
pub mod mc2_bounds;
pub mod memory;
pub mod port_waits;
pub mod report;
pub mod server_memory;
pub mod server_supply;
pub mod supply;

use crate::error::FieldError;
use crate::model::TaskSystem;
use crate::policy::SchedulerKind;
use mc2::Uncovered;
use serde::Serialize;

// The policies the tests bound, where the simulator also reads them (crate::policy).
pub use crate::policy::exact;
pub use crate::policy::provisioning::{charge, Charged, Provisioning};
pub use crate::policy::utilization::{self, UTILIZATION_EPS};

/// A task as the classic tests charge it: PET C, period (least inter-arrival
/// time) T, relative deadline D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sporadic {
    pub pet_ns: u64,
    pub period_ns: u64,
    pub deadline_ns: u64,
}

/// A test that stopped at its work limit before deciding: never a verdict
/// ("not decided within 10,000,000 jobs of the busy period").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotDecided {
    pub limit: u64,
    /// What was counted, plural ("jobs of the busy period").
    pub of: &'static str,
}

impl std::fmt::Display for NotDecided {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not decided within {} {}", thousands(self.limit), self.of)
    }
}

/// 10000000 as "10,000,000".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// What [`analyze`] finds: the MC² report, or a classic test's bounds.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Analysis {
    Mc2(report::AnalysisReport),
    Classic(classic::TaskAnalysis),
}

/// Analyze `system` as `kind` schedules it. A request whose test would leave
/// tasks out (all of them, or some, silently) is refused: a verdict over the
/// rest would read as one over the file.
pub fn analyze(system: &TaskSystem, kind: SchedulerKind) -> Result<Analysis, FieldError> {
    if kind != SchedulerKind::Mc2 {
        return classic::analyze(system, kind).map(Analysis::Classic);
    }
    mc2::coverage(system, true).map_err(|why| match why {
        // Only an explicit --scheduler mc2 gets here with no level at all.
        Uncovered::NoLevel => FieldError::new(
            "--scheduler",
            format!("mc2: no task has an MC² level (A–D), so there is nothing to analyze; the file implies {}", SchedulerKind::implied_by(system).name()),
        ),
        why => why.error(system, "the mc2 analysis"),
    })?;
    Ok(Analysis::Mc2(report::report(system)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{parse_task_system, Format};

    fn system(tasks: &str) -> TaskSystem {
        parse_task_system(&format!("[platform]\ncores = 2\n{tasks}"), Format::Toml, "t.toml").unwrap()
    }

    fn refused(text: &str, kind: SchedulerKind) -> FieldError {
        match analyze(&system(text), kind) {
            Err(e) => e,
            Ok(a) => panic!("analyzed: {}", serde_json::to_string(&a).unwrap()),
        }
    }

    /// Two tasks pinned to core 0 asking 16 ms every 10 ms: overloaded, no MC² level.
    const OVERLOADED_PFP: &str = "[[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"8ms\"\n\
        [[task]]\nname = \"b\"\ncore = 0\nperiod = \"10ms\"\npet = \"8ms\"\n";

    #[test]
    fn mc2_on_a_file_without_levels_is_refused_naming_the_implied_scheduler() {
        let e = refused(OVERLOADED_PFP, SchedulerKind::Mc2);
        assert_eq!(e.field, "--scheduler");
        assert!(e.reason.contains("no task has an MC² level") && e.reason.ends_with("the file implies pfp"), "{}", e.reason);
    }

    #[test]
    fn mc2_does_not_silently_drop_a_task_without_level() {
        // "c" has no level beside a Level-C task, so the file implies mc2.
        let text = "[[task]]\nname = \"lc\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n\
            [[task]]\nname = \"c\"\ncore = 1\nperiod = \"10ms\"\npet = \"9ms\"\n";
        assert_eq!(SchedulerKind::implied_by(&system(text)), SchedulerKind::Mc2);
        let e = refused(text, SchedulerKind::Mc2);
        assert_eq!(e.field, "task[1].level");
        assert!(e.reason.contains("\"c\" has no MC² level"), "{}", e.reason);
    }

    #[test]
    fn mc2_on_best_effort_tasks_only_is_refused() {
        let text = "[[task]]\nname = \"d\"\nlevel = \"D\"\nperiod = \"10ms\"\npet = { D = \"20ms\" }\n";
        let e = refused(text, SchedulerKind::Mc2);
        assert_eq!(e.field, "task.level");
        assert!(e.reason.starts_with("every task is Level D"), "{}", e.reason);
    }

    #[test]
    fn mc2_does_not_silently_drop_an_unplaced_level_b_task() {
        // A Level-B task with a cost curve may leave its core to the optimizer;
        // unplaced, no per-core test sees it.
        let text = "[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\npet = { A = \"2ms\", B = \"2ms\", C = \"2ms\" }\n\
            [[task]]\nname = \"b\"\nlevel = \"B\"\nperiod = \"10ms\"\npet = { B = \"9ms\", C = \"9ms\" }\n\
            cost = { llc_slowdown = 2.0, wss_ways = 4, reload = 0.1 }\n";
        let e = refused(text, SchedulerKind::Mc2);
        assert_eq!(e.field, "task[1].core");
    }

    #[test]
    fn an_mc2_file_with_every_task_levelled_and_placed_is_analyzed() {
        // One Level-A task, 2 ms every 10 ms on core 0: U_A^A(0) = 0.2; a Level-D task beside it is fine.
        let text = "[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\npet = { A = \"2ms\", B = \"2ms\", C = \"2ms\" }\n\
            [[task]]\nname = \"d\"\nlevel = \"D\"\nperiod = \"10ms\"\npet = { D = \"20ms\" }\n";
        let Ok(Analysis::Mc2(r)) = analyze(&system(text), SchedulerKind::Mc2) else { panic!("not the MC² report") };
        assert!(r.schedulable);
        assert_eq!(r.levels.A.per_core[0].utilization, 0.2);
        assert_eq!(r.best_effort, vec!["d".to_string()]);
    }

    #[test]
    fn a_file_without_tasks_is_not_refused() {
        // Nothing is left out of an empty file: MC² covers it vacuously, as before.
        let Ok(Analysis::Mc2(r)) = analyze(&system(""), SchedulerKind::Mc2) else { panic!("not the MC² report") };
        assert!(r.schedulable);
    }

    #[test]
    fn classic_schedulers_still_analyze_the_file_without_levels() {
        // pfp: b (second in file order, same period) waits for a: 8 + 8 = 16 ms > 10 ms.
        let Ok(Analysis::Classic(a)) = analyze(&system(OVERLOADED_PFP), SchedulerKind::Pfp) else { panic!("not the classic analysis") };
        assert_eq!(a.schedulable, Some(false));
    }
}
