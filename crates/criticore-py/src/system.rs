//! A task system held for Python (`criticore.TaskSystem` wraps it): the
//! document as written, kept so it can be written back with every field the
//! user gave, and the engine's parsed, validated model that every engine
//! function runs on. There is no second task model in Python.

use crate::{format_of, to_py};
use criticore::model::parse::{document, parse_value, text_of};
use std::borrow::Cow;
use criticore::model::write::document_text;
use criticore::model::{Level, Partition, TaskSystem};
use criticore::sim::sched::SchedulerKind;
use criticore::Format;
use pyo3::prelude::*;
use serde_json::{json, Map, Value};

#[pyclass(module = "criticore._core", frozen)]
pub struct System {
    pub(crate) file: String,
    pub(crate) document: Value,
    pub(crate) model: TaskSystem,
}

impl System {
    pub(crate) fn new(document: Value, file: &str) -> PyResult<Self> {
        let model = parse_value(&document, file).map_err(to_py)?;
        Ok(System { file: file.to_string(), document, model })
    }
}

#[pymethods]
impl System {
    /// Parse a file's bytes (TOML or JSON by `format` or the file's suffix).
    #[staticmethod]
    #[pyo3(signature = (data, file, format=None))]
    fn parse(data: &[u8], file: &str, format: Option<&str>) -> PyResult<Self> {
        let text = text_of(data, file).map_err(to_py)?;
        System::new(document(text, format_of(file, format)?, file).map_err(to_py)?, file)
    }

    /// Parse a document given as JSON text (what Python builds); `file`
    /// names it in errors.
    #[staticmethod]
    fn from_json(text: &str, file: &str) -> PyResult<Self> {
        System::new(document(text, Format::Json, file).map_err(to_py)?, file)
    }

    /// The name errors give for this system (its path, or a label).
    #[getter]
    fn file(&self) -> &str {
        &self.file
    }

    /// The document as JSON text, fields as written.
    fn document(&self) -> String {
        self.document.to_string()
    }

    /// The document as file text: "toml" or "json".
    fn text(&self, format: &str) -> PyResult<String> {
        let format = format_of(&self.file, Some(format))?;
        document_text(&self.document, format, &self.file).map_err(to_py)
    }

    /// The engine's model in SI units, as JSON text: platform, tasks, servers,
    /// allocation, regulation (what `criticore.TaskSystem`'s views read).
    fn view(&self) -> String {
        view(&self.model).to_string()
    }

    /// What `check` returns: cores, tasks, servers, implied scheduler, regulation.
    fn outline(&self) -> String {
        crate::outline(&self.model).to_string()
    }

    fn __repr__(&self) -> String {
        let m = &self.model;
        format!("<System {}: {} cores, {} tasks, {} servers>", self.file, m.platform.cores, m.tasks.len(), m.servers.len())
    }
}

fn pets(p: &criticore::model::LevelPets) -> Value {
    Value::Object(Level::ALL.iter().filter_map(|&l| p.get(l).map(|ns| (l.to_string(), json!(ns)))).collect())
}

fn partitions<T: serde::Serialize>(items: &[(Partition, T)]) -> Value {
    Value::Object(items.iter().map(|(p, v)| (p.to_string(), json!(v))).collect::<Map<_, _>>())
}

fn view(m: &TaskSystem) -> Value {
    let p = &m.platform;
    let tasks: Vec<Value> = m
        .tasks
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "level": t.level.map(|l| l.to_string()),
                "criticality": t.criticality,
                "core": t.core,
                "server": t.server.map(|i| m.servers[i].name.clone()),
                "period_ns": t.period_ns,
                "deadline_ns": t.deadline_ns,
                "offset_ns": t.offset_ns,
                "priority": t.priority,
                "pet_ns": pets(&t.pet_ns),
                "pet_unmanaged_ns": t.pet_unmanaged_ns.as_ref().map(pets),
                "wss_bytes": t.memory.as_ref().map(|mem| mem.wss_bytes),
                "has_cost_curve": t.cost.is_some(),
            })
        })
        .collect();
    let servers: Vec<Value> = m
        .servers
        .iter()
        .map(|s| {
            json!({
                "name": s.name, "core": s.core, "kind": s.kind, "period_ns": s.period_ns, "budget_ns": s.budget_ns,
                "priority": s.priority, "memory_budget": s.memory_budget,
            })
        })
        .collect();
    json!({
        "platform": {
            "cores": p.cores,
            "llc_size_bytes": p.llc.size_bytes, "llc_ways": p.llc.ways, "llc_colors": p.llc.colors, "line_bytes": p.llc.line_bytes,
            "dram_banks": p.dram.banks, "bank_size_bytes": p.dram.bank_size_bytes,
            "arbiter": p.bus.arbiter, "bus_bytes_per_s": p.bus.bandwidth_bytes_per_s,
        },
        "tasks": tasks,
        "servers": servers,
        "allocation": m.allocation.as_ref().map(|a| json!({
            "llc_ways": partitions(&a.llc_ways), "llc_colors": partitions(&a.llc_colors), "banks": partitions(&a.banks),
            "os_isolation": a.os_isolation,
        })),
        "regulation": m.regulation.as_ref().map(|r| json!({"kind": r.kind, "period_ns": r.period_ns})),
        "implied_scheduler": SchedulerKind::implied_by(m).name(),
    })
}

/// What the engine functions take: a `System` or a file's bytes.
#[derive(FromPyObject)]
pub(crate) enum Source<'py> {
    System(PyRef<'py, System>),
    Bytes(pyo3::pybacked::PyBackedBytes),
}

impl Source<'_> {
    /// The validated model (parsing bytes as `file` in `format`).
    pub(crate) fn model(&self, file: &str, format: Option<&str>) -> PyResult<Cow<'_, TaskSystem>> {
        match self {
            Source::System(s) => Ok(Cow::Borrowed(&s.model)),
            Source::Bytes(data) => crate::parse(data, file, format).map(Cow::Owned),
        }
    }

    /// The document's text and format, for functions that write the input back.
    pub(crate) fn text(&self, file: &str, format: Option<&str>) -> PyResult<(String, Format)> {
        match self {
            Source::System(s) => Ok((s.document.to_string(), Format::Json)),
            Source::Bytes(data) => Ok((text_of(data, file).map_err(to_py)?.to_string(), format_of(file, format)?)),
        }
    }
}

/// A `Source` that can cross threads: the model already parsed, or bytes to parse.
pub(crate) enum Input {
    Parsed(TaskSystem),
    Bytes(pyo3::pybacked::PyBackedBytes),
}

impl From<Source<'_>> for Input {
    fn from(source: Source<'_>) -> Self {
        match source {
            Source::System(s) => Input::Parsed(s.model.clone()),
            Source::Bytes(b) => Input::Bytes(b),
        }
    }
}

impl Input {
    pub(crate) fn model(&self, file: &str) -> PyResult<Cow<'_, TaskSystem>> {
        match self {
            Input::Parsed(m) => Ok(Cow::Borrowed(m)),
            Input::Bytes(data) => crate::parse(data, file, None).map(Cow::Owned),
        }
    }
}
