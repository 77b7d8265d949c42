//! Cooperative and non-preemptive tasks (issue 27, Build 4; docs/format.md
//! `preemption`, docs/simulator.md, docs/analysis.md "Limited preemption"):
//! hand-worked schedules on one core, CPU-only, the analysis's bounds beside
//! them, and the files every other scheduler refuses.

use criticore::analysis::classic::analyze;
use criticore::model::Level;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig, SimResult};
use criticore::{parse_task_system, Format, TaskSystem};

const US: u64 = 1_000;

fn system(tasks: &str) -> TaskSystem {
    parse_task_system(&format!("[platform]\ncores = 1\n{tasks}"), Format::Toml, "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn run(system: &TaskSystem, kind: SchedulerKind, duration_ns: u64) -> SimResult {
    let config = SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(duration_ns) };
    simulate(system, kind, &config).unwrap_or_else(|e| panic!("{e:?}"))
}

/// (release, finish) of task `i`'s jobs in order.
fn jobs(r: &SimResult, i: u32) -> Vec<(u64, u64)> {
    r.records.iter().filter(|j| j.task == i).map(|j| (j.release_ns, j.finish_ns)).collect()
}

fn bound(system: &TaskSystem, name: &str) -> Option<u64> {
    analyze(system, SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == name).unwrap().bound_ns
}

fn task(name: &str, priority: i64, pet_us: u64, period_us: u64, extra: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\ncore = 0\npriority = {priority}\npet = \"{pet_us}us\"\nperiod = \"{period_us}us\"\n{extra}")
}

#[test]
fn a_cooperative_job_is_preempted_only_between_runnables() {
    // l (6 µs in runnables of 4 and 2, every 20) below h (2 every 5). 0-2 h;
    // 2-6 l's first runnable, h released at 5 waits; 6-8 h at the preemption
    // point; 8-10 l's last runnable: l ends at 10 (preemptive: the same 10,
    // but h would run 5-7). The analysis: S = 6 − 2 + (⌊S/5⌋ + 1)·2 = 8, 10.
    let coop = |runnables: &str| system(&(task("h", 2, 2, 5, "") + &task("l", 1, 6, 20, &format!("preemption = \"cooperative\"\nrunnables = [{runnables}]\n"))));
    let s = coop("{ name = \"a\", pet = \"4us\" }, { name = \"b\", pet = \"2us\" }");
    let r = run(&s, SchedulerKind::Pfp, 20 * US);
    assert_eq!(jobs(&r, 0)[..2], [(0, 2 * US), (5 * US, 8 * US)]);
    assert_eq!(jobs(&r, 1), [(0, 10 * US)]);
    assert_eq!(bound(&s, "l"), Some(10 * US));
    // Runnables of 2 and 4: at the point at 4 nothing waits, so l's last
    // runnable runs 4-8 through h's release at 5: l ends at 8, h's job at 10.
    // The analysis: S = 6 − 4 + (⌊S/5⌋ + 1)·2 = 4, 8; h is blocked by l's
    // longest runnable less 1 ns: 4 µs − 1 ns + 2 µs.
    let s = coop("{ name = \"a\", pet = \"2us\" }, { name = \"b\", pet = \"4us\" }");
    let r = run(&s, SchedulerKind::Pfp, 20 * US);
    assert_eq!(jobs(&r, 1), [(0, 8 * US)]);
    assert_eq!(jobs(&r, 0)[1], (5 * US, 10 * US));
    assert_eq!(bound(&s, "l"), Some(8 * US));
    assert_eq!(bound(&s, "h"), Some(6 * US - 1));
}

#[test]
fn a_non_preemptive_job_pushes_its_own_next_job() {
    // Self-pushing (Bril et al. 2009): a non-preemptive (3, 12) below (2, 5)
    // and (2, 6). 0-2 a, 2-4 b, 4-7 c (a at 5 and b at 6 wait), 7-9 a, 9-10 b,
    // a at 10 preempts b: 10-12 a, 12-13 b, 13-15 b (released at 12), 15-17 a
    // (released at 15), 17-20 c's second job (released at 12): 8 > its first
    // job's 7. The analysis finds job 1 of the active period: 8.
    let s = system(&(task("a", 3, 2, 5, "") + &task("b", 2, 2, 6, "") + &task("c", 1, 3, 12, "preemption = \"non-preemptive\"\n")));
    let r = run(&s, SchedulerKind::Pfp, 24 * US);
    assert_eq!(jobs(&r, 2), [(0, 7 * US), (12 * US, 20 * US)]);
    assert_eq!(bound(&s, "c"), Some(8 * US));
}

#[test]
fn a_lower_non_preemptive_job_blocks_a_higher_one() {
    // l (5 µs, non-preemptive) from 0; h (1 µs) released 1 µs later waits until
    // 5: its response 5 µs = the analysis's blocking (5 µs − 1 ns) + 1 µs,
    // within 1 ns (the release 1 ns after l's start is h's worst).
    let s = system(&(task("h", 2, 1, 20, "offset = \"1us\"\n") + &task("l", 1, 5, 20, "preemption = \"non-preemptive\"\n")));
    let r = run(&s, SchedulerKind::Pfp, 20 * US);
    assert_eq!(jobs(&r, 0), [(US, 6 * US)]);
    assert_eq!(bound(&s, "h"), Some(6 * US - 1));
    let a = analyze(&s, SchedulerKind::Pfp).unwrap();
    let h = a.tasks.iter().find(|t| t.task == "h").unwrap();
    assert_eq!(h.terms.map(|t| t.blocking_ns), Some(5 * US - 1));
    // Preemptive, h would run at once.
    let s = system(&(task("h", 2, 1, 20, "offset = \"1us\"\n") + &task("l", 1, 5, 20, "")));
    assert_eq!(jobs(&run(&s, SchedulerKind::Pfp, 20 * US), 0), [(US, 2 * US)]);
}

#[test]
fn only_pfp_takes_limited_preemption_and_bad_values_are_named() {
    let s = system(&(task("h", 2, 1, 20, "") + &task("l", 1, 5, 20, "preemption = \"cooperative\"\n")));
    for kind in [SchedulerKind::Pedf, SchedulerKind::Gedf, SchedulerKind::Gfp] {
        let e = simulate(&s, kind, &SimConfig::new(US)).unwrap_err();
        assert_eq!(e.field, "task[1].preemption", "{kind:?}");
        assert!(e.reason.contains("pfp only"), "{}", e.reason);
        assert_eq!(analyze(&s, kind).unwrap_err().field, "task[1].preemption");
    }
    let bad = |extra: &str| parse_task_system(&format!("[platform]\ncores = 1\n{}", task("t", 1, 1, 10, extra)), Format::Toml, "t.toml").unwrap_err();
    let e = bad("preemption = \"sometimes\"\n");
    assert_eq!(e.to_string(), "t.toml: task[0].preemption: unknown preemption \"sometimes\" (expected preemptive, cooperative or non-preemptive)");
    let e = parse_task_system("[platform]\ncores = 1\n[[task]]\nname = \"t\"\ncore = 0\narrival = \"background\"\npreemption = \"cooperative\"\n", Format::Toml, "t.toml").unwrap_err();
    assert!(e.to_string().starts_with("t.toml: task[0].preemption: a background task has no jobs"), "{e}");
}

#[test]
fn a_cooperative_job_shorter_than_its_pet_shortens_its_runnables_in_proportion() {
    // l: runnables of 6 and 4 µs (PET 10), its first job given 5 µs: they
    // run 3 and 2 (docs/simulator.md, "Execution times"), so its preemption
    // point falls at 3. h (1 µs) released at 2.5 waits for it: 3-4, and l
    // ends at 6. At their PETs the point would fall at 6, past the job's
    // end at 5: h would run 5-6.
    let s = system(&(task("h", 2, 1, 50, "offset = \"2500ns\"\n") + &task("l", 1, 10, 50, "preemption = \"cooperative\"\nrunnables = [{ name = \"a\", pet = \"6us\" }, { name = \"b\", pet = \"4us\" }]\n")));
    let config = SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), given_exec_ns: vec![vec![], vec![5 * US]], ..SimConfig::new(20 * US) };
    let r = simulate(&s, SchedulerKind::Pfp, &config).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(jobs(&r, 0), [(2_500, 4 * US)]);
    assert_eq!(jobs(&r, 1), [(0, 6 * US)]);
    // The steps the trace names, the same.
    let l = &s.tasks[1];
    assert_eq!(criticore::sim::draws::steps(l, None, 1, 1, 5 * US), [("a", 3 * US), ("b", 2 * US)]);
    assert_eq!(criticore::sim::draws::steps(l, None, 1, 1, 10 * US), [("a", 6 * US), ("b", 4 * US)]);
}
