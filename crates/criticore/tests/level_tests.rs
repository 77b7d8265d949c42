//! Whole-system tests of each MC² level's test (docs/references.md, MC²,
//! mc2-hardware-management §2), through parse + `mc2::analyze`. Every system is
//! small enough to work out by hand; the arithmetic is in the comments. Each
//! boundary is checked from both sides: exactly at it (schedulable) and one
//! nanosecond of PET beyond it (not).

use criticore::analysis::mc2::{analyze, Mc2Result};
use criticore::analysis::report::report;
use criticore::analysis::Provisioning;
use criticore::model::Level;
use criticore::{parse_task_system, Format, TaskSystem};

const MS: f64 = 1_000_000.0;

fn parse(text: &str) -> TaskSystem {
    parse_task_system(text, Format::Toml, "sys.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn mc2(text: &str) -> Mc2Result {
    analyze(&parse(text), Provisioning::MC2_ISOLATED).expect("every PET is given")
}

#[track_caller]
fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-12, "got {got}, want {want}");
}

/// Close in nanoseconds, to within `tol_ns`.
#[track_caller]
fn close_ns(got: f64, want: f64, tol_ns: f64) {
    assert!((got - want).abs() <= tol_ns, "got {got} ns, want {want} ns");
}

// ================================================================= Level A

/// One core. Level A: a0 4ms/10ms, a1 A_PET/20ms; a Level-B task b0 that the
/// Level-A test must ignore.
fn level_a_system(a1_pet_a: &str) -> String {
    format!(
        r#"
[platform]
cores = 1

[[task]]
name = "a0"
level = "A"
core = 0
period = "10ms"
pet = {{ A = "4ms", B = "2ms", C = "1ms" }}

[[task]]
name = "a1"
level = "A"
core = 0
period = "20ms"
pet = {{ A = "{a1_pet_a}", B = "6ms", C = "3ms" }}

[[task]]
name = "b0"
level = "B"
core = 0
period = "40ms"
pet = {{ B = "8ms", C = "4ms" }}
"#
    )
}

#[test]
fn level_a_exactly_full_core_is_schedulable() {
    // U_A^A(0) = 4/10 + 12/20 = 0.4 + 0.6 = 1.0 (b0 is Level B and not counted;
    // counting it at any PET would exceed 1).
    // Over the hyperperiod 20ms: 4·2 + 12·1 = 20ms of demand = 20ms.
    // U_B^B: 2/10 + 6/20 + 8/40 = 0.2 + 0.3 + 0.2 = 0.7.
    // Level C: û = 1 − (1/10 + 3/20 + 4/40) = 1 − 0.35 = 0.65,
    //          σ = 2·1·0.9 + 2·3·0.85 + 2·4·0.9 = 1.8 + 5.1 + 7.2 = 14.1 ms; no Level-C tasks.
    let r = mc2(&level_a_system("12ms"));
    assert_eq!(r.level_a.len(), 1);
    assert_eq!(r.level_a[0].tasks, vec![0, 1]);
    close(r.level_a[0].utilization, 1.0);
    assert!(r.level_a[0].schedulable);
    close(r.level_b[0].utilization, 0.7);
    assert!(r.level_b[0].schedulable);
    close(r.level_c.per_core[0].capacity, 0.65);
    close_ns(r.level_c.per_core[0].supply_delay_ns, 14.1 * MS, 1e-3);
    assert!(r.level_c.schedulable());
    assert!(r.schedulable());
    // Total at Level-C PETs: 0.1 + 0.15 + 0.1 = 0.35.
    close(r.total_utilization, 0.35);
}

#[test]
fn level_a_one_nanosecond_over_a_full_core_is_not_schedulable() {
    // a1's Level-A PET 12ms + 1ns: U = 0.4 + 12_000_001/20_000_000 = 1.00000005;
    // demand over 20ms: 8ms + 12ms + 1ns > 20ms. Levels B and C are unchanged.
    let r = mc2(&level_a_system("12.000001ms"));
    close(r.level_a[0].utilization, 1.000_000_05);
    assert!(!r.level_a[0].schedulable);
    assert!(!r.level_schedulable(Level::A));
    assert!(r.level_schedulable(Level::B));
    assert!(r.level_schedulable(Level::C));
    assert!(!r.schedulable());
}

#[test]
fn level_a_table_fills_the_full_core_and_is_absent_when_overloaded() {
    // RM over 20ms: a0 J1 [0,4), a1 J1 [4,10) preempted by a0's release at 10,
    // a0 J2 [10,14), a1 J1 again [14,20): 6 + 6 = 12ms for a1, no idle time.
    let full = report(&parse(&level_a_system("12ms")));
    let table = &full.level_a_tables[0];
    assert_eq!(table.hyperperiod_ns, 20_000_000);
    let slots: Vec<(&str, u64, u64, u64)> = table
        .slots
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| (s.task.as_str(), s.job, s.start_ns, s.length_ns))
        .collect();
    assert_eq!(
        slots,
        vec![
            ("a0", 1, 0, 4_000_000),
            ("a1", 1, 4_000_000, 6_000_000),
            ("a0", 2, 10_000_000, 4_000_000),
            ("a1", 1, 14_000_000, 6_000_000),
        ]
    );
    let over = report(&parse(&level_a_system("12.000001ms")));
    assert!(over.level_a_tables[0].slots.is_none());
    assert!(!over.schedulable);
    assert!(!over.levels.A.schedulable);
}

// ================================================================= Level B

/// One core. a0 (Level A) 10ms; b0 20ms and b1 40ms (Level B), b1's Level-B PET varies.
fn level_b_system(b1_pet_b: &str) -> String {
    format!(
        r#"
[platform]
cores = 1

[[task]]
name = "a0"
level = "A"
core = 0
period = "10ms"
pet = {{ A = "5ms", B = "4ms", C = "2ms" }}

[[task]]
name = "b0"
level = "B"
core = 0
period = "20ms"
pet = {{ B = "6ms", C = "3ms" }}

[[task]]
name = "b1"
level = "B"
core = 0
period = "40ms"
pet = {{ B = "{b1_pet_b}", C = "8ms" }}
"#
    )
}

#[test]
fn level_b_utilization_exactly_one_is_schedulable() {
    // Level A: 5/10 = 0.5.
    // Level B (a0 at its Level-B PET, not its Level-A one):
    //   U_A^B + U_B^B = 4/10 + 6/20 + 12/40 = 0.4 + 0.3 + 0.3 = 1.0;
    //   over the hyperperiod 40ms: 4·4 + 6·2 + 12·1 = 40ms = 40ms.
    //   (With a0's Level-A PET it would be 0.5 + 0.6 = 1.1 and fail.)
    // Level C: û = 1 − (2/10 + 3/20 + 8/40) = 1 − 0.55 = 0.45.
    let r = mc2(&level_b_system("12ms"));
    close(r.level_a[0].utilization, 0.5);
    assert!(r.level_a[0].schedulable);
    assert_eq!(r.level_b[0].tasks, vec![0, 1, 2]);
    close(r.level_b[0].utilization, 1.0);
    assert!(r.level_b[0].schedulable);
    close(r.level_c.per_core[0].capacity, 0.45);
    assert!(r.schedulable());
}

#[test]
fn level_b_one_nanosecond_over_is_not_schedulable() {
    // b1's Level-B PET 12ms + 1ns: U = 0.4 + 0.3 + 12_000_001/40_000_000 = 1.000000025;
    // demand over 40ms is 40ms + 1ns. Level A is untouched (0.5).
    let r = mc2(&level_b_system("12.000001ms"));
    close(r.level_b[0].utilization, 1.000_000_025);
    assert!(!r.level_b[0].schedulable);
    assert!(r.level_schedulable(Level::A));
    assert!(!r.level_schedulable(Level::B));
    assert!(!r.schedulable());
}

// ================================================================= Level C

/// Two cores. Core 0: a0 (Level A, 8ms, C-PET 2ms). Core 1: b0 (Level B, 16ms,
/// C-PET 4ms). Three Level-C tasks of period 8ms; c2's Level-C PET varies.
fn level_c_capacity_system(c2_pet: &str) -> String {
    format!(
        r#"
[platform]
cores = 2

[[task]]
name = "a0"
level = "A"
core = 0
period = "8ms"
pet = {{ A = "4ms", B = "3ms", C = "2ms" }}

[[task]]
name = "b0"
level = "B"
core = 1
period = "16ms"
pet = {{ B = "8ms", C = "4ms" }}

[[task]]
name = "c0"
level = "C"
period = "8ms"
pet = {{ C = "4ms" }}

[[task]]
name = "c1"
level = "C"
period = "8ms"
pet = {{ C = "4ms" }}

[[task]]
name = "c2"
level = "C"
period = "8ms"
pet = {{ C = "{c2_pet}" }}
"#
    )
}

#[test]
fn level_c_demand_exactly_equal_to_supply_is_schedulable() {
    // Level A: core 0 4/8 = 0.5; core 1 has no Level-A task (0).
    // Level B: core 0 3/8 = 0.375; core 1 8/16 = 0.5.
    // Level C supply: û0 = 1 − 2/8 = 0.75, û1 = 1 − 4/16 = 0.75, Σû = 1.5.
    //   σ0 = 2·2ms·(1 − 0.25) = 3ms, σ1 = 2·4ms·(1 − 0.25) = 6ms.
    // Demand: U_C = 3·4/8 = 1.5 = Σû → capacity holds with equality.
    // u_max = 0.5, U_L(1) = 0.5: 1.5 > 1·0.5 + 0.5 = 1.0 → tardiness condition holds, slack 0.5.
    // E_L(1) = 4ms. x = (4 + 3 + 6)ms / 0.5 = 26ms; bounds x + e = 30ms each.
    let r = mc2(&level_c_capacity_system("4ms"));
    close(r.level_a[0].utilization, 0.5);
    close(r.level_a[1].utilization, 0.0);
    assert!(r.level_a[1].tasks.is_empty());
    close(r.level_b[0].utilization, 0.375);
    close(r.level_b[1].utilization, 0.5);
    let c = &r.level_c;
    assert_eq!(c.tasks, vec![2, 3, 4]);
    close(c.per_core[0].capacity, 0.75);
    close(c.per_core[1].capacity, 0.75);
    close_ns(c.per_core[0].supply_delay_ns, 3.0 * MS, 1e-6);
    close_ns(c.per_core[1].supply_delay_ns, 6.0 * MS, 1e-6);
    close(c.supply, 1.5);
    close(c.total_utilization, 1.5);
    close(c.max_task_utilization, 0.5);
    close(c.largest_utilization_sum, 0.5);
    assert_eq!(c.largest_pet_sum_ns, 4_000_000);
    assert!(c.capacity_condition);
    assert!(c.tardiness_condition);
    close_ns(c.x_ns.unwrap(), 26.0 * MS, 1e-3);
    assert_eq!(c.tardiness_bounds_ns, vec![Some(30_000_000); 3]);
    assert!(r.schedulable());
    // Total at Level-C PETs: 0.25 + 0.25 + 1.5 = 2.0.
    close(r.total_utilization, 2.0);
}

#[test]
fn level_c_demand_one_nanosecond_above_supply_is_not_schedulable() {
    // c2 = 4ms + 1ns: U_C = 1.5 + 1/8_000_000 = 1.500000125 > Σû = 1.5 → capacity fails.
    // The tardiness condition still holds: 1.5 > 0.500000125 + 0.500000125 = 1.00000025.
    // No bound is given without both conditions. Levels A and B are unaffected.
    let r = mc2(&level_c_capacity_system("4.000001ms"));
    let c = &r.level_c;
    close(c.total_utilization, 1.500_000_125);
    close(c.max_task_utilization, 0.500_000_125);
    assert_eq!(c.largest_pet_sum_ns, 4_000_001);
    assert!(!c.capacity_condition);
    assert!(c.tardiness_condition);
    assert_eq!(c.x_ns, None);
    assert_eq!(c.tardiness_bounds_ns, vec![None; 3]);
    assert!(r.level_schedulable(Level::A));
    assert!(r.level_schedulable(Level::B));
    assert!(!r.level_schedulable(Level::C));
    assert!(!r.schedulable());
}

/// Two cores. Core 0: a0 (Level A, 8ms, every PET 4ms). Level C: c0 with a
/// varying PET and c1 4ms, both of period 8ms.
fn level_c_tardiness_system(c0_pet: &str) -> String {
    format!(
        r#"
[platform]
cores = 2

[[task]]
name = "a0"
level = "A"
core = 0
period = "8ms"
pet = {{ A = "4ms", B = "4ms", C = "4ms" }}

[[task]]
name = "c0"
level = "C"
period = "8ms"
pet = {{ C = "{c0_pet}" }}

[[task]]
name = "c1"
level = "C"
period = "8ms"
pet = {{ C = "4ms" }}
"#
    )
}

#[test]
fn level_c_capacity_holds_but_strict_tardiness_condition_fails_at_equality() {
    // û0 = 1 − 4/8 = 0.5, û1 = 1 → Σû = 1.5.
    // U_C = 6/8 + 4/8 = 1.25 ≤ 1.5 → capacity holds.
    // u_max = 0.75, U_L(1) = 0.75: (m−1)·u_max + U_L(m−1) = 0.75 + 0.75 = 1.5,
    // and 1.5 > 1.5 is false → tardiness condition fails (it is strict).
    let r = mc2(&level_c_tardiness_system("6ms"));
    let c = &r.level_c;
    close(c.supply, 1.5);
    close(c.total_utilization, 1.25);
    close(c.max_task_utilization, 0.75);
    close(c.largest_utilization_sum, 0.75);
    assert!(c.capacity_condition);
    assert!(!c.tardiness_condition);
    assert!(!c.schedulable());
    assert_eq!(c.x_ns, None);
    assert_eq!(c.tardiness_bounds_ns, vec![None, None]);
    assert!(r.level_schedulable(Level::A) && r.level_schedulable(Level::B));
    assert!(!r.schedulable());
}

#[test]
fn level_c_tardiness_condition_holds_one_nanosecond_below_equality() {
    // c0 = 6ms − 1ns = 5_999_999 ns: u0 = 0.749999875.
    // (m−1)·u_max + U_L(1) = 2·0.749999875 = 1.49999975 < 1.5 → holds; slack = 2.5e-7.
    // σ0 = 2·4ms·(1 − 0.5) = 4ms, σ1 = 0; E_L(1) = 5_999_999 ns.
    // x = (5_999_999 + 4_000_000) / 2.5e-7 = 9_999_999 / 2.5e-7 = 3.9999996e13 ns (≈ 40 000 s:
    // the bound grows without limit as the slack vanishes).
    let r = mc2(&level_c_tardiness_system("5.999999ms"));
    let c = &r.level_c;
    assert!(c.capacity_condition);
    assert!(c.tardiness_condition);
    assert!(r.schedulable());
    close_ns(c.per_core[0].supply_delay_ns, 4.0 * MS, 1e-6);
    assert_eq!(c.largest_pet_sum_ns, 5_999_999);
    let x = c.x_ns.unwrap();
    // The slack is a difference of nearly equal sums: allow a relative error of 1e-6.
    assert!((x / 3.999_999_6e13 - 1.0).abs() < 1e-6, "x = {x}");
}

#[test]
fn level_c_largest_utilization_sum_takes_the_m_minus_1_largest() {
    // Three full cores (Σû = 3, σ = 0). u = 6/8, 4/8, 4/8, 2/8 = 0.75, 0.5, 0.5, 0.25; U_C = 2.0.
    // (m−1)·u_max = 2·0.75 = 1.5; U_L(2) = 0.75 + 0.5 = 1.25; 1.5 + 1.25 = 2.75 < 3 → holds.
    // (Taking U_L as 2·u_max = 1.5 or as the 3 largest = 1.75 would give 3.0 / 3.25 and fail.)
    // Slack 0.25; E_L(2) = 6 + 4 = 10ms; x = 10ms / 0.25 = 40ms; bounds 46, 44, 44, 42 ms.
    let text = r#"
[platform]
cores = 3

[[task]]
name = "t0"
level = "C"
period = "8ms"
pet = { C = "6ms" }

[[task]]
name = "t1"
level = "C"
period = "8ms"
pet = { C = "4ms" }

[[task]]
name = "t2"
level = "C"
period = "8ms"
pet = { C = "4ms" }

[[task]]
name = "t3"
level = "C"
period = "8ms"
pet = { C = "2ms" }
"#;
    let r = mc2(text);
    let c = &r.level_c;
    close(c.supply, 3.0);
    close(c.total_utilization, 2.0);
    close(c.largest_utilization_sum, 1.25);
    assert_eq!(c.largest_pet_sum_ns, 10_000_000);
    assert!(c.capacity_condition && c.tardiness_condition);
    close_ns(c.x_ns.unwrap(), 40.0 * MS, 1e-3);
    assert_eq!(
        c.tardiness_bounds_ns,
        vec![Some(46_000_000), Some(44_000_000), Some(44_000_000), Some(42_000_000)]
    );
}

#[test]
fn level_a_and_b_load_reduces_level_c_supply_and_adds_supply_delay() {
    // Core 0: a0 (A, 10ms, C-PET 1ms, u = 0.1), b0 (B, 20ms, C-PET 4ms, u = 0.2),
    //         d0 (D, pinned, 9ms/10ms: best effort, must not count).
    // Core 1: b1 (B, 40ms, C-PET 10ms, u = 0.25).
    // û0 = 1 − 0.1 − 0.2 = 0.7;  σ0 = 2·1·(1 − 0.1) + 2·4·(1 − 0.2) = 1.8 + 6.4 = 8.2 ms.
    // û1 = 1 − 0.25 = 0.75;       σ1 = 2·10·(1 − 0.25) = 15 ms.
    // Level C: c0 25ms/50ms (0.5), c1 20ms/100ms (0.2): U_C = 0.7 ≤ Σû = 1.45.
    // u_max = 0.5, U_L(1) = 0.5 → 1.45 > 1.0, slack 0.45. E_L(1) = 25ms.
    // x = (25 + 8.2 + 15) / 0.45 ms = 48.2 / 0.45 ms = 107.1111… ms = 107 111 111.1 ns.
    // Bounds: c0 x + 25ms = 132 111 111.1 → 132 111 112 ns; c1 x + 20ms → 127 111 112 ns.
    // Level A core 0: 3/10 = 0.3. Level B core 0: 2/10 + 6/20 = 0.5; core 1: 10/40 = 0.25.
    let text = r#"
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
pet = { B = "6ms", C = "4ms" }

[[task]]
name = "d0"
level = "D"
core = 0
period = "10ms"
pet = { D = "9ms" }

[[task]]
name = "b1"
level = "B"
core = 1
period = "40ms"
pet = { B = "10ms", C = "10ms" }

[[task]]
name = "c0"
level = "C"
period = "50ms"
pet = { C = "25ms" }

[[task]]
name = "c1"
level = "C"
period = "100ms"
pet = { C = "20ms" }
"#;
    let system = parse(text);
    let r = analyze(&system, Provisioning::MC2_ISOLATED).unwrap();
    close(r.level_a[0].utilization, 0.3);
    close(r.level_b[0].utilization, 0.5);
    close(r.level_b[1].utilization, 0.25);
    assert_eq!(r.level_b[0].tasks, vec![0, 1]);
    let c = &r.level_c;
    close(c.per_core[0].capacity, 0.7);
    close_ns(c.per_core[0].supply_delay_ns, 8.2 * MS, 1e-3);
    close(c.per_core[1].capacity, 0.75);
    close_ns(c.per_core[1].supply_delay_ns, 15.0 * MS, 1e-3);
    close(c.supply, 1.45);
    close(c.total_utilization, 0.7);
    assert_eq!(c.largest_pet_sum_ns, 25_000_000);
    close_ns(c.x_ns.unwrap(), 48.2 / 0.45 * MS, 1e-3);
    assert_eq!(c.tardiness_bounds_ns, vec![Some(132_111_112), Some(127_111_112)]);
    assert!(r.schedulable());
    // Total without the Level-D task: 0.1 + 0.2 + 0.25 + 0.5 + 0.2 = 1.25.
    close(r.total_utilization, 1.25);

    // The report carries the same numbers by name.
    let rep = report(&system);
    assert_eq!(rep.best_effort, vec!["d0".to_string()]);
    assert_eq!(rep.levels.C.tasks, vec!["c0".to_string(), "c1".to_string()]);
    close(rep.levels.C.per_core[0].capacity, 0.7);
    close_ns(rep.levels.C.per_core[0].supply_delay_ns, 8.2 * MS, 1e-3);
    let bounds: Vec<(&str, Option<u64>)> =
        rep.levels.C.tardiness_bounds.iter().map(|b| (b.task.as_str(), b.bound_ns)).collect();
    assert_eq!(bounds, vec![("c0", Some(132_111_112)), ("c1", Some(127_111_112))]);
}

// ================================================================= the four configurations

/// Two cores, every task with PETs measured with and without isolation.
/// a0 (A, core 0, 10ms)  pet A 4 B 3 C 2    unmanaged A 11 B 5 C 3
/// b0 (B, core 1, 20ms)  pet A 8 B 6 C 4    unmanaged A 12 B 10 C 6
/// c0 (C, 40ms)          pet C 10           unmanaged C 16   (only a Level-C PET)
/// c1 (C, 50ms)          pet A 20 B 15 C 10 unmanaged A 30 B 25 C 15
fn four_config_system(with_c0_unmanaged: bool) -> String {
    let c0_unmanaged = if with_c0_unmanaged { "pet_unmanaged = { C = \"16ms\" }" } else { "" };
    format!(
        r#"
[platform]
cores = 2

[[task]]
name = "a0"
level = "A"
core = 0
period = "10ms"
pet = {{ A = "4ms", B = "3ms", C = "2ms" }}
pet_unmanaged = {{ A = "11ms", B = "5ms", C = "3ms" }}

[[task]]
name = "b0"
level = "B"
core = 1
period = "20ms"
pet = {{ A = "8ms", B = "6ms", C = "4ms" }}
pet_unmanaged = {{ A = "12ms", B = "10ms", C = "6ms" }}

[[task]]
name = "c0"
level = "C"
period = "40ms"
pet = {{ C = "10ms" }}
{c0_unmanaged}

[[task]]
name = "c1"
level = "C"
period = "50ms"
pet = {{ A = "20ms", B = "15ms", C = "10ms" }}
pet_unmanaged = {{ A = "30ms", B = "25ms", C = "15ms" }}
"#
    )
}

#[test]
fn four_configurations_totals_and_verdicts_are_worked_out_by_hand() {
    // Totals: every A/B/C task at its Level-C PET (MC² analysis) or at its most
    // critical PET given (no MC² analysis).
    // (i)   isolated, C PETs:   2/10 + 4/20 + 10/40 + 10/50 = 0.2 + 0.2 + 0.25 + 0.2 = 0.85
    // (ii)  unmanaged, C PETs:  3/10 + 6/20 + 16/40 + 15/50 = 0.3 + 0.3 + 0.4 + 0.3  = 1.3
    // (iii) isolated, highest:  4/10 + 8/20 + 10/40 + 20/50 = 0.4 + 0.4 + 0.25 + 0.4 = 1.45
    // (iv)  unmanaged, highest: 11/10 + 12/20 + 16/40 + 30/50 = 1.1 + 0.6 + 0.4 + 0.6 = 2.7
    // Verdicts:
    // (i)   A 0.4; B 0.3 | 0.3; C û = 0.8 + 0.8 = 1.6 ≥ 0.45, 1.6 > 0.25 + 0.2 → all hold.
    // (ii)  A 11/10 = 1.1 > 1 ✗; B 5/10 | 10/20 ✓; C û = 0.7 + 0.7 = 1.4 ≥ 0.7, 1.4 > 0.4 + 0.4 ✓.
    // (iii) A 0.4; B 0.4 | 0.4; C û = 0.6 + 0.6 = 1.2 ≥ 0.65, 1.2 > 0.4 + 0.4 → all hold.
    // (iv)  A 1.1 ✗; B core 0 1.1 ✗; C û0 = 0 (core full), û1 = 0.4: 0.4 < 0.4 + 0.6 = 1.0 ✗.
    let r = report(&parse(&four_config_system(true)));
    let c = &r.configurations;
    let expected = [
        (&c.mc2_isolated, 0.85, true, (true, true, true)),
        (&c.mc2_unmanaged, 1.3, false, (false, true, true)),
        (&c.isolated_only, 1.45, true, (true, true, true)),
        (&c.neither, 2.7, false, (false, false, false)),
    ];
    for (config, total, schedulable, (a, b, lc)) in expected {
        assert!(config.available, "{}", config.label);
        assert_eq!(config.reason, None, "{}", config.label);
        close(config.total_utilization.unwrap(), total);
        assert_eq!(config.schedulable, Some(schedulable), "{}", config.label);
        let levels = config.levels.as_ref().unwrap();
        assert_eq!((levels.a, levels.b, levels.c), (a, b, lc), "{}", config.label);
    }
    // The report's top-level verdict is configuration (i)'s.
    assert!(r.schedulable);

    // The same totals straight from the analysis.
    let system = parse(&four_config_system(true));
    for (prov, total) in [
        (Provisioning::MC2_ISOLATED, 0.85),
        (Provisioning::MC2_UNMANAGED, 1.3),
        (Provisioning::ISOLATED_ONLY, 1.45),
        (Provisioning::NEITHER, 2.7),
    ] {
        close(analyze(&system, prov).unwrap().total_utilization, total);
    }
    // (iv) core 0: a0 at 11ms/10ms leaves Level C nothing.
    let neither = analyze(&system, Provisioning::NEITHER).unwrap();
    close(neither.level_c.per_core[0].capacity, 0.0);
    close(neither.level_c.per_core[1].capacity, 0.4);
}

#[test]
fn missing_pet_unmanaged_makes_unmanaged_configurations_unavailable() {
    // c0 (task[2]) has no pet_unmanaged: (ii) and (iv) cannot be evaluated;
    // (i) and (iii) keep their totals 0.85 and 1.45.
    let system = parse(&four_config_system(false));
    let r = report(&system);
    let c = &r.configurations;
    for config in [&c.mc2_unmanaged, &c.neither] {
        assert!(!config.available, "{}", config.label);
        assert_eq!(config.total_utilization, None);
        assert_eq!(config.schedulable, None);
        assert!(config.levels.is_none());
        let reason = config.reason.as_deref().unwrap();
        assert!(reason.contains("task[2]") && reason.contains("c0"), "{reason}");
    }
    assert!(c.mc2_isolated.available && c.isolated_only.available);
    close(c.mc2_isolated.total_utilization.unwrap(), 0.85);
    close(c.isolated_only.total_utilization.unwrap(), 1.45);
    assert!(analyze(&system, Provisioning::MC2_UNMANAGED).is_none());
    assert!(analyze(&system, Provisioning::NEITHER).is_none());
}
