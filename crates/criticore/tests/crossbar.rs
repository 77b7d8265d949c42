//! Scratchpad platforms (issue 27, Build 3; docs/format.md
//! `[[platform.memory]]`, `[[label]]`; docs/memory-model.md "Scratchpad
//! platforms"): memories behind a crossbar with a port each, labels placed
//! in them, runnables' label accesses. Two cores at 1 GHz (a cycle is 1 ns),
//! worked by hand: the simulator's fluid rates, the analysis's worst waits,
//! and the fields' errors.

use criticore::analysis::classic::analyze;
use criticore::model::Level;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, MemoryKind, SimConfig, SimResult};
use criticore::{parse_task_system, Format, TaskSystem};

/// GRAM (global, 10 cycles from both cores) and LRAM0 (core 0's: 1 cycle
/// from it, 9 from core 1), 4-byte accesses; labels g, g2 (4 B) in GRAM,
/// l (4 B) and wide (16 B: 4 accesses each) in LRAM0.
fn platform(arbiter: &str) -> String {
    format!(
        "[platform]\ncores = 2\nclock = \"1GHz\"\n\
         [[platform.memory]]\nname = \"GRAM\"\nsize = \"1KiB\"\nlatency_cycles = 10\narbiter = \"{arbiter}\"\n\
         [[platform.memory]]\nname = \"LRAM0\"\ncore = 0\nsize = \"1KiB\"\nlatency_cycles = [1, 9]\n\
         [[label]]\nname = \"g\"\nsize = \"4B\"\nmemory = \"GRAM\"\n\
         [[label]]\nname = \"g2\"\nsize = \"4B\"\nmemory = \"GRAM\"\n\
         [[label]]\nname = \"l\"\nsize = \"4B\"\nmemory = \"LRAM0\"\n\
         [[label]]\nname = \"wide\"\nsize = \"16B\"\nmemory = \"LRAM0\"\n"
    )
}

/// A task whose accesses go where its runnables make them (explicit
/// communication: no copies).
fn task(name: &str, core: usize, offset_ns: u64, runnables: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\ncore = {core}\nperiod = \"10us\"\noffset = \"{offset_ns}ns\"\ncommunication = \"explicit\"\nrunnables = [{runnables}]\n")
}

fn parse(text: &str) -> Result<TaskSystem, (String, String)> {
    parse_task_system(text, Format::Toml, "x.toml").map_err(|e| (e.field, e.reason))
}

fn run(system: &TaskSystem) -> SimResult {
    let config = SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), ..SimConfig::new(10_000) };
    simulate(system, SchedulerKind::Pfp, &config).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The first job's response of task `i`.
fn response(r: &SimResult, i: u32) -> u64 {
    let j = r.records.iter().find(|j| j.task == i).unwrap();
    j.finish_ns - j.release_ns
}

fn bounds(system: &TaskSystem) -> Vec<Option<u64>> {
    analyze(system, SchedulerKind::Pfp).unwrap().tasks.iter().map(|t| t.bound_ns).collect()
}

#[test]
fn an_access_alone_costs_its_path_s_latency() {
    // a: 1 µs of work, 50 reads of g (10 cycles each) and 10 writes of wide
    // in its own LRAM0 (4 accesses of 1 cycle each): 1,000 + 500 + 40.
    // b on core 1 reads l 20 times (9 cycles: LRAM0 is core 0's), after a.
    let text = platform("round-robin") + &task("a", 0, 0, "{ name = \"A\", pet = \"1us\", reads = { g = 50 }, writes = { wide = 10 } }") + &task("b", 1, 2_000, "{ name = \"B\", pet = \"1us\", reads = { l = 20 } }");
    let system = parse(&text).unwrap();
    let r = run(&system);
    assert_eq!((response(&r, 0), response(&r, 1)), (1_540, 1_180));
    // The analysis (pfp, port waits per window): a's reads of g wait for
    // none (b uses only LRAM0). First round, no bounds yet: each of a's 40
    // LRAM0 accesses waits for one of b's (9): 1,000 + 540 + 360 = 1,900;
    // each of b's 20 for one of a's (1): 1,000 + 180 + 20 = 1,200. Second
    // round: in a's window of 1,900 b issues at most ⌈(1,900 + 1,200) /
    // 10,000⌉ × 20 = 20 accesses, so a waits for 20 of them: 1,000 + 540 +
    // 180 = 1,720; b's 20 still wait for a's (40 in its window). The third
    // round changes nothing. Each runnable with accesses gets 1 ns more
    // (the simulator times events in whole ns; docs/analysis.md).
    assert_eq!(bounds(&system), [Some(1_720 + 1), Some(1_200 + 1)]);
    // `--explain`: a's row shows the file's PET; its window is that PET, its
    // accesses' latency (540, and the 1 ns) and its 180 ns of port waits.
    let a = analyze(&system, SchedulerKind::Pfp).unwrap().tasks.into_iter().find(|t| t.task == "a").unwrap();
    let terms = a.terms.unwrap();
    assert_eq!((a.pet_ns, terms.own_pet_ns, terms.access_ns, terms.port_wait_ns, terms.contention_ns), (1_000, 1_000, 541, 180, 0));
    assert_eq!(terms.window_ns(), 1_721);
    // Any other scheduler charges each access its worst wait (one access of every other user).
    let gfp = analyze(&system, SchedulerKind::Gfp).unwrap();
    assert!(gfp.notes.iter().any(|n| n.contains("its worst wait at the memory's port")), "{:?}", gfp.notes);
}

#[test]
fn two_cores_at_one_port_wait_for_each_other() {
    // a and b each 1 µs with 50 accesses to GRAM (10 ns), released together.
    // Each spends u = 0.05 (10 + W) of waiting and latency per ns of work;
    // the other is at the port for u / (1 + u) of its time, so W = 10 u /
    // (1 + u) and u = 0.5 + 0.5 u / (1 + u): u² = 0.5, the response
    // 1,000 (1 + √0.5) = 1,707.1 ns. Alone 1,500; the analysis's bound
    // 1,000 + 50 × (10 + 10) = 2,000.
    let text = platform("round-robin") + &task("a", 0, 0, "{ name = \"A\", pet = \"1us\", reads = { g = 50 } }") + &task("b", 1, 0, "{ name = \"B\", pet = \"1us\", writes = { g2 = 50 } }");
    let system = parse(&text).unwrap();
    let r = run(&system);
    let want = 1_000.0 * (1.0 + 0.5f64.sqrt());
    for i in 0..2 {
        assert!((response(&r, i) as f64 - want).abs() <= 1.0, "{} vs {want}", response(&r, i));
    }
    // (+1 ns per runnable with accesses: the simulator's whole-ns event times, docs/analysis.md.)
    assert_eq!(bounds(&system), [Some(2_000 + 1), Some(2_000 + 1)]);
}

#[test]
fn a_runnable_s_accesses_wait_only_while_it_runs() {
    // a: R1 (1 µs, 100 reads of g: 2 µs alone) then R2 (1 µs, none); b
    // (1 µs, 100 writes of g2) released at 2 µs, while a runs R2: neither
    // waits. Spread over a's whole job, a's accesses would slow both.
    let text = platform("round-robin")
        + &task("a", 0, 0, "{ name = \"R1\", pet = \"1us\", reads = { g = 100 } }, { name = \"R2\", pet = \"1us\" }")
        + &task("b", 1, 2_000, "{ name = \"B\", pet = \"1us\", writes = { g2 = 100 } }");
    let system = parse(&text).unwrap();
    let r = run(&system);
    assert_eq!((response(&r, 0), response(&r, 1)), (3_000, 2_000));
}

#[test]
fn a_fixed_priority_port_bounds_only_its_highest_core() {
    // Core 0 first at GRAM: a waits at most for one of b's accesses under
    // way (10), so 1,000 + 50 × 20; b may wait behind a for as long as a
    // issues: no bound, refused in one line naming the port's arbiter.
    let text = platform("fixed-priority") + &task("a", 0, 0, "{ name = \"A\", pet = \"1us\", reads = { g = 50 } }") + &task("b", 1, 0, "{ name = \"B\", pet = \"1us\", writes = { g2 = 50 } }");
    let system = parse(&text).unwrap();
    let e = analyze(&system, SchedulerKind::Pfp).unwrap_err();
    assert_eq!(e.field, "platform.memory[0].arbiter");
    assert!(e.reason.contains("task \"b\" on core 1 may wait without bound"), "{}", e.reason);
    // Simulated: a ahead of b at every access, b's rate the lower.
    let r = run(&system);
    assert!(response(&r, 0) < response(&r, 1), "{} {}", response(&r, 0), response(&r, 1));
    assert!(response(&r, 0) <= 2_000 && response(&r, 0) > 1_500, "{}", response(&r, 0));
    // Without b at GRAM, a's bound is its latency alone.
    let alone = platform("fixed-priority") + &task("a", 0, 0, "{ name = \"A\", pet = \"1us\", reads = { g = 50 } }") + &task("b", 1, 0, "{ name = \"B\", pet = \"1us\" }");
    assert_eq!(bounds(&parse(&alone).unwrap()), [Some(1_500 + 1), Some(1_000)]);
}

#[test]
fn the_transaction_model_refuses_a_scratchpad_platform() {
    let system = parse(&(platform("round-robin") + &task("a", 0, 0, "{ name = \"A\", pet = \"1us\", reads = { g = 5 } }"))).unwrap();
    let config = SimConfig { memory_kind: MemoryKind::Transaction { quantum_ns: 1_000 }, ..SimConfig::new(10_000) };
    let e = simulate(&system, SchedulerKind::Pfp, &config).unwrap_err();
    assert_eq!(e.field, "platform.memory");
    assert!(e.reason.contains("the transaction model has no crossbar"), "{}", e.reason);
}

#[test]
fn scratchpad_fields_are_refused_by_field() {
    let base = platform("round-robin");
    let cases: [(String, &str, &str); 8] = [
        (base.replace("clock = \"1GHz\"\n", ""), "platform.clock", "missing: memories' latencies are in cycles"),
        (base.replace("latency_cycles = [1, 9]", "latency_cycles = [1]"), "platform.memory[1].latency_cycles", "one latency per core: expected 2, got 1"),
        (base.replace("arbiter = \"round-robin\"", "arbiter = \"tdma\""), "platform.memory[0].arbiter", "unknown arbiter \"tdma\" (expected one of: round-robin, fcfs, fixed-priority)"),
        (base.replace("name = \"LRAM0\"\ncore = 0", "name = \"GRAM\"\ncore = 0"), "platform.memory[1].name", "duplicate memory name \"GRAM\""),
        (base.replace("memory = \"GRAM\"", "memory = \"DRAM\""), "label[0].memory", "no memory named \"DRAM\""),
        (base.replace("name = \"g2\"", "name = \"g\""), "label[1].name", "duplicate label name \"g\""),
        (base.replace("size = \"16B\"", "size = \"1021B\""), "label[3].memory", "the labels placed in \"LRAM0\" take 1025 B by here, more than its 1024 B"),
        (base.clone() + &task("a", 0, 0, "{ name = \"A\", pet = \"1us\", reads = { h = 1 } }"), "task[0].runnables[0].reads.h", "no label named \"h\""),
    ];
    for (text, field, reason) in cases {
        let (f, r) = parse(&text).unwrap_err();
        assert_eq!(f, field, "{r}");
        assert!(r.contains(reason), "{f}: {r}");
    }
    let memory = base.clone() + "[[task]]\nname = \"m\"\ncore = 0\nperiod = \"1ms\"\npet = \"1us\"\nmemory = { wss = \"64KiB\", accesses_per_ms = 100 }\n";
    assert_eq!(parse(&memory).unwrap_err().0, "task[0].memory");
    let no_memories = "[platform]\ncores = 1\n[[label]]\nname = \"x\"\nsize = \"4B\"\nmemory = \"GRAM\"\n";
    assert!(parse(no_memories).unwrap_err().1.contains("the platform has no memories"));
}

#[test]
fn implicit_communication_copies_the_labels_into_the_nearest_memory() {
    // a on core 0, implicit (the default): its copies live in LRAM0 (1
    // cycle from core 0). Copy-in of g (read): one read of GRAM (10) and one
    // write of LRAM0 (1), a cycle of computation each: 2 + 11 = 13 ns. A:
    // 1,000 ns, its 50 reads of g and 10 writes of wide (4 words) at the
    // copies in LRAM0: 90 accesses of 1 cycle, 1,090 ns. Copy-out of wide
    // (written): 4 reads of the copy and 4 writes of LRAM0: 8 + 8 = 16 ns.
    let text = platform("round-robin") + "[[task]]\nname = \"a\"\ncore = 0\nperiod = \"10us\"\nrunnables = [{ name = \"A\", pet = \"1us\", reads = { g = 50 }, writes = { wide = 10 } }]\n";
    let system = parse(&text).unwrap();
    let a = &system.tasks[0];
    assert_eq!((a.copy_in_ns, a.copy_out_ns, a.pet_ns.highest()), (2, 8, Some(1_010)));
    assert_eq!(a.steps(), [("copy-in", 2), ("A", 1_000), ("copy-out", 8)]);
    let r = run(&system);
    assert_eq!(response(&r, 0), 13 + 1_090 + 16);
    // The bound: the same, and 1 ns per phase with accesses (copy-in, A, copy-out).
    assert_eq!(bounds(&system), [Some(1_119 + 3)]);
    // Split: the file's PET (copies' computation 2 + 8, A 1,000) and the
    // accesses' latency (copy-in 11, A 90, copy-out 8, and 1 ns each).
    let terms = analyze(&system, SchedulerKind::Pfp).unwrap().tasks[0].terms.unwrap();
    assert_eq!((terms.own_pet_ns, terms.access_ns, terms.port_wait_ns), (1_010, 12 + 91 + 9, 0));
    // A job shorter than its PET keeps its copies whole and shortens A
    // (docs/simulator.md): given 505 ns, A runs 495 ns with its 90
    // accesses, and the copies as above: 13 + 585 + 16. (With the phases at
    // their PETs the job would end inside A, its copy-out never run: 561.)
    let given = SimConfig { record_jobs: true, exec: ExecModel::Pet(Level::C), given_exec_ns: vec![vec![505]], ..SimConfig::new(10_000) };
    let short = simulate(&system, SchedulerKind::Pfp, &given).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(response(&short, 0), 13 + 585 + 16);
    // Explicit: the accesses where A makes them (1,540 ns, as above).
    let explicit = parse(&text.replace("\"a\"\ncore = 0\n", "\"a\"\ncore = 0\ncommunication = \"explicit\"\n")).unwrap();
    assert_eq!(response(&run(&explicit), 0), 1_540);
    // Copies stated for a task whose copies come from its labels: refused by field.
    let stated = parse(&text.replace("\"a\"\ncore = 0\n", "\"a\"\ncore = 0\ncopy_in = \"1us\"\n")).unwrap_err();
    assert_eq!(stated.0, "task[0].copy_in");
    assert!(stated.1.contains("communication = \"explicit\""), "{}", stated.1);
    // The copies take room in LRAM0 beside its labels: l and wide (20 B) and
    // a's copies of g and wide (20 B) fit 40 B exactly, not 39.
    assert!(parse(&text.replace("size = \"1KiB\"\nlatency_cycles = [1, 9]", "size = \"40B\"\nlatency_cycles = [1, 9]")).is_ok());
    let full = parse(&text.replace("size = \"1KiB\"\nlatency_cycles = [1, 9]", "size = \"39B\"\nlatency_cycles = [1, 9]")).unwrap_err();
    assert_eq!(full.0, "task[0].communication");
    assert!(full.1.starts_with("task \"a\"'s copies of the labels it reads and writes do not fit in \"LRAM0\" (39 B"), "{}", full.1);
    // Explicit communication makes no copies: 20 B fit.
    assert!(parse(&text.replace("size = \"1KiB\"\nlatency_cycles = [1, 9]", "size = \"20B\"\nlatency_cycles = [1, 9]").replace("\"a\"\ncore = 0\n", "\"a\"\ncore = 0\ncommunication = \"explicit\"\n")).is_ok());
}
