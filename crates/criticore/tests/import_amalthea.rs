//! The Amalthea import on two small hand-written models, one per schema
//! family (tests/amalthea/v07-small.amxmi, v2-small.amxmi), each covering
//! every element the import reads; expected values are worked out by hand in
//! the comments. Then bad input: one error naming the file, field and reason.

use criticore::decimal::Exact;
use criticore::import::{import_amalthea, Imported, Preemption, Stimulus};
use criticore::model::{parse_task_system, Arrival, Communication, Format, Task};
use std::io::Write;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/amalthea/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn import(name: &str, scale: Option<&str>) -> Imported {
    let scale = scale.map(|s| Exact::parse(s).unwrap());
    import_amalthea(&fixture(name), name, scale.as_ref()).unwrap()
}

fn task<'a>(imp: &'a Imported, name: &str) -> &'a Task {
    imp.system.tasks.iter().find(|t| t.name == name).unwrap()
}

/// Its execution needs: the PET less the copies of its labels that
/// implicit communication adds (`model::scratchpad::derive_copies`).
fn pet(t: &Task) -> u64 {
    t.pet_ns.highest().unwrap() - t.copy_in_ns - t.copy_out_ns
}

#[test]
fn import_v07_maps_every_element() {
    let imp = import("v07-small.amxmi", None);
    let m = &imp.model;
    assert_eq!(m.version, "0.7.2");
    // C0: 100 MHz quartz x clock ratio 2 = 200 MHz, 2 instructions per cycle
    // (2.5 ns per instruction); C1 "Plain Core": 100 MHz, 1 per cycle (10 ns).
    assert_eq!((m.cores[0].clock_hz.whole(), m.cores[0].instructions_per_cycle.whole()), (Some(200_000_000), Some(2)));
    assert_eq!((m.cores[1].pu_type.as_str(), m.cores[1].clock_hz.whole()), ("Plain Core", Some(100_000_000)));
    // T_periodic on C0: R1 (default upper 3000) + R2 (4000) + the mode
    // switch's larger branch R4 (10000, not R3's 100) = 17000 x 2.5 = 42500 ns.
    let p = task(&imp, "T_periodic");
    assert_eq!((p.core, p.period_ns, p.offset_ns, p.deadline_ns, p.priority, pet(p)), (Some(0), 10_000_000, 1_000_000, 10_000_000, Some(10), 42_500));
    // T_sporadic on C1: R1's extended need for "Plain Core" (500) x 10 ns;
    // 2 to 3 ms apart, uniform; deadline 1.5 ms from its requirement.
    let s = task(&imp, "T_sporadic");
    assert_eq!((s.core, s.period_ns, s.arrival, s.deadline_ns, s.priority, pet(s)), (Some(1), 2_000_000, Arrival::Sporadic { max_jitter_ns: 1_000_000 }, 1_500_000, Some(20), 5_000));
    // T_ipa: triggered by T_periodic, so released at its 10 ms; R2 on C0: 4000 x 2.5 ns.
    let i = task(&imp, "T_ipa");
    assert_eq!((i.core, i.period_ns, i.offset_ns, i.arrival, i.priority, pet(i)), (Some(0), 10_000_000, 0, Arrival::Periodic, Some(5), 10_000));
    // Implicit communication (no `implementation` stated): R1's read of L1
    // (4 B in M0, the only memory, so the copy's too) is copied in, one
    // read and one write of a word, a cycle each at the platform's 200 MHz:
    // 10 ns; R1's write goes to a label in no memory (reported), so no copy-out.
    let copies = |t: &Task| (t.communication, t.copy_in_ns, t.copy_out_ns);
    assert_eq!((copies(p), copies(s), copies(i)), ((Communication::Implicit, 10, 0), (Communication::Implicit, 10, 0), (Communication::Implicit, 0, 0)));
    assert_eq!((p.pet_ns.highest(), s.pet_ns.highest()), (Some(42_510), Some(5_010)));
    // Runnables in call order, each its need at the task's core (the sums above).
    let steps = |t: &Task| t.runnables.iter().map(|r| (r.name.clone(), r.pet_ns)).collect::<Vec<_>>();
    let named = |v: &[(&str, u64)]| v.iter().map(|&(n, ns)| (n.to_string(), ns)).collect::<Vec<_>>();
    assert_eq!(steps(p), named(&[("R1", 7_500), ("R2", 10_000), ("R4", 25_000)]));
    assert_eq!((steps(s), steps(i)), (named(&[("R1", 5_000)]), named(&[("R2", 10_000)])));
    // The intermediate model keeps what the system cannot hold yet.
    let r1 = &m.runnables[0];
    let a = r1.needs[0].default.as_ref().unwrap();
    assert_eq!((a.upper, a.lower, a.mean, a.distribution.as_str()), (3000, Some(1000), Some(2000.0), "WeibullEstimators"));
    assert!(a.parameters.contains(&("pRemainPromille".to_string(), 0.5)));
    assert_eq!((r1.accesses[0].count, r1.accesses[0].write, r1.accesses[1].write), (3.0, false, true));
    assert_eq!((m.labels[0].size_bits, m.labels[1].size_bits, m.labels[1].constant), (32, 16, true));
    assert_eq!((m.labels[0].memory, m.labels[1].memory), (Some(0), Some(1)));
    assert_eq!(m.memories[0].size_bytes, Some(65_536));
    assert_eq!(m.access_paths[1].latency_cycles, Some(9.0));
    let tasks: Vec<_> = m.tasks.iter().map(|t| (t.preemption, t.activation_limit)).collect();
    assert_eq!(tasks, [(Preemption::Preemptive, Some(1)), (Preemption::Cooperative, Some(2)), (Preemption::NonPreemptive, None)]);
    // The task system holds them (written as `preemption`, read back by the round trip below).
    assert_eq!(imp.system.tasks.iter().map(|t| t.preemption).collect::<Vec<_>>(), [Preemption::Preemptive, Preemption::Cooperative, Preemption::NonPreemptive]);
    assert_eq!(imp.system.tasks.iter().map(|t| t.activation_limit).collect::<Vec<_>>(), [Some(1), Some(2), None]);
    assert_eq!(m.tasks[0].triggers, ["IPA"]);
    assert_eq!(m.tasks[2].stimulus, Stimulus::InterProcess { name: "IPA".into() });
    assert_eq!((m.chains[0].segments.len(), m.chains[0].stimulus.entity.as_deref()), (1, Some("R1")));
    // Memories (docs/amalthea.md "Memories and labels"): M0 has paths from
    // C0 (1 cycle) and C1 (9): C0's local memory, 64 KiB; M1 has none, so it
    // and L2 placed in it are not kept, nor R1's write of L2. L1 (32 bits)
    // is 4 B in M0, read 3 times per run of R1. The clock is C0's 2 × 100
    // MHz; C1 runs at 100 MHz (another clock, reported).
    let p = &imp.system.platform;
    assert_eq!(p.clock_hz, Some(200_000_000));
    let memories: Vec<_> = p.memories.iter().map(|m| (m.name.as_str(), m.core, m.size_bytes, m.latency_cycles.clone(), m.width_bytes)).collect();
    assert_eq!(memories, [("M0", Some(0), 65_536, vec![1, 9], 4)]);
    assert_eq!(imp.system.labels.iter().map(|l| (l.name.as_str(), l.size_bytes, l.memory)).collect::<Vec<_>>(), [("L1", 4, 0)]);
    let r1 = imp.system.tasks.iter().flat_map(|t| &t.runnables).find(|r| r.name == "R1").unwrap();
    assert_eq!(r1.accesses, [criticore::model::scratchpad::LabelAccess { label: 0, reads: 3, writes: 0 }]);
    let expected = [
        ("label accesses to labels in no memory", 1),
        ("labels in no memory", 1),
        ("memories no core has an access path to", 1),
        ("cores at another clock than the first (latencies in its cycles)", 1),
        ("event chains (an event of no runnable, or of one several tasks call)", 1),
        ("inter-process activations (at the activating task's rate)", 1),
        ("execution-need distributions (upper bound used)", 1),
        ("switches (largest branch kept)", 1),
    ];
    let got: Vec<(&str, usize)> = imp.summary.not_represented.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(got, expected);
    assert_eq!(imp.summary.line(), "imported 3 tasks on 2 cores; not represented yet: 1 label accesses to labels in no memory, 1 labels in no memory, 1 memories no core has an access path to, 1 cores at another clock than the first (latencies in its cycles), 1 event chains (an event of no runnable, or of one several tasks call), 1 inter-process activations (at the activating task's rate), 1 execution-need distributions (upper bound used), 1 switches (largest branch kept)");
}

#[test]
fn import_v2_maps_every_element() {
    let imp = import("v2-small.amxmi", None);
    let m = &imp.model;
    assert_eq!(m.version, "2.1.0");
    // P0 (BigCore): 400 MHz, 2.5 ns per tick; P1 (LittleCore): 0.1 GHz, 10 ns; G0 is a GPU.
    assert_eq!(m.cores.iter().map(|c| (c.name.as_str(), c.clock_hz.whole())).collect::<Vec<_>>(), [("P0", Some(400_000_000)), ("P1", Some(100_000_000))]);
    assert_eq!(m.other_units[0].name, "G0");
    // A on P0: Ra 1000 + Rb 900 (in a group) + the probability switch's larger
    // branch Rd 600 (not Rc's 20) = 2500 ticks = 6250 ns; deadline 4 ms.
    let a = task(&imp, "A");
    assert_eq!((a.core, a.period_ns, a.deadline_ns, a.priority, pet(a)), (Some(0), 5_000_000, 4_000_000, Some(7), 6_250));
    // Its label access says implementation="explicit": no copies.
    assert_eq!((a.communication, a.copy_in_ns, a.copy_out_ns), (Communication::Explicit, 0, 0));
    // B on P1: Rb 900 ticks x 10 ns; next occurrence 4 to 6 ms after the last, offset 1 ms; priority 3 (2.x parameter entry).
    let b = task(&imp, "B");
    assert_eq!((b.core, b.period_ns, b.arrival, b.offset_ns, b.priority, pet(b)), (Some(1), 4_000_000, Arrival::Sporadic { max_jitter_ns: 2_000_000 }, 1_000_000, Some(3), 9_000));
    // Rb's Weibull estimators (100 / 400 / 900 ticks, pRemainPromille 1), kept for the draws in ns.
    use criticore::model::need::Need;
    assert_eq!(b.runnables[0].need, Some(Need::weibull(1_000, 4_000.0, 9_000, 0.001).unwrap()));
    // C: affinity P0 over its scheduler's P1; Ra's default 1000 ticks x 2.5 ns; released at A's 5 ms.
    let c = task(&imp, "C");
    assert_eq!((c.core, c.period_ns, c.priority, pet(c)), (Some(0), 5_000_000, Some(9), 2_500));
    // D: two cores, so no single one; its PET is the larger of 600 ticks at 2.5 ns and at 10 ns.
    let d = task(&imp, "D");
    assert_eq!((d.core, d.period_ns, d.arrival, d.priority, pet(d)), (None, 20_000_000, Arrival::Sporadic { max_jitter_ns: 10_000_000 }, Some(1), 6_000));
    // Rd's uniform 200-600 ticks, at the core that makes the PET (10 ns a tick).
    assert_eq!(d.runnables[0].need, Some(Need::uniform(2_000)));
    let ra = &m.runnables[0];
    assert_eq!(ra.needs[0].per_type[0].0, "LittleCore");
    assert_eq!(ra.accesses[0].count, 2.0);
    let rd = m.runnables[3].needs[0].default.as_ref().unwrap();
    assert_eq!((rd.lower, rd.upper, rd.mean), (Some(200), 600, Some(400.0)));
    assert_eq!(m.runnables[1].needs[0].default.as_ref().unwrap().mean, Some(400.0));
    assert_eq!((m.memories[0].size_bytes, m.labels[0].memory, m.labels[0].size_bits), (Some(1 << 20), Some(0), 64));
    assert_eq!((m.access_paths[0].source.as_str(), m.access_paths[0].target.as_str(), m.access_paths[0].latency_cycles), ("P0", "RAM0", Some(5.0)));
    assert_eq!(m.tasks[0].stimulus, Stimulus::Periodic { period_ns: 5_000_000, offset_ns: 0, jitter_ns: 50_000 });
    assert_eq!(m.chains.iter().map(|c| c.segments.len()).collect::<Vec<_>>(), [2, 0]);
    assert_eq!((m.chains[0].segments[1].name.as_str(), m.chains[0].segments[0].response.event_type.as_deref()), ("EC3", Some("terminate")));
    // RAM0: P0's path of 5 cycles, none from P1 (the slowest stated, 5, so
    // local to no core); La (64 bits) in it, read twice per run of Ra; the
    // clock P0's 400 MHz (P1's 100 MHz reported).
    let p = &imp.system.platform;
    assert_eq!(p.clock_hz, Some(400_000_000));
    let memories: Vec<_> = p.memories.iter().map(|m| (m.name.as_str(), m.core, m.size_bytes, m.latency_cycles.clone())).collect();
    assert_eq!(memories, [("RAM0", None, 1 << 20, vec![5, 5])]);
    assert_eq!(imp.system.labels.iter().map(|l| (l.name.as_str(), l.size_bytes)).collect::<Vec<_>>(), [("La", 8)]);
    let ra = task(&imp, "A").runnables.iter().find(|r| r.name == "Ra").unwrap();
    assert_eq!(ra.accesses, [criticore::model::scratchpad::LabelAccess { label: 0, reads: 2, writes: 0 }]);
    let expected = [
        ("missing access paths (the memory's slowest latency used)", 1),
        ("cores at another clock than the first (latencies in its cycles)", 1),
        ("event chains (an event of no runnable, or of one several tasks call)", 2),
        ("inter-process activations (at the activating task's rate)", 1),
        ("periodic jitters", 1),
        // Rc's statistics (min / average / max, no distribution); Rb's and Rd's are drawn.
        ("execution-need distributions (upper bound used)", 1),
        ("switches (largest branch kept)", 1),
        ("non-CPU processing units", 1),
    ];
    let got: Vec<(&str, usize)> = imp.summary.not_represented.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(got, expected);
}

#[test]
fn import_files_round_trip() {
    for name in ["v07-small.amxmi", "v2-small.amxmi"] {
        let imp = import(name, Some("0.333"));
        let again = parse_task_system(&imp.toml, Format::Toml, "again.toml").unwrap();
        assert_eq!(again, imp.system, "{name}");
        // The system as mapped, before it was written and parsed, is the same too.
        let (direct, _) = criticore::import::to_system::task_system(&imp.model, Some(&Exact::parse("0.333").unwrap())).unwrap();
        assert_eq!(direct, imp.system, "{name}");
        assert!(imp.toml.starts_with(&format!("# Imported from {name} by `criticore import amalthea`")), "{}", imp.toml);
        // With copies (issue 27, Build 5: a file may state them, with
        // explicit communication where the task has label accesses) the
        // writer keeps them. Its PET holds them: with runnables, copy-in +
        // their sum + copy-out.
        let mut with = imp.system.clone();
        let t = &mut with.tasks[0];
        let pet = t.pet_ns.highest().unwrap() - t.copy_in_ns - t.copy_out_ns;
        t.communication = Communication::Explicit;
        (t.copy_in_ns, t.copy_out_ns) = (pet / 4, pet / 8);
        if !t.runnables.is_empty() {
            t.pet_ns = criticore::model::LevelPets([Some(pet + pet / 4 + pet / 8); 4]);
        }
        let text = criticore::import::write::system_toml(&with, &imp.summary, name);
        assert_eq!(parse_task_system(&text, Format::Toml, "again.toml").unwrap(), with, "{name}");
    }
}

#[test]
fn import_scale_rounds_up_once_per_task() {
    // 17000 instructions x 2.5 ns x 0.333 = 14152.5 ns: rounded up to 14153.
    assert_eq!(pet(task(&import("v07-small.amxmi", Some("0.333")), "T_periodic")), 14_153);
    assert_eq!(pet(task(&import("v07-small.amxmi", Some("0.7")), "T_periodic")), 29_750);
    let zero = Exact::parse("0").unwrap();
    let e = import_amalthea(&fixture("v07-small.amxmi"), "m.amxmi", Some(&zero)).unwrap_err();
    assert_eq!(e.to_string(), "m.amxmi: --scale: must be a positive number");
}

#[test]
fn import_reads_gzip() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&fixture("v2-small.amxmi")).unwrap();
    let imp = import_amalthea(&gz.finish().unwrap(), "m.amxmi.gz", None).unwrap();
    assert_eq!(imp.system, import("v2-small.amxmi", None).system);
}

/// The error for the v0.7 fixture with `from` replaced by `to`.
fn error_after(from: &str, to: &str) -> String {
    let text = String::from_utf8(fixture("v07-small.amxmi")).unwrap();
    assert!(text.contains(from), "{from}");
    import_amalthea(text.replacen(from, to, 1).as_bytes(), "m.amxmi", None).unwrap_err().to_string()
}

#[test]
fn import_bad_input_is_one_line_naming_file_field_and_reason() {
    let cases = [
        ("stimuli=\"P10?type=Periodic\"", "stimuli=\"Nope?type=Periodic\"", "m.amxmi: swModel.tasks[T_periodic].stimuli: unknown stimulus \"Nope\""),
        ("<recurrence value=\"10\" unit=\"ms\" />", "<recurrence value=\"10\" unit=\"hours\" />", "m.amxmi: stimuliModel.stimuli[P10].recurrence.unit: unknown time unit \"hours\" (expected s, ms, us, ns or ps)"),
        ("<upperBound xsi:type=\"am:LongObject\" value=\"3000\" />", "", "m.amxmi: swModel.runnables[R1].runnableItems[1].default: no upper bound: criticore needs one for the PET (give upperBound or a constant value)"),
        ("xsi:type=\"am:InterProcess\" name=\"IPA\"", "xsi:type=\"am:Single\" name=\"IPA\"", "m.amxmi: stimuliModel.stimuli[IPA]: a \"Single\" stimulus cannot be imported (periodic, sporadic, relative periodic and inter-process stimuli can)"),
        ("preemption=\"cooperative\"", "preemption=\"sometimes\"", "m.amxmi: swModel.tasks[T_sporadic].preemption: expected preemptive, cooperative or non_preemptive, got \"sometimes\""),
        ("priority=\"20\"", "priority=\"high\"", "m.amxmi: swModel.tasks[T_sporadic].priority: expected an integer, got \"high\""),
        ("runnable=\"R2?type=Runnable\" />\n          <calls", "runnable=\"R9?type=Runnable\" />\n          <calls", "m.amxmi: swModel.tasks[T_periodic].runnable: unknown runnable \"R9\""),
        ("data=\"L1?type=Label\"", "data=\"L9?type=Label\"", "m.amxmi: swModel.runnables[R1].runnableItems[0].data: unknown label \"L9\""),
        ("<frequency value=\"1.0E8\" />", "<frequency value=\"fast\" />", "m.amxmi: hwModel.quartzes[PLL].frequency.value: expected a number, got \"fast\""),
        ("<calls xsi:type=\"am:InterProcessActivation\" stimulus=\"IPA?type=InterProcess\" />", "", "m.amxmi: swModel.tasks[T_ipa].stimuli: the inter-process stimulus \"IPA\" is triggered by no task, so the task has no release rate"),
        ("</am:Amalthea>", "", "m.amxmi: (file): no XML root element (empty or cut-off file)"),
    ];
    for (from, to, want) in cases {
        let got = error_after(from, to);
        assert_eq!(got, want);
        assert!(!got.contains('\n'));
    }
    let other = import_amalthea(b"<?xml version=\"1.0\"?>\n<Model/>", "m.xml", None).unwrap_err();
    assert_eq!(other.to_string(), "m.xml: (file): not an Amalthea model: the root element is \"Model\"");
    // A core without a clock, and invalid XML.
    assert!(error_after("<prescaler name=\"P1\" clockRatio=\"1.0\" quartz=\"PLL?type=Quartz\" />", "").starts_with("m.amxmi: hwModel.cores[C1].prescaler: missing"));
    let xml = error_after("<labels name=\"L1\">", "<labels name=\"L1\" <");
    assert!(xml.starts_with("m.amxmi: line 78: invalid XML attribute"), "{xml}");
}

#[test]
fn import_never_panics_on_a_cut_or_altered_model() {
    // Every cut and every one-byte deletion at a stride: an import or a one-line error, never a panic.
    for name in ["v07-small.amxmi", "v2-small.amxmi"] {
        let bytes = fixture(name);
        for at in (0..bytes.len()).step_by(7) {
            let mut deleted = bytes.clone();
            deleted.remove(at);
            for input in [&bytes[..at], &deleted[..]] {
                if let Err(e) = import_amalthea(input, "m.amxmi", None) {
                    assert!(!e.to_string().contains('\n'), "{e}");
                }
            }
        }
    }
}
