//! The three-phase optimizer of mc2-io-ipc-os-isolation §6.1 (issue 5):
//! (a) phase-1 packing on hand-worked cases, CE groups split exactly when
//! needed; (b) phase-2 buffer placement per scheme; (c) the cost model against
//! hand values of its documented formula; (d) agreement with the analysis
//! module and with brute force over every way split; (e) `optimize` →
//! `with_placements` → re-parse keeps every decision.

use criticore::analysis::{mc2, Provisioning};
use criticore::generate::mc2_io::{generate, Scenario};
use criticore::model::write::{study_system_toml, with_placements};
use criticore::model::{
    Allocation, CostCurve, IoBuffer, IoKind, IpcLink, IpcMethod, Level, LevelPets, Partition, Platform, Task, TaskSystem,
};
use criticore::policy::cost::{
    CostModel, CE_RECEIVE, CE_SEND, CL_RECEIVE, CL_SEND, COPY_BYTES_PER_S, CPU_SOURCED_COPY, IPC_MESSAGES_PER_JOB, SBP_FIXED_NS,
    SBP_NS_PER_BYTE,
};
use criticore::optimize::framework::{self, analysis_schedulable, place, way_problem};
use criticore::optimize::llc_ways::TIE_EPS;
use criticore::optimize::scheme::{IoPolicy, IpcPolicy};
use criticore::optimize::{optimize, packing, Scheme, Unschedulable};
use criticore::{parse_task_system, Format};

const MS: u64 = 1_000_000;

// ------------------------------------------------------------------ builders

/// T = 2^20 ns: a PET of k·2^14 ns is a utilization of exactly k/64, so every
/// sum in the packing cases below is exact in f64.
const T64: u64 = 1 << 20;
const SIXTY_FOURTH: u64 = 1 << 14;

fn scheme(name: &str) -> Scheme {
    Scheme::parse(name).unwrap_or_else(|| panic!("scheme {name}"))
}

fn platform(cores: usize) -> Platform {
    Platform { cores, ..Platform::preset("imx6").unwrap() }
}

fn system(cores: usize, tasks: Vec<Task>) -> TaskSystem {
    TaskSystem { platform: platform(cores), tasks, servers: vec![], allocation: None, regulation: None, devices: vec![], chains: vec![], labels: Vec::new() }
}

fn curve(reload: f64) -> Option<CostCurve> {
    Some(CostCurve { llc_slowdown: 2.95, wss_ways: 4, reload })
}

/// Level-B task of period T64 with Level-B size k/64 (before reload), no core yet.
fn b64(name: &str, k: u64, reload: f64) -> Task {
    let mut pets = LevelPets::default();
    pets.set(Level::B, k * SIXTY_FOURTH);
    pets.set(Level::C, k * SIXTY_FOURTH / 2);
    Task { cost: curve(reload), ..Task::mc2(name, Level::B, None, T64, pets) }
}

/// Level-A task of period T64: PET^A = a/64, PET^B = b/64 of the period.
fn a64(name: &str, a: u64, b: u64) -> Task {
    let mut pets = LevelPets::default();
    pets.set(Level::A, a * SIXTY_FOURTH);
    pets.set(Level::B, b * SIXTY_FOURTH);
    pets.set(Level::C, b * SIXTY_FOURTH / 2);
    Task { cost: curve(0.0), ..Task::mc2(name, Level::A, None, T64, pets) }
}

/// Link task `from` → `to` (a message queue of 256 B, placement undecided).
fn link(tasks: &mut [Task], from: usize, to: usize) {
    tasks[from].ipc = Some(IpcLink { to, bytes: 256, method: None, buffer: None });
}

fn cores_of(s: &TaskSystem) -> Vec<Option<usize>> {
    s.tasks.iter().map(|t| t.core).collect()
}

/// Phases 1 and 2: pack by IPC groups (`groups`) or task by task, then place
/// the buffers under `sc`; Err(task) if phase 1 finds a task that fits nowhere.
fn phases_1_2(s: &TaskSystem, sc: Scheme, groups: bool, seed: u64) -> Result<TaskSystem, usize> {
    let cores = packing::pack(s, groups)?;
    Ok(place(s, &cores, sc, seed))
}

/// Phases 1 and 2 with packing by groups (scheme O) or by task (scheme C).
fn placed(s: &TaskSystem, name: &str) -> TaskSystem {
    let sc = scheme(name);
    phases_1_2(s, sc, sc.packs_groups(), 0).unwrap_or_else(|t| panic!("task {t} fits nowhere"))
}

// ------------------------------------------------------------------ (a) packing

#[test]
fn a_group_that_fits_is_kept_together_and_gets_ce() {
    // 2 cores. Items by size: group {B0 → B1} = 16/64 + 16/64 = 32/64, then B2 = 30/64.
    // Group → core 0 (both empty, ties to the lower core); B2 → core 1 (load 0 < 32/64).
    let mut tasks = vec![b64("B0", 16, 0.0), b64("B1", 16, 0.0), b64("B2", 30, 0.0)];
    link(&mut tasks, 0, 1);
    let s = system(2, tasks);
    let p = placed(&s, "O|C");
    assert_eq!(cores_of(&p), vec![Some(0), Some(0), Some(1)]);
    assert_eq!(p.tasks[0].ipc.unwrap().method, Some(IpcMethod::Ce));
    // Packing by task (C) worst-fits B2 (30) first → core 0, then B0 (16) → core 1, B1 (16) → core 1
    // (loads 30 vs 16): the pair ends together by chance, but unmanaged in Level C.
    let c = placed(&s, "C|C");
    assert_eq!(cores_of(&c), vec![Some(1), Some(1), Some(0)]);
    assert_eq!((c.tasks[0].ipc.unwrap().method, c.tasks[0].ipc.unwrap().buffer), (None, Some(Partition::LevelC)));
}

#[test]
fn a_group_is_split_exactly_when_the_emptiest_core_cannot_take_it() {
    // 2 cores; singles S0 = S1 = 34/64 go first (larger than the group), one per core:
    // loads 34/64, 34/64, remaining 30/64 each.
    let build = |g1: u64| {
        let mut tasks = vec![b64("S0", 34, 0.0), b64("S1", 34, 0.0), b64("G0", 16, 0.0), b64("G1", g1, 0.0)];
        link(&mut tasks, 2, 3);
        system(2, tasks)
    };
    // Group 16 + 14 = 30/64 fits core 0 exactly (34 + 30 = 64/64 ≤ 1): kept together, CE.
    let fits = placed(&build(14), "O|C");
    assert_eq!(cores_of(&fits), vec![Some(0), Some(1), Some(0), Some(0)]);
    assert_eq!(fits.tasks[2].ipc.unwrap().method, Some(IpcMethod::Ce));
    // Group 16 + 15 = 31/64 > 30/64 fits no core: split into [G0] = 16 and [G1] = 15.
    // G0 → core 0 (tie, lower) → 50/64; G1 → core 1 (34 < 50) → 49/64. Split: CL.
    let split = placed(&build(15), "O|C");
    assert_eq!(cores_of(&split), vec![Some(0), Some(1), Some(0), Some(1)]);
    assert_eq!(split.tasks[2].ipc.unwrap().method, Some(IpcMethod::Cl));
}

#[test]
fn a_group_of_three_is_split_in_link_order_when_needed() {
    // 4 cores. Singles S0..S3 of sizes 40, 38, 36, 34 (/64), all Level B (S0 with
    // PET^B 32/64 and ρ = 0.25: size 32·1.25 = 40/64), and the Level-B group
    // G0 → G1 → G2 of sizes (8, 8, g2)/64.
    let build = |g2: u64| {
        let mut tasks = vec![
            b64("S0", 32, 0.25),
            b64("S1", 38, 0.0),
            b64("S2", 36, 0.0),
            b64("S3", 34, 0.0),
            b64("G0", 8, 0.0),
            b64("G1", 8, 0.0),
            b64("G2", g2, 0.0),
        ];
        link(&mut tasks, 4, 5);
        link(&mut tasks, 5, 6);
        system(4, tasks)
    };
    // Worst fit, largest first: S0 → c0 (40), S1 → c1 (38), S2 → c2 (36), S3 → c3 (34).
    // g2 = 14: group = 30/64; emptiest core c3 has 64 − 34 = 30/64 left: fits, all on c3.
    let fits = placed(&build(14), "O|C");
    assert_eq!(cores_of(&fits), vec![Some(0), Some(1), Some(2), Some(3), Some(3), Some(3), Some(3)]);
    assert!([4, 5].iter().all(|&i| fits.tasks[i].ipc.unwrap().method == Some(IpcMethod::Ce)));
    // g2 = 16: group = 32/64 > 30/64 on every core (left: 24, 26, 28, 30): split into the
    // first ⌈3/2⌉ = 2 tasks [G0, G1] = 16/64 and [G2] = 16/64, queued in that order.
    // [G0, G1] → c3 (34 → 50); [G2] → now-emptiest c2 (36 → 52).
    let split = placed(&build(16), "O|C");
    assert_eq!(cores_of(&split), vec![Some(0), Some(1), Some(2), Some(3), Some(3), Some(3), Some(2)]);
    assert_eq!(split.tasks[4].ipc.unwrap().method, Some(IpcMethod::Ce), "G0 → G1 stay together");
    assert_eq!(split.tasks[5].ipc.unwrap().method, Some(IpcMethod::Cl), "G1 → G2 were split");
    // The same system packed task by task (C): worst fit decreasing over
    // S0 40, S1 38, S2 36, S3 34, G2 16, G0 8, G1 8 (ties in task order):
    // S0..S3 → c0..c3; G2 → c3 (34 → 50); G0 → c2 (36 → 44); G1 → c1 (loads 40, 38, 44, 50: 38 → 46).
    let c = placed(&build(16), "C|C");
    assert_eq!(cores_of(&c), vec![Some(0), Some(1), Some(2), Some(3), Some(2), Some(1), Some(3)]);
    assert_eq!(packing::pack(&build(16), false).unwrap(), cores_of(&c));
}

#[test]
fn levels_a_and_b_are_separate_capacities_when_fitting() {
    // As above with g2 = 16 (group 32/64), but S1 is a Level-A task with PET^A = 38/64 and
    // PET^B = 24/64: its worst-fit load is max(38, 24) = 38/64, yet a Level-B group only
    // adds to the Level-B sum. Order by load: c3 (34), c2 (36), c1 (38), c0 (40):
    // c3: B 34 + 32 = 66 > 64; c2: 36 + 32 = 68 > 64; c1: A 38 + 0 ≤ 64 and B 24 + 32 = 56 ≤ 64:
    // the whole group fits on c1, unsplit.
    let mut tasks = vec![
        b64("S0", 32, 0.25),
        a64("S1", 38, 24),
        b64("S2", 36, 0.0),
        b64("S3", 34, 0.0),
        b64("G0", 8, 0.0),
        b64("G1", 8, 0.0),
        b64("G2", 16, 0.0),
    ];
    link(&mut tasks, 4, 5);
    link(&mut tasks, 5, 6);
    let s = system(4, tasks);
    assert_eq!(packing::pack(&s, true).unwrap(), vec![Some(0), Some(1), Some(2), Some(3), Some(1), Some(1), Some(1)]);
}

#[test]
fn halves_are_split_again_until_they_fit() {
    // 2 cores; S0 = S1 = 40/64 → c0, c1 (24/64 left on each). Group (13, 13, 6)/64 = 32/64
    // fits nowhere → [G0, G1] = 26/64 and [G2] = 6/64. [G0, G1] (26 > 24) fits nowhere →
    // [G0] = 13 and [G1] = 13, queued before [G2] (larger first). G0 → c0 (tie) → 53;
    // G1 → c1 → 53; G2 → c0 (tie) → 59.
    let mut tasks = vec![b64("S0", 40, 0.0), b64("S1", 40, 0.0), b64("G0", 13, 0.0), b64("G1", 13, 0.0), b64("G2", 6, 0.0)];
    link(&mut tasks, 2, 3);
    link(&mut tasks, 3, 4);
    let s = system(2, tasks);
    assert_eq!(packing::pack(&s, true).unwrap(), vec![Some(0), Some(1), Some(0), Some(1), Some(0)]);
}

#[test]
fn the_group_from_the_issue_is_split_on_empty_cores() {
    // Level-B sizes 0.5, 0.3, 0.3 (T = 10 ms): 1.1 fits no core even empty. Halves
    // [B0, B1] = 0.8 → core 0, [B2] = 0.3 → core 1.
    let task = |name: &str, pet_ms: u64| {
        let mut pets = LevelPets::default();
        pets.set(Level::B, pet_ms * MS);
        pets.set(Level::C, pet_ms * MS / 2);
        Task { cost: curve(0.0), ..Task::mc2(name, Level::B, None, 10 * MS, pets) }
    };
    let mut tasks = vec![task("B0", 5), task("B1", 3), task("B2", 3)];
    link(&mut tasks, 0, 1);
    link(&mut tasks, 1, 2);
    let s = system(2, tasks);
    let p = placed(&s, "O|C+A/B-ALL");
    assert_eq!(cores_of(&p), vec![Some(0), Some(0), Some(1)]);
    assert_eq!(p.tasks[0].ipc.unwrap().method, Some(IpcMethod::Ce));
    assert_eq!(p.tasks[1].ipc.unwrap().method, Some(IpcMethod::Cl));
}

#[test]
fn a_single_task_that_fits_nowhere_is_reported() {
    // 2 cores: 48/64 and 48/64 leave 16/64 each; task 2 (32/64) fits nowhere.
    let s = system(2, vec![b64("S0", 48, 0.0), b64("S1", 48, 0.0), b64("X", 32, 0.0)]);
    assert_eq!(packing::pack(&s, false), Err(2));
    assert_eq!(packing::pack(&s, true), Err(2));
    assert_eq!(phases_1_2(&s, scheme("C|C"), false, 0).unwrap_err(), 2);
    for sc in Scheme::ALL {
        assert_eq!(optimize(&s, sc, 0).outcome, Err(Unschedulable::Packing { task: 2 }), "{sc}");
    }
    // A group (20 + 20)/64 is split; its first task (index 2) then fits nowhere.
    let mut tasks = vec![b64("S0", 48, 0.0), b64("S1", 48, 0.0), b64("G0", 20, 0.0), b64("G1", 20, 0.0)];
    link(&mut tasks, 2, 3);
    assert_eq!(packing::pack(&system(2, tasks), true), Err(2));
}

// ------------------------------------------------------------------ (b) buffers

/// Generated systems with many I/O tasks, placed under `name` with `seed`.
fn generated_placed(name: &str, seed: u64) -> Vec<TaskSystem> {
    (0..12u64)
        .filter_map(|k| {
            // High bandwidth (every task does I/O at low U) or Medium; Short / Long periods.
            let s = Scenario([(k % 3) as u8, if k % 2 == 0 { 0 } else { 2 }, 1, 0, (k % 2) as u8, 1 + (k % 2) as u8, 1]);
            let (sys, _) = generate(s, 1.5 + 0.25 * (k % 4) as f64, 900 + k);
            let sc = scheme(name);
            phases_1_2(&sys, sc, sc.packs_groups(), seed).ok()
        })
        .collect()
}

#[test]
fn io_buffers_follow_the_scheme() {
    for sc in Scheme::ALL {
        let systems = generated_placed(sc.name(), 3);
        assert!(systems.len() >= 10, "{sc}: most of these systems pack");
        for s in &systems {
            for level in [Level::A, Level::B] {
                let io: Vec<usize> = s.at_level(level).filter(|&i| s.tasks[i].io.is_some()).collect();
                let own = |i: usize| s.tasks[i].io.unwrap().buffer == Some(Partition::Core(s.tasks[i].core.unwrap()));
                let in_c = |i: usize| s.tasks[i].io.unwrap().buffer == Some(Partition::LevelC);
                match sc.io {
                    IoPolicy::LevelC => assert!(io.iter().all(|&i| in_c(i)), "{sc}"),
                    IoPolicy::All => assert!(io.iter().all(|&i| own(i)), "{sc}"),
                    IoPolicy::LongPeriods | IoPolicy::ShortPeriods => {
                        // ⌈k/2⌉ in their own bank: the longest (LP) / shortest (SP) periods, ties in file order.
                        let mut order = io.clone();
                        order.sort_by_key(|&i| (if sc.io == IoPolicy::LongPeriods { u64::MAX - s.tasks[i].period_ns } else { s.tasks[i].period_ns }, i));
                        let k = io.len().div_ceil(2);
                        for (rank, &i) in order.iter().enumerate() {
                            assert_eq!(own(i), rank < k, "{sc} level {level}: task {i} (rank {rank} of {})", io.len());
                            assert!(own(i) || in_c(i));
                        }
                    }
                    IoPolicy::Random => assert!(io.iter().all(|&i| s.tasks[i].io.unwrap().buffer.is_some()), "{sc}"),
                }
            }
            // Level-C buffers are always in Level C (Table 1), I/O and IPC.
            for i in s.at_level(Level::C) {
                let t = &s.tasks[i];
                if let Some(io) = t.io {
                    assert_eq!(io.buffer, Some(Partition::LevelC), "{sc}");
                }
                if let Some(l) = t.ipc {
                    assert_eq!((l.method, l.buffer), (None, Some(Partition::LevelC)), "{sc}");
                }
            }
            // A/B IPC per policy x.
            for i in s.at_level(Level::A).chain(s.at_level(Level::B)) {
                let Some(l) = s.tasks[i].ipc else { continue };
                let same_core = s.tasks[i].core == s.tasks[l.to].core;
                match sc.ipc {
                    IpcPolicy::LevelC => assert_eq!((l.method, l.buffer), (None, Some(Partition::LevelC))),
                    IpcPolicy::Optimized => {
                        assert_eq!(l.method, Some(if same_core { IpcMethod::Ce } else { IpcMethod::Cl }));
                        assert_eq!(l.buffer, None);
                    }
                    IpcPolicy::Random => assert!(l.method.is_none() && l.buffer.is_some()),
                }
            }
        }
    }
}

#[test]
fn lp_and_sp_split_a_hand_worked_level() {
    // 2 cores, Level B, five I/O tasks with periods 96, 192, 96, 192, 192 ms (harmonic),
    // ⌈5/2⌉ = 3 in their own bank. LP: the three 192-ms tasks (1, 3, 4). SP: the two 96-ms
    // tasks (0, 2), then the first 192-ms one in file order (1).
    let task = |i: usize, period_ms: u64| {
        let mut pets = LevelPets::default();
        pets.set(Level::B, period_ms * MS / 20);
        pets.set(Level::C, period_ms * MS / 40);
        let io = IoBuffer { bandwidth_bytes_per_s: 1_000_000, kind: IoKind::Direct, buffer: None };
        Task { cost: curve(0.0), io: Some(io), ..Task::mc2(format!("B{i}"), Level::B, None, period_ms * MS, pets) }
    };
    let s = system(2, [96, 192, 96, 192, 192].iter().enumerate().map(|(i, &p)| task(i, p)).collect());
    let own = |p: &TaskSystem| -> Vec<bool> { p.tasks.iter().map(|t| matches!(t.io.unwrap().buffer, Some(Partition::Core(c)) if Some(c) == t.core)).collect() };
    assert_eq!(own(&placed(&s, "C|C+A/B-LP")), vec![false, true, false, true, true]);
    assert_eq!(own(&placed(&s, "O|C+A/B-SP")), vec![true, true, true, false, false]);
    assert_eq!(own(&placed(&s, "C|C+A/B-ALL")), vec![true; 5]);
    assert_eq!(own(&placed(&s, "C|C")), vec![false; 5]);
}

#[test]
fn random_placements_are_deterministic_for_a_seed() {
    let a = generated_placed("R|R", 11);
    let b = generated_placed("R|R", 11);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let c = generated_placed("R|R", 12);
    assert_ne!(format!("{a:?}"), format!("{c:?}"), "another seed draws other banks");
    // R draws from all eight banks: both core banks and Level C occur.
    let buffers: Vec<Partition> = a.iter().flat_map(|s| s.tasks.iter().filter(|t| matches!(t.level, Some(Level::A | Level::B))).filter_map(|t| t.io.and_then(|io| io.buffer))).collect();
    assert!(buffers.contains(&Partition::LevelC) && buffers.iter().any(|p| matches!(p, Partition::Core(_))));
    // optimize itself is deterministic under R|R.
    let (sys, _) = generate(Scenario([0, 1, 1, 0, 0, 1, 1]), 2.0, 5);
    assert_eq!(format!("{:?}", optimize(&sys, scheme("R|R"), 9)), format!("{:?}", optimize(&sys, scheme("R|R"), 9)));
}

// ------------------------------------------------------------------ (c) cost model

/// One Level-B task (T = 10 ms, PET^B = 2 ms, PET^C = 1 ms, s = 2.95, WSS 4 ways,
/// ρ = 0.1) on `core`, alone in the system unless `more` adds tasks.
fn lone_b(core: usize) -> Task {
    let mut pets = LevelPets::default();
    pets.set(Level::B, 2 * MS);
    pets.set(Level::C, MS);
    Task { cost: Some(CostCurve { llc_slowdown: 2.95, wss_ways: 4, reload: 0.1 }), ..Task::mc2("B0", Level::B, Some(core), 10 * MS, pets) }
}

#[test]
fn cost_curve_matches_hand_values() {
    // No I/O, no IPC: C(w) = PET·g(w)·(1 + ρ), g(w) = 1 + (s − 1)·e^(−r·w),
    // r = ln((s − 1)/ε)/wss = ln(1.95e6)/4, so e^(−r·w) = (1.95e6)^(−w/4):
    //   w = 0:  g = 2.95                      → 2e6·2.95·1.1      = 6 490 000 ns
    //   w = 2:  e^(−2r) = 1/√1.95e6 = 7.161149e-4, g = 1.001396424 → 2 203 072.13 ns
    //   w = 16: e^(−16r) = 6.9e-26, g = 1     → 2e6·1.1           = 2 200 000 ns
    for core in [0, 1] {
        // (Core 0 handles interrupts, but there is no I/O: nothing to charge.)
        let s = system(4, vec![lone_b(core)]);
        let m = CostModel::new(&s);
        let close = |got: f64, want: f64| assert!((got - want).abs() < 1e-3, "{got} vs {want}");
        close(m.pet_ns(0, Level::B, 0, 0).unwrap(), 6_490_000.0);
        close(m.pet_ns(0, Level::B, 2, 0).unwrap(), 2_203_072.132_8);
        close(m.pet_ns(0, Level::B, 16, 0).unwrap(), 2_200_000.0);
        // Level C: the same curve on PET^C = 1 ms.
        close(m.pet_ns(0, Level::C, 0, 0).unwrap(), 3_245_000.0);
        close(m.pet_ns(0, Level::C, 2, 0).unwrap(), 1_101_536.066_4);
        assert_eq!(m.pet_ns(0, Level::A, 16, 0), None, "a Level-B task has no Level-A PET");
        close(m.utilization(0, Level::B, 0, 0).unwrap(), 0.649);
    }
    // A Level-A task is not preempted: ρ is ignored at every level (PET^A = 3 ms → 3e6·2.95).
    let mut a = lone_b(1);
    a.level = Some(Level::A);
    a.criticality = Level::A.criticality();
    a.pet_ns.set(Level::A, 3 * MS);
    let m = CostModel::new(&system(4, vec![a]));
    assert!((m.pet_ns(0, Level::A, 0, 0).unwrap() - 8_850_000.0).abs() < 1e-3);
    assert!((m.pet_ns(0, Level::B, 16, 0).unwrap() - 2_000_000.0).abs() < 1e-3);
}

#[test]
fn io_buffer_in_level_c_costs_the_cpu_sourced_copy() {
    // 10 MB/s, T = 10 ms: 100 000 B per job; copy time = 100 000 / COPY_BYTES_PER_S
    // = 100 000 · 2925.67 µs / 614 400 = 476 183.27 ns. From Level C it takes
    // CPU_SOURCED_COPY = 5321.33/2925.67 − 1 = 0.818841 longer: +389 918.62 ns.
    let copy_ns = 10e6 * 10e-3 / COPY_BYTES_PER_S * 1e9;
    assert!((copy_ns - 476_183.268).abs() < 1e-2);
    assert!((CPU_SOURCED_COPY * copy_ns - 389_918.620).abs() < 1e-2);
    let with_buffer = |buffer: Partition, kind: IoKind| {
        let mut t = lone_b(1);
        t.io = Some(IoBuffer { bandwidth_bytes_per_s: 10_000_000, kind, buffer: Some(buffer) });
        CostModel::new(&system(4, vec![t]))
    };
    for kind in [IoKind::Direct, IoKind::Copy] {
        let (c, own) = (with_buffer(Partition::LevelC, kind), with_buffer(Partition::Core(1), kind));
        // w = 16: the task's extra-miss share e^(−16r) ≈ 7e-26 silences the DMA bank term,
        // and the bus term (1 + a_bus·φ(D)) is the same for both placements.
        let diff = c.pet_ns(0, Level::B, 16, 0).unwrap() - own.pet_ns(0, Level::B, 16, 0).unwrap();
        assert!((diff - CPU_SOURCED_COPY * copy_ns).abs() < 1e-6, "{kind:?}: {diff}");
        // At Level C the Level-B-valued difference scales with PET^C/PET^B = 1/2.
        let diff_c = c.pet_ns(0, Level::C, 16, 0).unwrap() - own.pet_ns(0, Level::C, 16, 0).unwrap();
        assert!((diff_c - 0.5 * CPU_SOURCED_COPY * copy_ns).abs() < 1e-6, "{kind:?}: {diff_c}");
        // Another core's bank is "another bank" too: the copy is as slow as from Level C.
        let other = with_buffer(Partition::Core(2), kind);
        let d = other.pet_ns(0, Level::B, 16, 0).unwrap() - own.pet_ns(0, Level::B, 16, 0).unwrap();
        assert!((d - CPU_SOURCED_COPY * copy_ns).abs() < 1e-6, "{kind:?}: {d}");
    }
    // The camera's intermediate buffers stay in Level C: Copy costs one more CPU-sourced copy.
    let d = with_buffer(Partition::Core(1), IoKind::Copy).pet_ns(0, Level::B, 16, 0).unwrap()
        - with_buffer(Partition::Core(1), IoKind::Direct).pet_ns(0, Level::B, 16, 0).unwrap();
    assert!((d - CPU_SOURCED_COPY * copy_ns).abs() < 1e-6, "{d}");
}

#[test]
fn sbp_costs_more_than_ce_by_the_message_costs() {
    // Two Level-B tasks on core 1, B0 → B1 with 4096-B messages. Per job:
    // IPC_MESSAGES_PER_JOB·(SBP_FIXED_NS + SBP_NS_PER_BYTE·4096) = 10·(1000 + 16 384) = 173 840 ns
    // of SBP; CE costs CE_SEND (sender) / CE_RECEIVE (receiver) of that, so SBP − CE is
    // 173 840·(1 − 0.1105) = 154 630.68 ns for the sender, 173 840·(1 − 0.3485) = 113 256.76 for the receiver.
    let msg = IPC_MESSAGES_PER_JOB * (SBP_FIXED_NS + SBP_NS_PER_BYTE * 4096.0);
    assert!((msg - 173_840.0).abs() < 1e-9);
    let model = |method: IpcMethod| {
        let mut tasks = vec![lone_b(1), lone_b(1)];
        tasks[1].name = "B1".into();
        tasks[0].ipc = Some(IpcLink { to: 1, bytes: 4096, method: Some(method), buffer: None });
        CostModel::new(&system(4, tasks))
    };
    let (sbp, ce, cl) = (model(IpcMethod::Sbp), model(IpcMethod::Ce), model(IpcMethod::Cl));
    for w in [0, 4, 16] {
        let d = |a: &CostModel, b: &CostModel, i: usize, locked: usize| a.pet_ns(i, Level::B, w, locked).unwrap() - b.pet_ns(i, Level::B, w, 0).unwrap();
        assert!((d(&sbp, &ce, 0, 0) - 154_630.68).abs() < 1e-6, "sender, w = {w}");
        assert!((d(&sbp, &ce, 1, 0) - 113_256.76).abs() < 1e-6, "receiver, w = {w}");
        assert!((d(&sbp, &ce, 0, 0) - msg * (1.0 - CE_SEND)).abs() < 1e-6);
        assert!((d(&sbp, &ce, 1, 0) - msg * (1.0 - CE_RECEIVE)).abs() < 1e-6);
        // CL not locked falls back to SBP; locked, it costs CL_SEND / CL_RECEIVE of SBP.
        assert!(d(&cl, &sbp, 0, 0).abs() < 1e-6 && d(&cl, &sbp, 1, 0).abs() < 1e-6);
        assert!((d(&cl, &ce, 0, 1) - msg * (CL_SEND - CE_SEND)).abs() < 1e-6);
        assert!((d(&cl, &ce, 1, 1) - msg * (CL_RECEIVE - CE_RECEIVE)).abs() < 1e-6);
    }
    assert_eq!(cl.lockable_bytes(), 4096);
    assert_eq!((cl.locked_count(4095), cl.locked_count(4096)), (0, 1));
}

// ------------------------------------------------------------------ (d) analysis and brute force

/// Generated systems across scenarios and utilizations (deterministic).
fn sample_systems(n: usize) -> Vec<TaskSystem> {
    (0..n)
        .map(|k| {
            let s = Scenario::from_id((k * 97 + 13) % Scenario::count()).unwrap();
            let u = 1.5 + 0.5 * (k % 11) as f64; // 1.5 … 6.5
            generate(s, u, 4_000 + k as u64).0
        })
        .collect()
}

#[test]
fn schedulable_by_the_optimizer_means_schedulable_by_the_analysis() {
    let mut verdicts = [0usize; 3]; // schedulable, phase 1 fails, phase 3 fails
    for (k, sys) in sample_systems(200).iter().enumerate() {
        for sc in Scheme::ALL {
            let o = optimize(sys, sc, k as u64);
            match &o.outcome {
                Ok(sol) => {
                    verdicts[0] += 1;
                    assert_eq!(analysis_schedulable(&o.system), Some(true), "system {k} under {sc}: {sol:?}");
                    // The allocation uses at most the LLC.
                    let ways: u32 = sol.per_core_ways.iter().sum::<u32>() + sol.level_c_ways + sol.lock_ways;
                    assert!(ways <= 16);
                }
                Err(Unschedulable::Packing { .. }) => verdicts[1] += 1,
                Err(Unschedulable::Ways) => verdicts[2] += 1,
            }
        }
    }
    // All three outcomes occur in the sample.
    assert!(verdicts.iter().all(|&v| v > 20), "{verdicts:?}");
}

/// The study evaluates all nine schemes with `optimize_all` (one packing per
/// kind); it must give what `optimize` gives scheme by scheme.
#[test]
fn optimize_all_equals_optimize_per_scheme() {
    for (k, sys) in sample_systems(60).iter().enumerate() {
        let all = framework::optimize_all(sys, k as u64);
        assert_eq!(all.len(), 9);
        for (sc, o) in Scheme::ALL.iter().zip(&all) {
            let one = optimize(sys, *sc, k as u64);
            assert_eq!(format!("{:?}", o.outcome), format!("{:?}", one.outcome), "system {k} {sc}");
            assert_eq!(o.system, one.system, "system {k} {sc}");
        }
    }
}

/// The objective the optimizer reports is the total Level-C utilization of the
/// system it writes, conditioned: the PETs `analyze` and `simulate` will use
/// (up to rounding them up to whole ns, < 1 ns per task and period).
#[test]
fn the_objective_is_the_conditioned_level_c_utilization() {
    let mut off = Vec::new();
    for (k, sys) in sample_systems(200).iter().enumerate() {
        for sc in Scheme::ALL {
            let o = optimize(sys, sc, k as u64);
            let Ok(sol) = &o.outcome else { continue };
            let cond = criticore::policy::pet::conditioned(&o.system).unwrap();
            let total = mc2::total_utilization(&cond, Provisioning::MC2_ISOLATED).unwrap();
            let slack: f64 = cond.tasks.iter().map(|t| 1.0 / t.period_ns as f64).sum();
            if !(total >= sol.objective - 1e-9 && total <= sol.objective + slack + 1e-9) {
                off.push(format!("system {k} {sc}: conditioned {total}, objective {}", sol.objective));
            }
        }
    }
    assert!(off.is_empty(), "{} mismatches:\n{}", off.len(), off.join("\n"));
}

/// Every way split (W_0..W_{m−1}, W_C) of `n` ways, W_lock fixed outside.
fn each_split(m: usize, n: u32, f: &mut impl FnMut(&[u32], u32)) {
    fn rec(ws: &mut Vec<u32>, m: usize, left: u32, f: &mut impl FnMut(&[u32], u32)) {
        if ws.len() == m {
            for wc in 0..=left {
                f(ws, wc);
            }
            return;
        }
        for w in 0..=left {
            ws.push(w);
            rec(ws, m, left - w, f);
            ws.pop();
        }
    }
    rec(&mut Vec::new(), m, n, f);
}

/// The least objective over every lock-region size and every way split of the
/// remaining ways, on phase-3 tables built from the placed system (brute force).
fn brute_force(placed: &TaskSystem) -> Option<f64> {
    let cost = CostModel::new(placed);
    let n = placed.platform.llc.ways;
    let way_bytes = placed.platform.llc.size_bytes / n as u64;
    let mut best: Option<f64> = None;
    for lock in 0..=n {
        let locked = cost.locked_count(lock as u64 * way_bytes);
        // A larger lock region that locks no more buffers only takes ways away:
        // its splits are a subset of the smaller region's (same tables).
        if lock > 0 && locked == cost.locked_count((lock as u64 - 1) * way_bytes) {
            continue;
        }
        let problem = way_problem(placed, &cost, n - lock, locked);
        each_split(placed.platform.cores, n - lock, &mut |ws, wc| {
            if let Some(obj) = problem.evaluate(ws, wc, 0) {
                best = Some(best.map_or(obj, |b: f64| b.min(obj)));
            }
        });
    }
    best
}

#[test]
fn phase_three_equals_brute_force_over_every_way_split() {
    let mut checked = 0;
    for (k, sys) in sample_systems(40).iter().enumerate().filter(|(k, _)| k % 4 == 1) {
        for sc in [scheme("C|C"), scheme("O|C+A/B-ALL"), scheme("R|R")] {
            let o = optimize(sys, sc, k as u64);
            // Phase 3 on each packing the scheme tries (O: with and without groups).
            let packings: Vec<bool> = if sc.packs_groups() { vec![true, false] } else { vec![false] };
            let brute = packings
                .iter()
                .filter_map(|&g| phases_1_2(sys, sc, g, k as u64).ok())
                .filter_map(|p| brute_force(&p))
                .fold(None, |b: Option<f64>, x| Some(b.map_or(x, |b| b.min(x))));
            match (&o.outcome, brute) {
                (Ok(sol), Some(b)) => {
                    assert!(sol.objective >= b - 1e-12, "system {k} {sc}: objective {} below brute force {b}", sol.objective);
                    assert!(sol.objective <= b + 2.0 * TIE_EPS, "system {k} {sc}: objective {} above brute force {b}", sol.objective);
                    checked += 1;
                }
                (Err(Unschedulable::Ways), None) | (Err(Unschedulable::Packing { .. }), None) => {}
                (outcome, brute) => panic!("system {k} {sc}: optimizer {outcome:?}, brute force {brute:?}"),
            }
        }
    }
    assert!(checked >= 15, "{checked} feasible cases");
}

#[test]
fn phase_three_equals_the_analysis_over_every_allocation_on_a_small_platform() {
    // 2 cores, 8 ways (128 KiB each): every (W_0, W_1, W_C, W_lock) with Σ ≤ 8 is
    // conditioned and analyzed; the optimizer must find the analysis' best.
    let mut checked = [0usize; 2];
    for k in 0..30u64 {
        let s = Scenario::from_id((k as usize * 53 + 7) % 648).unwrap();
        let (mut sys, _) = generate(s, 0.8 + 0.1 * (k % 10) as f64, 7_000 + k);
        sys.platform.cores = 2;
        sys.platform.llc.ways = 8;
        for sc in [scheme("C|C"), scheme("O|C"), scheme("C|C+A/B-SP")] {
            let o = optimize(&sys, sc, k);
            let packings: Vec<bool> = if sc.packs_groups() { vec![true, false] } else { vec![false] };
            let mut best: Option<(f64, f64)> = None; // (objective, rounding slack)
            for p in packings.iter().filter_map(|&g| phases_1_2(&sys, sc, g, k).ok()) {
                let slack: f64 = p.tasks.iter().map(|t| 1.0 / t.period_ns as f64).sum();
                for w0 in 0..=8u32 {
                    for w1 in 0..=8 - w0 {
                        for wc in 0..=8 - w0 - w1 {
                            for wl in 0..=8 - w0 - w1 - wc {
                                let mut q = p.clone();
                                let mut llc_ways = vec![(Partition::Core(0), w0), (Partition::Core(1), w1), (Partition::LevelC, wc)];
                                if wl > 0 {
                                    llc_ways.push((Partition::Lock, wl));
                                }
                                q.allocation = Some(Allocation { llc_ways, ..Allocation::default() });
                                let cond = criticore::policy::pet::conditioned(&q).unwrap();
                                let r = mc2::analyze(&cond, Provisioning::MC2_ISOLATED).unwrap();
                                if r.schedulable() && best.is_none_or(|(b, _)| r.total_utilization < b) {
                                    best = Some((r.total_utilization, slack));
                                }
                            }
                        }
                    }
                }
            }
            match (&o.outcome, best) {
                (Ok(sol), Some((b, slack))) => {
                    // The analysis sees PETs rounded up (< 1 ns each): its optimum lies within
                    // [objective, objective + Σ 1/T].
                    assert!(b >= sol.objective - 1e-9 && b <= sol.objective + slack + 1e-9, "system {k} {sc}: analysis best {b}, optimizer {}", sol.objective);
                    checked[0] += 1;
                }
                (Err(_), None) => checked[1] += 1,
                (outcome, best) => panic!("system {k} {sc}: optimizer {outcome:?}, analysis best {best:?}"),
            }
        }
    }
    assert!(checked[0] >= 20 && checked[1] >= 5, "{checked:?} (feasible, infeasible)");
}

// ------------------------------------------------------------------ (e) round trip

#[test]
fn optimized_placements_survive_writing_and_reparsing() {
    let mut written = 0;
    for (k, sys) in sample_systems(36).iter().enumerate() {
        let text = study_system_toml(sys);
        let parsed = parse_task_system(&text, Format::Toml, "gen.toml").unwrap_or_else(|e| panic!("system {k}: {e}\n{text}"));
        assert_eq!(&parsed, sys, "system {k}: the generator's file reads back as the generated system");
        let sc = Scheme::ALL[k % 9];
        let o = optimize(&parsed, sc, k as u64);
        if o.outcome.is_err() {
            continue;
        }
        let out = with_placements(&text, Format::Toml, "gen.toml", &o.system).unwrap();
        let back = parse_task_system(&out, Format::Toml, "allocated.toml").unwrap_or_else(|e| panic!("system {k} {sc}: {e}\n{out}"));
        assert_eq!(back.tasks.len(), o.system.tasks.len());
        for (i, (a, b)) in back.tasks.iter().zip(&o.system.tasks).enumerate() {
            assert_eq!(a.core, b.core, "system {k} {sc} task {i}: core");
            assert_eq!(a.ipc, b.ipc, "system {k} {sc} task {i}: IPC method and buffer");
            assert_eq!(a.io, b.io, "system {k} {sc} task {i}: I/O buffer");
        }
        let (mut wa, mut wb) = (back.allocation.clone().unwrap().llc_ways, o.system.allocation.clone().unwrap().llc_ways);
        wa.sort();
        wb.sort();
        assert_eq!(wa, wb, "system {k} {sc}: ways");
        // The whole system, in fact, and the analysis agrees on the file.
        assert_eq!(back, o.system, "system {k} {sc}");
        assert_eq!(analysis_schedulable(&back), Some(true));
        written += 1;
    }
    assert!(written >= 20, "{written}");
}
