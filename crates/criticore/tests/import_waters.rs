//! Acceptance of the Amalthea import on the Bosch WATERS 2017 challenge model
//! (issue 27; docs/amalthea.md): the per-core utilizations at the execution
//! needs' upper bounds and means, each worked out by two routes (the written
//! file's PETs, and the intermediate model's cycles and clocks), the summary
//! counted against the XML text itself, and the file's round trip.
//!
//! The model lives in the shared data folder beside the repository, which a
//! clone may not have: then every test here is counted as ignored, with the
//! reason (`skipped NAME: REASON` on stderr).

use criticore::decimal::Exact;
use criticore::import::{import_amalthea, Imported, Stimulus};
use criticore::model::{parse_task_system, Arrival, Format, Preemption};
use libtest_mimic::{Arguments, Completion, Trial};
use std::io::Read;
use std::path::PathBuf;

const UPPER: [f64; 4] = [0.970, 1.336, 1.069, 1.179];
const MEAN: [f64; 4] = [0.715, 0.884, 0.714, 0.772];

/// The model's path: the folder `shared/data` beside the repository root.
fn model_path() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("..").join("shared").join("data").join("waters2017-challenge.amxmi.gz")
}

/// A check of the imported model, given the file's bytes.
type Check = fn(&[u8], &Imported);

fn main() {
    let args = Arguments::from_args();
    let tests: [(&str, Check); 7] = [
        ("import_waters_utilization_at_the_upper_bounds", upper_bounds),
        ("import_waters_utilization_at_the_means", means),
        ("import_waters_summary_counts_match_the_xml", summary_counts),
        ("import_waters_file_round_trips", round_trip),
        ("import_waters_scale_multiplies_before_rounding", scaled),
        ("import_waters_pfp_bounds_at_scale_0_7_equal_an_independent_rta", pfp_at_0_7),
        ("import_waters_event_chains_are_the_tasks_of_their_runnables", chains_by_scan),
    ];
    let trials = tests
        .into_iter()
        .map(|(name, body)| {
            Trial::ignorable_test(name, move || {
                let path = model_path();
                let Ok(bytes) = std::fs::read(&path) else {
                    let reason = format!("the WATERS 2017 model is not at {}", path.display());
                    eprintln!("skipped {name}: {reason}");
                    return Ok(Completion::ignored_with(reason));
                };
                let imported = import_amalthea(&bytes, "waters.amxmi.gz", None).map_err(|e| e.to_string())?;
                body(&bytes, &imported);
                Ok(Completion::Completed)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}

fn close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 0.001, "{what}: {got:?} against {want:?}");
    }
}

/// Per-core utilization from the intermediate model: cycles (instructions
/// over instructions per cycle) over the clock, over the period, with
/// `amount` picking the bound or the mean of each need (floating point).
fn from_model(imp: &Imported, amount: impl Fn(&criticore::import::Amount) -> f64) -> Vec<f64> {
    let m = &imp.model;
    let mut u = vec![0.0; m.cores.len()];
    for t in &m.tasks {
        let core = &m.cores[t.core.expect("every WATERS task is allocated")];
        let instructions: f64 = t.steps.iter().flat_map(|&r| &m.runnables[r].needs).map(|n| amount(n.for_type(&core.pu_type).unwrap())).sum();
        let seconds = instructions / core.instructions_per_cycle.to_f64() / core.clock_hz.to_f64();
        let period_s = match t.stimulus {
            Stimulus::Periodic { period_ns, .. } => period_ns,
            Stimulus::Sporadic { min_ns, .. } | Stimulus::RelativePeriodic { min_ns, .. } => min_ns,
            Stimulus::InterProcess { .. } => panic!("WATERS 2017 has no inter-process activation"),
        } as f64
            / 1e9;
        u[t.core.unwrap()] += seconds / period_s;
    }
    u
}

/// A task's execution needs: its PET less the copies of its labels that
/// implicit communication adds (`model::scratchpad::derive_copies`).
fn needs(t: &criticore::model::Task) -> u64 {
    t.pet_ns.highest().unwrap() - t.copy_in_ns - t.copy_out_ns
}

fn upper_bounds(_: &[u8], imp: &Imported) {
    let mut from_file = vec![0.0; imp.system.platform.cores];
    for t in &imp.system.tasks {
        from_file[t.core.unwrap()] += needs(t) as f64 / t.period_ns as f64;
    }
    close(&from_file, &UPPER, "from the written file's PETs");
    close(&from_model(imp, |a| a.upper as f64), &UPPER, "from the model's cycles");
}

fn means(_: &[u8], imp: &Imported) {
    close(&from_model(imp, |a| a.mean.expect("WATERS gives every need a mean")), &MEAN, "from the model's means");
}

/// Each count of the summary line against the XML text itself.
fn summary_counts(bytes: &[u8], imp: &Imported) {
    let mut xml = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut xml).unwrap();
    let n = |needle: &str| xml.matches(needle).count();
    let s = &imp.summary;
    assert_eq!((s.tasks, s.cores), (n("<tasks "), n("<cores ")));
    let kind = |k: &str| s.not_represented.iter().find(|(name, _)| name == k).map(|(_, c)| *c);
    // Every call of a runnable is a runnable of its task now, their PETs summing to the task's.
    assert_eq!(kind("runnables as steps"), None);
    assert_eq!(imp.system.tasks.iter().map(|t| t.runnables.len()).sum::<usize>(), n("am:TaskRunnableCall"));
    for t in &imp.system.tasks {
        assert_eq!(t.runnables.iter().map(|r| r.pet_ns).sum::<u64>(), needs(t), "{}", t.name);
    }
    // Memories, labels and their accesses are the task system's own now
    // (Build 3): every memory has paths from every core, every label a memory.
    for k in ["label accesses to labels in no memory", "labels in no memory", "memories no core has an access path to", "missing access paths (the memory's slowest latency used)", "cores at another clock than the first (latencies in its cycles)"] {
        assert_eq!(kind(k), None, "{k}");
    }
    assert_eq!(imp.system.platform.memories.len(), n("<memories "));
    assert_eq!(imp.system.labels.len(), n("<labels "));
    assert_eq!(imp.system.labels.len(), n("am:AbstractElementMapping"));
    // Each access entry of the XML is a read or write count of its runnable
    // (entries of one label and direction in one runnable add up).
    let entries: usize = imp.system.tasks.iter().flat_map(|t| &t.runnables).flat_map(|r| &r.accesses).map(|a| (a.reads > 0) as usize + (a.writes > 0) as usize).sum();
    assert!(entries <= n("am:LabelAccess") && entries > 0, "{entries}");
    let model_total: f64 = imp.model.runnables.iter().flat_map(|r| &r.accesses).map(|a| a.count.ceil()).sum();
    let system_total: u64 = imp.system.tasks.iter().flat_map(|t| &t.runnables).flat_map(|r| &r.accesses).map(|a| a.reads + a.writes).sum();
    assert_eq!(system_total as f64, model_total);
    // Every event chain resolves to tasks (chains_by_scan checks which).
    assert_eq!(kind("event chains (an event of no runnable, or of one several tasks call)"), None);
    assert_eq!(imp.system.chains.len(), n("<eventChains "));
    // Cooperative tasks are the task system's own now (`preemption`).
    assert_eq!(kind("cooperative tasks"), None);
    assert_eq!(imp.system.tasks.iter().filter(|t| t.preemption == Preemption::Cooperative).count(), n("preemption=\"cooperative\""));
    // Activation limits too (`activation_limit`).
    assert_eq!(kind("activation limits"), None);
    assert_eq!(imp.system.tasks.iter().filter(|t| t.activation_limit.is_some()).count(), n("multipleTaskActivationLimit="));
    // Every execution need is Weibull estimators, kept for the draws (`--drawn`).
    assert_eq!(kind("execution-need distributions (upper bound used)"), None);
    assert_eq!(n("am:WeibullEstimators"), n("am:InstructionsDeviation"));
    let drawn = imp.system.tasks.iter().flat_map(|t| &t.runnables).filter(|r| matches!(r.need.map(|n| n.draw), Some(criticore::model::need::Draw::Weibull { .. }))).count();
    assert_eq!(drawn, n("am:TaskRunnableCall"));
    // Nothing of the model is left out any more.
    assert_eq!(s.not_represented, []);
    assert_eq!(s.line(), format!("imported {} tasks on {} cores", s.tasks, s.cores));
    assert_eq!(imp.model.chains.iter().map(|c| c.segments.len()).sum::<usize>(), n("am:SubEventChain"));
}

fn round_trip(_: &[u8], imp: &Imported) {
    let again = parse_task_system(&imp.toml, Format::Toml, "again.toml").unwrap();
    assert_eq!(again, imp.system);
    // ISR_10: sporadic, 700-800 us apart, uniform; deadline 700 us; OSEK priority 40.
    let isr = imp.system.tasks.iter().find(|t| t.name == "ISR_10").unwrap();
    assert_eq!((isr.period_ns, isr.deadline_ns, isr.arrival, isr.priority), (700_000, 700_000, Arrival::Sporadic { max_jitter_ns: 100_000 }, Some(40)));
}

fn scaled(bytes: &[u8], imp: &Imported) {
    let scale = Exact::parse("0.7").unwrap();
    let scaled = import_amalthea(bytes, "waters.amxmi.gz", Some(&scale)).unwrap();
    let m = &imp.model;
    for (t, s) in m.tasks.iter().zip(&scaled.system.tasks) {
        let core = &m.cores[t.core.unwrap()];
        let instructions: u64 = t.steps.iter().flat_map(|&r| &m.runnables[r].needs).map(|n| n.for_type(&core.pu_type).unwrap().upper).sum();
        // 200 MHz and one instruction per cycle: 5 ns per instruction, times 0.7 = 7/2 ns, rounded up once.
        assert_eq!(core.clock_hz.whole(), Some(200_000_000));
        assert_eq!(needs(s), (instructions * 7).div_ceil(2), "{}", t.name);
    }
}

/// Response-time analysis by hand (Lehoczky 1990, arbitrary deadlines, with
/// limited preemption: Bril, Lukkien and Verhaegh 2009, Yao, Buttazzo and
/// Bertogna 2011): on each core, by priority (higher first; ties by shorter
/// period, then file order: docs/format.md), blocking B = the longest
/// non-preemptive region of a lower task less 1 ns (a release at the same
/// instant goes first). A preemptive task: the level-i busy period
/// L = B + Σ⌈L/Tⱼ⌉·Cⱼ over i and the tasks above it, and for each job q in
/// it w = B + (q+1)·Cᵢ + Σ⌈w/Tⱼ⌉·Cⱼ, R = max(w − q·Tᵢ). A cooperative one
/// (regions its runnables, the last q_last): its job q starts its last region
/// at S = B + (q+1)·Cᵢ − q_last + Σ(⌊S/Tⱼ⌋ + 1)·Cⱼ and ends at S + q_last.
/// Sporadic tasks at their least separation.
fn rta(tasks: &[(u64, u64, i64, usize, Vec<u64>)]) -> Vec<Option<u64>> {
    // (pet, period, priority, index, non-preemptive regions: empty if preemptive)
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(tasks[k].2), tasks[k].1, tasks[k].3));
    let mut out = vec![None; tasks.len()];
    for (rank, &i) in order.iter().enumerate() {
        let hp: Vec<(u64, u64)> = order[..rank].iter().map(|&j| (tasks[j].0, tasks[j].1)).collect();
        let b = order[rank + 1..].iter().flat_map(|&j| tasks[j].4.iter().copied()).max().map_or(0, |q| q - 1);
        let (c, t) = (tasks[i].0, tasks[i].1);
        let u: f64 = hp.iter().map(|&(c, t)| c as f64 / t as f64).sum::<f64>() + c as f64 / t as f64;
        if u > 1.0 {
            continue;
        }
        let demand = |w: u64, own: u64| b + own + hp.iter().map(|&(cj, tj)| w.div_ceil(tj) * cj).sum::<u64>();
        let mut l = c + b;
        loop {
            let next = demand(l, l.div_ceil(t) * c);
            if next == l {
                break;
            }
            l = next;
        }
        let mut worst = 0;
        for q in 0..l.div_ceil(t) {
            let finish = match tasks[i].4.last() {
                Some(&last) => {
                    let mut s = 0;
                    loop {
                        let next = b + (q + 1) * c - last + hp.iter().map(|&(cj, tj)| (s / tj + 1) * cj).sum::<u64>();
                        if next == s {
                            break s + last;
                        }
                        s = next;
                    }
                }
                None => {
                    let mut w = (q + 1) * c;
                    loop {
                        let next = demand(w, (q + 1) * c);
                        if next == w {
                            break w;
                        }
                        w = next;
                    }
                }
            };
            worst = worst.max(finish - q * t);
        }
        out[i] = Some(worst);
    }
    out
}

fn pfp_at_0_7(bytes: &[u8], _: &Imported) {
    use criticore::analysis::classic::analyze;
    use criticore::policy::SchedulerKind;
    let scale = Exact::parse("0.7").unwrap();
    let mut system = import_amalthea(bytes, "waters.amxmi.gz", Some(&scale)).unwrap().system;
    assert!(system.tasks.iter().all(|t| t.memory.is_none()), "a scratchpad platform has no memory profiles");
    // CPU-only: without the memories, their labels and the runnables' accesses.
    system.platform.memories.clear();
    system.labels.clear();
    system.tasks.iter_mut().flat_map(|t| &mut t.runnables).for_each(|r| r.accesses.clear());
    for t in &mut system.tasks {
        // Nor the copies of labels (implicit communication's).
        t.pet_ns = criticore::model::LevelPets([Some(needs(t)); 4]);
        (t.copy_in_ns, t.copy_out_ns) = (0, 0);
    }
    assert!(system.tasks.iter().any(|t| t.preemption == Preemption::Cooperative), "WATERS 2017 has cooperative tasks");
    let a = analyze(&system, SchedulerKind::Pfp).unwrap();
    let mut checked = 0;
    for core in 0..system.platform.cores {
        let on: Vec<usize> = (0..system.tasks.len()).filter(|&i| system.tasks[i].core == Some(core)).collect();
        // A cooperative task's regions: its runnables of nonzero PET.
        let regions = |i: usize| match system.tasks[i].preemption {
            Preemption::Preemptive => Vec::new(),
            _ => system.tasks[i].runnables.iter().map(|r| r.pet_ns).filter(|&p| p > 0).collect(),
        };
        let tasks: Vec<(u64, u64, i64, usize, Vec<u64>)> = on.iter().map(|&i| (system.tasks[i].pet_ns.highest().unwrap(), system.tasks[i].period_ns, system.tasks[i].priority.unwrap_or(i64::MIN), i, regions(i))).collect();
        for (&i, want) in on.iter().zip(rta(&tasks)) {
            let row = a.tasks.iter().find(|r| r.task == system.tasks[i].name).unwrap();
            assert_eq!(row.bound_ns, want, "{} on core {core}", system.tasks[i].name);
            checked += 1;
        }
    }
    assert_eq!(checked, system.tasks.len());
    // At 0.7 the published studies find the system schedulable; so does this.
    assert!(a.tasks.iter().all(|r| r.bound_ns.is_some()), "{:?}", a.tasks.iter().filter(|r| r.bound_ns.is_none()).map(|r| &r.task).collect::<Vec<_>>());
}

/// The three event chains as tasks, by a scan of the XML: each segment's
/// stimulus and response event name "RunnableStart_<runnable>", and a
/// runnable's task is the `<tasks name=…>` element whose calls name it.
fn chains_by_scan(bytes: &[u8], imp: &Imported) {
    let mut xml = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut xml).unwrap();
    let attr = |line: &str, a: &str| line.split(&format!("{a}=\"")).nth(1).map(|r| r[..r.find('"').unwrap()].to_string());
    let mut task_of = std::collections::HashMap::new();
    let mut current = None;
    for line in xml.lines() {
        if line.trim_start().starts_with("<tasks ") {
            current = attr(line, "name");
        } else if line.trim_start().starts_with("</tasks>") {
            current = None;
        } else if let (Some(t), Some(r)) = (&current, attr(line, "runnable")) {
            task_of.insert(r.trim_end_matches("?type=Runnable").to_string(), t.clone());
        }
    }
    let runnable = |event: &str| event.trim_start_matches("RunnableStart_").trim_end_matches("?type=RunnableEvent").to_string();
    let mut want: Vec<(String, Vec<String>)> = Vec::new();
    for line in xml.lines() {
        let l = line.trim_start();
        if l.starts_with("<eventChains ") {
            want.push((attr(l, "name").unwrap(), Vec::new()));
        } else if l.starts_with("<eventChain ") {
            let steps = &mut want.last_mut().unwrap().1;
            if steps.is_empty() {
                steps.push(task_of[&runnable(&attr(l, "stimulus").unwrap())].clone());
            }
            steps.push(task_of[&runnable(&attr(l, "response").unwrap())].clone());
        }
    }
    let got: Vec<(String, Vec<String>)> = imp.system.chains.iter().map(|c| (c.name.clone(), c.tasks.iter().map(|&t| imp.system.tasks[t].name.clone()).collect())).collect();
    assert_eq!(got, want);
    assert_eq!(want.len(), 3);
}
