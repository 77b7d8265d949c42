//! Writing decisions back into a user's task-system file: `criticore optimize`
//! keeps every field the user wrote, in order, and only sets the task cores,
//! the buffer placements and `allocation.llc_ways` (or, on a scratchpad
//! platform, the labels' memories).

use super::parse::{to_value, Format};
use super::{Level, TaskSystem};
use crate::error::{FieldError, InputError};
use serde_json::{json, Map, Value};

/// `text` (the file `system` was read from) with `system`'s placements and way allocation.
pub fn with_placements(text: &str, format: Format, file: &str, system: &TaskSystem) -> Result<String, InputError> {
    let mut doc = to_value(text, format).map_err(|e| e.in_file(file))?;
    set_placements(&mut doc, system);
    document_text(&doc, format, file)
}

/// `text` with each `[[label]]`'s `memory` as in `system` (`criticore
/// optimize` on a scratchpad platform), every other field as written.
pub fn with_label_placements(text: &str, format: Format, file: &str, system: &TaskSystem) -> Result<String, InputError> {
    let mut doc = to_value(text, format).map_err(|e| e.in_file(file))?;
    if let Some(items) = doc.get_mut("label").and_then(Value::as_array_mut) {
        for (item, label) in items.iter_mut().zip(&system.labels) {
            if let Some(obj) = item.as_object_mut() {
                obj.insert("memory".into(), json!(system.platform.memories[label.memory].name));
            }
        }
    }
    document_text(&doc, format, file)
}

/// Set `system`'s task cores, buffer placements and `allocation.llc_ways` in
/// a document (a file's value tree), keeping every other field as it is.
pub fn set_placements(doc: &mut Value, system: &TaskSystem) {
    let tasks = doc.get_mut("task").and_then(Value::as_array_mut);
    for (item, task) in tasks.into_iter().flatten().zip(&system.tasks) {
        let Some(obj) = item.as_object_mut() else { continue };
        if matches!(task.level, Some(Level::A | Level::B)) {
            if let Some(core) = task.core {
                obj.insert("core".into(), json!(core));
            }
        }
        if let (Some(link), Some(Value::Object(ipc))) = (task.ipc, obj.get_mut("ipc")) {
            ipc.remove("method");
            ipc.remove("buffer");
            match (link.method, link.buffer) {
                (Some(m), _) => {
                    ipc.insert("method".into(), json!(m.name()));
                }
                (None, Some(p)) => {
                    ipc.insert("buffer".into(), json!(p.to_string()));
                }
                (None, None) => {}
            }
        }
        if let (Some(io), Some(Value::Object(t))) = (task.io, obj.get_mut("io")) {
            if let Some(p) = io.buffer {
                t.insert("buffer".into(), json!(p.to_string()));
            }
        }
    }
    if let Some(allocation) = &system.allocation {
        let root = doc.as_object_mut().expect("a parsed task system is a table");
        let entry = root.entry("allocation").or_insert_with(|| Value::Object(Map::new()));
        if let Some(a) = entry.as_object_mut() {
            a.insert("llc_ways".into(), llc_ways(allocation));
        }
    }
}

/// A document as file text in `format`, fields in their order.
pub fn document_text(doc: &Value, format: Format, file: &str) -> Result<String, InputError> {
    match format {
        Format::Json => Ok(serde_json::to_string_pretty(doc).expect("JSON values serialize") + "\n"),
        Format::Toml => toml::to_string(doc).map_err(|e| FieldError::new("(file)", format!("cannot write TOML: {e}")).in_file(file)),
    }
}

/// `allocation.llc_ways` as a table keyed by partition name.
fn llc_ways(allocation: &super::Allocation) -> Value {
    Value::Object(allocation.llc_ways.iter().map(|(p, w)| (p.to_string(), json!(w))).collect())
}

/// The fields a written task starts with: name, level and core where it has
/// them, and period (the study's files and imported ones).
pub fn task_head(t: &super::Task) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("name".into(), json!(t.name));
    if let Some(l) = t.level {
        o.insert("level".into(), json!(l.to_string()));
    }
    if let Some(c) = t.core {
        o.insert("core".into(), json!(c));
    }
    o.insert("period".into(), json!(super::units::format_duration_ns(t.period_ns)));
    o
}

/// A new file for a system made by the study generator: platform, tasks (name,
/// level, core, period, PETs, cost curve, IPC, I/O) and `allocation.llc_ways`.
/// Servers, regulation, devices and memory profiles are not written (the
/// generator makes none).
pub fn study_system_toml(system: &TaskSystem) -> String {
    use super::units::format_duration_ns;
    use super::Platform;
    let preset = ["imx6", "imx6-transaction"].into_iter().find(|n| Platform::preset(n).map(|p| Platform { cores: system.platform.cores, ..p }).as_ref() == Some(&system.platform));
    let platform = if let Some(name) = preset {
        json!({ "preset": name, "cores": system.platform.cores })
    } else {
        let p = &system.platform;
        json!({
            "cores": p.cores,
            "llc": { "size": format!("{}B", p.llc.size_bytes), "ways": p.llc.ways, "colors": p.llc.colors, "line": format!("{}B", p.llc.line_bytes) },
            "dram": { "banks": p.dram.banks, "bank_size": format!("{}B", p.dram.bank_size_bytes) },
        })
    };
    let tasks: Vec<Value> = system
        .tasks
        .iter()
        .map(|t| {
            let mut o = task_head(t);
            let pets: Map<String, Value> = Level::ANALYZED
                .iter()
                .chain([Level::D].iter())
                .filter_map(|&l| t.pet_ns.get(l).map(|p| (l.to_string(), json!(format_duration_ns(p)))))
                .collect();
            o.insert("pet".into(), Value::Object(pets));
            if let Some(c) = t.cost {
                o.insert("cost".into(), json!({ "llc_slowdown": c.llc_slowdown, "wss_ways": c.wss_ways, "reload": c.reload }));
            }
            if let Some(l) = t.ipc {
                let mut ipc = Map::new();
                ipc.insert("to".into(), json!(system.tasks[l.to].name));
                ipc.insert("size".into(), json!(format!("{}B", l.bytes)));
                if let Some(m) = l.method {
                    ipc.insert("method".into(), json!(m.name()));
                } else if let Some(p) = l.buffer {
                    ipc.insert("buffer".into(), json!(p.to_string()));
                }
                o.insert("ipc".into(), Value::Object(ipc));
            }
            if let Some(io) = t.io {
                let mut m = Map::new();
                m.insert("bandwidth".into(), json!(format!("{}B/s", io.bandwidth_bytes_per_s)));
                m.insert("kind".into(), json!(io.kind.name()));
                if let Some(p) = io.buffer {
                    m.insert("buffer".into(), json!(p.to_string()));
                }
                o.insert("io".into(), Value::Object(m));
            }
            Value::Object(o)
        })
        .collect();
    let mut doc = Map::new();
    doc.insert("platform".into(), platform);
    doc.insert("task".into(), Value::Array(tasks));
    if let Some(a) = &system.allocation {
        doc.insert("allocation".into(), json!({ "llc_ways": llc_ways(a) }));
    }
    toml::to_string(&Value::Object(doc)).expect("study systems serialize")
}
