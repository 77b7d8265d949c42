//! The case-study systems of mc2-hardware-management §4.3 (Tables 1 and 2),
//! checked against totals worked out by hand from the tables' PETs.

use criticore::analysis::report::report;
use criticore::{parse_task_system, Format};

fn load(name: &str) -> criticore::TaskSystem {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    parse_task_system(&text, Format::Toml, &path).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn llc_heavy_configuration_totals_match_the_hand_sums() {
    // By hand from Table 1, e.g. (i): Level A 0.56 + Level B 0.90 + Level C 4·0.535625 = 3.6025.
    let r = report(&load("mc2-llc-heavy.toml"));
    let c = &r.configurations;
    assert!(close(c.mc2_isolated.total_utilization.unwrap(), 3.6025));
    assert!(close(c.mc2_unmanaged.total_utilization.unwrap(), 4.7575));
    assert!(close(c.isolated_only.total_utilization.unwrap(), 5.4675));
    assert!(close(c.neither.total_utilization.unwrap(), 8.665));
    // (i) schedulable at every level; (ii)–(iv) exceed the 4 cores.
    assert!(r.schedulable);
    assert_eq!(c.mc2_isolated.schedulable, Some(true));
    for other in [&c.mc2_unmanaged, &c.isolated_only, &c.neither] {
        assert_eq!(other.schedulable, Some(false));
        assert!(other.total_utilization.unwrap() > 4.0);
    }
}

#[test]
fn llc_heavy_level_values_match_the_hand_sums() {
    let r = report(&load("mc2-llc-heavy.toml"));
    // Level A, CPU0: T0 + T1 at Level-A PETs = 4/100 + 15/100.
    assert!(close(r.levels.A.per_core[0].utilization, 0.19));
    // Level B, CPU3: T2 (A) 18/100 + T1 11/100 + T4 20/200 + T5 44/400 = 0.5.
    assert!(close(r.levels.B.per_core[3].utilization, 0.5));
    // Level C: û = 0.66, 0.66, 0.66, 0.56; U_C = 2.1425; u_max = 359/1600.
    assert!(close(r.levels.C.supply, 2.54));
    assert!(close(r.levels.C.total_utilization, 2.1425));
    assert!(close(r.levels.C.max_task_utilization, 0.224375));
    assert!(close(r.levels.C.largest_utilization_sum, 3.0 * 0.224375));
    assert_eq!(r.levels.C.largest_pet_sum_ns, 3 * 359_000_000);
    // σ for CPU0 (T0 2/100, T1 10/100, T3 27/200, T4 17/200 at Level-C PETs):
    // 2·(2·0.98 + 10·0.9 + 27·0.865 + 17·0.915) ms = 99.74 ms.
    assert!((r.levels.C.per_core[0].supply_delay_ns - 99.74e6).abs() < 1.0);
}

#[test]
fn llc_heavy_level_a_tables_give_each_job_its_pet() {
    let r = report(&load("mc2-llc-heavy.toml"));
    let t0 = &r.level_a_tables[0];
    assert_eq!(t0.hyperperiod_ns, 100_000_000);
    let slots = t0.slots.as_ref().unwrap();
    // Two tasks of equal period: file order, T0 then T1, back to back.
    assert_eq!(slots.len(), 2);
    assert_eq!((slots[0].task.as_str(), slots[0].start_ns, slots[0].length_ns), ("T0@cpu0", 0, 4_000_000));
    assert_eq!((slots[1].task.as_str(), slots[1].start_ns, slots[1].length_ns), ("T1@cpu0", 4_000_000, 15_000_000));
}

#[test]
fn llc_light_configuration_totals_match_the_hand_sums() {
    // By hand from Table 2 (docs/analysis.md shows the sums):
    // (i) A 3·9/100 + 3·4/100 + 2·9/100 = 0.57, B 3·46/400 + 54/400 = 0.48,
    //     C 6·(136/800 + 271/1600) = 2.03625; total 3.08625.
    let r = report(&load("mc2-llc-light.toml"));
    let c = &r.configurations;
    assert!(close(c.mc2_isolated.total_utilization.unwrap(), 3.08625));
    assert!(close(c.mc2_unmanaged.total_utilization.unwrap(), 3.14875));
    assert!(close(c.isolated_only.total_utilization.unwrap(), 4.20375));
    assert!(close(c.neither.total_utilization.unwrap(), 4.38625));
}
