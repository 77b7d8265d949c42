//! One test per input-validation rule of docs/format.md: each feeds a small file
//! to `parse_task_system` and checks the exact field path, a key phrase of the
//! reason and the file name the error carries. The last tests check that a
//! valid file is read field by field as written, in TOML and in JSON.

use criticore::model::{
    AccessPattern, Allocation, Arrival, Arbiter, Bus, Dram, MemoryPhase, Level, LevelPets, Llc, MemoryProfile, Partition, Platform, Task,
};
use criticore::{parse_task_system, Format, InputError, TaskSystem};

const FILE: &str = "sys.toml";

fn parse(text: &str) -> Result<TaskSystem, InputError> {
    parse_task_system(text, Format::Toml, FILE)
}

/// Parse `text`, expect an error at exactly `field` whose reason contains `phrase`.
#[track_caller]
fn assert_rejected_as(text: &str, format: Format, field: &str, phrase: &str) -> InputError {
    let err = match parse_task_system(text, format, FILE) {
        Ok(system) => panic!("expected an error at {field}, but the file parsed: {system:?}"),
        Err(e) => e,
    };
    assert_eq!(err.file, FILE, "{err}");
    assert_eq!(err.field, field, "wrong field in: {err}");
    assert!(err.reason.contains(phrase), "reason of {err} should contain {phrase:?}");
    err
}

#[track_caller]
fn assert_rejected(text: &str, field: &str, phrase: &str) -> InputError {
    assert_rejected_as(text, Format::Toml, field, phrase)
}

/// A two-core platform followed by `rest`.
fn two_cores(rest: &str) -> String {
    format!("[platform]\ncores = 2\n\n{rest}")
}

/// A valid Level-C task, to put in front of the task under test so that it is task[1].
const OK_C_TASK: &str = r#"
[[task]]
name = "ok"
level = "C"
period = "10ms"
pet = { C = "1ms" }
"#;

// ---------------------------------------------------------------- missing fields

#[test]
fn missing_platform_is_rejected_naming_platform() {
    let text = r#"
[[task]]
name = "c"
level = "C"
period = "10ms"
pet = { C = "1ms" }
"#;
    assert_rejected(text, "platform", "missing required field");
    // An empty file lacks it too.
    assert_rejected("", "platform", "missing required field");
}

#[test]
fn missing_core_count_is_rejected_naming_platform_cores() {
    assert_rejected("[platform]\nllc = { ways = 16 }\n", "platform.cores", "missing required field");
}

#[test]
fn missing_task_name_is_rejected_naming_the_task() {
    let text = two_cores(&format!(
        "{OK_C_TASK}\n[[task]]\nlevel = \"C\"\nperiod = \"10ms\"\npet = {{ C = \"1ms\" }}\n"
    ));
    assert_rejected(&text, "task[1].name", "missing required field");
}

#[test]
fn empty_task_name_is_rejected() {
    let text = two_cores("[[task]]\nname = \"  \"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].name", "must not be empty");
}

#[test]
fn task_without_level_is_outside_mc2_with_criticality_zero() {
    let text = two_cores("[[task]]\nname = \"x\"\nperiod = \"10ms\"\npet = \"1ms\"\n");
    let system = parse_task_system(&text, Format::Toml, "sys.toml").unwrap();
    let t = &system.tasks[0];
    assert_eq!((t.level, t.criticality), (None, 0));
    // A single duration is the same PET at every level.
    assert_eq!(t.pet_ns, LevelPets([Some(1_000_000); 4]));
}

#[test]
fn numeric_level_is_an_mcti_criticality() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = 2\ncore = 0\nperiod = \"10ms\"\npet = \"1ms\"\n");
    let system = parse_task_system(&text, Format::Toml, "sys.toml").unwrap();
    assert_eq!((system.tasks[0].level, system.tasks[0].criticality), (None, 2));
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = -1\nperiod = \"10ms\"\npet = \"1ms\"\n");
    assert_rejected(&text, "task[0].level", "non-negative integer");
}

#[test]
fn missing_period_is_rejected_naming_the_task() {
    let text = two_cores(&format!("{OK_C_TASK}\n[[task]]\nname = \"x\"\nlevel = \"C\"\npet = {{ C = \"1ms\" }}\n"));
    assert_rejected(&text, "task[1].period", "missing required field");
}

#[test]
fn missing_pet_table_is_rejected_naming_the_task() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"B\"\ncore = 1\nperiod = \"10ms\"\n");
    assert_rejected(&text, "task[0].pet", "missing required field");
}

// ---------------------------------------------------------------- unknown fields

#[test]
fn unknown_root_field_is_rejected_naming_it() {
    // Before [platform], so that the key belongs to the root table.
    let text = "colour = \"blue\"\n[platform]\ncores = 2\n";
    assert_rejected(text, "colour", "unknown field");
}

#[test]
fn unknown_task_field_is_rejected_naming_task_and_field() {
    let text = two_cores(&format!(
        "{OK_C_TASK}\n[[task]]\nname = \"x\"\nlevel = \"C\"\nprio = 3\nperiod = \"10ms\"\npet = {{ C = \"1ms\" }}\n"
    ));
    assert_rejected(&text, "task[1].prio", "unknown field");
}

#[test]
fn unknown_llc_field_is_rejected_naming_the_nested_path() {
    let text = "[platform]\ncores = 2\nllc = { size = \"1MiB\", ways = 16, assoc = 4 }\n";
    assert_rejected(text, "platform.llc.assoc", "unknown field");
}

// ---------------------------------------------------------------- durations

#[test]
fn zero_period_is_rejected_as_not_positive() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"0ms\"\npet = { C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].period", "must be positive");
}

#[test]
fn negative_period_is_rejected_naming_the_field() {
    let text = two_cores(&format!(
        "{OK_C_TASK}\n[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"-5ms\"\npet = {{ C = \"1ms\" }}\n"
    ));
    assert_rejected(&text, "task[1].period", "must not be negative");
}

#[test]
fn zero_pet_is_rejected_naming_the_level_key() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"0ns\" }\n");
    assert_rejected(&text, "task[0].pet.C", "must be positive");
}

#[test]
fn duration_with_unknown_unit_is_rejected() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"100 parsecs\"\npet = { C = \"1ms\" }\n");
    let err = assert_rejected(&text, "task[0].period", "expected a duration with a unit");
    assert!(err.reason.contains("100 parsecs"), "{err}");
}

#[test]
fn duration_string_without_unit_is_rejected() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"100\"\npet = { C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].period", "expected a duration with a unit");
}

#[test]
fn bare_number_duration_is_rejected_as_needing_a_unit() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = 100\npet = { C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].period", "expected a duration string with a unit");
}

#[test]
fn fractional_nanoseconds_are_rejected() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"0.5ns\" }\n");
    assert_rejected(&text, "task[0].pet.C", "not a whole number of nanoseconds");
}

// ---------------------------------------------------------------- PETs and levels

#[test]
fn pet_increasing_from_b_to_c_is_rejected_on_the_pet_table() {
    // C = 3ms > B = 2ms: PETs decrease towards the more critical level B.
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"B\"\ncore = 0\nperiod = \"10ms\"\npet = { B = \"2ms\", C = \"3ms\" }\n",
    );
    let err = assert_rejected(&text, "task[0].pet", "must not decrease");
    assert!(err.reason.contains("C = 3ms") && err.reason.contains("B = 2ms"), "{err}");
}

#[test]
fn pet_increasing_from_a_to_b_is_rejected_even_when_c_is_fine() {
    // A = 4ms < B = 5ms, B ≥ C.
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\npet = { A = \"4ms\", B = \"5ms\", C = \"1ms\" }\n",
    );
    assert_rejected(&text, "task[0].pet", "must not decrease from level B to level A");
}

#[test]
fn decreasing_unmanaged_pets_are_rejected_on_pet_unmanaged() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\npet_unmanaged = { B = \"1ms\", C = \"2ms\" }\n",
    );
    assert_rejected(&text, "task[0].pet_unmanaged", "must not decrease");
}

#[test]
fn equal_pets_at_every_level_are_accepted() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\npet = { A = \"1ms\", B = \"1ms\", C = \"1ms\" }\n",
    );
    let system = parse(&text).unwrap();
    assert_eq!(system.tasks[0].pet_ns, LevelPets([Some(1_000_000), Some(1_000_000), Some(1_000_000), None]));
}

#[test]
fn unknown_level_is_rejected_naming_the_level_field() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"E\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].level", "unknown level \"E\"");
}

#[test]
fn lowercase_level_is_unknown() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"c\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].level", "unknown level \"c\"");
}

#[test]
fn unknown_pet_level_key_is_rejected_naming_the_key() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\", X = \"2ms\" }\n");
    assert_rejected(&text, "task[0].pet.X", "unknown level \"X\"");
}

#[test]
fn level_a_task_without_c_pet_is_rejected_naming_the_missing_level() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\npet = { A = \"3ms\", B = \"2ms\" }\n",
    );
    assert_rejected(&text, "task[0].pet.C", "a Level-A task needs a PET at level C");
}

#[test]
fn level_b_task_without_b_pet_is_rejected() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"B\"\ncore = 0\nperiod = \"10ms\"\npet = { C = \"2ms\" }\n");
    assert_rejected(&text, "task[0].pet.B", "a Level-B task needs a PET at level B");
}

#[test]
fn unmanaged_pets_need_the_same_levels() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"B\"\ncore = 0\nperiod = \"10ms\"\npet = { B = \"3ms\", C = \"2ms\" }\npet_unmanaged = { B = \"4ms\" }\n",
    );
    assert_rejected(&text, "task[0].pet_unmanaged.C", "needs a PET at level C");
}

// ---------------------------------------------------------------- cores

#[test]
fn core_out_of_range_is_rejected() {
    // Two cores: 0 and 1; core 2 does not exist.
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"B\"\ncore = 2\nperiod = \"10ms\"\npet = { B = \"2ms\", C = \"1ms\" }\n");
    let err = assert_rejected(&text, "task[0].core", "out of range");
    assert!(err.reason.contains("0–1"), "{err}");
}

#[test]
fn level_a_task_without_core_is_rejected() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"A\"\nperiod = \"10ms\"\npet = { A = \"3ms\", B = \"2ms\", C = \"1ms\" }\n",
    );
    assert_rejected(&text, "task[0].core", "needs a core");
}

#[test]
fn level_c_task_with_core_is_rejected() {
    let text = two_cores(&format!(
        "{OK_C_TASK}\n[[task]]\nname = \"x\"\nlevel = \"C\"\ncore = 0\nperiod = \"10ms\"\npet = {{ C = \"1ms\" }}\n"
    ));
    assert_rejected(&text, "task[1].core", "take no core");
}

#[test]
fn level_d_task_may_be_pinned_or_not() {
    let text = two_cores(
        "[[task]]\nname = \"d0\"\nlevel = \"D\"\ncore = 1\nperiod = \"10ms\"\npet = { D = \"1ms\" }\n\n[[task]]\nname = \"d1\"\nlevel = \"D\"\nperiod = \"10ms\"\npet = { D = \"1ms\" }\n",
    );
    let system = parse(&text).unwrap();
    assert_eq!(system.tasks[0].core, Some(1));
    assert_eq!(system.tasks[1].core, None);
}

// ---------------------------------------------------------------- period structure

#[test]
fn non_harmonic_periods_on_a_core_point_at_the_longer_period() {
    // Core 0 periods sorted: 10ms (task[0]), 20ms (task[2]), 50ms (task[1]).
    // 20 | 10? yes. 50 % 20 = 10 ≠ 0 → the pair (20ms, 50ms) fails; the longer is task[1].
    let text = two_cores(
        r#"
[[task]]
name = "a10"
level = "A"
core = 0
period = "10ms"
pet = { A = "1ms", B = "1ms", C = "1ms" }

[[task]]
name = "b50"
level = "B"
core = 0
period = "50ms"
pet = { B = "1ms", C = "1ms" }

[[task]]
name = "a20"
level = "A"
core = 0
period = "20ms"
pet = { A = "1ms", B = "1ms", C = "1ms" }
"#,
    );
    let err = assert_rejected(&text, "task[1].period", "not harmonic");
    assert!(err.reason.contains("\"a20\"") && err.reason.contains("core 0"), "{err}");
}

#[test]
fn non_harmonic_periods_on_different_cores_are_accepted() {
    // 20ms on core 0 and 30ms on core 1 never share a core.
    let text = two_cores(
        "[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\nperiod = \"20ms\"\npet = { A = \"1ms\", B = \"1ms\", C = \"1ms\" }\n\n\
         [[task]]\nname = \"b\"\nlevel = \"B\"\ncore = 1\nperiod = \"30ms\"\npet = { B = \"1ms\", C = \"1ms\" }\n",
    );
    assert!(parse(&text).is_ok());
}

#[test]
fn level_b_period_not_multiple_of_level_a_hyperperiod_is_rejected() {
    // Core 0: Level A 20ms, Level B 10ms. Harmonic (20 % 10 = 0) but the Level-A
    // hyperperiod is 20ms and 10ms is not a multiple of it.
    let text = two_cores(
        "[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\nperiod = \"20ms\"\npet = { A = \"1ms\", B = \"1ms\", C = \"1ms\" }\n\n\
         [[task]]\nname = \"b\"\nlevel = \"B\"\ncore = 0\nperiod = \"10ms\"\npet = { B = \"1ms\", C = \"1ms\" }\n",
    );
    assert_rejected(&text, "task[1].period", "not a multiple of core 0's Level-A hyperperiod 20ms");
}

#[test]
fn level_a_deadline_different_from_period_is_rejected() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\ndeadline = \"8ms\"\npet = { A = \"3ms\", B = \"2ms\", C = \"1ms\" }\n",
    );
    assert_rejected(&text, "task[0].deadline", "implicit deadlines");
}

#[test]
fn level_d_deadline_may_differ_from_period() {
    let text = two_cores("[[task]]\nname = \"x\"\nlevel = \"D\"\nperiod = \"10ms\"\ndeadline = \"25ms\"\npet = { D = \"1ms\" }\n");
    let system = parse(&text).unwrap();
    assert_eq!((system.tasks[0].period_ns, system.tasks[0].deadline_ns), (10_000_000, 25_000_000));
}

#[test]
fn duplicate_task_names_are_rejected_at_the_second_one() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n\n\
         [[task]]\nname = \"y\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\n\n\
         [[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"20ms\"\npet = { C = \"1ms\" }\n",
    );
    assert_rejected(&text, "task[2].name", "duplicate task name \"x\" (also task[0])");
}

// ---------------------------------------------------------------- syntax

#[test]
fn bad_toml_syntax_is_reported_by_line_and_column() {
    // Line 2 is `cores = = 2`; the second `=` is its 9th character.
    let err = assert_rejected("[platform]\ncores = = 2\n", "line 2 column 9", "invalid TOML");
    assert_eq!(err.to_string(), format!("sys.toml: line 2 column 9: {}", err.reason));
}

#[test]
fn bad_json_syntax_is_reported_by_line_and_column() {
    // `{"platform": {"cores": 2,}}`: the `}` after the trailing comma is character 26.
    assert_rejected_as("{\"platform\": {\"cores\": 2,}}", Format::Json, "line 1 column 26", "invalid JSON");
    // Second line ` {"cores": 2]}`: the `]` is character 13.
    assert_rejected_as("{\"platform\":\n {\"cores\": 2]}", Format::Json, "line 2 column 13", "invalid JSON");
}

#[test]
fn non_utf8_bytes_are_rejected_with_the_offset() {
    // Bytes 0..=10 are "[platform]\n"; byte 11 (0xFF) is invalid.
    let mut bytes = b"[platform]\n".to_vec();
    bytes.push(0xFF);
    let err = criticore::model::parse::parse_task_system_bytes(&bytes, Format::Toml, FILE).unwrap_err();
    assert_eq!((err.file.as_str(), err.field.as_str()), (FILE, "(file)"));
    assert!(err.reason.contains("byte 11"), "{err}");
}

#[test]
fn task_that_is_not_a_table_is_rejected() {
    let err = assert_rejected_as("{\"platform\": {\"cores\": 1}, \"task\": [3]}", Format::Json, "task[0]", "expected a table");
    assert!(err.reason.contains("a number"), "{err}");
}

#[test]
fn json_root_that_is_not_a_table_is_rejected_as_top_level() {
    assert_rejected_as("3", Format::Json, "(top level)", "expected a table, got a number");
    assert_rejected_as("[]", Format::Json, "(top level)", "expected a table, got an array");
}

#[test]
fn core_count_out_of_bounds_is_rejected() {
    assert_rejected("[platform]\ncores = 0\n", "platform.cores", "between 1 and 1024");
    assert_rejected("[platform]\ncores = 1025\n", "platform.cores", "between 1 and 1024");
    assert_rejected("[platform]\ncores = 2.0\n", "platform.cores", "expected an integer");
}

// ---------------------------------------------------------------- platform and allocation

#[test]
fn unknown_bus_arbiter_is_rejected() {
    let text = "[platform]\ncores = 2\nbus = { arbiter = \"lottery\" }\n";
    assert_rejected(text, "platform.bus.arbiter", "unknown arbiter \"lottery\"");
}

#[test]
fn llc_size_not_a_whole_number_of_ways_and_lines_is_rejected() {
    // 16 ways × 32 B = 512 B; 1000 B is not a multiple of 512.
    let text = "[platform]\ncores = 2\nllc = { size = \"1000B\" }\n";
    assert_rejected(text, "platform.llc.size", "not a whole number of 16 ways × 32-byte lines");
}

#[test]
fn allocated_ways_above_the_llc_ways_are_rejected() {
    // 10 + 8 = 18 > 16 default ways; and one over, 9 + 8 = 17.
    let text = "[platform]\ncores = 2\n\n[allocation]\nllc_ways = { core0 = 10, levelC = 8 }\n";
    assert_rejected(text, "allocation.llc_ways", "18 ways allocated but the LLC has only 16");
    let text = "[platform]\ncores = 2\n\n[allocation]\nllc_ways = { core0 = 9, levelC = 8 }\n";
    assert_rejected(text, "allocation.llc_ways", "17 ways allocated but the LLC has only 16");
}

#[test]
fn allocated_ways_exactly_filling_the_llc_are_accepted() {
    // 2 + 2 + 4 = 8 = the 8 ways declared.
    let text = "[platform]\ncores = 2\nllc = { size = \"256KiB\", ways = 8 }\n\n[allocation]\nllc_ways = { core0 = 2, core1 = 2, levelC = 4 }\n";
    let system = parse(text).unwrap();
    let mut ways = system.allocation.unwrap().llc_ways;
    ways.sort();
    assert_eq!(ways, vec![(Partition::Core(0), 2), (Partition::Core(1), 2), (Partition::LevelC, 4)]);
}

#[test]
fn bank_out_of_range_is_rejected_naming_the_list_entry() {
    // 8 banks by default: 0–7; entry [1] is bank 8.
    let text = "[platform]\ncores = 2\n\n[allocation]\nbanks = { core0 = [7, 8] }\n";
    assert_rejected(text, "allocation.banks.core0[1]", "bank 8 is out of range");
}

#[test]
fn colour_listed_twice_is_rejected() {
    let text = "[platform]\ncores = 2\n\n[allocation]\nllc_colors = { levelC = [3, 4, 3] }\n";
    assert_rejected(text, "allocation.llc_colors.levelC[2]", "colour 3 is listed twice");
}

#[test]
fn unknown_partition_key_is_rejected() {
    let text = "[platform]\ncores = 2\n\n[allocation]\nllc_ways = { gpu = 2 }\n";
    assert_rejected(text, "allocation.llc_ways.gpu", "unknown partition");
}

#[test]
fn partition_of_a_missing_core_is_rejected() {
    let text = "[platform]\ncores = 2\n\n[allocation]\nbanks = { core2 = [0] }\n";
    assert_rejected(text, "allocation.banks.core2", "core 2 is out of range");
}

#[test]
fn read_fraction_outside_zero_one_is_rejected() {
    let task = |rf: &str| {
        two_cores(&format!(
            "[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = {{ C = \"1ms\" }}\nmemory = {{ wss = \"32KiB\", accesses_per_ms = 100, read_fraction = {rf} }}\n"
        ))
    };
    assert_rejected(&task("1.5"), "task[0].memory.read_fraction", "must be between 0 and 1");
    assert_rejected(&task("-0.1"), "task[0].memory.read_fraction", "must be between 0 and 1");
    // Both ends are inside.
    assert_eq!(parse(&task("0.0")).unwrap().tasks[0].memory.as_ref().unwrap().phases[0].read_fraction, 0.0);
    assert_eq!(parse(&task("1")).unwrap().tasks[0].memory.as_ref().unwrap().phases[0].read_fraction, 1.0);
}

#[test]
fn negative_access_rate_is_rejected() {
    let text = two_cores(
        "[[task]]\nname = \"x\"\nlevel = \"C\"\nperiod = \"10ms\"\npet = { C = \"1ms\" }\nmemory = { wss = \"32KiB\", accesses_per_ms = -1 }\n",
    );
    assert_rejected(&text, "task[0].memory.accesses_per_ms", "non-negative");
}

// ---------------------------------------------------------------- valid files

const FULL_TOML: &str = r#"
[platform]
cores = 2
llc = { size = "512KiB", ways = 8, colors = 8, line = "64B" }
dram = { banks = 4, bank_size = "256MiB" }
bus = { arbiter = "tdma" }

[[task]]
name = "alpha"
level = "A"
core = 1
period = "1.5ms"
pet = { A = "300us", B = "250us", C = "0.2ms" }
pet_unmanaged = { A = "400us", B = "350us", C = "300us" }
memory = { wss = "48KiB", accesses_per_ms = 12000, read_fraction = 0.75 }

[[task]]
name = "beta"
level = "B"
core = 1
period = "3ms"
deadline = "3ms"
pet = { B = "1ms", C = "500000ns" }

[[task]]
name = "gamma"
level = "C"
period = "2s"
pet = { C = "0.25s" }

[[task]]
name = "delta"
level = "D"
core = 0
period = "10ms"
deadline = "20ms"
pet = { D = "5ms" }

[allocation]
llc_ways = { core1 = 2, levelC = 4, os = 2 }
llc_colors = { core1 = [0, 1], levelC = [2, 3, 4] }
banks = { core0 = [3], levelC = [0, 1], os = [2] }
"#;

const FULL_JSON: &str = r#"{
  "platform": {
    "cores": 2,
    "llc": { "size": "512KiB", "ways": 8, "colors": 8, "line": "64B" },
    "dram": { "banks": 4, "bank_size": "256MiB" },
    "bus": { "arbiter": "tdma" }
  },
  "task": [
    { "name": "alpha", "level": "A", "core": 1, "period": "1.5ms",
      "pet": { "A": "300us", "B": "250us", "C": "0.2ms" },
      "pet_unmanaged": { "A": "400us", "B": "350us", "C": "300us" },
      "memory": { "wss": "48KiB", "accesses_per_ms": 12000, "read_fraction": 0.75 } },
    { "name": "beta", "level": "B", "core": 1, "period": "3ms", "deadline": "3ms",
      "pet": { "B": "1ms", "C": "500000ns" } },
    { "name": "gamma", "level": "C", "period": "2s", "pet": { "C": "0.25s" } },
    { "name": "delta", "level": "D", "core": 0, "period": "10ms", "deadline": "20ms",
      "pet": { "D": "5ms" } }
  ],
  "allocation": {
    "llc_ways": { "core1": 2, "levelC": 4, "os": 2 },
    "llc_colors": { "core1": [0, 1], "levelC": [2, 3, 4] },
    "banks": { "core0": [3], "levelC": [0, 1], "os": [2] }
  }
}"#;

/// FULL_TOML worked out by hand, unit by unit.
fn expected_full() -> TaskSystem {
    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    TaskSystem {
        platform: Platform {
            cores: 2,
            // 512 KiB = 512·1024 = 524 288 B (a whole number of 8 ways × 64 B = 512 B).
            llc: Llc { size_bytes: 524_288, ways: 8, colors: 8, line_bytes: 64 },
            // 256 MiB = 256·2^20 = 268 435 456 B.
            // Latencies keep the i.MX6 defaults (120 ns read, 30 ns row conflict).
            dram: Dram { banks: 4, bank_size_bytes: 268_435_456, read_latency_ns: 120, row_conflict_ns: 30 },
            bus: Bus { arbiter: Arbiter::Tdma, bandwidth_bytes_per_s: 2_020_000_000 },
            clock_hz: None,
            instructions_per_cycle: None,
            memories: Vec::new(),
            costs: Default::default(),
        },
        tasks: vec![
            Task {
                name: "alpha".into(),
                level: Some(Level::A),
                criticality: 3,
                core: Some(1),
                period_ns: 1_500 * US, // 1.5 ms
                deadline_ns: 1_500 * US,
                offset_ns: 0,
                arrival: Arrival::Periodic,
                priority: None,
                server: None,
                // A 300 µs, B 250 µs, C 0.2 ms = 200 µs.
                pet_ns: LevelPets([Some(300 * US), Some(250 * US), Some(200 * US), None]),
                pet_unmanaged_ns: Some(LevelPets([Some(400 * US), Some(350 * US), Some(300 * US), None])),
                // 48 KiB = 49 152 B.
                memory: Some(MemoryProfile {
                    wss_bytes: 49_152,
                    pattern: AccessPattern::Random,
                    phases: vec![MemoryPhase { work_ns: None, accesses_per_ms: 12_000.0, read_fraction: 0.75 }],
                    ipc: None,
                    syscalls: None,
                }),
                cost: None,
                ipc: None,
                io: None,
                command: None,
                runnables: Vec::new(),
                preemption: Default::default(),
                activation_limit: None,
                communication: Default::default(),
                copy_in_ns: 0,
                copy_out_ns: 0,
            },
            Task {
                name: "beta".into(),
                level: Some(Level::B),
                criticality: 2,
                core: Some(1),
                period_ns: 3 * MS,
                deadline_ns: 3 * MS,
                offset_ns: 0,
                arrival: Arrival::Periodic,
                priority: None,
                server: None,
                // C = 500 000 ns = 0.5 ms.
                pet_ns: LevelPets([None, Some(MS), Some(500 * US), None]),
                pet_unmanaged_ns: None,
                memory: None,
                cost: None,
                ipc: None,
                io: None,
                command: None,
                runnables: Vec::new(),
                preemption: Default::default(),
                activation_limit: None,
                communication: Default::default(),
                copy_in_ns: 0,
                copy_out_ns: 0,
            },
            Task {
                name: "gamma".into(),
                level: Some(Level::C),
                criticality: 1,
                core: None,
                period_ns: 2_000 * MS,
                deadline_ns: 2_000 * MS,
                offset_ns: 0,
                arrival: Arrival::Periodic,
                priority: None,
                server: None,
                pet_ns: LevelPets([None, None, Some(250 * MS), None]),
                pet_unmanaged_ns: None,
                memory: None,
                cost: None,
                ipc: None,
                io: None,
                command: None,
                runnables: Vec::new(),
                preemption: Default::default(),
                activation_limit: None,
                communication: Default::default(),
                copy_in_ns: 0,
                copy_out_ns: 0,
            },
            Task {
                name: "delta".into(),
                level: Some(Level::D),
                criticality: 0,
                core: Some(0),
                period_ns: 10 * MS,
                deadline_ns: 20 * MS,
                offset_ns: 0,
                arrival: Arrival::Periodic,
                priority: None,
                server: None,
                pet_ns: LevelPets([None, None, None, Some(5 * MS)]),
                pet_unmanaged_ns: None,
                memory: None,
                cost: None,
                ipc: None,
                io: None,
                command: None,
                runnables: Vec::new(),
                preemption: Default::default(),
                activation_limit: None,
                communication: Default::default(),
                copy_in_ns: 0,
                copy_out_ns: 0,
            },
        ],
        servers: vec![],
        allocation: Some(Allocation {
            llc_ways: vec![(Partition::Core(1), 2), (Partition::LevelC, 4), (Partition::Os, 2)],
            llc_colors: vec![(Partition::Core(1), vec![0, 1]), (Partition::LevelC, vec![2, 3, 4])],
            banks: vec![(Partition::Core(0), vec![3]), (Partition::LevelC, vec![0, 1]), (Partition::Os, vec![2])],
            os_isolation: false,
        }),
        regulation: None,
        devices: vec![],
        chains: vec![],
        labels: vec![],
    }
}

/// Allocation entries come in map order; sort them so the comparison does not depend on it.
fn normalized(mut system: TaskSystem) -> TaskSystem {
    if let Some(a) = system.allocation.as_mut() {
        a.llc_ways.sort();
        a.llc_colors.sort();
        a.banks.sort();
    }
    system
}

#[test]
fn valid_system_round_trips_every_field() {
    let system = normalized(parse(FULL_TOML).unwrap());
    let expected = expected_full();
    // Field by field first, for readable failures.
    assert_eq!(system.platform, expected.platform);
    for (got, want) in system.tasks.iter().zip(&expected.tasks) {
        assert_eq!(got, want, "task {}", want.name);
    }
    assert_eq!(system.tasks.len(), 4);
    assert_eq!(system, expected);
    // Spot checks of the accessors on the parsed values.
    assert_eq!(system.tasks[0].pet_ns.get(Level::B), Some(250_000));
    assert_eq!(system.tasks[0].pet_ns.highest(), Some(300_000));
    assert_eq!(system.tasks[1].pet_ns.highest(), Some(1_000_000));
    assert_eq!(system.on_core(1, Level::B).collect::<Vec<_>>(), vec![1]);
    assert_eq!(system.at_level(Level::C).collect::<Vec<_>>(), vec![2]);
}

#[test]
fn json_with_the_same_schema_parses_to_the_same_system() {
    let json = parse_task_system(FULL_JSON, Format::Json, "sys.json").unwrap();
    let toml = parse(FULL_TOML).unwrap();
    assert_eq!(json, toml);
    assert_eq!(normalized(json), expected_full());
}

#[test]
fn json_errors_use_the_same_field_paths() {
    let bad = FULL_JSON.replace("\"period\": \"3ms\"", "\"period\": \"-3ms\"");
    assert_ne!(bad, FULL_JSON);
    assert_rejected_as(&bad, Format::Json, "task[1].period", "must not be negative");
}

#[test]
fn platform_defaults_are_the_imx6() {
    let system = parse("[platform]\ncores = 4\n").unwrap();
    // 1 MiB, 16 ways, 16 colours, 32 B lines; 8 banks of 128 MiB; round-robin bus.
    assert_eq!(system.platform.llc, Llc { size_bytes: 1_048_576, ways: 16, colors: 16, line_bytes: 32 });
    assert_eq!(system.platform.dram, Dram { banks: 8, bank_size_bytes: 134_217_728, read_latency_ns: 120, row_conflict_ns: 30 });
    assert_eq!(system.platform.bus, Bus { arbiter: Arbiter::RoundRobin, bandwidth_bytes_per_s: 2_020_000_000 });
    assert!(system.tasks.is_empty());
    assert_eq!(system.allocation, None);
}

#[test]
fn non_canonical_core_partition_names_are_rejected() {
    // "core01" would silently alias core 1 next to "core1".
    let text = "[platform]\ncores = 2\n[allocation]\nllc_ways = { core1 = 4, core01 = 4 }\n";
    let err = criticore::parse_task_system(text, criticore::Format::Toml, "sys.toml").unwrap_err();
    assert_eq!(err.field, "allocation.llc_ways.core01");
    assert!(err.reason.contains("unknown partition"), "{}", err.reason);
}

#[test]
fn toml_error_columns_count_characters_not_bytes() {
    // "²" is two bytes in UTF-8; the stray `=` after the string is the 10th character.
    let err = criticore::parse_task_system("x = \"²²\" = 1\n", criticore::Format::Toml, "sys.toml").unwrap_err();
    assert_eq!(err.field, "line 1 column 10");
}

#[test]
fn level_a_and_b_tasks_must_start_at_zero_and_be_periodic() {
    let offset = "[platform]\ncores = 1\n[[task]]\nname = \"a\"\nlevel = \"A\"\ncore = 0\nperiod = \"10ms\"\noffset = \"1ms\"\npet = { A = \"1ms\", B = \"1ms\", C = \"1ms\" }\n";
    let err = parse_task_system(offset, Format::Toml, "sys.toml").unwrap_err();
    assert_eq!(err.field, "task[0].offset");
    assert!(err.reason.contains("time 0"), "{}", err.reason);
    let sporadic = "[platform]\ncores = 1\n[[task]]\nname = \"b\"\nlevel = \"B\"\ncore = 0\nperiod = \"10ms\"\narrival = \"sporadic\"\npet = { B = \"1ms\", C = \"1ms\" }\n";
    let err = parse_task_system(sporadic, Format::Toml, "sys.toml").unwrap_err();
    assert_eq!(err.field, "task[0].arrival");
    assert!(err.reason.contains("periodic"), "{}", err.reason);
    // Level C may be sporadic with an offset.
    let c = "[platform]\ncores = 1\n[[task]]\nname = \"c\"\nlevel = \"C\"\nperiod = \"10ms\"\noffset = \"1ms\"\narrival = \"sporadic\"\njitter = \"2ms\"\npet = { C = \"1ms\" }\n";
    assert!(parse_task_system(c, Format::Toml, "sys.toml").is_ok());
}

// ---------------------------------------------------------------- study fields (cost, ipc, io)

fn two_a_tasks(first_extra: &str, second_period: &str) -> String {
    two_cores(&format!(
        r#"
[[task]]
name = "s"
level = "A"
period = "10ms"
pet = {{ A = "3ms", B = "2ms", C = "1ms" }}
cost = {{ llc_slowdown = 2.95, wss_ways = 4, reload = 0.05 }}
{first_extra}

[[task]]
name = "r"
level = "A"
period = "{second_period}"
pet = {{ A = "3ms", B = "2ms", C = "1ms" }}
cost = {{ llc_slowdown = 1.16, wss_ways = 2 }}
"#
    ))
}

#[test]
fn study_fields_are_read_as_written() {
    let text = two_a_tasks("ipc = { to = \"r\", size = \"4KiB\", method = \"cl\" }\nio = { bandwidth = \"3MB/s\", kind = \"copy\", buffer = \"core1\" }", "10ms");
    let system = parse(&text).unwrap();
    let s = &system.tasks[0];
    // A task with a cost curve may leave its core to the optimizer.
    assert_eq!(s.core, None);
    assert_eq!(s.cost.unwrap().llc_slowdown, 2.95);
    assert_eq!(s.cost.unwrap().wss_ways, 4);
    assert_eq!(system.tasks[1].cost.unwrap().reload, 0.0);
    let link = s.ipc.unwrap();
    assert_eq!((link.to, link.bytes, link.method, link.buffer), (1, 4096, Some(criticore::model::IpcMethod::Cl), None));
    let io = s.io.unwrap();
    assert_eq!((io.bandwidth_bytes_per_s, io.kind, io.buffer), (3_000_000, criticore::model::IoKind::Copy, Some(Partition::Core(1))));
}

#[test]
fn a_task_without_cost_still_needs_a_core() {
    let text = two_cores("[[task]]\nname = \"a\"\nlevel = \"A\"\nperiod = \"10ms\"\npet = { A = \"3ms\", B = \"2ms\", C = \"1ms\" }\n");
    assert_rejected(&text, "task[0].core", "needs a core");
}

#[test]
fn llc_slowdown_below_one_is_rejected() {
    let text = two_a_tasks("", "10ms").replace("llc_slowdown = 2.95", "llc_slowdown = 0.5");
    assert_rejected(&text, "task[0].cost.llc_slowdown", "≥ 1");
}

#[test]
fn wss_beyond_the_llc_ways_is_rejected() {
    let text = two_a_tasks("", "10ms").replace("wss_ways = 4", "wss_ways = 17");
    assert_rejected(&text, "task[0].cost.wss_ways", "16");
}

#[test]
fn ipc_to_an_unknown_task_is_rejected() {
    assert_rejected(&two_a_tasks("ipc = { to = \"nobody\", size = \"128B\" }", "10ms"), "task[0].ipc.to", "unknown task");
}

#[test]
fn communicating_tasks_with_different_periods_are_rejected() {
    assert_rejected(&two_a_tasks("ipc = { to = \"r\", size = \"128B\" }", "20ms"), "task[0].ipc.to", "share a period");
}

#[test]
fn ce_across_cores_is_rejected() {
    let text = two_a_tasks("core = 0\nipc = { to = \"r\", size = \"128B\", method = \"ce\" }", "10ms").replace(
        "name = \"r\"\nlevel = \"A\"",
        "name = \"r\"\nlevel = \"A\"\ncore = 1",
    );
    assert_rejected(&text, "task[0].ipc.method", "same core");
}

#[test]
fn unknown_io_kind_is_rejected() {
    assert_rejected(&two_a_tasks("io = { bandwidth = \"1MB/s\", kind = \"tape\" }", "10ms"), "task[0].io.kind", "direct or copy");
}

#[test]
fn lock_partition_is_accepted_for_ways() {
    let text = two_a_tasks("", "10ms") + "\n[allocation]\nllc_ways = { core0 = 4, core1 = 4, levelC = 6, lock = 2 }\n";
    let system = parse(&text).unwrap();
    assert!(system.allocation.unwrap().llc_ways.contains(&(Partition::Lock, 2)));
}

// ---------------------------------------------------------------- regulation budgets

/// A memguard `[regulation]` over two Level-D tasks, with `budget_lines` as written.
fn memguard_with(platform_extra: &str, budget_lines: &str) -> String {
    format!(
        "[platform]\ncores = 2\n{platform_extra}\n[[task]]\nname = \"a\"\nperiod = \"10ms\"\npet = \"1ms\"\n\n[regulation]\nkind = \"memguard\"\n{budget_lines}\n"
    )
}

#[test]
fn per_core_budgets_may_be_bandwidths() {
    // 200 MB/s for 1 ms is 200,000 B = 6,250 lines of 32 B; 100 MB/s is 3,125.
    let system = parse(&memguard_with("", "budgets = [\"200MB/s\", \"100MB/s\"]")).unwrap();
    assert_eq!(system.regulation.unwrap().budgets, vec![6_250, 3_125]);
    // Counts and bandwidths mix.
    let system = parse(&memguard_with("", "budgets = [\"200MB/s\", 500]")).unwrap();
    assert_eq!(system.regulation.unwrap().budgets, vec![6_250, 500]);
}

#[test]
fn a_bandwidth_budget_rounds_down_to_whole_lines_per_period() {
    // 100 MB/s × 1 ms / 64 B = 1,562.5 lines: 1,562 (never more than the bandwidth).
    let system = parse(&memguard_with("llc = { line = \"64B\" }", "budget = \"100MB/s\"")).unwrap();
    assert_eq!(system.regulation.unwrap().budgets, vec![1_562, 1_562]);
    // 1 GiB/s × 250 us / 32 B = 1,073,741,824 × 250,000 / (10^9 × 32) = 8,388.608: 8,388.
    let system = parse(&memguard_with("", "period = \"250us\"\nbudget = \"1GiB/s\"")).unwrap();
    assert_eq!(system.regulation.unwrap().budgets, vec![8_388, 8_388]);
}

#[test]
fn a_bandwidth_below_one_line_per_period_is_rejected() {
    // 31 kB/s for 1 ms is 31 bytes, less than one 32-byte line.
    assert_rejected(&memguard_with("", "budgets = [\"31KB/s\", 10]"), "regulation.budgets[0]", "less than one 32-byte line per 1ms period");
    // Zero stays a budget of zero.
    let system = parse(&memguard_with("", "budget = \"0MB/s\"")).unwrap();
    assert_eq!(system.regulation.unwrap().budgets, vec![0, 0]);
}

#[test]
fn a_budget_that_is_neither_count_nor_bandwidth_says_both_are_allowed() {
    assert_rejected(&memguard_with("", "budgets = [true, 1]"), "regulation.budgets[0]", "or a bandwidth like \"100MB/s\"");
    assert_rejected(&memguard_with("", "budget = \"fast\""), "regulation.budget", "expected a bandwidth");
}

// ---------------------------------------------------------------- one line, whatever the value

/// A task whose `name` line is `name_line`, on a two-core platform.
fn task_named(name_line: &str) -> String {
    two_cores(&format!("[[task]]\n{name_line}\nlevel = \"C\"\nperiod = \"10ms\"\npet = {{ C = \"1ms\" }}\n"))
}

#[track_caller]
fn assert_one_line(err: &InputError) {
    let line = err.to_string();
    assert!(!line.contains(['\n', '\r']), "multi-line error: {line:?}");
}

#[test]
fn a_date_time_is_not_a_name() {
    let err = assert_rejected(&task_named("name = 1979-05-27T07:32:00Z"), "task[0].name", "date-time \"1979-05-27T07:32:00Z\"");
    assert!(err.reason.contains("quotes"), "{err}");
    assert_rejected(&task_named("name = 07:32:00"), "task[0].name", "date-time");
}

#[test]
fn nan_and_infinities_are_named() {
    let memory = |x: &str| two_cores(&format!("[[task]]\nname = \"t\"\nperiod = \"10ms\"\npet = \"1ms\"\nmemory = {{ wss = \"1KiB\", accesses_per_ms = 1, read_fraction = {x} }}\n"));
    assert_rejected(&memory("nan"), "task[0].memory.read_fraction", "got nan, not a finite number");
    assert_rejected(&memory("+inf"), "task[0].memory.read_fraction", "got inf, not a finite number");
    assert_rejected(&memory("-inf"), "task[0].memory.read_fraction", "got -inf, not a finite number");
}

#[test]
fn a_name_with_a_line_break_is_rejected_on_one_line() {
    let err = assert_rejected(&task_named("name = \"a\\nb\""), "task[0].name", "must not hold control characters");
    assert!(err.reason.ends_with("got \"a\\nb\""), "{err}");
    assert_one_line(&err);
    // A control character in any other quoted value is escaped.
    let err = assert_rejected(&task_named("name = \"t\"\nio = { bandwidth = \"1MB/s\", kind = \"x\\u001by\" }"), "task[0].io.kind", "\"x\\u{1b}y\"");
    assert_one_line(&err);
}

#[test]
fn a_key_with_a_line_break_is_quoted_in_the_path() {
    let err = assert_rejected(&two_cores("\"a\\nb\" = 1\n"), "platform.\"a\\nb\"", "unknown field");
    assert_one_line(&err);
}

#[test]
fn a_huge_value_is_cut_in_the_error() {
    let huge = "9".repeat(10_000_000);
    let err = assert_rejected(&task_named(&format!("name = \"t\"\nio = {{ bandwidth = \"1MB/s\", kind = \"{huge}\" }}")), "task[0].io.kind", "(10000000 characters)");
    assert!(err.reason.contains(&format!("\"{}…\"", "9".repeat(59))), "{err}");
    assert!(err.to_string().len() < 200, "{} bytes", err.to_string().len());
}

#[test]
fn documents_nested_deeper_than_64_levels_are_rejected() {
    // The root table is level 1, platform 2, so 62 arrays inside it reach 64.
    let nested = |n: usize| format!("{{\"platform\": {{\"cores\": 1, \"x\": {}1{}}}}}", "[".repeat(n), "]".repeat(n));
    assert_rejected_as(&nested(62), Format::Json, "platform.x", "unknown field");
    let deep = format!("platform.x{}", "[0]".repeat(62));
    assert_rejected_as(&nested(63), Format::Json, &deep, "nested deeper than 64 levels");
    // Beyond serde_json's own limit the answer is the same; it stops at its
    // 128th container, the 126th array, which opens at column 31 + 126.
    assert_rejected_as(&nested(500), Format::Json, "line 1 column 157", "nested deeper than 64 levels");
}

// ---------------------------------------------------------------- parameter files as presets

const MY_BOARD: &str = r#"
name = "my-board"
[platform.dram]
read_latency = "80ns"
row_conflict = "45ns"
banks = 4
[platform.bus]
bandwidth = "1000MB/s"
[study]
sbp_ns_per_byte = 2.5
[fit]
points = 3
"#;

fn my_board_reader(path: &str) -> Result<String, String> {
    match path {
        "my-board.toml" => Ok(MY_BOARD.to_string()),
        "built-in.toml" => Ok(criticore::model::IMX6_TRANSACTION.to_string()),
        other => Err(format!("cannot read {other}: No such file or directory")),
    }
}

fn with_preset(preset: &str) -> Result<TaskSystem, InputError> {
    let text = format!("[platform]\npreset = \"{preset}\"\ncores = 2\ndram = {{ row_conflict = \"60ns\" }}\n");
    criticore::model::parse::parse_task_system_with(&text, Format::Toml, FILE, &my_board_reader)
}

#[test]
fn a_preset_may_be_a_parameter_file() {
    let p = with_preset("my-board.toml").unwrap().platform;
    assert_eq!((p.dram.read_latency_ns, p.dram.banks, p.bus.bandwidth_bytes_per_s), (80, 4, 1_000_000_000));
    // The task file's own fields win over the parameter file's.
    assert_eq!(p.dram.row_conflict_ns, 60);
    assert_eq!(p.cores, 2);
    assert_eq!(p.costs.sbp_ns_per_byte, 2.5);
    // What the file leaves out is the imx6's.
    let imx6 = Platform::preset("imx6").unwrap();
    assert_eq!((p.llc, p.dram.bank_size_bytes, p.costs.dma_bank), (imx6.llc, imx6.dram.bank_size_bytes, imx6.costs.dma_bank));
}

#[test]
fn the_built_in_parameter_set_read_as_a_file_is_the_built_in_preset() {
    let from_file = criticore::model::parse::parse_params(criticore::model::IMX6_TRANSACTION).unwrap();
    assert_eq!(from_file, Platform::preset("imx6-transaction").unwrap());
}

#[test]
fn a_missing_or_bad_parameter_file_is_one_line_naming_platform_preset() {
    let err = with_preset("nowhere/board.toml").unwrap_err();
    assert_eq!((err.field.as_str(), err.reason.as_str()), ("platform.preset", "parameter file \"nowhere/board.toml\": cannot read nowhere/board.toml: No such file or directory"));
    // Without a reader (the engine alone) a path is refused, not guessed at.
    let err = parse("[platform]\npreset = \"my-board.toml\"\ncores = 1\n").unwrap_err();
    assert_eq!(err.field, "platform.preset");
    assert!(err.reason.contains("only the criticore library and CLI read parameter files"), "{err}");
    // An unknown name mentions both kinds of preset.
    assert_rejected("[platform]\npreset = \"my-board\"\ncores = 1\n", "platform.preset", "or the path of a parameter file ending in .toml");
    let bad = |text: &'static str| {
        criticore::model::parse::parse_task_system_with("[platform]\npreset = \"p.toml\"\ncores = 1\n", Format::Toml, FILE, &move |_| Ok(text.to_string())).unwrap_err()
    };
    let err = bad("[platform.dram]\nread_latency = 80\n");
    assert_eq!(err.field, "platform.preset");
    assert!(err.reason.starts_with("parameter file \"p.toml\": platform.dram.read_latency: expected a duration"), "{err}");
    assert!(bad("[study]\ndma_bnk = 0.3\n").reason.contains("study.dma_bnk: unknown field"));
    assert!(bad("[platform\n").reason.contains("line 1 column"));
    assert_one_line(&bad("[platform.bus]\narbiter = \"a\nb\"\n"));
}
