//! Runnables (issue 27, Build 2): a task's named steps, in order, whose PETs
//! make the task's.

mod common;

use criticore::model::{parse_task_system, Format, TaskSystem};

fn parse(task: &str) -> Result<TaskSystem, (String, String)> {
    parse_task_system(&format!("[platform]\ncores = 1\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"10ms\"\n{task}"), Format::Toml, "r.toml").map_err(|e| (e.field, e.reason))
}

#[test]
fn runnables_without_a_pet_make_it_their_sum() {
    let s = parse("runnables = [{ name = \"read\", pet = \"1ms\" }, { name = \"filter\", pet = \"250us\" }, { name = \"read\", pet = \"0ns\" }]\n").unwrap();
    let t = &s.tasks[0];
    assert_eq!(t.pet_ns.highest(), Some(1_250_000));
    let steps: Vec<(&str, u64)> = t.runnables.iter().map(|r| (r.name.as_str(), r.pet_ns)).collect();
    // In file order; a runnable may be called twice.
    assert_eq!(steps, [("read", 1_000_000), ("filter", 250_000), ("read", 0)]);
    // With the same PET stated, the same task.
    let again = parse("pet = \"1.25ms\"\nrunnables = [{ name = \"read\", pet = \"1ms\" }, { name = \"filter\", pet = \"250us\" }, { name = \"read\", pet = \"0ns\" }]\n").unwrap();
    assert_eq!(again.tasks[0], *t);
    // Without runnables, none.
    assert!(parse("pet = \"1ms\"\n").unwrap().tasks[0].runnables.is_empty());
}

#[test]
fn runnables_that_disagree_with_the_pet_are_refused_by_field() {
    let (field, reason) = parse("pet = \"2ms\"\nrunnables = [{ name = \"a\", pet = \"1ms\" }]\n").unwrap_err();
    assert_eq!(field, "task[0].pet");
    assert_eq!(reason, "2ms, but its runnables sum to 1ms (leave `pet` out to take their sum)");
    let (field, reason) = parse("pet = { C = \"1ms\" }\nrunnables = [{ name = \"a\", pet = \"1ms\" }]\n").unwrap_err();
    assert_eq!(field, "task[0].pet");
    assert!(reason.contains("not a table per level"), "{reason}");
    assert_eq!(parse("runnables = []\n").unwrap_err().0, "task[0].runnables");
    assert_eq!(parse("runnables = [{ name = \"a\", pet = \"0ns\" }]\n").unwrap_err(), ("task[0].runnables".to_string(), "they sum to 0: a task needs a positive PET".to_string()));
    assert_eq!(parse("runnables = [{ name = \"a\" }]\n").unwrap_err().0, "task[0].runnables[0].pet");
    assert_eq!(parse("runnables = [{ name = \"a\", pet = \"1ms\", label = \"x\" }]\n").unwrap_err().0, "task[0].runnables[0].label");
}

#[test]
fn the_trace_names_each_runnable_where_the_job_ran_it() {
    use criticore::policy::SchedulerKind;
    use criticore::sim::{simulate, trace, SimConfig};
    // One core, CPU-only. a: R1 (1 ms) then R2 (2 ms), released at 0; b
    // (1 ms, higher priority) released at 1.5 ms preempts it. By hand: a
    // runs [0, 1.5) — R1 over [0, 1), R2 over [1, 1.5) — b [1.5, 2.5), and
    // a resumes R2 over [2.5, 4).
    let text = "[platform]\ncores = 1\n\
        [[task]]\nname = \"a\"\ncore = 0\npriority = 1\nperiod = \"10ms\"\nrunnables = [{ name = \"R1\", pet = \"1ms\" }, { name = \"R2\", pet = \"2ms\" }]\n\
        [[task]]\nname = \"b\"\ncore = 0\npriority = 2\nperiod = \"10ms\"\noffset = \"1.5ms\"\npet = \"1ms\"\n";
    let system = parse_task_system(text, Format::Toml, "r.toml").unwrap();
    let r = simulate(&system, SchedulerKind::Pfp, &SimConfig { record_jobs: true, record_segments: true, ..SimConfig::new(5_000_000) }).unwrap();
    let slices = common::runnable_slices(&trace::perfetto_json(&system, &r));
    // Microseconds.
    let want = [("R1", 0.0, 1000.0), ("R2", 1000.0, 500.0), ("R2", 2500.0, 1500.0)];
    assert_eq!(slices, want.map(|(n, ts, dur)| (n.to_string(), ts, dur)));
    // A streamed trace (the CLI's) has the same events.
    let mut writer = trace::TraceWriter::new(&system, 0);
    let mut go_on = |_: u64, _: u64| true;
    criticore::sim::simulate_into(&system, SchedulerKind::Pfp, &SimConfig { record_jobs: true, record_segments: true, ..SimConfig::new(5_000_000) }, &mut writer, &mut go_on).unwrap();
    let streamed = writer.take() + &writer.finish();
    let sorted = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut e: Vec<String> = v["traceEvents"].as_array().unwrap().iter().map(|x| x.to_string()).collect();
        e.sort();
        e
    };
    assert_eq!(sorted(&streamed), sorted(&trace::perfetto_json(&system, &r)));
    // b has no runnables: its slice is the job's alone.
    let doc: serde_json::Value = serde_json::from_str(&trace::perfetto_json(&system, &r)).unwrap();
    assert_eq!(doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "job").count(), 3);
}

/// A runnable's drawn time (issue 27, Build 1: execution needs as
/// distributions, kept for the simulator's draws; docs/format.md `runnables`).
#[test]
fn a_runnable_s_draw_is_read_with_its_estimators_and_refused_by_field() {
    use criticore::model::need::{Draw, Need};
    let s = parse("runnables = [{ name = \"w\", pet = \"561ns\", min = \"427ns\", mean = \"442ns\", draw = \"weibull\", p_remain = 5e-7 }, { name = \"u\", pet = \"3us\", min = \"1us\", draw = \"uniform\" }, { name = \"c\", pet = \"1us\" }]\n").unwrap();
    let r = &s.tasks[0].runnables;
    assert_eq!(r[0].need, Some(Need::weibull(427, 442.0, 561, 5e-7).unwrap()));
    assert!(matches!(r[0].need.unwrap().draw, Draw::Weibull { .. }));
    assert_eq!(r[1].need, Some(Need::uniform(1_000)));
    assert_eq!(r[2].need, None);
    // The PET is still the runnables' upper bounds summed.
    assert_eq!(s.tasks[0].pet_ns.highest(), Some(561 + 3_000 + 1_000));
    let err = |runnable: &str| parse(&format!("runnables = [{{ name = \"a\", pet = \"10us\", {runnable} }}]\n")).unwrap_err();
    assert_eq!(err("min = \"2us\""), ("task[0].runnables[0].min".into(), "needs a `draw` (uniform or weibull): without one the runnable always takes its PET".into()));
    assert_eq!(err("min = \"11us\", draw = \"uniform\""), ("task[0].runnables[0].min".into(), "11us, above the PET (10us)".into()));
    assert_eq!(err("min = \"2us\", draw = \"gauss\"").0, "task[0].runnables[0].draw");
    assert_eq!(err("min = \"2us\", mean = \"3us\", draw = \"uniform\"").0, "task[0].runnables[0].mean");
    assert_eq!(err("min = \"2us\", draw = \"weibull\", p_remain = 0.001").0, "task[0].runnables[0].mean");
    assert!(err("min = \"2us\", mean = \"12us\", draw = \"weibull\", p_remain = 0.001").1.contains("strictly between min"));
    assert_eq!(err("min = \"2us\", mean = \"3us\", draw = \"weibull\", p_remain = 1.5").0, "task[0].runnables[0].p_remain");
}

#[test]
fn drawn_runs_take_each_runnable_from_its_distribution() {
    use criticore::policy::SchedulerKind;
    use criticore::sim::{simulate, trace, ExecModel, SimConfig};
    use criticore::model::Level;
    // One task every 10 µs: w (Weibull 427 / 442 / 561 ns), u (uniform
    // 1-3 µs), c (1 µs); 4,000 jobs. Each job runs at least 427 + 1,000 +
    // 1,000 and at most its PET 4,561 ns; on average 442 + 2,000 + 1,000 =
    // 3,442 ns less the floors' half nanosecond per draw (the uniform draw
    // of whole ns in [1,000, 3,000] averages 2,000). The PET run is 4,561 every time.
    let text = "[platform]\ncores = 1\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"10us\"\n\
        runnables = [{ name = \"w\", pet = \"561ns\", min = \"427ns\", mean = \"442ns\", draw = \"weibull\", p_remain = 5e-7 }, { name = \"u\", pet = \"3us\", min = \"1us\", draw = \"uniform\" }, { name = \"c\", pet = \"1us\" }]\n";
    let system = parse_task_system(text, Format::Toml, "r.toml").unwrap();
    let config = |exec| SimConfig { record_jobs: true, exec, seed: 7, ..SimConfig::new(40_000_000) };
    let drawn = simulate(&system, SchedulerKind::Pfp, &config(ExecModel::Drawn(Level::C))).unwrap();
    let execs: Vec<u64> = drawn.records.iter().map(|j| j.exec_ns).collect();
    assert_eq!(execs.len(), 4_000);
    assert!(execs.iter().all(|&e| (2_427..=4_561).contains(&e)), "{:?}", (execs.iter().min(), execs.iter().max()));
    let mean = execs.iter().sum::<u64>() as f64 / execs.len() as f64;
    // σ of one job ≤ 600 ns (the uniform's 577 with the Weibull's ~12): the mean of 4,000 within 4σ/√4000 ≈ 38 ns.
    assert!((mean - (3_442.0 - 0.5)).abs() < 38.0, "{mean}");
    // Not all alike: the draws vary job to job.
    assert!(execs.iter().any(|&e| e != execs[0]));
    let pet = simulate(&system, SchedulerKind::Pfp, &config(ExecModel::Pet(Level::C))).unwrap();
    assert!(pet.records.iter().all(|j| j.exec_ns == 4_561));
    // The same seed draws the same jobs; the trace names each runnable over its drawn time.
    let again = simulate(&system, SchedulerKind::Pfp, &SimConfig { record_segments: true, ..config(ExecModel::Drawn(Level::C)) }).unwrap();
    assert_eq!(again.records.iter().map(|j| j.exec_ns).collect::<Vec<_>>(), execs);
    let steps: Vec<(String, f64)> = common::runnable_slices(&trace::perfetto_json(&system, &again)).into_iter().map(|(name, _, dur)| (name, dur)).collect();
    // Job 1 alone on its core: its three slices add up to its time, c's is 1 µs.
    let first: f64 = steps[..3].iter().map(|(_, d)| d).sum();
    assert!((first - execs[0] as f64 / 1_000.0).abs() < 1e-9, "{steps:?}");
    assert_eq!((steps[2].0.as_str(), steps[2].1), ("c", 1.0));
}

#[test]
fn a_cooperative_job_yields_where_its_drawn_runnable_ends() {
    use criticore::policy::SchedulerKind;
    use criticore::sim::{simulate, ExecModel, SimConfig};
    use criticore::model::Level;
    // l cooperative: a (uniform 1-4 µs) then b (2 µs); h (1 µs, above it)
    // released at 0.5 µs waits for a's end, which is l's time less b's.
    let text = "[platform]\ncores = 1\n\
        [[task]]\nname = \"h\"\ncore = 0\npriority = 2\nperiod = \"20us\"\noffset = \"500ns\"\npet = \"1us\"\n\
        [[task]]\nname = \"l\"\ncore = 0\npriority = 1\nperiod = \"20us\"\npreemption = \"cooperative\"\nrunnables = [{ name = \"a\", pet = \"4us\", min = \"1us\", draw = \"uniform\" }, { name = \"b\", pet = \"2us\" }]\n";
    let system = parse_task_system(text, Format::Toml, "r.toml").unwrap();
    let r = simulate(&system, SchedulerKind::Pfp, &SimConfig { record_jobs: true, exec: ExecModel::Drawn(Level::C), seed: 3, ..SimConfig::new(2_000_000) }).unwrap();
    let (h, l): (Vec<&criticore::sim::job::JobRecord>, Vec<_>) = r.records.iter().partition(|j| j.task == 0);
    assert_eq!(h.len(), l.len());
    let mut ends = std::collections::BTreeSet::new();
    for (h, l) in h.iter().zip(&l) {
        let a_end = l.release_ns + l.exec_ns - 2_000;
        assert_eq!(h.finish_ns, a_end + 1_000, "job {}: l ran {} ns", l.number, l.exec_ns);
        ends.insert(a_end - l.release_ns);
    }
    // The draws moved the preemption point (a's time, 1-4 µs).
    assert!(ends.len() > 10 && ends.iter().all(|e| (1_000..=4_000).contains(e)), "{ends:?}");
}

#[test]
fn a_runnable_s_need_in_ticks_is_cycles_at_the_platform_clock() {
    let with_clock = |task: &str| {
        parse_task_system(&format!("[platform]\ncores = 1\nclock = \"200MHz\"\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"10ms\"\n{task}"), Format::Toml, "r.toml").map_err(|e| (e.field, e.reason))
    };
    // WATERS 2017's first runnable: 427 ticks at 200 MHz = 2,135 ns; 3 ticks
    // of 5 ns = 15 ns; 1 tick at 3 GHz would be 1/3 ns, rounded up to 1.
    let s = with_clock("runnables = [{ name = \"a\", ticks = 427 }, { name = \"b\", ticks = 3 }]\n").unwrap();
    assert_eq!(s.tasks[0].runnables.iter().map(|r| r.pet_ns).collect::<Vec<_>>(), [2_135, 15]);
    assert_eq!(s.tasks[0].pet_ns.highest(), Some(2_150));
    let fast = parse_task_system("[platform]\ncores = 1\nclock = \"3GHz\"\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"1ms\"\nrunnables = [{ name = \"a\", ticks = 1 }]\n", Format::Toml, "r.toml").unwrap();
    assert_eq!(fast.tasks[0].pet_ns.highest(), Some(1));
    // Refused by field.
    assert_eq!(with_clock("runnables = [{ name = \"a\", ticks = 4, pet = \"1us\" }]\n").unwrap_err(), ("task[0].runnables[0].ticks".into(), "give one of pet, ticks or instructions, not pet and ticks".into()));
    assert_eq!(with_clock("runnables = [{ name = \"a\", ticks = -4 }]\n").unwrap_err().0, "task[0].runnables[0].ticks");
    assert_eq!(parse("runnables = [{ name = \"a\", ticks = 4 }]\n").unwrap_err(), ("task[0].runnables[0].ticks".into(), "ticks are cycles of the cores' clock: give platform.clock".into()));
}

#[test]
fn a_runnable_s_need_in_instructions_is_cycles_at_the_platform_s_instructions_per_cycle() {
    let with = |platform: &str, task: &str| {
        parse_task_system(&format!("[platform]\ncores = 1\n{platform}[[task]]\nname = \"t\"\ncore = 0\nperiod = \"10ms\"\n{task}"), Format::Toml, "r.toml").map_err(|e| (e.field, e.reason))
    };
    let pets = |s: criticore::model::TaskSystem| s.tasks[0].runnables.iter().map(|r| r.pet_ns).collect::<Vec<_>>();
    // One instruction per cycle when not given: 427 instructions at 200 MHz are 427 ticks, 2,135 ns.
    assert_eq!(pets(with("clock = \"200MHz\"\n", "runnables = [{ name = \"a\", instructions = 427 }]\n").unwrap()), [2_135]);
    // Two per cycle: 213.5 cycles of 5 ns = 1,067.5, rounded up once to 1,068.
    assert_eq!(pets(with("clock = \"200MHz\"\ninstructions_per_cycle = 2\n", "runnables = [{ name = \"a\", instructions = 427 }]\n").unwrap()), [1_068]);
    // 0.85 per cycle is 85/100: 1,000 instructions are 20,000/17 cycles, 100,000/17 = 5,882.35 ns, so 5,883.
    assert_eq!(pets(with("clock = \"200MHz\"\ninstructions_per_cycle = 0.85\n", "runnables = [{ name = \"a\", instructions = 1000 }]\n").unwrap()), [5_883]);
    // Exact where binary floating point is not: 3 / 0.1 is 30.000000000000004 in f64, 30 cycles = 30 ns at 1 GHz.
    assert_eq!(pets(with("clock = \"1GHz\"\ninstructions_per_cycle = 0.1\n", "runnables = [{ name = \"a\", instructions = 3 }]\n").unwrap()), [30]);
    // Refused by field.
    let ipc = |v: &str| with(&format!("clock = \"1GHz\"\ninstructions_per_cycle = {v}\n"), "pet = \"1us\"\n").unwrap_err();
    assert_eq!(ipc("0").0, "platform.instructions_per_cycle");
    assert_eq!(ipc("-1.5").0, "platform.instructions_per_cycle");
    assert_eq!(ipc("\"fast\"").1, "expected a positive number (e.g. 1 or 0.85), got a string");
    assert_eq!(
        with("", "runnables = [{ name = \"a\", instructions = 4 }]\n").unwrap_err(),
        ("task[0].runnables[0].instructions".into(), "instructions run at platform.instructions_per_cycle per cycle of the cores' clock: give platform.clock".into())
    );
    assert_eq!(
        with("clock = \"1GHz\"\n", "runnables = [{ name = \"a\", ticks = 4, instructions = 4 }]\n").unwrap_err(),
        ("task[0].runnables[0].instructions".into(), "give one of pet, ticks or instructions, not ticks and instructions".into())
    );
    assert_eq!(with("clock = \"1GHz\"\n", "runnables = [{ name = \"a\", instructions = 2.5 }]\n").unwrap_err().0, "task[0].runnables[0].instructions");
}
