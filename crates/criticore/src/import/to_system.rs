//! The intermediate Amalthea [`Model`] as criticore's task system today: one
//! `[[task]]` per task with its period, deadline, offset, arrival, core,
//! priority, one PET and its runnables in call order (name and PET each),
//! `platform.cores`, and its event chains as `[[chain]]`s of tasks. What the task system cannot
//! hold yet is counted by kind in the [`Summary`] (docs/amalthea.md).

use crate::decimal::Exact;
use super::*;
use crate::error::{key, quote, FieldError, FieldResult};
use crate::model::need::Need as Drawn;
use crate::model::scratchpad::{Label, LabelAccess, Memory};
use crate::model::{Arrival, Chain as SystemChain, Communication, Level, LevelPets, Platform, Runnable, Task as SystemTask};

/// The task system of `model`, execution needs multiplied by `scale` (1 when None).
pub fn task_system(model: &Model, scale: Option<&Exact>) -> FieldResult<(TaskSystem, Summary)> {
    let one = Exact::one();
    let scale = scale.unwrap_or(&one);
    if !scale.is_positive() {
        return Err(FieldError::new("--scale", "must be a positive number"));
    }
    if model.cores.is_empty() {
        return Err(FieldError::new("hwModel", "no processing unit of type CPU with a clock: criticore needs at least one core"));
    }
    let placed = platform_memories(model);
    let mut no_need = 0;
    let mut mixed = 0;
    let mut tasks = Vec::with_capacity(model.tasks.len());
    for (i, t) in model.tasks.iter().enumerate() {
        let path = format!("swModel.tasks[{}]", if t.name.is_empty() { i.to_string() } else { key(&t.name) });
        if t.name.trim().is_empty() {
            return Err(FieldError::new(format!("{path}.name"), "a task needs a name"));
        }
        let (period_ns, offset_ns, arrival) = release(model, i, &path)?;
        let (pet_ns, runnables) = match pet_ns(model, t, scale, &path, &placed.label_index)? {
            // No need at all: 1 ns, and no runnables (theirs would sum to 0).
            (0, _) => {
                no_need += 1;
                (1, Vec::new())
            }
            found => found,
        };
        // A task outside MC² (no level): one PET for every level (docs/format.md).
        tasks.push(SystemTask {
            level: None,
            criticality: 0,
            core: t.core,
            deadline_ns: t.deadline_ns.unwrap_or(period_ns),
            offset_ns,
            arrival,
            priority: t.priority,
            runnables,
            preemption: t.preemption,
            activation_limit: t.activation_limit,
            communication: communication(model, t).unwrap_or_else(|| {
                mixed += 1;
                Communication::Implicit
            }),
            ..SystemTask::mc2(t.name.clone(), Level::D, None, period_ns, LevelPets([Some(pet_ns); 4]))
        });
    }
    let platform = Platform { cores: model.cores.len(), clock_hz: placed.clock_hz, memories: placed.memories.clone(), ..Platform::preset("imx6").expect("the default preset exists") };
    let chains: Vec<SystemChain> = model.chains.iter().filter_map(|c| task_chain(model, c)).collect();
    let unresolved = model.chains.len() - chains.len();
    let labels = placed.labels.clone();
    let mut system = TaskSystem { platform, tasks, servers: Vec::new(), allocation: None, regulation: None, devices: Vec::new(), chains, labels };
    // Implicit communication (the default): the copies from the labels, as a parse makes them.
    crate::model::scratchpad::derive_copies(&mut system).map_err(|(i, key)| FieldError::new(format!("task[{i}].{key}"), "an imported task states no copies"))?;
    crate::model::scratchpad::used_bytes(&system).map_err(|(i, m)| crate::model::parse::copies_overflow(&system, i, m))?;
    Ok((system, summary(model, no_need, mixed, unresolved, &placed)))
}

/// The model's memories as scratchpads behind a crossbar (docs/amalthea.md,
/// "Memories and labels") and the labels placed in them.
struct Placed {
    clock_hz: Option<u64>,
    memories: Vec<Memory>,
    labels: Vec<Label>,
    /// Per model label: its index among `labels`, if placed in a kept memory.
    label_index: Vec<Option<usize>>,
    /// Memories no core has an access path to (not kept).
    unreachable: usize,
    /// (core, memory) pairs without a path: the memory's slowest path's latency.
    missing_paths: usize,
    /// Cores whose clock differs from the first core's.
    other_clocks: usize,
}

/// A memory's latency from each core is its access path's, rounded up to a
/// whole cycle (a missing path: the memory's slowest); it is local to the
/// one core strictly faster than every other. Its size is the model's, or
/// what its labels take where the model gives none. Accesses move 4 bytes.
fn platform_memories(model: &Model) -> Placed {
    // Whole hertz (a fractional clock rounded: latencies are whole cycles anyway).
    let hz = |c: &super::Core| c.clock_hz.whole().unwrap_or_else(|| c.clock_hz.to_f64().round() as u64).max(1);
    let clock_hz = model.cores.first().map(hz);
    let other_clocks = model.cores.iter().filter(|c| Some(hz(c)) != clock_hz).count();
    let mut kept: Vec<Option<usize>> = vec![None; model.memories.len()];
    let mut memories: Vec<Memory> = Vec::new();
    let mut missing_paths = 0;
    for (k, m) in model.memories.iter().enumerate() {
        let paths: Vec<Option<u64>> = model.cores.iter().map(|c| model.access_paths.iter().find(|p| p.source == c.name && p.target == m.name).and_then(|p| p.latency_cycles).map(|l| (l.ceil() as u64).max(1))).collect();
        let Some(slowest) = paths.iter().flatten().copied().max() else { continue };
        missing_paths += paths.iter().filter(|p| p.is_none()).count();
        let latency_cycles: Vec<u64> = paths.iter().map(|p| p.unwrap_or(slowest)).collect();
        let fastest = *latency_cycles.iter().min().expect("a platform has cores");
        let at_fastest: Vec<usize> = (0..latency_cycles.len()).filter(|&c| latency_cycles[c] == fastest).collect();
        let core = match at_fastest[..] {
            [c] => Some(c),
            _ => None,
        };
        let used: u64 = model.labels.iter().filter(|l| l.memory == Some(k)).map(|l| l.size_bits.div_ceil(8).max(1)).sum();
        kept[k] = Some(memories.len());
        memories.push(Memory { name: m.name.clone(), core, size_bytes: m.size_bytes.unwrap_or(used).max(1), latency_cycles, width_bytes: 4, arbiter: crate::model::Arbiter::RoundRobin });
    }
    let mut labels = Vec::new();
    let label_index = model
        .labels
        .iter()
        .map(|l| {
            let memory = l.memory.and_then(|m| kept[m])?;
            labels.push(Label { name: l.name.clone(), size_bytes: l.size_bits.div_ceil(8).max(1), memory });
            Some(labels.len() - 1)
        })
        .collect();
    let unreachable = kept.iter().filter(|k| k.is_none()).count();
    let any = !memories.is_empty();
    Placed { clock_hz: clock_hz.filter(|_| any), memories, labels, label_index, unreachable, missing_paths, other_clocks: if any { other_clocks } else { 0 } }
}

/// A runnable's label accesses among the placed labels: reads and writes
/// per run, each count rounded up to a whole access.
fn label_accesses(runnable: &super::Runnable, label_index: &[Option<usize>]) -> Vec<LabelAccess> {
    let mut out: Vec<LabelAccess> = Vec::new();
    for a in &runnable.accesses {
        let Some(label) = label_index[a.label] else { continue };
        let n = a.count.ceil().max(0.0) as u64;
        if n == 0 {
            continue;
        }
        let at = match out.iter().position(|x| x.label == label) {
            Some(at) => at,
            None => {
                out.push(LabelAccess { label, reads: 0, writes: 0 });
                out.len() - 1
            }
        };
        if a.write { out[at].writes += n } else { out[at].reads += n }
    }
    out
}

/// An event chain as the tasks its events happen in, in order (docs/amalthea.md):
/// its segments' events flattened (an event that ends one segment and starts
/// the next once), each a runnable's event, in the one task that calls that
/// runnable. A hop inside a task is a later job of it (under implicit or LET
/// communication a job reads what an earlier job wrote). None where an event
/// is no runnable's, or its runnable is called by no task or by several, or
/// chain names repeat.
fn task_chain(model: &Model, c: &Chain) -> Option<SystemChain> {
    let mut events: Vec<&Event> = Vec::new();
    flatten(c, &mut events);
    let mut tasks = Vec::with_capacity(events.len());
    for e in events {
        let runnable = model.runnables.iter().position(|r| Some(&r.name) == e.entity.as_ref())?;
        let mut callers = model.tasks.iter().enumerate().filter(|(_, t)| t.steps.contains(&runnable)).map(|(i, _)| i);
        let (Some(t), None) = (callers.next(), callers.next()) else { return None };
        tasks.push(t);
    }
    (tasks.len() >= 2 && !c.name.trim().is_empty() && model.chains.iter().filter(|d| d.name == c.name).count() == 1).then(|| SystemChain { name: c.name.clone(), tasks })
}

/// A chain's events in order: its own stimulus and response, or its segments' in turn.
fn flatten<'m>(c: &'m Chain, out: &mut Vec<&'m Event>) {
    if c.segments.is_empty() {
        for e in [&c.stimulus, &c.response] {
            if out.last().is_none_or(|last| last.name != e.name) {
                out.push(e);
            }
        }
    } else {
        for s in &c.segments {
            flatten(s, out);
        }
    }
}

/// Period, offset and arrival of task `i`: its stimulus, or for an
/// inter-process activation the release of the task that triggers it.
fn release(model: &Model, i: usize, path: &str) -> FieldResult<(u64, u64, Arrival)> {
    let mut at = i;
    // Each step moves to an activating task; more steps than tasks is a loop.
    for _ in 0..=model.tasks.len() {
        match &model.tasks[at].stimulus {
            Stimulus::Periodic { period_ns, offset_ns, .. } => return Ok((*period_ns, if at == i { *offset_ns } else { 0 }, Arrival::Periodic)),
            Stimulus::Sporadic { min_ns, max_ns, .. } => return Ok((*min_ns, 0, Arrival::Sporadic { max_jitter_ns: max_ns - min_ns })),
            Stimulus::RelativePeriodic { min_ns, max_ns, offset_ns, .. } => {
                return Ok((*min_ns, if at == i { *offset_ns } else { 0 }, Arrival::Sporadic { max_jitter_ns: max_ns - min_ns }))
            }
            Stimulus::InterProcess { name } => {
                at = model.tasks.iter().position(|t| t.triggers.contains(name)).ok_or_else(|| {
                    FieldError::new(format!("{path}.stimuli"), format!("the inter-process stimulus {} is triggered by no task, so the task has no release rate", quote(name)))
                })?;
            }
        }
    }
    Err(FieldError::new(format!("{path}.stimuli"), "inter-process activations form a loop: no task of the loop has its own release rate"))
}

/// The task's PET in ns: the upper bounds of its runnables' needs, in cycles
/// of its core, summed, times `scale`, converted once and rounded up. A task
/// on no single core takes its largest PET over the cores.
fn pet_ns(model: &Model, task: &Task, scale: &Exact, path: &str, label_index: &[Option<usize>]) -> FieldResult<(u64, Vec<Runnable>)> {
    let cores: Vec<usize> = match task.core {
        Some(c) => vec![c],
        None => (0..model.cores.len()).collect(),
    };
    let mut worst: (u64, Vec<Runnable>) = (0, Vec::new());
    for c in cores {
        let core = &model.cores[c];
        let mut cycles = Exact::integer(0);
        // Each runnable ends where the sum so far, rounded up, ends: the
        // runnables' PETs sum to the task's, each within 1 ns of its own.
        let mut runnables = Vec::with_capacity(task.steps.len());
        let mut ended = 0u64;
        let to_ns = |cycles: &Exact| {
            let ns = cycles.mul(&Exact::integer(1_000_000_000)).mul(scale).div(&core.clock_hz);
            ns.ceil().filter(|&n| n <= i64::MAX as u64).ok_or_else(|| FieldError::new(path, "its execution time does not fit in 64-bit nanoseconds"))
        };
        for &r in &task.steps {
            let runnable = &model.runnables[r];
            for need in &runnable.needs {
                let amount = need.for_type(&core.pu_type).ok_or_else(|| {
                    FieldError::new(
                        format!("swModel.runnables[{}]", key(&runnable.name)),
                        format!("no execution need for the core type {} of {} (and no default), where task {} runs", quote(&core.pu_type), quote(&core.name), quote(&task.name)),
                    )
                })?;
                let mut c = Exact::integer(amount.upper);
                if need.unit == NeedUnit::Instructions {
                    c = c.div(&core.instructions_per_cycle);
                }
                cycles = Exact(&cycles.0 + &c.0);
            }
            let end = to_ns(&cycles)?;
            let pet_ns = end - ended;
            // A runnable of one need with a distribution criticore draws from keeps it.
            let need = match runnable.needs.as_slice() {
                [need] => need.for_type(&core.pu_type).and_then(|amount| {
                    let per_cycle = |x: f64| {
                        let cycles = if need.unit == NeedUnit::Instructions { x / core.instructions_per_cycle.to_f64() } else { x };
                        cycles * 1e9 * scale.to_f64() / core.clock_hz.to_f64()
                    };
                    drawn_need(amount, pet_ns, per_cycle)
                }),
                _ => None,
            };
            runnables.push(Runnable { name: runnable.name.clone(), pet_ns, need, accesses: label_accesses(runnable, label_index) });
            ended = end;
        }
        if ended > worst.0 || worst.1.is_empty() && ended == worst.0 {
            worst = (ended, runnables);
        }
    }
    Ok(worst)
}

/// The draw of an execution need whose distribution criticore draws from
/// (`model::need`): Weibull estimators (lower bound, mean, pRemainPromille)
/// or uniform (lower bound), from the amount in cycles or instructions
/// (`ns`: to nanoseconds); None for the others (the PET alone).
fn drawn_need(amount: &Amount, pet_ns: u64, ns: impl Fn(f64) -> f64) -> Option<Drawn> {
    let min_ns = (ns(amount.lower? as f64).ceil() as u64).min(pet_ns);
    if amount.distribution.contains("WeibullEstimators") {
        let promille = amount.parameters.iter().find(|(k, _)| k == "pRemainPromille")?.1;
        // The mean in whole ns, as a file states it (the written TOML reads back the same).
        Drawn::weibull(min_ns, ns(amount.mean?).round(), pet_ns, promille / 1000.0).ok()
    } else if amount.distribution.contains("Uniform") {
        Some(Drawn::uniform(min_ns))
    } else {
        None
    }
}

/// Whether a runnable's need is drawn, as [`drawn_need`] decides on its
/// amounts in cycles (the estimators' shape does not depend on the unit).
fn drawn_kind(runnable: &super::Runnable) -> bool {
    match runnable.needs.as_slice() {
        [need] => need.default.iter().chain(need.per_type.iter().map(|(_, a)| a)).all(|a| a.lower.is_some() && drawn_need(a, a.upper, |x| x).is_some()),
        _ => false,
    }
}

/// Counts, by element kind, of what the task system cannot hold yet.
/// A task's communication, from its label accesses' `implementation`:
/// the one they state (implicit, AUTOSAR's and the challenge's, when none
/// does); None if they state different ones.
fn communication(model: &Model, t: &Task) -> Option<Communication> {
    let mut stated = t.steps.iter().flat_map(|&r| &model.runnables[r].accesses).filter_map(|a| a.implementation);
    let first = stated.next().unwrap_or(Communication::Implicit);
    stated.all(|c| c == first).then_some(first)
}

fn summary(model: &Model, no_need: usize, mixed: usize, unresolved_chains: usize, placed: &Placed) -> Summary {
    let count = |f: &dyn Fn(&Task) -> bool| model.tasks.iter().filter(|t| f(t)).count();
    let amounts = model.runnables.iter().filter(|r| !drawn_kind(r)).flat_map(|r| &r.needs).flat_map(|n| n.default.iter().chain(n.per_type.iter().map(|(_, a)| a)));
    let non_uniform = |d: &Option<String>| d.as_deref().is_some_and(|d| !d.contains("Uniform"));
    let mut kinds: Vec<(String, usize)> = vec![
        ("label accesses to labels in no memory".into(), model.runnables.iter().flat_map(|r| &r.accesses).filter(|a| placed.label_index[a.label].is_none()).count()),
        ("labels in no memory".into(), placed.label_index.iter().filter(|i| i.is_none()).count()),
        ("memories no core has an access path to".into(), placed.unreachable),
        ("missing access paths (the memory's slowest latency used)".into(), placed.missing_paths),
        ("cores at another clock than the first (latencies in its cycles)".into(), placed.other_clocks),
        ("event chains (an event of no runnable, or of one several tasks call)".into(), unresolved_chains),
        ("inter-process activations (at the activating task's rate)".into(), count(&|t| matches!(t.stimulus, Stimulus::InterProcess { .. }))),
        ("periodic jitters".into(), count(&|t| matches!(t.stimulus, Stimulus::Periodic { jitter_ns, .. } if jitter_ns > 0))),
        (
            "non-uniform inter-arrival distributions (drawn uniform)".into(),
            count(&|t| matches!(&t.stimulus, Stimulus::Sporadic { distribution, .. } | Stimulus::RelativePeriodic { distribution, .. } if non_uniform(distribution))),
        ),
        ("execution-need distributions (upper bound used)".into(), amounts.filter(|a| a.distribution != "Constant").count()),
        ("switches (largest branch kept)".into(), model.switches),
        ("non-CPU processing units".into(), model.other_units.len()),
        ("tasks with no execution need (1 ns PET)".into(), no_need),
        ("tasks whose label accesses mix implementations (implicit used)".into(), mixed),
    ];
    kinds.extend(model.unread.iter().cloned());
    kinds.retain(|(_, n)| *n > 0);
    Summary { tasks: model.tasks.len(), cores: model.cores.len(), not_represented: kinds }
}
