//! Implicit communication's copies (issue 27, Build 5; docs/format.md
//! `copy_in`, docs/simulator.md, docs/analysis.md "Limited preemption"): a
//! job's copy-in and copy-out are non-preemptive work at its start and end,
//! part of its PET; between them a preemptive task may be preempted
//! anywhere. Hand-worked schedules on one core, CPU-only, the analysis's
//! bounds beside them, the fields' errors and the trace's steps.

mod common;

use criticore::analysis::classic::analyze;
use criticore::model::{Level, Part, Region};
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, trace, ExecModel, SimConfig, SimResult};
use criticore::{parse_task_system, Format, TaskSystem};

const US: u64 = 1_000;

fn parse(tasks: &str) -> Result<TaskSystem, (String, String)> {
    parse_task_system(&format!("[platform]\ncores = 1\n{tasks}"), Format::Toml, "c.toml").map_err(|e| (e.field, e.reason))
}

fn task(name: &str, priority: i64, pet_us: u64, period_us: u64, extra: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\ncore = 0\npriority = {priority}\npet = \"{pet_us}us\"\nperiod = \"{period_us}us\"\n{extra}")
}

fn run(system: &TaskSystem, duration_ns: u64) -> SimResult {
    let config = SimConfig { record_jobs: true, record_segments: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(duration_ns) };
    simulate(system, SchedulerKind::Pfp, &config).unwrap_or_else(|e| panic!("{e:?}"))
}

/// (release, finish) of task `i`'s jobs in order.
fn jobs(r: &SimResult, i: u32) -> Vec<(u64, u64)> {
    r.records.iter().filter(|j| j.task == i).map(|j| (j.release_ns, j.finish_ns)).collect()
}

fn bound(system: &TaskSystem, name: &str) -> Option<u64> {
    analyze(system, SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == name).unwrap().bound_ns
}

/// l: 10 µs every 40, of which a copy-in of 2 and a copy-out of 3 (body
/// 2-7, copy-out 7-10 alone); h: 1 µs every 40, released at `offset_ns`.
fn pair(offset_ns: u64) -> TaskSystem {
    parse(&(task("h", 2, 1, 40, &format!("offset = \"{offset_ns}ns\"\n")) + &task("l", 1, 10, 40, "copy_in = \"2us\"\ncopy_out = \"3us\"\n"))).unwrap()
}

#[test]
fn copies_are_not_preempted_and_the_body_is() {
    // h at 1 µs, inside l's copy-in: it waits until 2, runs 2-3; l ends at 11.
    let r = run(&pair(US), 40 * US);
    assert_eq!((jobs(&r, 0), jobs(&r, 1)), (vec![(US, 3 * US)], vec![(0, 11 * US)]));
    // h at 4 µs, inside the body: it preempts at once, 4-5; l ends at 11.
    let r = run(&pair(4 * US), 40 * US);
    assert_eq!((jobs(&r, 0), jobs(&r, 1)), (vec![(4 * US, 5 * US)], vec![(0, 11 * US)]));
    // h 1 ns after l's copy-out began (7 µs): it waits until 10, runs 10-11:
    // 4 µs − 1 ns, the analysis's bound exactly (its blocking: l's longest
    // non-preemptive region, the copy-out's 3 µs, less 1 ns).
    let r = run(&pair(7 * US + 1), 40 * US);
    assert_eq!((jobs(&r, 0), jobs(&r, 1)), (vec![(7 * US + 1, 11 * US)], vec![(0, 10 * US)]));
    assert_eq!(bound(&pair(7 * US + 1), "h"), Some(4 * US - 1));
    // l's bound: its copy-out, its last region, starts at the least
    // S = 10 − 3 + (⌊S/40⌋ + 1)·1 = 8 and ends at 11.
    assert_eq!(bound(&pair(0), "l"), Some(11 * US));
    // The same task without copies: h at 7.001 µs preempts at once.
    let plain = parse(&(task("h", 2, 1, 40, "offset = \"7001ns\"\n") + &task("l", 1, 10, 40, ""))).unwrap();
    assert_eq!(jobs(&run(&plain, 40 * US), 0), [(7 * US + 1, 8 * US + 1)]);
    assert_eq!(bound(&plain, "h"), Some(US));
}

#[test]
fn a_job_s_regions_are_its_copies_around_its_body() {
    let np = |work_ns, part| Region { work_ns, preemptible: false, part };
    let t = &pair(0).tasks[1];
    assert_eq!(t.regions(Level::C).unwrap(), [np(2 * US, Part::CopyIn), Region { work_ns: 5 * US, preemptible: true, part: Part::Body }, np(3 * US, Part::CopyOut)]);
    assert_eq!(t.steps(), [("copy-in", 2 * US), ("l", 5 * US), ("copy-out", 3 * US)]);
    // A cooperative task's copies are regions beside its runnables; the PET
    // left out is their sum with the copies.
    let s = parse(&task("c", 1, 0, 40, "copy_in = \"1us\"\npreemption = \"cooperative\"\nrunnables = [{ name = \"a\", pet = \"2us\" }, { name = \"b\", pet = \"3us\" }]\n").replace("pet = \"0us\"\n", "")).unwrap();
    let t = &s.tasks[0];
    assert_eq!(t.pet_ns.highest(), Some(6 * US));
    let runnable = |k, work_ns| np(work_ns, Part::Runnable(k));
    assert_eq!(t.regions(Level::C).unwrap(), [np(US, Part::CopyIn), runnable(0, 2 * US), runnable(1, 3 * US)]);
    assert_eq!(t.steps(), [("copy-in", US), ("a", 2 * US), ("b", 3 * US)]);
    // No copies, preemptive: no regions, no steps.
    let t = &parse(&task("p", 1, 5, 40, "")).unwrap().tasks[0];
    assert_eq!((t.regions(Level::C), t.steps().len()), (None, 0));
}

#[test]
fn copies_that_do_not_fit_are_refused_by_field() {
    let one = |extra: &str| parse(&task("t", 1, 5, 40, extra)).unwrap_err();
    assert_eq!(one("copy_in = \"4us\"\ncopy_out = \"2us\"\n"), ("task[0].pet".into(), "5us, less than its copy_in and copy_out together (6us), which are part of it".into()));
    assert_eq!(one("copy_in = \"-1us\"\n").0, "task[0].copy_in");
    assert_eq!(
        one("copy_out = \"1us\"\nrunnables = [{ name = \"a\", pet = \"5us\" }]\n"),
        ("task[0].pet".into(), "5us, but its copies and runnables sum to 6us (leave `pet` out to take their sum)".into())
    );
    let mc2 = parse("[[task]]\nname = \"a\"\nlevel = \"C\"\nperiod = \"40us\"\npet = { C = \"5us\" }\ncopy_in = \"1us\"\n").unwrap_err();
    assert_eq!(mc2.0, "task[0].copy_in");
    // Every scheduler but pfp refuses them rather than preempt them anyway.
    let s = parse(&task("t", 1, 5, 40, "copy_out = \"1us\"\n")).unwrap();
    let e = simulate(&s, SchedulerKind::Gedf, &SimConfig::new(40 * US)).unwrap_err();
    assert!(format!("{e:?}").contains("task[0].copy_out") && format!("{e:?}").contains("tasks with non-preemptive copies run under pfp only"), "{e:?}");
}

#[test]
fn the_trace_names_the_copies_where_the_job_ran_them() {
    // h at 4 µs preempts l's body (above): l runs copy-in 0-2, its body 2-4
    // and 5-8, its copy-out 8-11.
    let system = pair(4 * US);
    let r = run(&system, 40 * US);
    let slices = common::runnable_slices(&trace::perfetto_json(&system, &r));
    let want = [("copy-in", 0.0, 2.0), ("l", 2.0, 2.0), ("l", 5.0, 3.0), ("copy-out", 8.0, 3.0)];
    assert_eq!(slices, want.map(|(n, ts, dur)| (n.to_string(), ts, dur)));
}
