//! Reading an Amalthea (APP4MC) model into the intermediate [`Model`]. Both
//! schema families are read by their structure, not by version number:
//! 0.7.x (`callGraph`, `runnableItems`, instruction counts, cores with
//! prescalers and quartzes, `coreAllocation`, `mapping`) and 1.x/2.x
//! (`activityGraph`, `Ticks` per processing-unit definition, processing units
//! in `structures` with frequency domains, `schedulerAllocation`,
//! `memoryMapping`). References are `Name?type=Kind`, URL-encoded. Fields in
//! errors are paths of element names, e.g. `swModel.tasks[T1].stimuli`.

use crate::decimal::Exact;
use super::xml::{self, Element};
use super::*;
use crate::error::{key, quote, FieldError, FieldResult};
use std::collections::HashMap;

const NAMESPACE: &str = "http://app4mc.eclipse.org/amalthea/";

/// Deepest chain of event-chain references followed (a reference loop stops here).
const MAX_CHAIN_DEPTH: usize = 32;

pub fn read(bytes: &[u8]) -> FieldResult<Model> {
    let root = xml::document(bytes)?;
    if root.name != "Amalthea" {
        return Err(FieldError::new("(file)", format!("not an Amalthea model: the root element is {}", quote(&root.name))));
    }
    let version = root
        .attr("am")
        .and_then(|ns| ns.strip_prefix(NAMESPACE))
        .ok_or_else(|| FieldError::new("(file)", format!("not an Amalthea model: no namespace {NAMESPACE}VERSION")))?
        .to_string();
    let empty = Element::default();
    let part = |name: &str| root.child(name).unwrap_or(&empty);
    let mut unread = Unread::default();
    let hw = Hardware::read(part("hwModel"))?;
    let mut labels = read_labels(part("swModel"))?;
    let label_index = index(labels.iter().map(|l| l.name.as_str()));
    let mut runnables = Vec::new();
    for (i, el) in part("swModel").all("runnables").enumerate() {
        runnables.push(read_runnable(el, &format!("swModel.runnables[{}]", name_key(el, i)), &label_index, &mut unread)?);
    }
    map_labels(part("mappingModel"), &mut labels, &hw.memories)?;
    let allocation = Allocation::read(part("mappingModel"));
    let deadlines = read_deadlines(part("constraintsModel"))?;
    let stimuli: HashMap<&str, &Element> = part("stimuliModel").all("stimuli").filter_map(|s| Some((s.attr("name")?, s))).collect();
    let weights: HashMap<&str, u64> = runnables.iter().map(|r| (r.name.as_str(), weight(&r.needs))).collect();
    let runnable_index = index(runnables.iter().map(|r| r.name.as_str()));
    let cx = TaskContext { stimuli: &stimuli, runnables: &runnable_index, labels: &label_index, weights: &weights, allocation: &allocation, hw: &hw, deadlines: &deadlines };
    let mut tasks = Vec::new();
    for (i, el) in part("swModel").all("tasks").enumerate() {
        tasks.push(read_task(el, &format!("swModel.tasks[{}]", name_key(el, i)), &cx, &mut unread)?);
    }
    let chains = read_chains(part("constraintsModel"), part("eventModel"))?;
    let Hardware { cores, other_units, memories, access_paths } = hw;
    Ok(Model { version, tasks, runnables, labels, cores, other_units, memories, access_paths, chains, switches: unread.switches, unread: unread.kinds })
}

/// Elements passed over, by kind, and the switches resolved.
#[derive(Default)]
struct Unread {
    kinds: Vec<(String, usize)>,
    switches: usize,
}

impl Unread {
    fn count(&mut self, kind: &str) {
        match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((kind.to_string(), 1)),
        }
    }
}

/// The names a reference attribute holds: `A?type=Task B?type=Task`, URL-decoded.
pub fn references(text: &str) -> Vec<String> {
    text.split_whitespace().map(|r| url_decode(r.split('?').next().unwrap_or(r))).collect()
}

fn reference(el: &Element, attr: &str) -> Option<String> {
    el.attr(attr).and_then(|t| references(t).into_iter().next())
}

fn url_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit())).and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn index<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut map = HashMap::new();
    for (i, n) in names.enumerate() {
        map.entry(n.to_string()).or_insert(i);
    }
    map
}

/// An element's name as a path key, or its position when it has none.
fn name_key(el: &Element, i: usize) -> String {
    el.attr("name").map(key).unwrap_or_else(|| i.to_string())
}

fn field(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

/// A numeric value given as an attribute (1.x) or as a child's `value` (0.7).
fn number<'a>(el: &'a Element, name: &str) -> Option<&'a str> {
    el.attr(name).or_else(|| el.child(name).and_then(|c| c.attr("value")))
}

fn exact(text: &str, field: &str) -> FieldResult<Exact> {
    Exact::parse(text).ok_or_else(|| FieldError::new(field, format!("expected a number, got {}", quote(text))))
}

/// A Time element (`value`, `unit`) in whole nanoseconds; an absent value is 0.
fn time_ns(el: &Element, field: &str) -> FieldResult<u64> {
    let Some(value) = el.attr("value") else { return Ok(0) };
    let unit = el.attr("unit").unwrap_or("");
    let per_ns = match unit {
        "s" => Exact::integer(1_000_000_000),
        "ms" => Exact::integer(1_000_000),
        "us" => Exact::integer(1_000),
        "ns" => Exact::integer(1),
        "ps" => Exact::one().div(&Exact::integer(1_000)),
        other => return Err(FieldError::new(format!("{field}.unit"), format!("unknown time unit {} (expected s, ms, us, ns or ps)", quote(other)))),
    };
    let ns = exact(value, &format!("{field}.value"))?.mul(&per_ns);
    ns.whole().ok_or_else(|| FieldError::new(format!("{field}.value"), format!("{value}{unit} is not a whole number of nanoseconds at or above 0")))
}

/// Amalthea's data-size units in bits.
const SIZE_UNITS: [(&str, u64); 18] = [
    ("bit", 1), ("kbit", 1_000), ("Mbit", 1_000_000), ("Gbit", 1_000_000_000), ("Tbit", 1_000_000_000_000),
    ("Kibit", 1 << 10), ("Mibit", 1 << 20), ("Gibit", 1 << 30), ("Tibit", 1 << 40),
    ("B", 8), ("kB", 8_000), ("MB", 8_000_000), ("GB", 8_000_000_000), ("TB", 8_000_000_000_000),
    ("KiB", 8 << 10), ("MiB", 8 << 20), ("GiB", 8 << 30), ("TiB", 8 << 40),
];

/// A data size in bits (`value`, `unit`; no unit: bytes).
fn size_bits(el: &Element, field: &str) -> FieldResult<u64> {
    let value = el.attr("value").ok_or_else(|| FieldError::new(format!("{field}.value"), "missing"))?;
    let unit = el.attr("unit").unwrap_or("B");
    let &(_, bits) = SIZE_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .ok_or_else(|| FieldError::new(format!("{field}.unit"), format!("unknown size unit {}", quote(unit))))?;
    exact(value, &format!("{field}.value"))?
        .mul(&Exact::integer(bits))
        .whole()
        .ok_or_else(|| FieldError::new(format!("{field}.value"), format!("{value}{unit} is not a whole number of bits at or above 0")))
}

/// A frequency in Hz (`value`, `unit`: Hz (default), kHz, MHz, GHz), positive.
fn frequency_hz(el: &Element, field: &str) -> FieldResult<Exact> {
    let value = el.attr("value").ok_or_else(|| FieldError::new(format!("{field}.value"), "missing: a clock frequency is needed to turn execution needs into time"))?;
    let scale = match el.attr("unit").unwrap_or("Hz") {
        "Hz" => 1,
        "kHz" => 1_000,
        "MHz" => 1_000_000,
        "GHz" => 1_000_000_000,
        other => return Err(FieldError::new(format!("{field}.unit"), format!("unknown frequency unit {} (expected Hz, kHz, MHz or GHz)", quote(other)))),
    };
    let hz = exact(value, &format!("{field}.value"))?.mul(&Exact::integer(scale));
    if !hz.is_positive() {
        return Err(FieldError::new(format!("{field}.value"), format!("a clock frequency must be positive, got {}", quote(value))));
    }
    Ok(hz)
}

/// Cores, other processing units and memories of either schema family.
struct Hardware {
    cores: Vec<Core>,
    other_units: Vec<Core>,
    memories: Vec<Memory>,
    access_paths: Vec<AccessPath>,
}

impl Hardware {
    fn read(hw: &Element) -> FieldResult<Hardware> {
        let mut out = Hardware { cores: Vec::new(), other_units: Vec::new(), memories: Vec::new(), access_paths: Vec::new() };
        // 0.7: hwModel.system…microcontrollers with cores, memories and quartzes.
        let mut quartzes = Vec::new();
        hw.descendants("quartzes", &mut quartzes);
        let mut clocks = HashMap::new();
        for q in quartzes {
            if let (Some(name), Some(f)) = (q.attr("name"), q.child("frequency")) {
                clocks.insert(name.to_string(), frequency_hz(f, &format!("hwModel.quartzes[{}].frequency", key(name)))?);
            }
        }
        let sizes = |kinds: &[&str], list: &str| -> FieldResult<HashMap<String, u64>> {
            let mut m = HashMap::new();
            for d in hw.all(list).filter(|d| list == "memoryTypes" || kinds.contains(&d.kind())) {
                if let (Some(name), Some(size)) = (d.attr("name"), d.child("size")) {
                    m.insert(name.to_string(), size_bits(size, &format!("hwModel.{list}[{}].size", key(name)))?.div_ceil(8));
                }
            }
            Ok(m)
        };
        let mut memory_sizes = sizes(&[], "memoryTypes")?;
        memory_sizes.extend(sizes(&["MemoryDefinition"], "definitions")?);
        let core_types: HashMap<&str, &Element> = hw.all("coreTypes").filter_map(|c| Some((c.attr("name")?, c))).collect();
        if let Some(system) = hw.child("system") {
            let mut cores = Vec::new();
            system.descendants("cores", &mut cores);
            for c in cores {
                let path = format!("hwModel.cores[{}]", name_key(c, out.cores.len()));
                let pu_type = reference(c, "coreType").unwrap_or_default();
                let ipc = match core_types.get(pu_type.as_str()).and_then(|t| t.attr("instructionsPerCycle")) {
                    Some(text) => exact(text, &format!("hwModel.coreTypes[{}].instructionsPerCycle", key(&pu_type)))?,
                    None => Exact::one(),
                };
                if !ipc.is_positive() {
                    return Err(FieldError::new(format!("hwModel.coreTypes[{}].instructionsPerCycle", key(&pu_type)), "must be positive"));
                }
                let prescaler = c.child("prescaler").ok_or_else(|| FieldError::new(field(&path, "prescaler"), "missing: a core needs a clock (prescaler and quartz) to turn execution needs into time"))?;
                let quartz = reference(prescaler, "quartz").unwrap_or_default();
                let base = clocks.get(&quartz).ok_or_else(|| FieldError::new(field(&path, "prescaler.quartz"), format!("unknown quartz {}", quote(&quartz))))?;
                let ratio = exact(prescaler.attr("clockRatio").unwrap_or("1"), &field(&path, "prescaler.clockRatio"))?;
                let clock_hz = base.mul(&ratio);
                if !clock_hz.is_positive() {
                    return Err(FieldError::new(field(&path, "prescaler.clockRatio"), "the core's clock must be positive"));
                }
                out.cores.push(Core { name: c.attr("name").unwrap_or_default().to_string(), pu_type, clock_hz, instructions_per_cycle: ipc });
            }
            let mut memories = Vec::new();
            system.descendants("memories", &mut memories);
            for m in memories {
                let size_bytes = reference(m, "type").and_then(|t| memory_sizes.get(&t).copied());
                out.memories.push(Memory { name: m.attr("name").unwrap_or_default().to_string(), size_bytes });
            }
        }
        for p in hw.all("accessPaths") {
            let latency_cycles = p.child("latencies").and_then(|l| l.attr("value")).and_then(|v| v.parse().ok());
            out.access_paths.push(AccessPath {
                name: p.attr("name").unwrap_or_default().to_string(),
                source: reference(p, "source").unwrap_or_default(),
                target: reference(p, "target").unwrap_or_default(),
                latency_cycles,
            });
        }
        // 1.x/2.x: processing units and memories as modules of (nested) structures.
        let pu_types: HashMap<&str, &str> =
            hw.all("definitions").filter(|d| d.kind() == "ProcessingUnitDefinition").filter_map(|d| Some((d.attr("name")?, d.attr("puType").unwrap_or("CPU")))).collect();
        let mut domains = HashMap::new();
        for d in hw.all("domains").filter(|d| d.kind() == "FrequencyDomain") {
            if let (Some(name), Some(v)) = (d.attr("name"), d.child("defaultValue")) {
                domains.insert(name.to_string(), frequency_hz(v, &format!("hwModel.domains[{}].defaultValue", key(name)))?);
            }
        }
        let mut modules = Vec::new();
        for s in hw.all("structures") {
            s.descendants("modules", &mut modules);
        }
        for m in modules {
            let name = m.attr("name").unwrap_or_default().to_string();
            let path = format!("hwModel.modules[{}]", key(&name));
            match m.kind() {
                "ProcessingUnit" => {
                    let pu_type = reference(m, "definition").unwrap_or_default();
                    let domain = reference(m, "frequencyDomain").unwrap_or_default();
                    let clock_hz = domains
                        .get(&domain)
                        .cloned()
                        .ok_or_else(|| FieldError::new(field(&path, "frequencyDomain"), format!("unknown or missing frequency domain {}: a processing unit needs a clock", quote(&domain))))?;
                    let cpu = pu_types.get(pu_type.as_str()).is_none_or(|t| *t == "CPU");
                    let unit = Core { name, pu_type, clock_hz, instructions_per_cycle: Exact::one() };
                    if cpu { out.cores.push(unit) } else { out.other_units.push(unit) }
                    let mut paths = Vec::new();
                    m.descendants("accessElements", &mut paths);
                    for a in paths {
                        let latency_cycles = a.child("readLatency").and_then(|l| number(l, "value").or_else(|| number(l, "upperBound"))).and_then(|v| v.parse().ok());
                        out.access_paths.push(AccessPath {
                            name: a.attr("name").unwrap_or_default().to_string(),
                            source: m.attr("name").unwrap_or_default().to_string(),
                            target: reference(a, "destination").unwrap_or_default(),
                            latency_cycles,
                        });
                    }
                }
                "Memory" => {
                    let size_bytes = reference(m, "definition").and_then(|d| memory_sizes.get(&d).copied());
                    out.memories.push(Memory { name, size_bytes });
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// The core named `name`: Some(index) for a core, None for another unit or an unknown name.
    fn core(&self, name: &str) -> Option<usize> {
        self.cores.iter().position(|c| c.name == name)
    }
}

fn read_labels(sw: &Element) -> FieldResult<Vec<Label>> {
    sw.all("labels")
        .enumerate()
        .map(|(i, l)| {
            let path = format!("swModel.labels[{}]", name_key(l, i));
            let size_bits = match l.child("size") {
                Some(s) => size_bits(s, &field(&path, "size"))?,
                None => 0,
            };
            Ok(Label { name: l.attr("name").unwrap_or_default().to_string(), size_bits, memory: None, constant: l.attr("constant") == Some("true") })
        })
        .collect()
}

/// The memory each label is mapped to: `mapping` (0.7) or `memoryMapping` (1.x).
fn map_labels(mapping: &Element, labels: &mut [Label], memories: &[Memory]) -> FieldResult<()> {
    let by_name = index(labels.iter().map(|l| l.name.as_str()));
    for (i, m) in mapping.children.iter().filter(|m| m.name == "mapping" || m.name == "memoryMapping").enumerate() {
        let (Some(element), Some(memory)) = (reference(m, "abstractElement"), reference(m, "memory")) else { continue };
        let Some(&label) = by_name.get(&element) else { continue };
        let target = memories
            .iter()
            .position(|x| x.name == memory)
            .ok_or_else(|| FieldError::new(format!("mappingModel.{}[{i}].memory", m.name), format!("unknown memory {}", quote(&memory))))?;
        labels[label].memory = Some(target);
    }
    Ok(())
}

/// One item of a call graph or activity graph, after switches are resolved.
enum Item {
    Call(String),
    Trigger(String),
    Need(Need),
    Access(LabelAccess),
}

/// The walk of a graph: switch branches are weighed with `weigh`.
struct Graph<'a> {
    labels: &'a HashMap<String, usize>,
    weigh: &'a dyn Fn(&[Item]) -> u64,
    switches: usize,
}

impl Graph<'_> {
    /// The items under `el` (graph entries, calls, items, runnable items), flattened in order.
    fn items(&mut self, el: &Element, path: &str, unread: &mut Unread, out: &mut Vec<Item>) -> FieldResult<()> {
        for (i, c) in el.children.iter().enumerate() {
            if !matches!(c.name.as_str(), "graphEntries" | "calls" | "items" | "runnableItems") {
                continue;
            }
            let here = format!("{path}.{}[{i}]", c.name);
            match c.kind() {
                "CallSequence" | "Group" | "" => self.items(c, &here, unread, out)?,
                k if k.ends_with("Switch") => {
                    self.switches += 1;
                    let mut best: Option<(u64, Vec<Item>)> = None;
                    for entry in c.children.iter().filter(|e| e.name == "entries" || e.name == "defaultEntry") {
                        let mut branch = Vec::new();
                        self.items(entry, &here, unread, &mut branch)?;
                        let w = (self.weigh)(&branch);
                        if best.as_ref().is_none_or(|(b, _)| w > *b) {
                            best = Some((w, branch));
                        }
                    }
                    out.extend(best.map(|(_, b)| b).unwrap_or_default());
                }
                "TaskRunnableCall" | "RunnableCall" => {
                    let r = reference(c, "runnable").ok_or_else(|| FieldError::new(field(&here, "runnable"), "missing"))?;
                    out.push(Item::Call(r));
                }
                "InterProcessActivation" | "InterProcessTrigger" => {
                    let s = reference(c, "stimulus").ok_or_else(|| FieldError::new(field(&here, "stimulus"), "missing"))?;
                    out.push(Item::Trigger(s));
                }
                "RunnableInstructions" | "Ticks" => out.push(Item::Need(need(c, &here)?)),
                "LabelAccess" => {
                    let name = reference(c, "data").unwrap_or_default();
                    let label = *self.labels.get(&name).ok_or_else(|| FieldError::new(field(&here, "data"), format!("unknown label {}", quote(&name))))?;
                    let write = match c.attr("access") {
                        Some("write") => true,
                        Some("read") => false,
                        other => return Err(FieldError::new(field(&here, "access"), format!("expected read or write, got {}", quote(other.unwrap_or(""))))),
                    };
                    let stat = c.child("statistic").and_then(|s| s.child("value"));
                    let count = match stat.and_then(|v| v.attr("value").or(v.attr("avg")).or(v.attr("max"))) {
                        Some(t) => exact(t, &field(&here, "statistic.value"))?.to_f64(),
                        None => 1.0,
                    };
                    use crate::model::Communication;
                    let implementation = match c.attr("implementation") {
                        None | Some("undefined" | "_undefined_") => None,
                        Some("explicit") => Some(Communication::Explicit),
                        Some("implicit") => Some(Communication::Implicit),
                        Some("timed") => Some(Communication::Let),
                        Some(other) => return Err(FieldError::new(field(&here, "implementation"), format!("expected explicit, implicit, timed or undefined, got {}", quote(other)))),
                    };
                    out.push(Item::Access(LabelAccess { label, write, count, implementation }));
                }
                other => unread.count(&format!("{other} items")),
            }
        }
        Ok(())
    }
}

/// The largest upper bound of a runnable's needs over the core types it names.
fn weight(needs: &[Need]) -> u64 {
    needs
        .iter()
        .map(|n| n.per_type.iter().map(|(_, a)| a.upper).chain(n.default.as_ref().map(|a| a.upper)).max().unwrap_or(0))
        .fold(0u64, u64::saturating_add)
}

/// An execution need: `default` and `extended` (per core type or unit definition).
fn need(el: &Element, path: &str) -> FieldResult<Need> {
    let unit = if el.kind() == "Ticks" { NeedUnit::Ticks } else { NeedUnit::Instructions };
    let default = el.child("default").map(|d| amount(d, &field(path, "default"))).transpose()?;
    let mut per_type = Vec::new();
    for (i, e) in el.all("extended").enumerate() {
        let here = format!("{path}.extended[{i}]");
        let key = reference(e, "key").ok_or_else(|| FieldError::new(field(&here, "key"), "missing: the core type or processing-unit definition"))?;
        let value = e.child("value").ok_or_else(|| FieldError::new(field(&here, "value"), "missing"))?;
        per_type.push((key, amount(value, &field(&here, "value"))?));
    }
    if default.is_none() && per_type.is_empty() {
        return Err(FieldError::new(path, "an execution need with neither a default nor an extended value"));
    }
    Ok(Need { unit, default, per_type })
}

/// Bounds, mean and distribution of a need: 0.7 (`InstructionsConstant value`,
/// `InstructionsDeviation` with a `deviation` of child values) or 1.x
/// (`DiscreteValue…` with attributes).
fn amount(el: &Element, path: &str) -> FieldResult<Amount> {
    let (src, dist) = match el.child("deviation") {
        Some(d) => (d, d.child("distribution")),
        None => (el, None),
    };
    let num = |e: &Element, name: &str| -> FieldResult<Option<Exact>> { number(e, name).map(|t| exact(t, &field(path, name))).transpose() };
    let value = num(src, "value")?;
    let histogram_top = src.all("entries").filter_map(|e| e.attr("upperBound")).filter_map(Exact::parse).max();
    let upper = num(src, "upperBound")?
        .or_else(|| value.clone())
        .or(histogram_top)
        .ok_or_else(|| FieldError::new(path, "no upper bound: criticore needs one for the PET (give upperBound or a constant value)"))?;
    let lower = num(src, "lowerBound")?.or_else(|| value.clone());
    let whole = |x: &Exact, name: &str| x.ceil().ok_or_else(|| FieldError::new(field(path, name), "must be a number at or above 0 that fits in 64 bits"));
    let kind = dist.and_then(|d| d.kind.clone()).or_else(|| el.kind.clone()).unwrap_or_default();
    let distribution = match kind.as_str() {
        "InstructionsConstant" | "DiscreteValueConstant" => "Constant".to_string(),
        _ => kind,
    };
    let mean_of = |e: Option<&Element>| -> FieldResult<Option<Exact>> {
        match e {
            Some(e) => Ok(num(e, "average")?.or(num(e, "mean")?)),
            None => Ok(None),
        }
    };
    let uniform = distribution.contains("Uniform");
    let mean = match (mean_of(Some(src))?.or(mean_of(dist)?).or(value), &lower) {
        (Some(m), _) => Some(m.to_f64()),
        (None, Some(l)) if uniform => Some((l.to_f64() + upper.to_f64()) / 2.0),
        _ => None,
    };
    let mut parameters = Vec::new();
    for e in [Some(src), dist].into_iter().flatten() {
        let children = e.children.iter().filter_map(|c| Some((c.name.as_str(), c.attr("value")?)));
        for (name, text) in e.attrs.iter().map(|(k, v)| (k.as_str(), v.as_str())).chain(children) {
            if !matches!(name, "upperBound" | "lowerBound" | "value") {
                if let Some(x) = Exact::parse(text) {
                    parameters.push((name.to_string(), x.to_f64()));
                }
            }
        }
    }
    Ok(Amount { upper: whole(&upper, "upperBound")?, lower: lower.as_ref().map(|l| whole(l, "lowerBound")).transpose()?, mean, distribution, parameters })
}

fn read_runnable(el: &Element, path: &str, labels: &HashMap<String, usize>, unread: &mut Unread) -> FieldResult<Runnable> {
    // Inside a runnable a switch keeps its branch with the largest need.
    let weigh = |items: &[Item]| weight(&items.iter().filter_map(|i| if let Item::Need(n) = i { Some(n.clone()) } else { None }).collect::<Vec<_>>());
    let mut graph = Graph { labels, weigh: &weigh, switches: 0 };
    let mut items = Vec::new();
    graph.items(el, path, unread, &mut items)?;
    if let Some(ag) = el.child("activityGraph") {
        graph.items(ag, &field(path, "activityGraph"), unread, &mut items)?;
    }
    unread.switches += graph.switches;
    let mut runnable = Runnable { name: el.attr("name").unwrap_or_default().to_string(), needs: Vec::new(), accesses: Vec::new() };
    for item in items {
        match item {
            Item::Need(n) => runnable.needs.push(n),
            Item::Access(a) => runnable.accesses.push(a),
            Item::Call(_) => unread.count("runnable calls inside runnables"),
            Item::Trigger(_) => unread.count("inter-process triggers inside runnables"),
        }
    }
    Ok(runnable)
}

/// Task-to-scheduler and scheduler-to-core allocations, priorities given there.
struct Allocation<'a> {
    /// Scheduler name → the cores it is responsible for.
    scheduler_cores: HashMap<String, Vec<String>>,
    tasks: HashMap<String, &'a Element>,
}

impl<'a> Allocation<'a> {
    fn read(mapping: &'a Element) -> Allocation<'a> {
        let mut scheduler_cores: HashMap<String, Vec<String>> = HashMap::new();
        for a in mapping.all("coreAllocation").chain(mapping.all("schedulerAllocation")) {
            let Some(s) = reference(a, "scheduler") else { continue };
            let cores = a.attr("core").or(a.attr("responsibility")).map(references).unwrap_or_default();
            scheduler_cores.entry(s).or_default().extend(cores);
        }
        let tasks = mapping.all("taskAllocation").filter_map(|a| Some((reference(a, "task")?, a))).collect();
        Allocation { scheduler_cores, tasks }
    }

    /// The single core a task runs on: its affinity, else its scheduler's one core.
    fn core_name(&self, task: &str) -> Option<String> {
        let a = self.tasks.get(task)?;
        let affinity = a.attr("affinity").map(references).unwrap_or_default();
        let cores = if affinity.is_empty() { reference(a, "scheduler").and_then(|s| self.scheduler_cores.get(&s).cloned()).unwrap_or_default() } else { affinity };
        if cores.len() == 1 { cores.into_iter().next() } else { None }
    }
}

/// Upper limits on each process's response time (process requirements), in ns.
fn read_deadlines(constraints: &Element) -> FieldResult<HashMap<String, u64>> {
    let mut out: HashMap<String, u64> = HashMap::new();
    for (i, r) in constraints.all("requirements").enumerate() {
        let (Some(process), Some(limit)) = (reference(r, "process"), r.child("limit")) else { continue };
        let response_time = limit.attr("metric") == Some("ResponseTime") && limit.attr("limitType") != Some("LowerLimit");
        let Some(value) = limit.child("limitValue").filter(|_| response_time) else { continue };
        let ns = time_ns(value, &format!("constraintsModel.requirements[{}].limit.limitValue", name_key(r, i)))?;
        out.entry(process).and_modify(|d| *d = (*d).min(ns)).or_insert(ns);
    }
    Ok(out)
}

struct TaskContext<'a> {
    stimuli: &'a HashMap<&'a str, &'a Element>,
    runnables: &'a HashMap<String, usize>,
    labels: &'a HashMap<String, usize>,
    weights: &'a HashMap<&'a str, u64>,
    allocation: &'a Allocation<'a>,
    hw: &'a Hardware,
    deadlines: &'a HashMap<String, u64>,
}

fn read_task(el: &Element, path: &str, cx: &TaskContext, unread: &mut Unread) -> FieldResult<Task> {
    let name = el.attr("name").unwrap_or_default().to_string();
    let stimuli = el.attr("stimuli").map(references).unwrap_or_default();
    let first = stimuli.first().ok_or_else(|| FieldError::new(field(path, "stimuli"), "missing: a task needs a stimulus to be released"))?;
    for _ in stimuli.iter().skip(1) {
        unread.count("second stimuli of a task (first used)");
    }
    let stim = cx.stimuli.get(first.as_str()).ok_or_else(|| FieldError::new(field(path, "stimuli"), format!("unknown stimulus {}", quote(first))))?;
    let stimulus = read_stimulus(stim, &format!("stimuliModel.stimuli[{}]", key(first)))?;
    let preemption = match el.attr("preemption").unwrap_or("preemptive") {
        "preemptive" => Preemption::Preemptive,
        "cooperative" => Preemption::Cooperative,
        "non_preemptive" => Preemption::NonPreemptive,
        other => return Err(FieldError::new(field(path, "preemption"), format!("expected preemptive, cooperative or non_preemptive, got {}", quote(other)))),
    };
    let activation_limit = match el.attr("multipleTaskActivationLimit") {
        Some(t) => Some(t.trim().parse::<u32>().map_err(|_| FieldError::new(field(path, "multipleTaskActivationLimit"), format!("expected a count, got {}", quote(t))))?).filter(|&n| n > 0),
        None => None,
    };
    let weigh = |items: &[Item]| {
        items.iter().map(|i| if let Item::Call(r) = i { cx.weights.get(r.as_str()).copied().unwrap_or(0) } else { 0 }).fold(0u64, u64::saturating_add)
    };
    let mut graph = Graph { labels: cx.labels, weigh: &weigh, switches: 0 };
    let mut items = Vec::new();
    for g in el.children.iter().filter(|c| c.name == "callGraph" || c.name == "activityGraph") {
        graph.items(g, &field(path, &g.name), unread, &mut items)?;
    }
    unread.switches += graph.switches;
    let mut task = Task {
        priority: priority(el, cx.allocation.tasks.get(&name).copied(), path)?,
        core: cx.allocation.core_name(&name).and_then(|c| cx.hw.core(&c)),
        deadline_ns: cx.deadlines.get(&name).copied(),
        name,
        stimulus,
        preemption,
        activation_limit,
        steps: Vec::new(),
        triggers: Vec::new(),
    };
    for item in items {
        match item {
            Item::Call(r) => task.steps.push(*cx.runnables.get(&r).ok_or_else(|| FieldError::new(field(path, "runnable"), format!("unknown runnable {}", quote(&r))))?),
            Item::Trigger(s) => task.triggers.push(s),
            Item::Need(_) => unread.count("execution needs directly in a task"),
            Item::Access(_) => unread.count("label accesses directly in a task"),
        }
    }
    Ok(task)
}

/// The task's priority: on the task (0.7), on its allocation (1.x:
/// `schedulingParameters`, an attribute or a `priority` entry), or a custom property.
fn priority(task: &Element, allocation: Option<&Element>, path: &str) -> FieldResult<Option<i64>> {
    let params = allocation.map(|a| a.all("schedulingParameters").collect::<Vec<_>>()).unwrap_or_default();
    let keyed = |list: &[&Element]| -> Option<String> {
        list.iter().find(|p| p.attr("key").is_some_and(|k| references(k).first().is_some_and(|k| k == "priority"))).and_then(|p| p.child("value")).and_then(|v| v.attr("value")).map(str::to_string)
    };
    let custom: Vec<&Element> = task.all("customProperties").collect();
    let found = task
        .attr("priority")
        .map(str::to_string)
        .or_else(|| allocation.and_then(|a| a.attr("priority")).map(str::to_string))
        .or_else(|| params.iter().find_map(|p| p.attr("priority")).map(str::to_string))
        .or_else(|| keyed(&params))
        .or_else(|| keyed(&custom));
    found
        .map(|t| t.trim().parse::<i64>().map_err(|_| FieldError::new(field(path, "priority"), format!("expected an integer, got {}", quote(&t)))))
        .transpose()
}

/// A time deviation: (min, max, distribution) from `lowerBound`/`upperBound`
/// Time children, or a constant `value`.
fn time_range(el: &Element, path: &str) -> FieldResult<(u64, u64, Option<String>)> {
    let get = |name: &str| el.child(name).map(|t| time_ns(t, &field(path, name))).transpose();
    let value = get("value")?;
    let (lo, hi) = (get("lowerBound")?.or(value), get("upperBound")?.or(value));
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Err(FieldError::new(path, "needs a lowerBound and an upperBound (or a constant value)"));
    };
    if lo > hi || lo == 0 {
        return Err(FieldError::new(path, format!("the bounds must satisfy 0 < lowerBound <= upperBound, got {lo} ns and {hi} ns")));
    }
    let distribution = el.child("distribution").and_then(|d| d.kind.clone()).or_else(|| el.kind.clone().filter(|k| k != "TimeBoundaries" && k != "TimeConstant"));
    Ok((lo, hi, distribution))
}

fn read_stimulus(el: &Element, path: &str) -> FieldResult<Stimulus> {
    let offset = |el: &Element| el.child("offset").map(|o| time_ns(o, &field(path, "offset"))).transpose().map(Option::unwrap_or_default);
    match el.kind() {
        "Periodic" | "PeriodicStimulus" => {
            let recurrence = el.child("recurrence").ok_or_else(|| FieldError::new(field(path, "recurrence"), "missing"))?;
            let period_ns = time_ns(recurrence, &field(path, "recurrence"))?;
            if period_ns == 0 {
                return Err(FieldError::new(field(path, "recurrence"), "must be positive"));
            }
            let jitter = el.child("jitter").or(el.child("stimulusDeviation"));
            let jitter_ns = match jitter {
                Some(j) => j.child("upperBound").map(|u| time_ns(u, &field(path, "jitter.upperBound"))).transpose()?.unwrap_or(0),
                None => 0,
            };
            Ok(Stimulus::Periodic { period_ns, offset_ns: offset(el)?, jitter_ns })
        }
        "Sporadic" | "SporadicStimulus" => {
            let name = if el.kind() == "Sporadic" { "stimulusDeviation" } else { "occurrence" };
            let d = el.child(name).ok_or_else(|| FieldError::new(field(path, name), "missing: the inter-arrival times"))?;
            let (min_ns, max_ns, distribution) = time_range(d, &field(path, name))?;
            Ok(Stimulus::Sporadic { min_ns, max_ns, distribution })
        }
        "RelativePeriodicStimulus" => {
            let d = el.child("nextOccurrence").ok_or_else(|| FieldError::new(field(path, "nextOccurrence"), "missing"))?;
            let (min_ns, max_ns, distribution) = time_range(d, &field(path, "nextOccurrence"))?;
            Ok(Stimulus::RelativePeriodic { min_ns, max_ns, offset_ns: offset(el)?, distribution })
        }
        "InterProcess" | "InterProcessStimulus" => Ok(Stimulus::InterProcess { name: el.attr("name").unwrap_or_default().to_string() }),
        other => Err(FieldError::new(
            path,
            format!("a {} stimulus cannot be imported (periodic, sporadic, relative periodic and inter-process stimuli can)", quote(other)),
        )),
    }
}

/// Event chains with their segments; events resolved through the event model.
fn read_chains(constraints: &Element, events: &Element) -> FieldResult<Vec<Chain>> {
    let events: HashMap<&str, &Element> = events.all("events").filter_map(|e| Some((e.attr("name")?, e))).collect();
    let named: HashMap<&str, &Element> = constraints.all("eventChains").filter_map(|c| Some((c.attr("name")?, c))).collect();
    let reader = ChainReader { events, named };
    constraints.all("eventChains").enumerate().map(|(i, c)| reader.chain(c, &format!("constraintsModel.eventChains[{}]", name_key(c, i)), 0)).collect()
}

struct ChainReader<'a> {
    events: HashMap<&'a str, &'a Element>,
    named: HashMap<&'a str, &'a Element>,
}

impl ChainReader<'_> {
    fn event(&self, el: &Element, attr: &str) -> Event {
        let name = reference(el, attr).unwrap_or_default();
        let e = self.events.get(name.as_str());
        Event { entity: e.and_then(|e| reference(e, "entity")), event_type: e.and_then(|e| e.attr("eventType")).map(str::to_string), name }
    }

    fn chain(&self, el: &Element, path: &str, depth: usize) -> FieldResult<Chain> {
        if depth > MAX_CHAIN_DEPTH {
            return Err(FieldError::new(path, format!("event chains nested or referenced deeper than {MAX_CHAIN_DEPTH} levels (a reference loop?)")));
        }
        let mut segments = Vec::new();
        for (i, s) in el.children.iter().filter(|s| s.name == "segments" || s.name == "items").enumerate() {
            let here = format!("{path}.{}[{i}]", s.name);
            let inner = match (s.child("eventChain"), reference(s, "eventChain")) {
                (Some(inner), _) => inner,
                (None, Some(name)) => self.named.get(name.as_str()).copied().ok_or_else(|| FieldError::new(field(&here, "eventChain"), format!("unknown event chain {}", quote(&name))))?,
                (None, None) => continue,
            };
            segments.push(self.chain(inner, &field(&here, "eventChain"), depth + 1)?);
        }
        Ok(Chain { name: el.attr("name").unwrap_or_default().to_string(), stimulus: self.event(el, "stimulus"), response: self.event(el, "response"), segments })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_references_are_url_decoded_lists() {
        assert_eq!(references("Generic+Core?type=CoreType"), ["Generic Core"]);
        assert_eq!(references("A%20B?type=Task C?type=Task"), ["A B", "C"]);
        assert_eq!(references("50%?type=X"), ["50%"]);
        assert_eq!(references("a%+1b"), ["a% 1b"]);
    }
}
