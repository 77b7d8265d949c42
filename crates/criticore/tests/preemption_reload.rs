//! Preemption reload bounded by eviction under the fluid model (issue 25;
//! docs/memory-model.md item 6): a resumed job reloads min(lines brought into
//! its LLC partition while it was off its core, min(WSS, partition)/line, its
//! references left) lines at its isolated miss cost, added to its work (the
//! record's `exec_ns`); a new job likewise, counting from its task's last job;
//! and all of a job's reloads together at most its references.
//!
//! The hand-worked systems run on one core with 64 B lines, a 1 MiB LLC and
//! reads only (read_fraction 1), so a miss costs the isolated L = 100 ns, and
//! every job runs at rate 1 (alone on the machine, no bus or bank contention).

use criticore::model::Level;
use criticore::sim::job::JobRecord;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig, SimResult};
use criticore::{parse_task_system, Format};

const MS: u64 = 1_000_000;

const PLATFORM: &str = r#"
[platform]
cores = 1
llc = { size = "1MiB", ways = 16, colors = 16, line = "64B" }
dram = { read_latency = "100ns" }
"#;

fn run(text: &str, kind: SchedulerKind, duration_ns: u64) -> SimResult {
    let system = parse_task_system(text, Format::Toml, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let config = SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(duration_ns) };
    simulate(&system, kind, &config).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The first job of the task called `name` (task index `i`).
fn first_job(r: &SimResult, i: u32) -> JobRecord {
    *r.records.iter().find(|j| j.task == i && j.number == 1).expect("the job finished")
}

/// A victim (task 0) on core 0: 512 KiB read at random, fits the 1 MiB LLC, so
/// it never misses alone and runs at rate 1; 5 ms of work from 0.
const VICTIM: &str = r#"
[[task]]
name = "victim"
core = 0
priority = 1
period = "100ms"
pet = "5ms"
memory = { wss = "512KiB", pattern = "random", read_fraction = 1.0, accesses_per_ms = 1000 }
"#;

/// A higher-priority sweeper released at 1 ms: a 2 MiB stream, larger than the
/// LLC, so every one of its 1,000 references per ms of work misses and brings
/// a line into the (shared) LLC.
fn sweeper(pet_ms: u64) -> String {
    format!(
        "\n[[task]]\nname = \"sweeper\"\ncore = 0\npriority = 2\noffset = \"1ms\"\nperiod = \"100ms\"\npet = \"{pet_ms}ms\"\n\
         memory = {{ wss = \"2MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n"
    )
}

#[test]
fn a_preempted_job_reloads_the_lines_its_preemptor_brought_in_up_to_what_it_had_cached() {
    // The victim cached 512 KiB / 64 B = 8,192 lines. It runs [0, 1), the
    // sweeper preempts it at 1 ms and runs its whole PET at rate 1 (its isolated
    // compute share c = 1 − 0.001·1·100 = 0.9, alone: 1/(0.9 + 0.001·100) = 1).
    //
    // Sweeper of 2 ms: N = 1,000/ms × 2 ms = 2,000 lines brought in, [1, 3).
    // The victim resumes at 3 ms and reloads min(2,000, 8,192) = 2,000 lines
    // × 100 ns = 0.2 ms: exec 5.2 ms, finish 3 + 4 + 0.2 = 7.2 ms.
    // (Before issue 25: its whole 8,192 lines, 0.8192 ms.)
    let r = run(&format!("{PLATFORM}{VICTIM}{}", sweeper(2)), SchedulerKind::Pfp, 50 * MS);
    let v = first_job(&r, 0);
    assert_eq!((v.preemptions, v.exec_ns, v.finish_ns), (1, 5_200_000, 7_200_000));
    assert_eq!(first_job(&r, 1).finish_ns, 3 * MS);

    // Sweeper of 10 ms: N = 10,000 lines, more than the victim had cached
    // (8,192), but with 4 ms of work left it references only 4,000 more lines:
    // it reloads min(10,000, 8,192, 4,000) = 4,000 lines × 100 ns = 0.4 ms; it
    // resumes at 11 ms and finishes at 11 + 4 + 0.4 = 15.4 ms. (Before the
    // references bound: 8,192 lines, 15.8192 ms.)
    let r = run(&format!("{PLATFORM}{VICTIM}{}", sweeper(10)), SchedulerKind::Pfp, 50 * MS);
    let v = first_job(&r, 0);
    assert_eq!((v.preemptions, v.exec_ns, v.finish_ns), (1, 5_400_000, 15_400_000));
}

#[test]
fn a_job_reloads_at_most_its_own_references_however_often_it_resumes() {
    // References left count the job's PET only: reload work is no reference
    // of its own (docs/memory-model.md item 6). The victim (5,000 references:
    // 1,000 per ms of 5 ms) is preempted at 0.1 ms by a 10 ms sweeper (10,000
    // lines in), resumes at 10.1 ms and reloads min(10,000, 8,192, 4,900
    // left) = 4,900 lines = 0.49 ms. A second 10 ms sweeper preempts it at
    // 10.3 ms, 0.2 ms later, still in its reload: at least 0.3 − 0.49 < 0 of
    // its PET is done, so all 5,000 references may be left, but a job misses
    // at most once per reference: its reloads together are at most 5,000
    // lines, so it reloads 5,000 − 4,900 = 100 lines = 0.01 ms at 20.3 ms
    // and finishes at 20.3 + 5.19 + 0.01 = 25.5 ms with exec 5 + 0.49 +
    // 0.01 ms. (Counting the reload work as references, it reloaded 5,190
    // lines; capped per resumption only, 9,900 and finished at 25.99 ms.)
    let second = "\n[[task]]\nname = \"sweeper2\"\ncore = 0\npriority = 3\noffset = \"10300us\"\nperiod = \"100ms\"\npet = \"10ms\"\n\
                  memory = { wss = \"2MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 1000 }\n";
    let text = format!("{PLATFORM}{VICTIM}{}{second}", sweeper(10).replace("offset = \"1ms\"", "offset = \"100us\""));
    let r = run(&text, SchedulerKind::Pfp, 50 * MS);
    let v = first_job(&r, 0);
    assert_eq!((v.preemptions, v.exec_ns, v.finish_ns), (2, 5_500_000, 25_500_000));
    // The analysis charges a resumption the same most: 5,000 lines × 100 ns
    // (not the 8,192 cached), and a job's start as much; its resumptions
    // together nothing more than the start's (5,000 − 5,000 lines), but for
    // one ns of work of rounding at its slowest, τ = 0.9 + 0.001·1·100 = 1.
    let system = parse_task_system(&text, Format::Toml, "t.toml").unwrap();
    let cost = criticore::analysis::memory::job_costs(&system)[0];
    assert_eq!((cost.reload_ns, cost.cold_ns, cost.job_reload_ns), (500_000, 500_000, 1));
}

#[test]
fn a_preemption_by_a_job_without_memory_or_in_another_partition_costs_no_reload() {
    // Without memory: the preemptor brings no line in, so the victim resumes at
    // 3 ms with nothing to reload and runs its 4 ms left: exec 5 ms, finish 7 ms.
    // (Before issue 25: 8,192 lines, exec 5.8192 ms.)
    let cpu = "\n[[task]]\nname = \"cpu\"\ncore = 0\npriority = 2\noffset = \"1ms\"\nperiod = \"100ms\"\npet = \"2ms\"\n";
    let r = run(&format!("{PLATFORM}{VICTIM}{cpu}"), SchedulerKind::Pfp, 50 * MS);
    let v = first_job(&r, 0);
    assert_eq!((v.preemptions, v.exec_ns, v.finish_ns), (1, 5 * MS, 7 * MS));

    // Another partition: under MC² the victim is a Level-C task (the levelC
    // partition, 8 of 16 ways = 512 KiB; a 256 KiB working set fits), the
    // sweeper a Level-B task of core 0 (the core0 partition, the other 8 ways),
    // 1 ms every 4 ms (MC² starts Level B at 0). Timeline: sweeper [0, 1),
    // victim [1, 4), sweeper [4, 5) with 1,000 lines into core0's ways, victim
    // [5, 7): it reloads nothing, exec 5 ms, finish 7 ms. (Before issue 25:
    // its 4,096 lines, 0.4096 ms.)
    let mc2 = |allocation: &str| {
        format!(
            "{PLATFORM}{allocation}\n[[task]]\nname = \"victim\"\nlevel = \"C\"\nperiod = \"100ms\"\npet = {{ C = \"5ms\" }}\n\
             memory = {{ wss = \"256KiB\", pattern = \"random\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n\
             [[task]]\nname = \"sweeper\"\nlevel = \"B\"\ncore = 0\nperiod = \"4ms\"\npet = {{ B = \"1ms\", C = \"1ms\" }}\n\
             memory = {{ wss = \"2MiB\", pattern = \"stream\", read_fraction = 1.0, accesses_per_ms = 1000 }}\n"
        )
    };
    let r = run(&mc2("[allocation]\nllc_ways = { core0 = 8, levelC = 8 }\n"), SchedulerKind::Mc2, 50 * MS);
    let v = first_job(&r, 0);
    assert_eq!((v.preemptions, v.exec_ns, v.finish_ns), (1, 5 * MS, 7 * MS));
    // The same two tasks sharing the whole LLC (no allocation): a task's lines
    // count as cached at time 0, so the 1,000 lines the sweeper brought in over
    // [0, 1) may evict the victim's 4,096 before its first job starts: 1,000
    // × 100 ns at its start; it runs [1, 4) (2.9 ms of its work), and the
    // 1,000 of [4, 5) cost as much again at its resumption: exec 5.2 ms,
    // finish 5 + 2.1 + 0.1 = 7.2 ms.
    let r = run(&mc2(""), SchedulerKind::Mc2, 50 * MS);
    let v = first_job(&r, 0);
    assert_eq!((v.preemptions, v.exec_ns, v.finish_ns), (1, 5_200_000, 7_200_000));
}

#[test]
fn mrs_tables_with_16_mib_working_sets_finishes_every_job_due_in_8_s() {
    // examples/regulate/mrs-tables.toml with every task's 1 MiB working set made
    // 16 MiB, simulated as `criticore simulate FILE --duration 8s` runs it (the
    // servers scheduler its [[server]]s imply, its MRS budgets, the fluid model).
    // Before issue 25 each resumption of Task5, Task6 and Task8 reloaded the
    // whole 16 MiB (262,144 lines, ~34 ms) and none of their jobs finished.
    let example = include_str!("../../../examples/regulate/mrs-tables.toml");
    assert_eq!(example.matches("wss = \"1MiB\"").count(), 7);
    let text = example.replace("wss = \"1MiB\"", "wss = \"16MiB\"");
    let system = parse_task_system(&text, Format::Toml, "mrs-tables-16MiB.toml").unwrap_or_else(|e| panic!("{e}"));
    let end = 8_000 * MS;
    let config = SimConfig { record_jobs: true, ..SimConfig::new(end) };
    let r = simulate(&system, SchedulerKind::implied_by(&system), &config).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(r.scheduler, "servers");
    for (i, t) in system.tasks.iter().enumerate() {
        // Task3, the unpaced load, is a background task: no jobs to finish or
        // miss, only its streaming, held to Server1's memory budget.
        if t.name == "Task3" {
            let s = &r.per_task[i];
            assert!(t.is_background());
            assert_eq!((s.released, s.completed, s.unfinished, s.misses), (0, 0, 0, 0));
            assert!(r.unfinished.iter().all(|u| u.task as usize != i));
            // It spends Server1's whole memory budget every one of the 200
            // periods of 40 ms: 200 × 171,400 = 34,280,000 lines (the fluid
            // model overshoots a depletion by a fraction of a line per event).
            assert!((s.memory_requests - 34_280_000.0).abs() < 1_000.0, "{}", s.memory_requests);
            continue;
        }
        let stats = &r.per_task[i];
        let left: Vec<_> = r.unfinished.iter().filter(|u| u.task as usize == i).collect();
        assert!(left.iter().all(|u| u.deadline_ns > end), "{}: a job due by the end did not finish: {left:?}", t.name);
        assert_eq!(stats.completed + left.len() as u64, stats.released, "{}", t.name);
        assert!(stats.completed >= 40, "{}: {} jobs finished", t.name, stats.completed);
        assert_eq!(stats.misses, 0, "{}", t.name);
    }
}
