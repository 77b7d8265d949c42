//! Label placement on a scratchpad platform (issue 27, Build 7;
//! docs/optimizer.md "Label placement"), worked by hand at 1 GHz (a cycle
//! is 1 ns): GRAM 10 cycles from both cores, LRAM0 1 cycle from core 0 (9
//! from core 1), 4-byte accesses. The pfp bound of a task alone is its
//! computation, its accesses' latency and 1 ns per phase with accesses
//! (docs/analysis.md, "Scratchpad platforms").

use criticore::optimize::labels::{place_labels, Objective};
use criticore::{parse_task_system, Format, TaskSystem};

fn system(communication: &str, lram0: &str, extra_label: &str) -> TaskSystem {
    let text = format!(
        "[platform]\ncores = 2\nclock = \"1GHz\"\n\
         [[platform.memory]]\nname = \"GRAM\"\nsize = \"1KiB\"\nlatency_cycles = 10\n\
         [[platform.memory]]\nname = \"LRAM0\"\ncore = 0\nsize = \"{lram0}\"\nlatency_cycles = [1, 9]\n\
         [[label]]\nname = \"g\"\nsize = \"4B\"\nmemory = \"GRAM\"\n{extra_label}\
         [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10us\"\ncommunication = \"{communication}\"\n\
         runnables = [{{ name = \"A\", pet = \"1us\", reads = {{ g = 100 }} }}]\n"
    );
    parse_task_system(&text, Format::Toml, "p.toml").unwrap()
}

fn never_stop(_: usize, _: usize) -> bool {
    true
}

#[test]
fn a_label_moves_to_the_memory_nearest_its_reader() {
    // Explicit: 1,000 + 100 reads of g at 10 cycles + 1 = 2,001 ns of 10 µs;
    // in LRAM0, 1,000 + 100 + 1 = 1,101.
    let p = place_labels(&system("explicit", "1KiB", ""), Objective::Response, 10, &mut never_stop).unwrap();
    assert_eq!((p.before.worst, p.after.worst), (0.2001, 0.1101));
    assert_eq!(p.moves.len(), 1);
    assert_eq!((p.moves[0].label.as_str(), p.moves[0].from.as_str(), p.moves[0].to.as_str()), ("g", "GRAM", "LRAM0"));
    assert_eq!(p.system.labels[0].memory, 1);
    // Implicit: the runnable reads the copy in LRAM0 either way (1,000 +
    // 100 + 1); only the copy-in moves: a read of g and a write of the copy,
    // 2 cycles of computation, 10 + 1 of latency, + 1 = 14, or 2 + 2 + 1 = 5.
    let p = place_labels(&system("implicit", "1KiB", ""), Objective::Response, 10, &mut never_stop).unwrap();
    assert_eq!((p.before.worst, p.after.worst), (0.1115, 0.1106));
    assert_eq!(p.system.tasks[0].copy_in_ns, 2);
}

#[test]
fn a_label_stays_where_it_does_not_fit_and_nothing_gets_worse() {
    // LRAM0 holds 1 KiB, 1,021 B of it another label's: g (4 B) cannot move.
    let full = system("explicit", "1KiB", "[[label]]\nname = \"big\"\nsize = \"1021B\"\nmemory = \"LRAM0\"\n");
    let p = place_labels(&full, Objective::Response, 10, &mut never_stop).unwrap();
    assert!(p.moves.is_empty());
    assert_eq!(p.before, p.after);
    assert_eq!(p.system.labels, full.labels);
    // Implicit: a's copy of g (4 B) lives in LRAM0 too, so with 1,016 B of
    // another label there g fits beside its copy (1,016 + 4 + 4 = 1,024),
    // and with 1,017 B it does not.
    let p = place_labels(&system("implicit", "1KiB", "[[label]]\nname = \"big\"\nsize = \"1016B\"\nmemory = \"LRAM0\"\n"), Objective::Response, 10, &mut never_stop).unwrap();
    assert_eq!(p.moves.len(), 1);
    let tight = system("implicit", "1KiB", "[[label]]\nname = \"big\"\nsize = \"1017B\"\nmemory = \"LRAM0\"\n");
    let p = place_labels(&tight, Objective::Response, 10, &mut never_stop).unwrap();
    assert!(p.moves.is_empty());
}

#[test]
fn the_chain_objective_needs_a_chain_and_the_search_stops_when_told() {
    let e = place_labels(&system("explicit", "1KiB", ""), Objective::Chain, 10, &mut never_stop).err().unwrap();
    assert_eq!(e.field, "chain");
    // Stopped before any placement is tried: the file's, unchanged.
    let p = place_labels(&system("explicit", "1KiB", ""), Objective::Response, 10, &mut |_, _| false).unwrap();
    assert!(p.moves.is_empty() && p.analyses == 1);
}
