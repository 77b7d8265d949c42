//! Hand-worked schedules, checked job by job (docs/simulator.md).
//!
//! Each test builds a small task system from TOML, works its schedule out by
//! hand (the timeline in the comment above the assertions, times in ms), then
//! checks every finished job's record (release, start, finish, deadline,
//! execution time, preemptions, migrations, core), every execution segment and,
//! for servers, every server segment against it. Per-task statistics are
//! checked against the records, and unfinished jobs and misses where they occur.
//!
//! Notation: `T#n` is job n of task T; `[a, b)` a segment; `c0`/`c1` the cores.

use criticore::model::Level;
use criticore::sim::job::JobRecord;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, Segment, ServerSegment, SimConfig, SimResult, TaskStats};
use criticore::{parse_task_system, Format, TaskSystem};

const MS: u64 = 1_000_000;

fn parse(text: &str) -> TaskSystem {
    parse_task_system(text, Format::Toml, "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn config(duration_ms: u64) -> SimConfig {
    SimConfig { record_jobs: true, record_segments: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(duration_ms * MS) }
}

fn run(text: &str, kind: SchedulerKind, duration_ms: u64) -> SimResult {
    run_with(text, kind, &config(duration_ms))
}

fn run_with(text: &str, kind: SchedulerKind, config: &SimConfig) -> SimResult {
    let system = parse(text);
    let result = simulate(&system, kind, config).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(result.scheduler, kind.name());
    result
}

/// Index of the task called `name`.
fn task(system_text: &str, name: &str) -> u32 {
    parse(system_text).tasks.iter().position(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}")) as u32
}

/// A job record, times in ms: job `number` of `task`, finished on `core`.
#[allow(clippy::too_many_arguments)]
fn job(task: u32, number: u32, core: u32, release: u64, start: u64, finish: u64, deadline: u64, exec: u64, preemptions: u32, migrations: u32) -> JobRecord {
    JobRecord {
        task,
        number,
        core,
        release_ns: release * MS,
        start_ns: start * MS,
        finish_ns: finish * MS,
        deadline_ns: deadline * MS,
        exec_ns: exec * MS,
        preemptions,
        migrations,
        // No memory profiles in these systems: no requests, no stalls.
        memory_requests: 0,
        memory_stall_ns: 0,
    }
}

/// An execution segment [start, end) in ms.
fn seg(core: u32, task: u32, number: u32, start: u64, end: u64) -> Segment {
    Segment { core, task, number, start_ns: start * MS, end_ns: end * MS }
}

/// A server segment [start, end) in ms.
fn sseg(core: u32, server: u32, start: u64, end: u64) -> ServerSegment {
    ServerSegment { core, server, start_ns: start * MS, end_ns: end * MS }
}

/// Every record, in job order, equals the expected ones; stats agree with them.
#[track_caller]
fn assert_jobs(result: &SimResult, mut want: Vec<JobRecord>) {
    let mut got = result.records.clone();
    got.sort_by_key(|r| (r.task, r.number));
    want.sort_by_key(|r| (r.task, r.number));
    if got != want {
        let show = |v: &[JobRecord]| v.iter().map(show_job).collect::<Vec<_>>().join("\n");
        panic!("job records differ\n got:\n{}\nwant:\n{}", show(&got), show(&want));
    }
    // Statistics of completed jobs follow from the records.
    for (t, stats) in result.per_task.iter().enumerate() {
        let mine: Vec<&JobRecord> = got.iter().filter(|r| r.task as usize == t).collect();
        assert_eq!(stats.completed, mine.len() as u64, "task {t} completed");
        assert_eq!(stats.preemptions, mine.iter().map(|r| r.preemptions as u64).sum::<u64>(), "task {t} preemptions");
        assert_eq!(stats.migrations, mine.iter().map(|r| r.migrations as u64).sum::<u64>(), "task {t} migrations");
        assert_eq!(stats.max_response_ns, mine.iter().map(|r| r.response_ns()).max().unwrap_or(0), "task {t} max response");
        assert_eq!(stats.max_tardiness_ns, mine.iter().map(|r| r.tardiness_ns()).max().unwrap_or(0), "task {t} max tardiness");
    }
}

fn show_job(r: &JobRecord) -> String {
    let ms = |ns: u64| ns as f64 / MS as f64;
    format!(
        "  T{}#{} core {} rel {} start {} fin {} dl {} exec {} pre {} mig {}",
        r.task,
        r.number,
        r.core,
        ms(r.release_ns),
        ms(r.start_ns),
        ms(r.finish_ns),
        ms(r.deadline_ns),
        ms(r.exec_ns),
        r.preemptions,
        r.migrations
    )
}

/// Every execution segment equals the expected ones (ordered by start, then core).
#[track_caller]
fn assert_segments(result: &SimResult, mut want: Vec<Segment>) {
    let mut got = result.segments.clone();
    got.sort_by_key(|s| (s.start_ns, s.core, s.task, s.number));
    want.sort_by_key(|s| (s.start_ns, s.core, s.task, s.number));
    if got != want {
        let show = |v: &[Segment]| {
            v.iter()
                .map(|s| format!("  c{} T{}#{} [{}, {})", s.core, s.task, s.number, s.start_ns as f64 / MS as f64, s.end_ns as f64 / MS as f64))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!("segments differ\n got:\n{}\nwant:\n{}", show(&got), show(&want));
    }
    // No core runs two jobs at once.
    for a in &got {
        for b in &got {
            if a != b && a.core == b.core {
                assert!(a.end_ns <= b.start_ns || b.end_ns <= a.start_ns, "overlap on core {}: {a:?} {b:?}", a.core);
            }
        }
    }
}

#[track_caller]
fn assert_server_segments(result: &SimResult, mut want: Vec<ServerSegment>) {
    let mut got = result.server_segments.clone();
    got.sort_by_key(|s| (s.start_ns, s.core));
    want.sort_by_key(|s| (s.start_ns, s.core));
    if got != want {
        let show = |v: &[ServerSegment]| {
            v.iter()
                .map(|s| format!("  c{} S{} [{}, {})", s.core, s.server, s.start_ns as f64 / MS as f64, s.end_ns as f64 / MS as f64))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!("server segments differ\n got:\n{}\nwant:\n{}", show(&got), show(&want));
    }
}

/// released / completed / misses / unfinished of one task.
#[track_caller]
fn assert_counts(stats: &TaskStats, released: u64, completed: u64, misses: u64, unfinished: u64) {
    assert_eq!(
        (stats.released, stats.completed, stats.misses, stats.unfinished),
        (released, completed, misses, unfinished),
        "(released, completed, misses, unfinished) of {stats:?}"
    );
}

// ==================================================================== P-FP

const PFP: &str = r#"
[platform]
cores = 2

[[task]]
name = "lo"
core = 0
period = "20ms"
pet = "6ms"

[[task]]
name = "hi"
core = 0
period = "5ms"
offset = "1ms"
pet = "2ms"

[[task]]
name = "other"
core = 1
period = "10ms"
pet = "4ms"
"#;

/// Rate-monotonic on core 0 (hi: 5 ms beats lo: 20 ms); core 1 is independent.
#[test]
fn pfp_rate_monotonic_with_preemptions() {
    // Run 18 ms.
    // c0: 0–1 lo#1, 1–3 hi#1 (lo preempted at 1), 3–6 lo#1, 6–8 hi#2 (lo preempted
    //     at 6), 8–10 lo#1 (6 ms done: finishes 10), 11–13 hi#3, 16–18 hi#4
    //     (finishes exactly at the end: completed).
    // c1: 0–4 other#1, 10–14 other#2.
    let r = run(PFP, SchedulerKind::Pfp, 18);
    let (lo, hi, other) = (0, 1, 2);
    assert_jobs(
        &r,
        vec![
            job(lo, 1, 0, 0, 0, 10, 20, 6, 2, 0),
            job(hi, 1, 0, 1, 1, 3, 6, 2, 0, 0),
            job(hi, 2, 0, 6, 6, 8, 11, 2, 0, 0),
            job(hi, 3, 0, 11, 11, 13, 16, 2, 0, 0),
            job(hi, 4, 0, 16, 16, 18, 21, 2, 0, 0),
            job(other, 1, 1, 0, 0, 4, 10, 4, 0, 0),
            job(other, 2, 1, 10, 10, 14, 20, 4, 0, 0),
        ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, lo, 1, 0, 1),
            seg(0, hi, 1, 1, 3),
            seg(0, lo, 1, 3, 6),
            seg(0, hi, 2, 6, 8),
            seg(0, lo, 1, 8, 10),
            seg(0, hi, 3, 11, 13),
            seg(0, hi, 4, 16, 18),
            seg(1, other, 1, 0, 4),
            seg(1, other, 2, 10, 14),
        ],
    );
    assert_counts(&r.per_task[lo as usize], 1, 1, 0, 0);
    assert_counts(&r.per_task[hi as usize], 4, 4, 0, 0);
    assert_counts(&r.per_task[other as usize], 2, 2, 0, 0);
    assert!(r.server_segments.is_empty());
}

// ==================================================================== P-EDF

const PEDF: &str = r#"
[platform]
cores = 1

[[task]]
name = "a"
core = 0
period = "10ms"
pet = "3ms"

[[task]]
name = "b"
core = 0
period = "20ms"
deadline = "10ms"
pet = "2ms"

[[task]]
name = "c"
core = 0
period = "20ms"
deadline = "4ms"
offset = "4ms"
pet = "1ms"

[[task]]
name = "d"
core = 0
period = "20ms"
deadline = "8ms"
offset = "12ms"
pet = "2ms"
"#;

#[test]
fn pedf_preemption_and_deadline_ties() {
    // Deadlines: a#1 10, b#1 10 (tie at release: a, the lower task index, goes
    // first), c#1 4+4 = 8, a#2 20, d#1 12+8 = 20 (tie with the running a#2: a
    // tie never preempts, d waits).
    // 0–3 a#1, 3–4 b#1, 4–5 c#1 (deadline 8 < 10: b preempted at 4), 5–6 b#1,
    // idle 6–10, 10–13 a#2 (d#1 released at 12, same deadline 20), 13–15 d#1.
    let r = run(PEDF, SchedulerKind::Pedf, 20);
    let (a, b, c, d) = (0, 1, 2, 3);
    assert_jobs(
        &r,
        vec![
            job(a, 1, 0, 0, 0, 3, 10, 3, 0, 0),
            job(a, 2, 0, 10, 10, 13, 20, 3, 0, 0),
            job(b, 1, 0, 0, 3, 6, 10, 2, 1, 0),
            job(c, 1, 0, 4, 4, 5, 8, 1, 0, 0),
            job(d, 1, 0, 12, 13, 15, 20, 2, 0, 0),
        ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, a, 1, 0, 3),
            seg(0, b, 1, 3, 4),
            seg(0, c, 1, 4, 5),
            seg(0, b, 1, 5, 6),
            seg(0, a, 2, 10, 13),
            seg(0, d, 1, 13, 15),
        ],
    );
    for t in [a, b, c, d] {
        assert_eq!(r.per_task[t as usize].misses, 0);
        assert_eq!(r.per_task[t as usize].unfinished, 0);
    }
}

// ==================================================================== G-EDF

const GEDF: &str = r#"
[platform]
cores = 2

[[task]]
name = "x"
period = "20ms"
pet = "6ms"

[[task]]
name = "y"
period = "20ms"
deadline = "10ms"
offset = "1ms"
pet = "3ms"

[[task]]
name = "z"
period = "20ms"
deadline = "5ms"
offset = "2ms"
pet = "4ms"
"#;

#[test]
fn gedf_job_migrates_after_preemption() {
    // Deadlines: x#1 20, y#1 1+10 = 11, z#1 2+5 = 7.
    // 0: x#1 alone, takes c0 (the first idle core). 1: y#1 takes the idle c1.
    // 2: z#1 (7) beats the worst running job, x#1 (20) on c0: x preempted after 2 ms.
    // 4: y#1 finishes on c1. x#1's previous core c0 is busy (z), so x resumes on
    //    the idle c1: one migration; 4 ms left, finishes at 8.
    // 6: z#1 finishes on c0.
    // c0: 0–2 x#1, 2–6 z#1.   c1: 1–4 y#1, 4–8 x#1.
    let r = run(GEDF, SchedulerKind::Gedf, 20);
    let (x, y, z) = (0, 1, 2);
    assert_jobs(
        &r,
        vec![
            job(x, 1, 1, 0, 0, 8, 20, 6, 1, 1),
            job(y, 1, 1, 1, 1, 4, 11, 3, 0, 0),
            job(z, 1, 0, 2, 2, 6, 7, 4, 0, 0),
        ],
    );
    assert_segments(&r, vec![seg(0, x, 1, 0, 2), seg(1, y, 1, 1, 4), seg(0, z, 1, 2, 6), seg(1, x, 1, 4, 8)]);
    assert_eq!(r.per_task[x as usize].migrations, 1);
    assert_eq!(r.per_task[x as usize].preemptions, 1);
}

// ==================================================================== G-FP

const GFP: &str = r#"
[platform]
cores = 2

[[task]]
name = "bg"
period = "20ms"
priority = 1
pet = "9ms"

[[task]]
name = "fg"
period = "20ms"
priority = 3
pet = "5ms"

[[task]]
name = "urgent"
period = "20ms"
offset = "3ms"
priority = 9
pet = "2ms"

[[task]]
name = "rm"
period = "5ms"
pet = "1ms"
"#;

#[test]
fn gfp_explicit_priorities_preemption_and_previous_core() {
    // Ranks: urgent (9) > fg (3) > bg (1) > rm (no priority: below every task that
    // has one, although its 5 ms period is the shortest).
    // 0: fg#1 → c0, bg#1 → c1; rm#1 waits.
    // 3: urgent#1 preempts the worst running job, bg#1 on c1 (3 ms done).
    // 5: fg#1 (c0) and urgent#1 (c1) finish; rm#2 released. Both cores idle:
    //    bg#1 goes back to its previous core c1 (no migration) although c0 is
    //    idle too; rm#1 takes c0 and finishes at 6, 1 ms late (deadline 5).
    // 6–7 rm#2 on c0. bg#1 runs 5–11 on c1 (6 ms left).
    // 10–11 rm#3 on c0, 15–16 rm#4 on c0 (both cores idle: first idle core).
    let r = run(GFP, SchedulerKind::Gfp, 20);
    let (bg, fg, urgent, rm) = (0, 1, 2, 3);
    assert_jobs(
        &r,
        vec![
            job(bg, 1, 1, 0, 0, 11, 20, 9, 1, 0),
            job(fg, 1, 0, 0, 0, 5, 20, 5, 0, 0),
            job(urgent, 1, 1, 3, 3, 5, 23, 2, 0, 0),
            job(rm, 1, 0, 0, 5, 6, 5, 1, 0, 0),
            job(rm, 2, 0, 5, 6, 7, 10, 1, 0, 0),
            job(rm, 3, 0, 10, 10, 11, 15, 1, 0, 0),
            job(rm, 4, 0, 15, 15, 16, 20, 1, 0, 0),
        ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, fg, 1, 0, 5),
            seg(0, rm, 1, 5, 6),
            seg(0, rm, 2, 6, 7),
            seg(0, rm, 3, 10, 11),
            seg(0, rm, 4, 15, 16),
            seg(1, bg, 1, 0, 3),
            seg(1, urgent, 1, 3, 5),
            seg(1, bg, 1, 5, 11),
        ],
    );
    assert_counts(&r.per_task[rm as usize], 4, 4, 1, 0);
    assert_eq!(r.per_task[rm as usize].max_tardiness_ns, MS);
}

// ==================================================================== MC²

const MC2: &str = r#"
[platform]
cores = 2

[[task]]
name = "a0"
level = "A"
core = 0
period = "12ms"
pet = { A = "4ms", B = "3ms", C = "2ms" }

[[task]]
name = "bL"
level = "B"
core = 1
period = "16ms"
pet = { B = "8ms", C = "7ms" }

[[task]]
name = "bS"
level = "B"
core = 1
period = "8ms"
pet = { B = "3ms", C = "2ms" }

[[task]]
name = "c0"
level = "C"
period = "20ms"
pet = { C = "12ms" }

[[task]]
name = "d0"
level = "D"
period = "20ms"
pet = "3ms"
"#;

#[test]
fn mc2_levels_a_b_c_d() {
    // Jobs run their Level-C PETs (ExecModel::Pet(C)); D its own PET. Level-A/B
    // tasks are periodic from 0 (MC² §2); the Level-C/D tasks need no offsets here.
    // Core 0's Level-A table (from the Level-A PET, 4 ms) has the slot [0, 4)
    // every 12 ms; a0's jobs need only 2 ms, so they finish early in the slot.
    // Core 1: Level B only, rate-monotonic: bS (8 ms) over bL (16 ms).
    // 0: a0#1 in its slot on c0; bS#1 on c1 (RM); bL#1, c0#1 and d0#1 wait.
    // 2: a0#1 finishes early; the rest of its slot goes to Level C: c0#1 starts
    //    on c0. bS#1 finishes too: bL#1 starts on c1.
    // 8: bS#2 preempts bL#1 (RM) on c1 (6 of 7 ms done). 10: bS#2 finishes;
    //    bL#1 resumes. 11: bL#1 finishes; c1 is free of A/B/C: Level D runs,
    //    d0#1 on c1.
    // 12: a0#2's slot: Level A takes c0. c0#1 (10 ms done) moves to c1, the only
    //    core A and B leave idle (one migration; it is not descheduled, so no
    //    preemption); it displaces d0#1 (1 ms done, preempted).
    // 14: a0#2 finishes on c0 and c0#1 on c1. d0#1 resumes on its previous core
    //    c1 and finishes at 16, the end (releases due at 16 are not made).
    // c0: 0–2 a0#1, 2–12 c0#1, 12–14 a0#2.
    // c1: 0–2 bS#1, 2–8 bL#1, 8–10 bS#2, 10–11 bL#1, 11–12 d0#1, 12–14 c0#1, 14–16 d0#1.
    let r = run(MC2, SchedulerKind::Mc2, 16);
    let (a0, bl, bs, c0, d0) = (0, 1, 2, 3, 4);
    assert_jobs(
        &r,
        vec![
            job(a0, 1, 0, 0, 0, 2, 12, 2, 0, 0),
            job(a0, 2, 0, 12, 12, 14, 24, 2, 0, 0),
            job(bl, 1, 1, 0, 2, 11, 16, 7, 1, 0),
            job(bs, 1, 1, 0, 0, 2, 8, 2, 0, 0),
            job(bs, 2, 1, 8, 8, 10, 16, 2, 0, 0),
            job(c0, 1, 1, 0, 2, 14, 20, 12, 0, 1),
            job(d0, 1, 1, 0, 11, 16, 20, 3, 1, 0),
        ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, a0, 1, 0, 2),
            seg(0, c0, 1, 2, 12),
            seg(0, a0, 2, 12, 14),
            seg(1, bs, 1, 0, 2),
            seg(1, bl, 1, 2, 8),
            seg(1, bs, 2, 8, 10),
            seg(1, bl, 1, 10, 11),
            seg(1, d0, 1, 11, 12),
            seg(1, c0, 1, 12, 14),
            seg(1, d0, 1, 14, 16),
        ],
    );
    assert_counts(&r.per_task[a0 as usize], 2, 2, 0, 0);
    assert_counts(&r.per_task[bl as usize], 1, 1, 0, 0);
    assert_counts(&r.per_task[bs as usize], 2, 2, 0, 0);
    assert_counts(&r.per_task[c0 as usize], 1, 1, 0, 0);
    assert_counts(&r.per_task[d0 as usize], 1, 1, 0, 0);
}

const MC2_A_OVER_B: &str = r#"
[platform]
cores = 2

[[task]]
name = "a0"
level = "A"
core = 0
period = "10ms"
pet = { A = "3ms", B = "2ms", C = "1ms" }

[[task]]
name = "b0"
level = "B"
core = 0
period = "20ms"
pet = { B = "8ms", C = "6ms" }

[[task]]
name = "b1"
level = "B"
core = 1
period = "10ms"
pet = { B = "4ms", C = "3ms" }

[[task]]
name = "c0"
level = "C"
period = "20ms"
pet = { C = "11ms" }
"#;

#[test]
fn mc2_level_a_slot_preempts_level_b_which_preempts_level_c() {
    // Run at Level A: a0 needs its full Level-A PET (3 ms), which fills its table
    // slot [0, 3) of every 10 ms on c0; b0, b1 and c0 have no Level-A PET and run
    // the PET of their own level (8, 4 and 11 ms).
    // Level-A/B tasks all start at 0, and every Level-B release on c0 falls on
    // the start of a Level-A slot, so on c0 a Level-B job never finds a Level-C
    // job running: Level B preempts Level C on c1, which has no Level A.
    // 0: a0#1 (slot) on c0, b1#1 on c1; c0#1 waits. 3: b0#1 on c0 after the slot.
    // 4: b1#1 finishes; c0#1 starts on c1.
    // 10: a0#2's slot takes c0 from b0#1 (7 ms done); b1#2 takes c1 from c0#1
    //     (6 ms done), which finds no core (A holds c0) and is preempted.
    // 13: slot over, b0#1 resumes on c0 and finishes at 14; c0 idles after.
    // 14: b1#2 finishes; c0#1 resumes on its previous core c1 and runs to the end
    //     (18) with 10 of 11 ms done: unfinished, deadline 20 after the end, so
    //     not a miss; its open segment is closed at the end.
    // c0: 0–3 a0#1, 3–10 b0#1, 10–13 a0#2, 13–14 b0#1.
    // c1: 0–4 b1#1, 4–10 c0#1, 10–14 b1#2, 14–18 c0#1 (open).
    let mut cfg = config(18);
    cfg.exec = ExecModel::Pet(Level::A);
    let r = run_with(MC2_A_OVER_B, SchedulerKind::Mc2, &cfg);
    let (a0, b0, b1, c0) = (0, 1, 2, 3);
    assert_jobs(
        &r,
        vec![
            job(a0, 1, 0, 0, 0, 3, 10, 3, 0, 0),
            job(a0, 2, 0, 10, 10, 13, 20, 3, 0, 0),
            job(b0, 1, 0, 0, 3, 14, 20, 8, 1, 0),
            job(b1, 1, 1, 0, 0, 4, 10, 4, 0, 0),
            job(b1, 2, 1, 10, 10, 14, 20, 4, 0, 0),
        ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, a0, 1, 0, 3),
            seg(0, b0, 1, 3, 10),
            seg(0, a0, 2, 10, 13),
            seg(0, b0, 1, 13, 14),
            seg(1, b1, 1, 0, 4),
            seg(1, c0, 1, 4, 10),
            seg(1, b1, 2, 10, 14),
            seg(1, c0, 1, 14, 18),
        ],
    );
    assert_counts(&r.per_task[a0 as usize], 2, 2, 0, 0);
    assert_counts(&r.per_task[b0 as usize], 1, 1, 0, 0);
    assert_counts(&r.per_task[b1 as usize], 2, 2, 0, 0);
    assert_counts(&r.per_task[c0 as usize], 1, 0, 0, 1);
}

const MC2_TABLE: &str = r#"
[platform]
cores = 1

[[task]]
name = "a0"
level = "A"
core = 0
period = "5ms"
pet = { A = "2ms", B = "1ms", C = "1ms" }

[[task]]
name = "a1"
level = "A"
core = 0
period = "10ms"
pet = { A = "4ms", B = "4ms", C = "4ms" }

[[task]]
name = "c0"
level = "C"
period = "10ms"
pet = { C = "3ms" }
"#;

#[test]
fn mc2_level_a_jobs_run_only_in_their_table_slots() {
    // Table from the Level-A PETs (RM, hyperperiod 10): a0 [0, 2), a1 [2, 5),
    // a0 [5, 7), a1 [7, 8), free [8, 10). Run at Level C: a0 needs 1 ms, a1 4 ms.
    // 0–1 a0#1; 1–2 the rest of a0's slot goes to Level C (c0#1), not to a1,
    // whose slot has not begun; 2–5 a1#1 (c0 preempted); 5–6 a0#2 (a1#1, 3 ms
    // done, waits for its next slot); 6–7 c0#1; 7–8 a1#1 finishes; 8–9 c0#1
    // finishes. The next hyperperiod repeats it 10 ms later.
    let r = run(MC2_TABLE, SchedulerKind::Mc2, 20);
    let (a0, a1, c0) = (0, 1, 2);
    let mut want = Vec::new();
    let mut segs = Vec::new();
    for (k, base) in [(1u32, 0u64), (2, 10)] {
        want.push(job(a0, 2 * k - 1, 0, base, base, base + 1, base + 5, 1, 0, 0));
        want.push(job(a0, 2 * k, 0, base + 5, base + 5, base + 6, base + 10, 1, 0, 0));
        want.push(job(a1, k, 0, base, base + 2, base + 8, base + 10, 4, 1, 0));
        want.push(job(c0, k, 0, base, base + 1, base + 9, base + 10, 3, 2, 0));
        segs.extend([
            seg(0, a0, 2 * k - 1, base, base + 1),
            seg(0, c0, k, base + 1, base + 2),
            seg(0, a1, k, base + 2, base + 5),
            seg(0, a0, 2 * k, base + 5, base + 6),
            seg(0, c0, k, base + 6, base + 7),
            seg(0, a1, k, base + 7, base + 8),
            seg(0, c0, k, base + 8, base + 9),
        ]);
    }
    assert_jobs(&r, want);
    assert_segments(&r, segs);
}

// ==================================================================== CBS

const CBS: &str = r#"
[platform]
cores = 1

[[server]]
name = "sa"
core = 0
kind = "cbs"
period = "10ms"
budget = "4ms"

[[server]]
name = "sb"
core = 0
kind = "cbs"
period = "12ms"
budget = "6ms"

[[task]]
name = "x1"
server = "sa"
period = "40ms"
pet = "2ms"

[[task]]
name = "x2"
server = "sa"
period = "40ms"
offset = "3ms"
pet = "1ms"

[[task]]
name = "x3"
server = "sa"
period = "40ms"
offset = "8ms"
pet = "1ms"

[[task]]
name = "x4"
server = "sa"
period = "40ms"
offset = "13ms"
pet = "1ms"

[[task]]
name = "y"
server = "sb"
period = "40ms"
pet = "8ms"
"#;

#[test]
fn cbs_edf_wakeup_rule_throttle_and_replenishment() {
    // sa: Q = 4, P = 10. sb: Q = 6, P = 12. EDF on the scheduling deadlines d.
    // 0: x1 wakes sa (d = 0 ≤ t): d = 10, q = 4. y wakes sb: d = 12, q = 6.
    //    sa (10) before sb (12): x1#1 0–2 (sa q = 2); sb: y#1 2–3 (q = 5).
    // 3: x2 wakes the idle sa: q·P = 2·10 = 20 ≤ (d − t)·Q = 7·4 = 28, so sa keeps
    //    d = 10, q = 2; 10 < 12: y preempted, x2#1 3–4 (sa q = 1).
    // 4–8 y#1 (sb q = 1 at 8).
    // 8: x3 wakes sa: 1·10 = 10 > (10 − 8)·4 = 8, overflow: d = 8 + 10 = 18, q = 4.
    //    sb (12) keeps the core: y#1 8–9; sb's budget runs out mid-job at 9
    //    (6 of 8 ms done): throttled until its deadline 12.
    // 9–10 x3#1 (sa q = 3). 10–12 idle: sa has no job, sb is throttled.
    // 12: sb replenished: q = 6, d = 12 + 12 = 24. y#1 12–13.
    // 13: x4 wakes sa: 3·10 = 30 > (18 − 13)·4 = 20: d = 23, q = 4; 23 < 24:
    //    y preempted, x4#1 13–14. 14–15 y#1 finishes (8 ms).
    let r = run(CBS, SchedulerKind::Servers, 30);
    let t = |n| task(CBS, n);
    let (x1, x2, x3, x4, y) = (t("x1"), t("x2"), t("x3"), t("x4"), t("y"));
    assert_jobs(
        &r,
        vec![
            job(x1, 1, 0, 0, 0, 2, 40, 2, 0, 0),
            job(x2, 1, 0, 3, 3, 4, 43, 1, 0, 0),
            job(x3, 1, 0, 8, 9, 10, 48, 1, 0, 0),
            job(x4, 1, 0, 13, 13, 14, 53, 1, 0, 0),
            job(y, 1, 0, 0, 2, 15, 40, 8, 3, 0),
        ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, x1, 1, 0, 2),
            seg(0, y, 1, 2, 3),
            seg(0, x2, 1, 3, 4),
            seg(0, y, 1, 4, 9),
            seg(0, x3, 1, 9, 10),
            seg(0, y, 1, 12, 13),
            seg(0, x4, 1, 13, 14),
            seg(0, y, 1, 14, 15),
        ],
    );
    let (sa, sb) = (0, 1);
    assert_server_segments(
        &r,
        vec![
            sseg(0, sa, 0, 2),
            sseg(0, sb, 2, 3),
            sseg(0, sa, 3, 4),
            sseg(0, sb, 4, 9),
            sseg(0, sa, 9, 10),
            sseg(0, sb, 12, 13),
            sseg(0, sa, 13, 14),
            sseg(0, sb, 14, 15),
        ],
    );
}

const CBS_HARD: &str = r#"
[platform]
cores = 2

[[server]]
name = "s"
core = 1
kind = "cbs"
period = "10ms"
budget = "2ms"

[[task]]
name = "z"
server = "s"
period = "5ms"
pet = "2ms"
"#;

#[test]
fn cbs_hard_reservation_budget_exhausted_as_the_job_ends() {
    // Q = 2, P = 10, one task needing 2 ms every 5 ms (twice the bandwidth).
    // 0: d = 10, q = 2. z#1 0–2: it finishes exactly as the budget runs out, which
    //    still throttles s until d = 10 (hard reservation).
    // 5: z#2 arrives at the throttled server: no wake-up rule, it waits.
    // 10: replenished (q = 2, d = 20); z#2 10–12, budget gone: throttled until 20.
    //    z#3 (released 10) waits.
    // 20: q = 2, d = 30; z#3 20–22, throttled until 30; z#4 (15) and z#5 (20) wait.
    // End 25: z#4 (deadline 20) and z#5 (deadline 25) unfinished, both past or at
    // their deadline: misses. z#2 (deadline 10, finished 12) and z#3 (15 → 22) late.
    let r = run(CBS_HARD, SchedulerKind::Servers, 25);
    assert_jobs(&r, vec![job(0, 1, 1, 0, 0, 2, 5, 2, 0, 0), job(0, 2, 1, 5, 10, 12, 10, 2, 0, 0), job(0, 3, 1, 10, 20, 22, 15, 2, 0, 0)]);
    assert_segments(&r, vec![seg(1, 0, 1, 0, 2), seg(1, 0, 2, 10, 12), seg(1, 0, 3, 20, 22)]);
    assert_server_segments(&r, vec![sseg(1, 0, 0, 2), sseg(1, 0, 10, 12), sseg(1, 0, 20, 22)]);
    assert_counts(&r.per_task[0], 5, 3, 4, 2);
    assert_eq!(r.per_task[0].max_tardiness_ns, 7 * MS);
}

// ========================================================= periodic servers

const PERIODIC: &str = r#"
[platform]
cores = 1

[[server]]
name = "hi"
core = 0
period = "10ms"
budget = "3ms"
priority = 2

[[server]]
name = "lo"
core = 0
period = "10ms"
budget = "5ms"
priority = 1

[[task]]
name = "th"
server = "hi"
period = "10ms"
offset = "2ms"
pet = "1ms"

[[task]]
name = "tl"
server = "lo"
period = "20ms"
pet = "7ms"
"#;

#[test]
fn periodic_servers_idle_deplete_and_replenish() {
    // hi: Q = 3, P = 10, priority 2; lo: Q = 5, P = 10, priority 1.
    // 0–2: hi has budget but no ready task: it idles its budget away (Rule 6)
    //      and lo, although tl#1 is ready, does not run. hi q = 1 at 2.
    // 2–3: th#1; hi depleted at 3 (Rule 5). 3–8: lo runs tl#1 until lo's budget
    //      is depleted mid-job (5 of 7 ms). 8–10: idle, both suspended.
    // 10: both replenished (Rule 1). 10–12 hi idles again; 12–13 th#2 (hi q = 0).
    // 13–15 tl#1 resumes in lo's next period and finishes (lo q = 3).
    // 15–18 lo idles its remaining budget (Rule 6, nothing below it). 18–20 idle.
    let r = run(PERIODIC, SchedulerKind::Servers, 20);
    let (th, tl) = (0, 1);
    assert_jobs(&r, vec![job(th, 1, 0, 2, 2, 3, 12, 1, 0, 0), job(th, 2, 0, 12, 12, 13, 22, 1, 0, 0), job(tl, 1, 0, 0, 3, 15, 20, 7, 1, 0)]);
    assert_segments(&r, vec![seg(0, th, 1, 2, 3), seg(0, tl, 1, 3, 8), seg(0, th, 2, 12, 13), seg(0, tl, 1, 13, 15)]);
    let (hi, lo) = (0, 1);
    assert_server_segments(&r, vec![sseg(0, hi, 0, 3), sseg(0, lo, 3, 8), sseg(0, hi, 10, 13), sseg(0, lo, 13, 18)]);
}

const PERIODIC_RM_INSIDE: &str = r#"
[platform]
cores = 1

[[server]]
name = "s"
core = 0
period = "10ms"
budget = "4ms"

[[server]]
name = "idle"
core = 0
period = "5ms"
budget = "1ms"
priority = -1

[[task]]
name = "long"
server = "s"
period = "20ms"
pet = "3ms"

[[task]]
name = "short"
server = "s"
period = "10ms"
offset = "1ms"
pet = "2ms"
"#;

#[test]
fn periodic_server_local_fixed_priority_and_an_empty_low_server() {
    // s: Q = 4, P = 10, priority 0; "idle": Q = 1, P = 5, priority −1, no tasks.
    // Inside s, rate-monotonic: short (10 ms) over long (20 ms).
    // 0–1 long#1; 1–3 short#1 preempts it; 3–4 long#1 (s depleted at 4, long has
    // 2 of 3 ms done). 4–5 "idle" spends its budget (no task). 5–6 "idle" again
    // (replenished at 5). 10: s replenished; 10–11 long#1 finishes;
    // 11–13 short#2; s idles 13–14. 14–15 "idle"; 15–16 "idle".
    let r = run(PERIODIC_RM_INSIDE, SchedulerKind::Servers, 20);
    let (long, short) = (0, 1);
    assert_jobs(
        &r,
        vec![job(long, 1, 0, 0, 0, 11, 20, 3, 2, 0), job(short, 1, 0, 1, 1, 3, 11, 2, 0, 0), job(short, 2, 0, 11, 11, 13, 21, 2, 0, 0)],
    );
    assert_segments(
        &r,
        vec![seg(0, long, 1, 0, 1), seg(0, short, 1, 1, 3), seg(0, long, 1, 3, 4), seg(0, long, 1, 10, 11), seg(0, short, 2, 11, 13)],
    );
    let (s, idle) = (0, 1);
    assert_server_segments(
        &r,
        vec![sseg(0, s, 0, 4), sseg(0, idle, 4, 6), sseg(0, s, 10, 14), sseg(0, idle, 14, 16)],
    );
}

// ================================================================== arrivals

const SPORADIC: &str = r#"
[platform]
cores = 1

[[task]]
name = "sp"
core = 0
period = "10ms"
arrival = "sporadic"
jitter = "5ms"
pet = "1ms"
"#;

fn releases(result: &SimResult, task: u32) -> Vec<u64> {
    let mut r: Vec<u64> = result.records.iter().filter(|r| r.task == task).map(|r| r.release_ns).collect();
    r.sort_unstable();
    r
}

#[test]
fn sporadic_arrivals_with_jitter_are_seeded_and_a_period_apart() {
    let with_seed = |text: &str, seed: u64| {
        let mut cfg = config(2000);
        cfg.seed = seed;
        run_with(text, SchedulerKind::Pfp, &cfg)
    };
    let a = with_seed(SPORADIC, 7);
    let times = releases(&a, 0);
    assert_eq!(times[0], 0, "the first job comes at the offset");
    assert!(times.len() > 100);
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| (10 * MS..=15 * MS).contains(&g)), "gaps outside [P, P + jitter]: {gaps:?}");
    // The jitter is drawn uniformly over all of [0, 5 ms]: it reaches both ends
    // and averages about 2.5 ms (the seed fixes the draws, so this is exact).
    assert!(gaps.iter().any(|&g| g < 10 * MS + MS / 2) && gaps.iter().any(|&g| g > 15 * MS - MS / 2), "spread: {gaps:?}");
    let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64 / MS as f64;
    assert!((12.0..13.0).contains(&mean), "mean gap {mean} ms");
    // A job alone on its core runs at once, deadline = release + period.
    for r in &a.records {
        assert_eq!((r.start_ns, r.finish_ns, r.deadline_ns), (r.release_ns, r.release_ns + MS, r.release_ns + 10 * MS));
    }
    // Same seed, same jobs; another seed, other jobs.
    assert_eq!(with_seed(SPORADIC, 7), a);
    assert_ne!(releases(&with_seed(SPORADIC, 8), 0), times);
    // Another task (a later index, higher RM priority) does not change this
    // task's arrivals, only when its jobs run.
    let more = format!("{SPORADIC}\n[[task]]\nname = \"other\"\ncore = 0\nperiod = \"7ms\"\narrival = \"sporadic\"\njitter = \"3ms\"\npet = \"1ms\"\n");
    let b = with_seed(&more, 7);
    assert_eq!(a.per_task[0].released, b.per_task[0].released);
    let early = |v: Vec<u64>| v.into_iter().filter(|&t| t < 1990 * MS).collect::<Vec<_>>();
    assert_eq!(early(releases(&b, 0)), early(times.clone()));
    let other_gaps: Vec<u64> = releases(&b, 1).windows(2).map(|w| w[1] - w[0]).collect();
    assert!(other_gaps.iter().all(|&g| (7 * MS..=10 * MS).contains(&g)), "{other_gaps:?}");
    // Each task has its own stream: an identical twin (on another core) draws other jitters.
    let twin = format!("{}\n[[task]]\nname = \"twin\"\ncore = 1\nperiod = \"10ms\"\narrival = \"sporadic\"\njitter = \"5ms\"\npet = \"1ms\"\n", SPORADIC.replace("cores = 1", "cores = 2"));
    let c = with_seed(&twin, 7);
    assert_eq!(early(releases(&c, 0)), early(times.clone()));
    assert_ne!(early(releases(&c, 1)), early(times));
}

#[test]
fn sporadic_without_jitter_is_periodic() {
    let text = SPORADIC.replace("jitter = \"5ms\"\n", "");
    let r = run(&text, SchedulerKind::Pfp, 100);
    assert_eq!(releases(&r, 0), (0..10).map(|k| k * 10 * MS).collect::<Vec<_>>());
}

const UNIFORM: &str = r#"
[platform]
cores = 1

[[task]]
name = "u"
core = 0
period = "10ms"
pet = { C = "3ms" }
"#;

#[test]
fn uniform_execution_times_lie_in_f_pet_to_pet_and_are_seeded() {
    // Alone on its core, each job runs exactly its drawn execution time right at
    // its release. PET 3 ms, f = 0.5: execution times in [1.5 ms, 3 ms].
    let text = UNIFORM;
    let with_seed = |seed: u64| {
        let mut cfg = config(1000);
        cfg.seed = seed;
        cfg.exec = ExecModel::Uniform { level: Level::C, best_case_fraction: 0.5 };
        run_with(text, SchedulerKind::Pfp, &cfg)
    };
    let a = with_seed(3);
    assert_eq!(a.records.len(), 100);
    let (low, high) = (1_500_000, 3 * MS);
    for r in &a.records {
        assert!((low..=high).contains(&r.exec_ns), "exec {} outside [f·PET, PET]", r.exec_ns);
        assert_eq!(r.finish_ns - r.start_ns, r.exec_ns);
        assert_eq!(r.start_ns, r.release_ns);
    }
    let execs: Vec<u64> = a.records.iter().map(|r| r.exec_ns).collect();
    assert!(execs.iter().any(|&e| e != execs[0]), "execution times vary");
    assert!(execs.iter().any(|&e| e < 2 * MS) && execs.iter().any(|&e| e > 5 * MS / 2), "spread over the range: {execs:?}");
    assert_eq!(with_seed(3), a, "same seed, same run");
    let b: Vec<u64> = with_seed(4).records.iter().map(|r| r.exec_ns).collect();
    assert_ne!(b, execs, "another seed, other execution times");
    // Periodic releases are not disturbed by the draws.
    assert_eq!(releases(&a, 0), (0..100).map(|k| k * 10 * MS).collect::<Vec<_>>());
    // f = 1 is the PET exactly.
    let mut cfg = config(100);
    cfg.exec = ExecModel::Uniform { level: Level::C, best_case_fraction: 1.0 };
    let r = run_with(text, SchedulerKind::Pfp, &cfg);
    assert!(r.records.iter().all(|j| j.exec_ns == 3 * MS));
}

// ==================================================================== misses

const MISSES: &str = r#"
[platform]
cores = 1

[[task]]
name = "hi"
core = 0
period = "4ms"
pet = "3ms"

[[task]]
name = "lo"
core = 0
period = "10ms"
pet = "4ms"

[[task]]
name = "bg"
core = 0
period = "30ms"
pet = "1ms"
"#;

#[test]
fn misses_count_late_and_overdue_unfinished_jobs() {
    // RM: hi (4) > lo (10) > bg (30). The core is full (hi 3 of every 4 ms, lo the rest).
    // hi: 0–3, 4–7, 8–11, 12–15, 16–19 (5 jobs, on time).
    // lo#1: 3–4, 7–8, 11–12, 15–16: finishes 16, deadline 10: late (tardiness 6).
    // lo#2 (released 10, deadline 20): 19–20, 1 of 4 ms at the end (20): unfinished
    //   and its deadline is not after the end: a miss.
    // bg#1 (deadline 30, after the end) never runs: unfinished, not a miss.
    let r = run(MISSES, SchedulerKind::Pfp, 20);
    let (hi, lo, bg) = (0, 1, 2);
    assert_jobs(
        &r,
        vec![
            job(hi, 1, 0, 0, 0, 3, 4, 3, 0, 0),
            job(hi, 2, 0, 4, 4, 7, 8, 3, 0, 0),
            job(hi, 3, 0, 8, 8, 11, 12, 3, 0, 0),
            job(hi, 4, 0, 12, 12, 15, 16, 3, 0, 0),
            job(hi, 5, 0, 16, 16, 19, 20, 3, 0, 0),
            job(lo, 1, 0, 0, 3, 16, 10, 4, 3, 0),
            ],
    );
    assert_segments(
        &r,
        vec![
            seg(0, hi, 1, 0, 3),
            seg(0, lo, 1, 3, 4),
            seg(0, hi, 2, 4, 7),
            seg(0, lo, 1, 7, 8),
            seg(0, hi, 3, 8, 11),
            seg(0, lo, 1, 11, 12),
            seg(0, hi, 4, 12, 15),
            seg(0, lo, 1, 15, 16),
            seg(0, hi, 5, 16, 19),
            seg(0, lo, 2, 19, 20),
        ],
    );
    assert_counts(&r.per_task[hi as usize], 5, 5, 0, 0);
    assert_counts(&r.per_task[lo as usize], 2, 1, 2, 1);
    assert_counts(&r.per_task[bg as usize], 1, 0, 0, 1);
    assert_eq!(r.per_task[lo as usize].max_tardiness_ns, 6 * MS);
    assert_eq!(r.per_task[lo as usize].max_response_ns, 16 * MS);
    assert_eq!(r.completed(), 6);

    // One nanosecond shorter: lo#2's deadline (20 ms) is after the end, so it is
    // unfinished but not (yet) a miss.
    let mut cfg = config(20);
    cfg.duration_ns -= 1;
    let r = run_with(MISSES, SchedulerKind::Pfp, &cfg);
    assert_counts(&r.per_task[lo as usize], 2, 1, 1, 1);
}

#[test]
fn without_recording_the_statistics_are_the_same() {
    for (text, kind, ms) in [
        (PFP, SchedulerKind::Pfp, 18),
        (GEDF, SchedulerKind::Gedf, 20),
        (MC2, SchedulerKind::Mc2, 16),
        (MC2_A_OVER_B, SchedulerKind::Mc2, 18),
        (CBS, SchedulerKind::Servers, 30),
        (PERIODIC, SchedulerKind::Servers, 20),
        (MISSES, SchedulerKind::Pfp, 20),
    ] {
        let full = run(text, kind, ms);
        let bare = run_with(text, kind, &SimConfig::new(ms * MS));
        assert!(bare.records.is_empty() && bare.segments.is_empty() && bare.server_segments.is_empty());
        assert_eq!(bare.per_task, full.per_task, "{}", kind.name());
    }
}
