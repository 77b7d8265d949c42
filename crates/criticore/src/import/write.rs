//! An imported task system as a task-system file (TOML, docs/format.md):
//! `platform.cores` and each task's fields, headed by comments that say where
//! it came from and what it does not represent yet.

use super::Summary;
use crate::model::need::Draw;
use crate::model::units::{format_duration_ns, format_frequency_hz, format_size_bytes};
use crate::model::write::{document_text, task_head};
use crate::model::{Arrival, Format, Preemption, TaskSystem};
use serde_json::{json, Value};

/// The file text of `system`, imported from `source`. Only the fields an
/// import sets are written; every other field keeps its default.
pub fn system_toml(system: &TaskSystem, summary: &Summary, source: &str) -> String {
    let d = format_duration_ns;
    let tasks: Vec<Value> = system
        .tasks
        .iter()
        .map(|t| {
            let mut o = task_head(t);
            o.insert("deadline".into(), json!(d(t.deadline_ns)));
            if t.offset_ns > 0 {
                o.insert("offset".into(), json!(d(t.offset_ns)));
            }
            if let Arrival::Sporadic { max_jitter_ns } = t.arrival {
                o.insert("arrival".into(), json!("sporadic"));
                o.insert("jitter".into(), json!(d(max_jitter_ns)));
            }
            if let Some(p) = t.priority {
                o.insert("priority".into(), json!(p));
            }
            // With runnables the PET is theirs and the copies' (a parse sums them).
            if t.runnables.is_empty() {
                o.insert("pet".into(), json!(d(t.pet_ns.highest().expect("imported tasks have a PET"))));
            }
            if t.preemption != Preemption::Preemptive {
                o.insert("preemption".into(), json!(t.preemption.name()));
            }
            if let Some(n) = t.activation_limit {
                o.insert("activation_limit".into(), json!(n));
            }
            if t.communication != crate::model::Communication::Implicit {
                o.insert("communication".into(), json!(t.communication.name()));
            }
            let derived = crate::model::scratchpad::copies_labels(&system.platform, t);
            for (key, ns) in [("copy_in", t.copy_in_ns), ("copy_out", t.copy_out_ns)] {
                if ns > 0 && !derived {
                    o.insert(key.into(), json!(d(ns)));
                }
            }
            if !t.runnables.is_empty() {
                let runnable = |r: &crate::model::Runnable| {
                    let mut v = json!({ "name": r.name, "pet": d(r.pet_ns) });
                    let counts = |f: fn(&crate::model::scratchpad::LabelAccess) -> u64| {
                        let m: serde_json::Map<String, Value> = r.accesses.iter().filter(|a| f(a) > 0).map(|a| (system.labels[a.label].name.clone(), json!(f(a)))).collect();
                        (!m.is_empty()).then_some(Value::Object(m))
                    };
                    if let Some(m) = counts(|a| a.reads) {
                        v["reads"] = m;
                    }
                    if let Some(m) = counts(|a| a.writes) {
                        v["writes"] = m;
                    }
                    if let Some(n) = r.need {
                        v["min"] = json!(d(n.min_ns));
                        match n.draw {
                            Draw::Uniform => v["draw"] = json!("uniform"),
                            Draw::Weibull { .. } => {
                                v["mean"] = json!(d(n.mean_ns.expect("a Weibull need has its mean").round() as u64));
                                v["draw"] = json!("weibull");
                                v["p_remain"] = json!(n.p_remain.expect("a Weibull need has its p_remain"));
                            }
                        }
                    }
                    v
                };
                o.insert("runnables".into(), Value::Array(t.runnables.iter().map(runnable).collect()));
            }
            Value::Object(o)
        })
        .collect();
    let mut doc = json!({ "platform": { "cores": system.platform.cores }, "task": tasks });
    let p = &system.platform;
    if let Some(hz) = p.clock_hz {
        doc["platform"]["clock"] = json!(format_frequency_hz(hz));
    }
    if !p.memories.is_empty() {
        let memories: Vec<Value> = p
            .memories
            .iter()
            .map(|m| {
                let mut v = json!({ "name": m.name, "size": format_size_bytes(m.size_bytes) });
                if let Some(c) = m.core {
                    v["core"] = json!(c);
                }
                v["latency_cycles"] = if m.latency_cycles.iter().all(|&l| l == m.latency_cycles[0]) { json!(m.latency_cycles[0]) } else { json!(m.latency_cycles) };
                v["width"] = json!(format_size_bytes(m.width_bytes));
                v["arbiter"] = json!(crate::model::Arbiter::NAMES.iter().find(|(_, a)| *a == m.arbiter).expect("every arbiter has a name").0);
                v
            })
            .collect();
        doc["platform"]["memory"] = Value::Array(memories);
        let labels: Vec<Value> = system.labels.iter().map(|l| json!({ "name": l.name, "size": format_size_bytes(l.size_bytes), "memory": p.memories[l.memory].name })).collect();
        doc["label"] = Value::Array(labels);
    }
    if !system.chains.is_empty() {
        let chains: Vec<Value> = system.chains.iter().map(|c| json!({ "name": c.name, "tasks": c.tasks.iter().map(|&t| system.tasks[t].name.as_str()).collect::<Vec<_>>() })).collect();
        doc["chain"] = Value::Array(chains);
    }
    let body = document_text(&doc, Format::Toml, source).expect("names, integers and unit strings serialize as TOML");
    let one_line = |s: &str| s.chars().map(|c| if crate::error::breaks_line(c) { ' ' } else { c }).collect::<String>();
    format!(
        "# Imported from {} by `criticore import amalthea` (docs/amalthea.md).\n# {}\n\n{body}",
        one_line(source),
        one_line(&summary.line())
    )
}
