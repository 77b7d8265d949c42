//! Runnables (issue 27, Build 2): a task's named steps, in order, whose PETs
//! make the task's.

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
    let doc: serde_json::Value = serde_json::from_str(&trace::perfetto_json(&system, &r)).unwrap();
    let slices: Vec<(String, f64, f64)> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "runnable")
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
        .collect();
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
    assert_eq!(doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "job").count(), 3);
}
