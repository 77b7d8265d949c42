//! Multiple-activation limits (issue 27, Build 4; docs/format.md
//! `activation_limit`, docs/simulator.md): a release that finds N jobs of
//! its task active is lost, counted and never run; the analysis says whether
//! any can be. Checked against a second model of one task alone on a core:
//! its jobs run back to back, finish_k = max(release_k, finish_{k-1}) + C, and
//! release r is lost when N kept jobs finish after r.

use criticore::analysis::classic::analyze;
use criticore::model::Level;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig};
use criticore::{parse_task_system, Format};

const US: u64 = 1_000;

/// (kept jobs as (release, finish), lost releases) by the second model.
fn by_hand(c: u64, t: u64, n: usize, end: u64) -> (Vec<(u64, u64)>, u64) {
    let (mut kept, mut lost, mut last) = (Vec::new(), 0, 0u64);
    for r in (0..end).step_by(t as usize) {
        let active = kept.iter().filter(|&&(_, f): &&(u64, u64)| f > r).count();
        if active >= n {
            lost += 1;
            continue;
        }
        last = last.max(r) + c;
        kept.push((r, last));
    }
    (kept, lost)
}

fn file(c_us: u64, t_us: u64, limit: u32) -> String {
    format!("[platform]\ncores = 1\n[[task]]\nname = \"a\"\ncore = 0\npet = \"{c_us}us\"\nperiod = \"{t_us}us\"\nactivation_limit = {limit}\n")
}

#[test]
fn releases_beyond_the_limit_are_lost() {
    // An overloaded task (3 µs every 2 µs) over 40 µs, limits 1 to 4; and one
    // that fits (1 every 2) loses nothing.
    for (c, t, n) in [(3, 2, 1), (3, 2, 2), (3, 2, 3), (5, 2, 4), (1, 2, 1)] {
        let end = 40 * US;
        let system = parse_task_system(&file(c, t, n), Format::Toml, "t.toml").unwrap();
        let config = SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(end) };
        let r = simulate(&system, SchedulerKind::Pfp, &config).unwrap();
        let (kept, lost) = by_hand(c * US, t * US, n as usize, end);
        let finished: Vec<(u64, u64)> = kept.iter().copied().filter(|&(_, f)| f <= end).collect();
        let simulated: Vec<(u64, u64)> = r.records.iter().map(|j| (j.release_ns, j.finish_ns)).collect();
        assert_eq!(simulated, finished, "C {c} T {t} N {n}");
        assert_eq!(r.per_task[0].lost_activations, lost, "C {c} T {t} N {n}");
        assert_eq!(r.per_task[0].released, kept.len() as u64, "C {c} T {t} N {n}");
        assert_eq!((lost > 0), c > t, "C {c} T {t} N {n}");
    }
}

#[test]
fn the_analysis_says_whether_a_release_can_be_lost() {
    // Below (1, 4): a (2, 5) responds within 3 ≤ 5, so with limit 1 at most one job is active.
    let two = |limit: &str| format!("[platform]\ncores = 1\n[[task]]\nname = \"h\"\ncore = 0\npet = \"1us\"\nperiod = \"4us\"\n[[task]]\nname = \"a\"\ncore = 0\npet = \"2us\"\nperiod = \"5us\"\n{limit}");
    let note = |text: &str| analyze(&parse_task_system(text, Format::Toml, "t.toml").unwrap(), SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == "a").unwrap().note;
    assert_eq!(note(&two("activation_limit = 1\n")).as_deref(), Some("activation limit 1: no release is lost (at most 1 jobs active)"));
    assert_eq!(note(&two("")), None);
    // Deadline beyond the period: Lehoczky's (62, 100) below (26, 70) responds in up
    // to 118 (job 4 of its busy period, fp_rta's test), so 2 jobs may be active:
    // limit 1 may lose releases, limit 2 none.
    let late = "[platform]\ncores = 1\n[[task]]\nname = \"h\"\ncore = 0\npet = \"26us\"\nperiod = \"70us\"\n[[task]]\nname = \"a\"\ncore = 0\npet = \"62us\"\nperiod = \"100us\"\ndeadline = \"200us\"\nactivation_limit = 1\n";
    assert_eq!(note(&late.replace("activation_limit = 1", "activation_limit = 2")).as_deref(), Some("activation limit 2: no release is lost (at most 2 jobs active)"));
    let bound = |text: &str| analyze(&parse_task_system(text, Format::Toml, "t.toml").unwrap(), SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == "a").unwrap();
    assert_eq!(bound(&late.replace("activation_limit = 1", "activation_limit = 2")).bound_ns, Some(118 * US));
    // With limit 1 no job of a has one of its own before it: its first job
    // of a busy period is the worst, w = 62 + ⌈w/70⌉·26: 88 → 114 → 114
    // (it finishes at 114, the release at 100 is lost).
    let row = bound(late);
    assert_eq!(row.bound_ns, Some(114 * US));
    assert_eq!(row.note.as_deref(), Some("activation limit 1: releases may be lost (up to 2 jobs would be active)"));
}

#[test]
fn an_overloaded_task_with_limit_one_is_bounded_by_its_first_job() {
    // a (6, 10) below h (5, 10): U = 1.1, no busy period ends, yet with
    // limit 1 every other release is lost and each kept job runs 5 beside
    // h's jobs and 1 after the next: R = least w = 6 + ⌈w/10⌉·5 = 16. The
    // simulation: a runs [5, 10) and [15, 16), loses the release at 10,
    // and so on every 20.
    let text = "[platform]\ncores = 1\n[[task]]\nname = \"h\"\ncore = 0\npet = \"5us\"\nperiod = \"10us\"\n[[task]]\nname = \"a\"\ncore = 0\npet = \"6us\"\nperiod = \"10us\"\nactivation_limit = 1\n";
    let system = parse_task_system(text, Format::Toml, "t.toml").unwrap();
    let a = analyze(&system, SchedulerKind::Pfp).unwrap();
    assert_eq!(a.tasks[1].bound_ns, Some(16 * US));
    let without = analyze(&parse_task_system(&text.replace("activation_limit = 1\n", ""), Format::Toml, "t.toml").unwrap(), SchedulerKind::Pfp).unwrap();
    assert_eq!(without.tasks[1].bound_ns, None);
    let r = simulate(&system, SchedulerKind::Pfp, &SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(100 * US) }).unwrap();
    let kept: Vec<(u64, u64)> = r.records.iter().filter(|j| j.task == 1).map(|j| (j.release_ns, j.finish_ns)).collect();
    assert_eq!(kept, (0..5).map(|k| (20 * k * US, (20 * k + 16) * US)).collect::<Vec<_>>());
}

#[test]
fn a_limit_must_be_a_positive_integer() {
    let bad = |v: &str| parse_task_system(&file(1, 2, 1).replace("activation_limit = 1", &format!("activation_limit = {v}")), Format::Toml, "t.toml").unwrap_err().to_string();
    assert_eq!(bad("0"), "t.toml: task[0].activation_limit: expected a positive integer (jobs active at once), got 0");
    assert_eq!(bad("\"2\""), "t.toml: task[0].activation_limit: expected a positive integer (jobs active at once), got a string");
}
