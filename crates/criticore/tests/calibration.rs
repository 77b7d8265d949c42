//! Every model constant set from a paper number, checked (docs/calibration.md).
//!
//! docs/calibration.md lists each constant with an id: `P…` for numbers taken
//! from a paper (or docs/references.md, Regulation), `A…` for assumptions.
//! Each `P…` id has a test here named after it, which checks the number as the
//! engine uses it — through `criticore::sim::simulate` where the number shows
//! in a simulation (e.g. the SABRE Lite's 2,020 MB/s write-only peak is what
//! a write-only stream alone measures), through the parser's defaults and the
//! preset otherwise. `every_paper_number_in_the_doc_is_checked` keeps the doc
//! and this file in step: the `P…` ids of the doc's table must be exactly the
//! ones in [`CHECKED`].

use criticore::model::overhead::{parse_overhead_table, OverheadTable};
use criticore::model::{Level, Platform, RegulationKind};
use criticore::sim::sched::SchedulerKind;
use criticore::sim::{simulate, ExecModel, SimConfig, SimResult};
use criticore::{parse_task_system, Format, TaskSystem};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// The `P…` ids of docs/calibration.md that the tests below check, one test each.
const CHECKED: [&str; 17] = [
    "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10", "P11", "P12", "P13", "P14", "P15", "P16", "P17",
];

fn parse(text: &str) -> TaskSystem {
    parse_task_system(text, Format::Toml, "calibration.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(system: &TaskSystem, config: SimConfig) -> SimResult {
    simulate(system, SchedulerKind::Pfp, &config).unwrap_or_else(|e| panic!("{e:?}"))
}

fn binned(duration_ns: u64, bin_ns: u64) -> SimConfig {
    SimConfig { bandwidth_bin_ns: Some(bin_ns), exec: ExecModel::Pet(Level::C), ..SimConfig::new(duration_ns) }
}

/// A platform table for `preset` (None = no preset line: the default).
fn platform(preset: Option<&str>) -> String {
    match preset {
        Some(p) => format!("[platform]\npreset = \"{p}\"\ncores = 4\n"),
        None => "[platform]\ncores = 4\n".to_string(),
    }
}

/// MB/s (10^6 bytes per second) of `core` in each full bin.
fn mb_per_s(r: &SimResult, system: &TaskSystem, core: usize) -> Vec<f64> {
    let line = system.platform.llc.line_bytes as f64;
    let full = (r.duration_ns / r.bandwidth_bin_ns) as usize;
    r.bandwidth[core][..full].iter().map(|&req| req * line / r.bandwidth_bin_ns as f64 * 1e9 / 1e6).collect()
}

/// A write-only stream bomb (blin-bandwidth-monitor §2.3's load program: writes
/// that miss the L2 every time) alone on core 0 of `preset`, at `accesses_per_ms`.
fn lone_stream(preset: Option<&str>, accesses_per_ms: f64, read_fraction: f64) -> String {
    format!(
        "{}\n[[task]]\nname = \"load\"\ncore = 0\nperiod = \"100ms\"\npet = \"100ms\"\n\
         memory = {{ wss = \"64MiB\", pattern = \"stream\", accesses_per_ms = {accesses_per_ms}, read_fraction = {read_fraction} }}\n",
        platform(preset)
    )
}

// ---------------------------------------------------------------------------
// i.MX6 / SABRE Lite preset (`imx6`, `sabre-lite`, and the default).

/// The presets `imx6` and `sabre-lite` and a file without `preset` give one platform.
fn imx6_platforms() -> Vec<(&'static str, Platform)> {
    let mut out = Vec::new();
    for preset in [Some("imx6"), Some("sabre-lite"), None] {
        let sys = parse(&format!("{}\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"1ms\"\npet = \"1us\"\n", platform(preset)));
        out.push((preset.unwrap_or("(default)"), sys.platform));
    }
    assert_eq!(out[0].1, out[1].1);
    assert_eq!(out[0].1, out[2].1);
    assert_eq!(Platform::preset("sabre-lite"), Platform::preset("imx6"));
    out
}

#[test]
fn p1_imx6_has_four_cores() {
    // mc2-hardware-management §3 ("quad-core ARM Cortex A9"); blin §2.1.
    assert_eq!(Platform::preset("imx6").unwrap().cores, 4);
    for (_, p) in imx6_platforms() {
        assert_eq!(p.cores, 4);
    }
}

#[test]
fn p2_imx6_llc_is_1_mib() {
    // mc2-hardware-management §3; blin §2.1; mc2-io-ipc-os-isolation §2.
    for (name, p) in imx6_platforms() {
        assert_eq!(p.llc.size_bytes, MIB, "{name}");
    }
}

#[test]
fn p3_imx6_llc_has_16_ways() {
    // mc2-hardware-management §3 ("16-way set-associative"); blin §2.1.
    for (name, p) in imx6_platforms() {
        assert_eq!(p.llc.ways, 16, "{name}");
    }
}

#[test]
fn p4_imx6_llc_has_16_colours() {
    // mc2-hardware-management §3, Fig. 3(b): "an LLC with 16 colors".
    for (name, p) in imx6_platforms() {
        assert_eq!(p.llc.colors, 16, "{name}");
    }
}

#[test]
fn p5_imx6_line_is_32_bytes() {
    // mc2-hardware-management §4.1: "a cache line (32 bytes on our hardware)".
    for (name, p) in imx6_platforms() {
        assert_eq!(p.llc.line_bytes, 32, "{name}");
    }
    // One request is one line: a write-only stream alone moves 32 B per S.
    let sys = parse(&lone_stream(Some("sabre-lite"), 63_131.0, 0.0));
    let r = run(&sys, binned(2 * MS, MS));
    let bytes = r.bandwidth[0][0] * 32.0;
    let ns_per_line = sys.platform.line_service_ns();
    assert!((bytes - MS as f64 / ns_per_line * 32.0).abs() < 1e-3);
}

#[test]
fn p6_imx6_dram_is_eight_128_mib_banks() {
    // mc2-hardware-management §3: "1GB of off-chip DRAM ... partitioned into eight 128MB banks".
    for (name, p) in imx6_platforms() {
        assert_eq!(p.dram.banks, 8, "{name}");
        assert_eq!(p.dram.bank_size_bytes, 128 * MIB, "{name}");
        assert_eq!(p.dram.banks as u64 * p.dram.bank_size_bytes, 1 << 30, "{name}: 1 GB in all");
    }
    // And a bank list may name banks 0–7, not 8.
    let base = "[[task]]\nname = \"t\"\ncore = 0\nperiod = \"1ms\"\npet = \"1us\"\n";
    parse(&format!("{}{base}[allocation]\nbanks = {{ core0 = [7] }}\n", platform(Some("sabre-lite"))));
    assert!(parse_task_system(&format!("{}{base}[allocation]\nbanks = {{ core0 = [8] }}\n", platform(Some("sabre-lite"))), Format::Toml, "x.toml").is_err());
}

#[test]
fn p7_write_only_load_alone_on_the_sabre_lite_measures_2020_mb_per_s() {
    // blin-bandwidth-monitor §2.3: "When run alone on the SABRE Lite, the
    // generated load is 2020 MB/s"; §3.1: the highest bandwidth, 2020 MB/s,
    // with only writes and no wait loop. Measured here as the simulator's
    // bandwidth series: requests per bin × 32 B / bin width.
    for (name, p) in imx6_platforms() {
        assert_eq!(p.bus.bandwidth_bytes_per_s, 2_020_000_000, "{name}");
    }
    for preset in [Some("sabre-lite"), Some("imx6"), None] {
        // At the rate of examples/memguard-bombs.toml, and far above it: the
        // load program misses on every write as fast as the bus takes them.
        for accesses in [63_131.0, 100_000.0, 1_000_000.0] {
            let sys = parse(&lone_stream(preset, accesses, 0.0));
            for bin in [MS, 50 * US, 730 * US] {
                let r = run(&sys, binned(20 * MS, bin));
                let series = mb_per_s(&r, &sys, 0);
                assert!(!series.is_empty());
                for (i, mbs) in series.iter().enumerate() {
                    assert!(
                        (mbs - 2020.0).abs() < 2020.0 * 1e-9,
                        "{preset:?}, {accesses}/ms, bin {bin} ns #{i}: {mbs} MB/s, expected 2,020"
                    );
                }
                // The task's own request count says the same.
                let mbs = r.per_task[0].memory_requests * 32.0 / (20 * MS) as f64 * 1e3;
                assert!((mbs - 2020.0).abs() < 1e-6, "{mbs}");
            }
        }
    }
}

#[test]
fn p8_each_way_times_colour_is_4_kib_of_llc() {
    // mc2-hardware-management §4.1: "each additional color or way adds 4KB to
    // the total LLC space ... 4 colors and 16 ways yields an LLC area of
    // 256KB" (1 MiB / (16 ways × 16 colours)). Through the engine: a random
    // task whose WSS fits its partition makes no memory requests and runs for
    // exactly its PET next to three memory bombs; one 4 KiB cell short, it
    // misses and is slowed down.
    let sys = |wss: &str, ways: u32, colors: u32| {
        let colors: Vec<String> = (0..colors).map(|c| c.to_string()).collect();
        let mut s = platform(Some("sabre-lite"));
        s.push_str(&format!(
            "\n[allocation]\nllc_ways = {{ core0 = {ways} }}\nllc_colors = {{ core0 = [{}] }}\n\n\
             [[task]]\nname = \"uB\"\ncore = 0\npriority = 2\nperiod = \"10ms\"\npet = \"2ms\"\n\
             memory = {{ wss = \"{wss}\", pattern = \"random\", accesses_per_ms = 5000, read_fraction = 1.0 }}\n",
            colors.join(", ")
        ));
        for c in 1..4 {
            s.push_str(&format!(
                "\n[[task]]\nname = \"bomb{c}\"\ncore = {c}\npriority = 1\nperiod = \"100ms\"\npet = \"100ms\"\n\
                 memory = {{ wss = \"64MiB\", pattern = \"stream\", accesses_per_ms = 63131, read_fraction = 0.0 }}\n"
            ));
        }
        parse(&s)
    };
    let response = |s: &TaskSystem| {
        let r = run(s, SimConfig { exec: ExecModel::Pet(Level::C), ..SimConfig::new(20 * MS) });
        assert_eq!(r.per_task[0].completed, 2);
        (r.per_task[0].max_response_ns, r.per_task[0].memory_requests)
    };
    let pet = 2 * MS;
    // (wss, ways, colours): fits exactly → PET, no requests.
    for (wss, ways, colors) in [("4KiB", 1, 1), ("256KiB", 16, 4), ("256KiB", 8, 8), ("64KiB", 4, 4), ("1MiB", 16, 16)] {
        assert_eq!(response(&sys(wss, ways, colors)), (pet, 0.0), "{wss} in {ways} ways × {colors} colours");
    }
    // One cell larger than the partition → misses → slower than PET under load.
    for (wss, ways, colors) in [("8KiB", 1, 1), ("260KiB", 16, 4), ("256KiB", 16, 3), ("256KiB", 15, 4)] {
        let (resp, requests) = response(&sys(wss, ways, colors));
        assert!(resp > pet && requests > 0.0, "{wss} in {ways} ways × {colors} colours: {resp} ns, {requests} requests");
    }
    let p = Platform::preset("imx6").unwrap();
    assert_eq!(p.llc.size_bytes / (p.llc.ways as u64 * p.llc.colors as u64), 4 * KIB);
}

// ---------------------------------------------------------------------------
// Regulation defaults.

fn lone_bomb_regulated(kind: &str, period: Option<&str>) -> String {
    let period = period.map_or(String::new(), |p| format!("period = \"{p}\"\n"));
    format!(
        "{}\n[regulation]\nkind = \"{kind}\"\n{period}budget = 3000\n\n[[task]]\nname = \"bomb\"\ncore = 1\nperiod = \"100ms\"\npet = \"100ms\"\n\
         memory = {{ wss = \"64MiB\", pattern = \"stream\", accesses_per_ms = 63131, read_fraction = 0.0 }}\n",
        platform(Some("sabre-lite"))
    )
}

/// The regulation period as the engine applies it: stalls end at its multiples.
fn stall_ends(sys: &TaskSystem, kind: Option<RegulationKind>) -> Vec<u64> {
    let r = run(sys, SimConfig { regulation: kind.map(Some), ..binned(10 * MS, 250 * US) });
    r.regulator_intervals.iter().filter(|iv| iv.state == "stalled").map(|iv| iv.end_ns).collect()
}

#[test]
fn p9_memguard_default_period_is_1_ms() {
    // docs/references.md, Regulation: MemGuard's default regulation period is 1 ms.
    let sys = parse(&lone_bomb_regulated("memguard", None));
    let reg = sys.regulation.as_ref().unwrap();
    assert_eq!(reg.kind, RegulationKind::Memguard);
    assert_eq!(reg.period_ns, MS);
    let ends = stall_ends(&sys, None);
    assert_eq!(ends, (1..=10).map(|k| k * MS).collect::<Vec<_>>());
    // Given explicitly, another period is used.
    let sys = parse(&lone_bomb_regulated("memguard", Some("2ms")));
    assert_eq!(stall_ends(&sys, None), (1..=5).map(|k| 2 * k * MS).collect::<Vec<_>>());
}

#[test]
fn p10_mcti_period_is_1_ms() {
    // mcti-task-isolation §6.1.2 and §7: "we used a regulation period M = P_i = 1 ms".
    let sys = parse(&lone_bomb_regulated("mcti", None));
    let reg = sys.regulation.as_ref().unwrap();
    assert_eq!(reg.kind, RegulationKind::Mcti);
    assert_eq!(reg.period_ns, MS);
    // The bomb is not critical (no level: criticality 0), so it stalls (rule 4) until each 1 ms boundary.
    assert_eq!(sys.tasks[0].criticality, 0);
    assert_eq!(stall_ends(&sys, None), (1..=10).map(|k| k * MS).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------
// The bandwidth monitor (blin-bandwidth-monitor §3.3, §4.1).

/// A real-time task (CPU only, PET 1 ms every 5 ms) on core 0 and a write-only
/// bomb on best-effort core 1, under the monitor with threshold `threshold`.
fn monitored(threshold: f64, sample: Option<&str>) -> TaskSystem {
    let sample = sample.map_or(String::new(), |s| format!("sample = \"{s}\"\n"));
    parse(&format!(
        "{}\n[regulation]\nkind = \"monitor\"\nrt_task = \"rt\"\nbe_cores = [1]\nthreshold = {threshold}\n{sample}overhead_table = \"rt.overhead.toml\"\n\n\
         [[task]]\nname = \"rt\"\ncore = 0\npriority = 9\nperiod = \"5ms\"\npet = \"1ms\"\n\n\
         [[task]]\nname = \"bomb\"\ncore = 1\npriority = 1\nperiod = \"100ms\"\npet = \"100ms\"\n\
         memory = {{ wss = \"64MiB\", pattern = \"stream\", accesses_per_ms = 63131, read_fraction = 0.0 }}\n",
        platform(Some("sabre-lite"))
    ))
}

/// An overhead table (default sample and shift) with `value` from index `from` on, 0 before.
fn step_table(from: usize, value: f64) -> OverheadTable {
    let mut row = vec!["0.0".to_string(); from];
    row.push(value.to_string());
    let t = parse_overhead_table(&format!("[[phase]]\noverhead = [{}]\n", row.join(", ")), "rt.overhead.toml").unwrap();
    assert_eq!((t.sample_ns, t.shift), (50 * US, 10));
    t
}

fn run_monitor(sys: &TaskSystem, table: OverheadTable) -> SimResult {
    run(sys, SimConfig { overhead_table: Some(table), ..binned(20 * MS, 50 * US) })
}

fn parallelism(r: &SimResult) -> Vec<f64> {
    let report = r.regulator_report.as_ref().expect("the monitor reports");
    report["parallelism"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn p11_monitor_samples_every_50_us() {
    // blin §3.3 / §4.1: "we use a sampling interval of 50µs".
    let sys = monitored(0.2, None);
    assert_eq!(sys.regulation.as_ref().unwrap().monitor.as_ref().unwrap().sample_ns, 50 * US);
    let table = parse_overhead_table("[[phase]]\noverhead = [0.0]\n", "t.toml").unwrap();
    assert_eq!(table.sample_ns, 50 * US);
    // Through the engine: with a per-sample overhead that crosses the
    // threshold at the k-th sample, suspension starts k × 50 µs after the
    // release (see P14 for k).
    let r = run_monitor(&sys, step_table(0, 0.8));
    let starts: Vec<u64> = r.regulator_intervals.iter().filter(|iv| iv.state == "suspended").map(|iv| iv.start_ns % (5 * MS)).collect();
    assert_eq!(starts, vec![200 * US; 4]);
    // A 100 µs sample given in the file is used instead: 0.8 × 0.1 = 0.08 per
    // sample against 0.3 − 0.1 = 0.2 → the 3rd sample, 300 µs after the release.
    let mut table = step_table(0, 0.8);
    table.sample_ns = 100 * US;
    let r = run_monitor(&monitored(0.3, Some("100us")), table);
    let starts: Vec<u64> = r.regulator_intervals.iter().filter(|iv| iv.state == "suspended").map(|iv| iv.start_ns % (5 * MS)).collect();
    assert_eq!(starts, vec![300 * US; 4]);
    // A table built for 50 µs samples does not fit a monitor sampling every 100 µs.
    let config = SimConfig { overhead_table: Some(step_table(0, 0.8)), ..binned(20 * MS, 50 * US) };
    let err = simulate(&monitored(0.3, Some("100us")), SchedulerKind::Pfp, &config).unwrap_err();
    assert_eq!(err.field, "regulation.sample");
}

#[test]
fn p12_overhead_table_shift_is_10() {
    // blin §3.3: "We choose a shift of 10, which has the effect of dividing the number of bytes by 1024."
    let t = parse_overhead_table("[[phase]]\noverhead = [0.0, 1.0, 2.0]\n", "t.toml").unwrap();
    assert_eq!(t.shift, 10);
    assert_eq!(t.lookup(0, 1023), 0.0);
    assert_eq!(t.lookup(0, 1024), 1.0);
    assert_eq!(t.lookup(0, 2047), 1.0);
    assert_eq!(t.lookup(0, 2048), 2.0);
}

#[test]
fn p13_table_entries_are_20_48_mb_per_s_apart() {
    // blin §3.3: "Each successive entry in the overhead table thus represents
    // a bandwidth increment of 20.48MB/s" (1024 B per 50 µs).
    let t = step_table(0, 0.0);
    let mb_per_s_per_entry = (1u64 << t.shift) as f64 / t.sample_ns as f64 * 1e9 / 1e6;
    assert!((mb_per_s_per_entry - 20.48).abs() < 1e-12, "{mb_per_s_per_entry}");
    // Bandwidth b MB/s held for one sample falls in entry floor(b / 20.48).
    let table = parse_overhead_table(
        &format!("[[phase]]\noverhead = [{}]\n", (0..200).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")),
        "t.toml",
    )
    .unwrap();
    for mbs in [0.0f64, 20.47, 20.49, 409.6, 1000.0, 2019.0, 2020.0, 3000.0] {
        let bytes = (mbs * 1e6 * 50e-6) as u64;
        assert_eq!(table.lookup(0, bytes), (mbs / 20.48).floor(), "{mbs} MB/s");
    }
    // Through the engine: the bomb's 2,020 MB/s (P7) is 101,000 B per 50 µs
    // sample, entry floor(2020 / 20.48) = 98. An overhead from entry 98 on
    // suspends the best-effort core; from entry 99 on, never.
    let sys = monitored(0.2, None);
    let r = run_monitor(&sys, step_table(98, 0.8));
    assert_eq!(r.regulator_intervals.iter().filter(|iv| iv.state == "suspended").count(), 4);
    assert_eq!(parallelism(&r), vec![0.2; 4]);
    let r = run_monitor(&sys, step_table(99, 0.8));
    assert!(r.regulator_intervals.is_empty(), "{:?}", r.regulator_intervals);
    assert_eq!(parallelism(&r), vec![1.0; 4]);
}

#[test]
fn p14_monitor_stops_one_sample_short_of_the_threshold() {
    // blin §3.3, footnote 4: suspend when the running sum exceeds the
    // threshold minus the share of ExecT one sample represents. ExecT = 1 ms,
    // Δ = 50 µs: one sample is 0.05 of ExecT. With overhead 0.8 per sample
    // the sum grows by 0.8 × 0.05 = 0.04 per sample; threshold 0.2 → suspend
    // once the sum exceeds 0.15, i.e. at the 4th sample (0.16), not the 6th
    // (0.24 > 0.2). Per job: 200 µs of parallelism out of 1 ms.
    let r = run_monitor(&monitored(0.2, None), step_table(0, 0.8));
    let suspended: Vec<_> = r.regulator_intervals.iter().filter(|iv| iv.state == "suspended").collect();
    assert_eq!(suspended.len(), 4);
    for (k, iv) in suspended.iter().enumerate() {
        let release = k as u64 * 5 * MS;
        assert_eq!((iv.core, iv.start_ns, iv.end_ns), (1, release + 200 * US, release + MS), "job {k}");
    }
    assert_eq!(parallelism(&r), vec![0.2; 4]);
    // The bomb issues nothing while suspended.
    for k in 0..4usize {
        let first_bin = k * 100; // 5 ms / 50 µs
        assert!(r.bandwidth[1][first_bin + 4..first_bin + 20].iter().all(|&b| b == 0.0));
        assert!(r.bandwidth[1][first_bin + 20] > 0.0);
    }
}

// ---------------------------------------------------------------------------
// ZCU102 preset (MCTI's board): what the paper gives.

#[test]
fn p15_zcu102_has_four_cores() {
    // mcti-task-isolation §6: "four ARM Cortex-A53 CPUs".
    let sys = parse(&format!("{}\n[[task]]\nname = \"t\"\ncore = 0\nperiod = \"1ms\"\npet = \"1us\"\n", platform(Some("zcu102"))));
    assert_eq!(sys.platform.cores, 4);
    assert_eq!(Platform::preset("zcu102").unwrap().cores, 4);
}

#[test]
fn p16_zcu102_llc_is_1_mib() {
    // mcti-task-isolation §6: "a shared 1 MB last-level cache".
    let p = Platform::preset("zcu102").unwrap();
    assert_eq!(p.llc.size_bytes, MIB);
    // The rest of the preset is assumptions (docs/calibration.md A…); the DRAM
    // adds up to the paper's 4 GB.
    assert_eq!(p.dram.banks as u64 * p.dram.bank_size_bytes, 4 << 30);
}

#[test]
fn p17_any_read_share_lowers_the_loads_bandwidth() {
    // blin §3.1, Fig. 5: the 2,020 MB/s peak is reached "only when write
    // requests are generated"; mixing in reads gives substantially lower
    // bandwidths (reads wait for the data; writes are posted). Through the
    // engine: a stream alone at a saturating rate, read fraction 0 … 1.
    let mut last = f64::INFINITY;
    for tenth in 0..=10 {
        let rf = tenth as f64 / 10.0;
        let sys = parse(&lone_stream(Some("sabre-lite"), 1_000_000.0, rf));
        let r = run(&sys, binned(5 * MS, MS));
        let mbs = mb_per_s(&r, &sys, 0)[0];
        if tenth == 0 {
            assert!((mbs - 2020.0).abs() < 1e-6);
        } else {
            assert!(mbs < last, "read fraction {rf}: {mbs} MB/s, not below {last}");
        }
        last = mbs;
    }
    // All reads: one line per read latency, far below the write peak.
    let p = Platform::preset("sabre-lite").unwrap();
    assert!((last - 32.0 / p.dram.read_latency_ns as f64 * 1e3).abs() < 1e-6);
}

// ---------------------------------------------------------------------------

#[test]
fn every_paper_number_in_the_doc_is_checked() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/calibration.md");
    let doc = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut ids: Vec<String> = Vec::new();
    let mut assumptions = 0;
    for line in doc.lines() {
        let Some(cell) = line.strip_prefix('|').and_then(|l| l.split('|').next()).map(str::trim) else { continue };
        if cell.len() > 1 && cell[1..].bytes().all(|b| b.is_ascii_digit()) {
            match cell.as_bytes()[0] {
                b'P' => ids.push(cell.to_string()),
                b'A' => assumptions += 1,
                _ => {}
            }
        }
    }
    let mut checked: Vec<String> = CHECKED.iter().map(|s| s.to_string()).collect();
    let key = |s: &String| s[1..].parse::<u32>().unwrap();
    ids.sort_by_key(key);
    checked.sort_by_key(key);
    assert_eq!(ids, checked, "P… ids in docs/calibration.md vs the checks in tests/calibration.rs");
    assert!(assumptions > 0, "docs/calibration.md lists no assumptions (A…)");
}
