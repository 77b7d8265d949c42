//! Background tasks (`arrival = "background"`): a load with no jobs, run from
//! its offset to the end. The file, the simulator and the analysis, each
//! checked against schedules worked out by hand.

use criticore::analysis::classic::{analyze, BACKGROUND_NOTE};
use criticore::model::{background_stand_in_ns, parse_task_system, Format, TaskSystem};
use criticore::policy::SchedulerKind;
use criticore::sim::{simulate, SimConfig};

const MS: u64 = 1_000_000;

fn parse(text: &str) -> TaskSystem {
    parse_task_system(text, Format::Toml, "bg.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn refused(text: &str) -> (String, String) {
    let e = parse_task_system(text, Format::Toml, "bg.toml").expect_err("accepted");
    (e.field, e.reason)
}

/// One core: rt (2 ms every 10 ms) above the load, "below" (1 ms every 20 ms) under it.
const ONE_CORE: &str = "[platform]\ncores = 1\n\
    [[task]]\nname = \"rt\"\ncore = 0\npriority = 5\nperiod = \"10ms\"\npet = \"2ms\"\n\
    [[task]]\nname = \"load\"\ncore = 0\npriority = 3\narrival = \"background\"\n\
    [[task]]\nname = \"below\"\ncore = 0\npriority = 1\nperiod = \"20ms\"\npet = \"1ms\"\n";

#[test]
fn a_background_task_states_no_job_and_is_charged_as_always_busy() {
    let s = parse(ONE_CORE);
    let load = &s.tasks[1];
    assert!(load.is_background() && !s.tasks[0].is_background());
    // Longest period of the file 20 ms: the stand-in is 1 s (PET = period = deadline).
    assert_eq!((load.period_ns, load.deadline_ns, load.pet_ns.highest()), (1_000 * MS, 1_000 * MS, Some(1_000 * MS)));
    // A task of exactly 1 s: the stand-in is 1 ns longer, so a background task
    // without a priority comes last in rate-monotonic order.
    let s = parse("[platform]\ncores = 1\n[[task]]\nname = \"slow\"\ncore = 0\nperiod = \"1s\"\npet = \"1ms\"\n\
        [[task]]\nname = \"load\"\ncore = 0\narrival = \"background\"\n");
    assert_eq!(background_stand_in_ns(&s.tasks, &s.servers), 1_000 * MS + 1);
    let ranks = criticore::policy::fixed_priority_ranks(&s, &[0, 1]);
    assert!(ranks[0] < ranks[1]);
}

#[test]
fn job_fields_on_a_background_task_are_refused_by_name() {
    for field in ["period = \"10ms\"", "pet = \"1ms\"", "deadline = \"5ms\"", "jitter = \"1ms\""] {
        let text = format!("[platform]\ncores = 1\n[[task]]\nname = \"load\"\ncore = 0\narrival = \"background\"\n{field}\n");
        let (f, reason) = refused(&text);
        assert_eq!(f, format!("task[0].{}", field.split(' ').next().unwrap()));
        assert!(reason.starts_with("a background task has no jobs"), "{reason}");
    }
    let (f, reason) = refused("[platform]\ncores = 1\n[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\narrival = \"background\"\n");
    assert_eq!(f, "task[0].arrival");
    assert!(reason.contains("Level-A tasks are periodic"), "{reason}");
    let (f, reason) = refused("[platform]\ncores = 1\n[[task]]\nname = \"a\"\ncore = 0\narrival = \"forever\"\nperiod = \"1ms\"\npet = \"1ms\"\n");
    assert_eq!(f, "task[0].arrival");
    assert!(reason.contains("expected periodic, sporadic or background"), "{reason}");
}

#[test]
fn the_simulator_runs_one_endless_job_that_is_no_job_of_the_statistics() {
    let s = parse(ONE_CORE);
    let run = |kind| simulate(&s, kind, &SimConfig { record_jobs: true, ..SimConfig::new(100 * MS) }).unwrap_or_else(|e| panic!("{e:?}"));
    // Fixed priority: rt runs [10k, 10k + 2); the load takes the core from
    // 2 ms on and is preempted by rt at 10, 20, …, 90 ms (9 times); "below"
    // never runs: its 5 jobs (released 0, 20, …, 80, due by 100) all miss.
    let r = run(SchedulerKind::Pfp);
    let (rt, load, below) = (&r.per_task[0], &r.per_task[1], &r.per_task[2]);
    assert_eq!((rt.completed, rt.max_response_ns, rt.misses), (10, 2 * MS, 0));
    assert_eq!((load.released, load.completed, load.unfinished, load.misses, load.preemptions), (0, 0, 0, 0, 9));
    assert_eq!((below.released, below.completed, below.unfinished, below.misses), (5, 0, 5, 5));
    assert!(r.unfinished.iter().all(|u| u.task != 1));
    // EDF: the load's deadline is never, so it runs only when no job waits;
    // "below" runs after rt in every 20 ms: response 2 + 1 = 3 ms.
    let r = run(SchedulerKind::Pedf);
    let (load, below) = (&r.per_task[1], &r.per_task[2]);
    assert_eq!((below.completed, below.max_response_ns, below.misses), (5, 3 * MS, 0));
    assert_eq!((load.released, load.unfinished, load.preemptions), (0, 0, 9));
}

#[test]
fn the_analysis_gives_no_bound_below_a_background_task_and_names_it() {
    let s = parse(ONE_CORE);
    let a = analyze(&s, SchedulerKind::Pfp).unwrap();
    let row = |name: &str| a.tasks.iter().find(|t| t.task == name).unwrap().clone();
    assert_eq!((row("rt").bound_ns, row("rt").schedulable), (Some(2 * MS), Some(true)));
    let load = row("load");
    assert!(load.background && load.bound_ns.is_none() && load.schedulable == Some(true));
    assert_eq!(load.note.as_deref(), Some(BACKGROUND_NOTE));
    let below = row("below");
    assert_eq!((below.bound_ns, below.schedulable), (None, Some(false)));
    assert_eq!(below.note.as_deref(), Some("below background task load, which never finishes: no bound"));
    assert_eq!(a.schedulable, Some(false));
    // The core's load is its tasks with jobs: 2/10 + 1/20.
    assert!((a.groups[0].utilization - 0.25).abs() < 1e-12, "{}", a.groups[0].utilization);
    // EDF: the demand test over rt and "below" only (the load never preempts).
    let a = analyze(&s, SchedulerKind::Pedf).unwrap();
    assert_eq!(a.schedulable, Some(true));
    assert_eq!(a.tasks.iter().find(|t| t.task == "below").unwrap().bound_ns, Some(20 * MS));
    // Only loads: no job to bound, no verdict.
    let s = parse("[platform]\ncores = 1\n[[task]]\nname = \"load\"\ncore = 0\narrival = \"background\"\n");
    assert_eq!(analyze(&s, SchedulerKind::Pfp).unwrap().schedulable, None);
}

#[test]
fn the_monitor_refuses_a_background_real_time_task() {
    let text = "[platform]\ncores = 2\n[regulation]\nkind = \"monitor\"\nrt_task = \"load\"\nbe_cores = [1]\nthreshold = 1.1\n\
        [[task]]\nname = \"load\"\ncore = 0\narrival = \"background\"\n";
    let (f, reason) = refused(text);
    assert_eq!(f, "regulation.rt_task");
    assert!(reason.contains("is a background task"), "{reason}");
}
