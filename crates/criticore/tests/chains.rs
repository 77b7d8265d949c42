//! Cause-effect chains (issue 27, Build 6; docs/format.md `[[chain]]`,
//! docs/simulator.md and docs/analysis.md, "Cause-effect chains"): the
//! simulator's reaction times and data ages against a second model worked
//! from the job records (every job's forward and backward chain, searched
//! exhaustively), the analysis's bounds by hand, and every simulated
//! latency within its bound.

use criticore::analysis::classic::analyze;
use criticore::model::Level;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig};
use criticore::{parse_task_system, Format, TaskSystem};

const MS: u64 = 1_000_000;

/// a (2 of 10 ms) and c (4 of 20 ms) on core 0, b (3 of 15 ms) on core 1,
/// chain a → b → c, every task communicating as `comm`; `extra` per task.
fn file(comm: &str, extra: &str) -> String {
    format!(
        "[platform]\ncores = 2\n\
         [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10ms\"\npet = \"2ms\"\ncommunication = \"{comm}\"\n{extra}\
         [[task]]\nname = \"b\"\ncore = 1\nperiod = \"15ms\"\npet = \"3ms\"\ncommunication = \"{comm}\"\n{extra}\
         [[task]]\nname = \"c\"\ncore = 0\nperiod = \"20ms\"\npet = \"4ms\"\ncommunication = \"{comm}\"\n{extra}\
         [[chain]]\nname = \"abc\"\ntasks = [\"a\", \"b\", \"c\"]\n"
    )
}

/// The second model: per task its jobs as (read, write); a job of task k
/// reads the value of the task before it with the latest write at or
/// before its read, searched over every job.
fn by_search(system: &TaskSystem, records: &[criticore::sim::job::JobRecord]) -> (Vec<u64>, Vec<u64>) {
    let chain = &system.chains[0].tasks;
    let rw: Vec<Vec<(u64, u64)>> = chain
        .iter()
        .map(|&t| {
            let task = &system.tasks[t];
            let mut v: Vec<(u64, u64)> = records
                .iter()
                .filter(|j| j.task as usize == t)
                .map(|j| (task.communication.read_ns(j.release_ns, j.start_ns), task.communication.write_ns(j.release_ns, j.finish_ns, task.period_ns)))
                .collect();
            v.sort();
            v
        })
        .collect();
    // origin[k][j]: the first task's read behind job j of task k.
    let mut origin: Vec<Vec<Option<u64>>> = vec![rw[0].iter().map(|&(r, _)| Some(r)).collect()];
    for k in 1..rw.len() {
        let o = rw[k]
            .iter()
            .map(|&(read, _)| {
                let src = (0..rw[k - 1].len()).filter(|&j| rw[k - 1][j].1 <= read).max_by_key(|&j| rw[k - 1][j].1);
                src.and_then(|j| origin[k - 1][j])
            })
            .collect();
        origin.push(o);
    }
    let last = rw.len() - 1;
    let ages = rw[last].iter().zip(&origin[last]).filter_map(|(&(_, w), o)| o.map(|o| w - o)).collect();
    let reactions = (1..rw[0].len())
        .filter_map(|j| {
            let (before, read) = (rw[0][j - 1].0, rw[0][j].0);
            (0..rw[last].len()).filter(|&x| origin[last][x].is_some_and(|o| o >= read)).map(|x| rw[last][x].1).min().map(|w| w - before)
        })
        .collect();
    (reactions, ages)
}

#[test]
fn simulated_latencies_match_a_second_model_and_stay_within_the_bounds() {
    for comm in ["implicit", "let"] {
        for extra in ["", "arrival = \"sporadic\"\njitter = \"3ms\"\n"] {
            let system = parse_task_system(&file(comm, extra), Format::Toml, "t.toml").unwrap();
            let config = SimConfig { seed: 7, record_jobs: true, exec: ExecModel::Uniform { level: Level::C, best_case_fraction: 0.3 }, ..SimConfig::new(2_000 * MS) };
            let r = simulate(&system, SchedulerKind::Pfp, &config).unwrap();
            let (mut reactions, mut ages) = by_search(&system, &r.records);
            let (mut sim_r, mut sim_a) = (r.chains[0].reaction_ns.clone(), r.chains[0].data_age_ns.clone());
            for v in [&mut reactions, &mut ages, &mut sim_r, &mut sim_a] {
                v.sort_unstable();
            }
            assert_eq!(sim_r, reactions, "{comm} {extra}");
            assert_eq!(sim_a, ages, "{comm} {extra}");
            assert!(reactions.len() > 50 && ages.len() > 50, "{} {}", reactions.len(), ages.len());
            let b = &analyze(&system, SchedulerKind::Pfp).unwrap().chains[0];
            assert!(*reactions.last().unwrap() <= b.reaction_ns.unwrap(), "{comm} {extra}: {reactions:?} {b:?}");
            assert!(*ages.last().unwrap() <= b.data_age_ns.unwrap(), "{comm} {extra}: {ages:?} {b:?}");
        }
    }
}

#[test]
fn the_bounds_by_hand() {
    // R_a = 2, R_b = 3, R_c = 4 + 2 (one job of a) = 6 ms.
    // Implicit (Eᵢ = Rᵢ): reaction (10 + 2) + (15 + 3) + (20 + 6) = 56 ms,
    // data age (10 + 2) + (15 + 3) + 6 = 36 ms.
    let bound = |text: &str| {
        let a = analyze(&parse_task_system(text, Format::Toml, "t.toml").unwrap(), SchedulerKind::Pfp).unwrap();
        let c = &a.chains[0];
        (c.reaction_ns, c.data_age_ns, c.note.clone())
    };
    assert_eq!(bound(&file("implicit", "")), (Some(56 * MS), Some(36 * MS), None));
    // LET (Eᵢ = max(Tᵢ, Rᵢ) = Tᵢ): (10 + 10) + (15 + 15) + (20 + 20) = 90; 20 + 30 + 20 = 70.
    assert_eq!(bound(&file("let", "")), (Some(90 * MS), Some(70 * MS), None));
    // Sporadic, 3 ms of extra separation: 3 ms more per task's wait: 65 and 42.
    assert_eq!(bound(&file("implicit", "arrival = \"sporadic\"\njitter = \"3ms\"\n")), (Some(65 * MS), Some(42 * MS), None));
    // b first released at 40 ms: a write before then waits for it: (10 + 2) + (40 + 3) + (20 + 6) = 81.
    let late = file("implicit", "").replace("name = \"b\"\ncore = 1\n", "name = \"b\"\ncore = 1\noffset = \"40ms\"\n");
    assert_eq!(bound(&late), (Some(81 * MS), Some(36 * MS), None));
    // Without a bound for c, none for the chain.
    let over = file("implicit", "").replace("pet = \"4ms\"", "pet = \"19ms\"");
    assert_eq!(bound(&over), (None, None, Some("task c has no response bound".to_string())));
}

#[test]
fn bad_chains_are_one_line_errors() {
    let err = |from: &str, to: &str| parse_task_system(&file("implicit", "").replace(from, to), Format::Toml, "t.toml").unwrap_err().to_string();
    assert_eq!(err("tasks = [\"a\", \"b\", \"c\"]", "tasks = [\"a\", \"x\"]"), "t.toml: chain[0].tasks[1]: no task named \"x\"");
    assert_eq!(err("tasks = [\"a\", \"b\", \"c\"]", "tasks = [\"a\"]"), "t.toml: chain[0].tasks: a chain needs at least two tasks (cause and effect)");
    // A task may come back: a later job of it reads what an earlier one wrote.
    let back = parse_task_system(&file("implicit", "").replace("tasks = [\"a\", \"b\", \"c\"]", "tasks = [\"a\", \"b\", \"a\"]"), Format::Toml, "t.toml").unwrap();
    assert_eq!(back.chains[0].tasks, [0, 1, 0]);
    assert_eq!(err("tasks = [\"a\", \"b\", \"c\"]", "tasks = \"a\""), "t.toml: chain[0].tasks: expected an array of task names, got a string");
    let bad_comm = parse_task_system(&file("loose", ""), Format::Toml, "t.toml").unwrap_err().to_string();
    assert_eq!(bad_comm, "t.toml: task[0].communication: unknown communication \"loose\" (expected implicit, explicit or let)");
    let twice = format!("{}[[chain]]\nname = \"abc\"\ntasks = [\"a\", \"b\"]\n", file("implicit", ""));
    assert_eq!(parse_task_system(&twice, Format::Toml, "t.toml").unwrap_err().to_string(), "t.toml: chain[1].name: duplicate chain name \"abc\"");
}

#[test]
fn every_hop_is_a_flow_arrow_from_the_writing_job_to_the_reading_job() {
    // The trace (ui.perfetto.dev) draws each hop of a chain as a flow: it
    // starts inside the writing job's last slice and ends inside the reading
    // job's first, on their cores' tracks.
    let system = parse_task_system(&file("implicit", ""), Format::Toml, "t.toml").unwrap();
    let config = SimConfig { record_jobs: true, record_segments: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(200 * MS) };
    let r = simulate(&system, SchedulerKind::Pfp, &config).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&criticore::sim::trace::perfetto_json(&system, &r)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let ts = |e: &serde_json::Value| e["ts"].as_str().map_or_else(|| e["ts"].as_f64().unwrap(), |s| s.parse().unwrap());
    // Job slices per (task name, job number): (core, start µs, end µs).
    let slices: Vec<(String, u64, u64, f64, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "job")
        .map(|e| (e["args"]["task"].as_str().unwrap().to_string(), e["args"]["job"].as_u64().unwrap(), e["tid"].as_u64().unwrap(), ts(e), ts(e) + e["dur"].as_f64().unwrap()))
        .collect();
    let inside = |task: u32, job: u32, e: &serde_json::Value| {
        let name = &system.tasks[task as usize].name;
        slices.iter().any(|(n, j, core, s, f)| n == name && *j == job as u64 && *core == e["tid"].as_u64().unwrap() && *s <= ts(e) && ts(e) <= *f)
    };
    let starts: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "s" && e["cat"] == "chain").collect();
    let ends: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "f" && e["cat"] == "chain").collect();
    let hops = &r.chains[0].hops;
    // a → b and b → c: b's jobs after the first and c's all read data (200 ms: 12 + 10 hops).
    assert!(hops.len() > 15, "{}", hops.len());
    assert_eq!((starts.len(), ends.len()), (hops.len(), hops.len()));
    for ((h, s), f) in hops.iter().zip(&starts).zip(&ends) {
        assert_eq!(s["id"], f["id"]);
        assert!(inside(h.from.0, h.from.1, s), "{h:?} {s}");
        assert!(inside(h.to.0, h.to.1, f), "{h:?} {f}");
    }
}
