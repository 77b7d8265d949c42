//! A task system held for Python (`criticore.TaskSystem` wraps it): the
//! document as written, kept so it can be written back with every field the
//! user gave, and the engine's parsed, validated model that every engine
//! function runs on. There is no second task model in Python.

use crate::{format_of, option_error, to_py, InputError};
use criticore::error::{quote, quote_list, FieldError, FieldResult};
use criticore::model::parse::{depth_error, document, field_path, non_finite_error, parse_value_with, text_of, MAX_DEPTH};
use criticore::model::write::document_text;
use criticore::model::{Level, Partition, TaskSystem};
use criticore::sim::sched::SchedulerKind;
use criticore::Format;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping, PySet, PyString, PyTuple, PyType};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::path::Path;

/// What errors give as the file of a value built in Python with no name.
const PYTHON: &str = "<python>";

#[pyclass(module = "criticore._core", frozen)]
pub struct System {
    pub(crate) file: String,
    pub(crate) document: Value,
    pub(crate) model: TaskSystem,
}

impl System {
    pub(crate) fn new(document: Value, file: &str) -> PyResult<Self> {
        let model = parse_value_with(&document, file, &param_reader(file)).map_err(to_py)?;
        Ok(System { file: file.to_string(), document, model })
    }
}

/// Reads the parameter file a `platform.preset` names, relative to the
/// directory of `file` (the task file; for a system built in Python, whose
/// `file` is a label, the current directory). The engine opens no file.
pub(crate) fn param_reader(file: &str) -> impl Fn(&str) -> Result<String, String> {
    let dir = Path::new(file).parent().map(Path::to_path_buf).unwrap_or_default();
    move |preset| {
        let path = dir.join(preset);
        let bytes = std::fs::read(&path).map_err(|e| {
            let why = e.to_string();
            // "No such file or directory (os error 2)": the number says nothing more.
            format!("cannot read {}: {}", path.display(), why.split(" (os error").next().unwrap_or(&why))
        })?;
        String::from_utf8(bytes).map_err(|e| format!("{} is not UTF-8 text (byte {})", path.display(), e.utf8_error().valid_up_to()))
    }
}

/// A Python value as a document value, the way a file would hold it: str,
/// int, float, bool, None, lists and tuples (also sets, and `os.PathLike`
/// as its path, as before), dicts with str keys. Anything else, a NaN or an
/// infinity, an int beyond 64 bits, or nesting deeper than [`MAX_DEPTH`] is
/// an error naming the path (`task[0].name`).
fn py_to_value(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> FieldResult<Value> {
    let at = |reason: String| FieldError::new(if path.is_empty() { "(top level)" } else { path }, reason);
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        let text = obj.str().map(|s| s.to_string()).unwrap_or_default();
        return Err(at(format!("the integer {} is out of range (64 bits)", quote(&text))));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        let x = f.value();
        return serde_json::Number::from_f64(x).map(Value::Number).ok_or_else(|| non_finite_error(path, x));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return s.to_str().map(|t| Value::String(t.to_string())).map_err(|_| at("a string that is not valid Unicode (it holds a lone surrogate)".into()));
    }
    let is_container = obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>()
        || obj.downcast::<PyMapping>().is_ok();
    if is_container && depth > MAX_DEPTH {
        return Err(depth_error(path));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        return dict_items(d.iter().map(|(k, v)| Ok((k, v))), path, depth);
    }
    if let Ok(m) = obj.downcast::<PyMapping>() {
        let items = m.items().map_err(|e| at(format!("cannot read its items: {e}")))?;
        return dict_items(items.iter().map(|kv| kv.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()), path, depth);
    }
    if is_container {
        let items = obj.try_iter().map_err(|e| at(e.to_string()))?;
        return items
            .enumerate()
            .map(|(i, x)| py_to_value(&x.map_err(|e| at(e.to_string()))?, &format!("{path}[{i}]"), depth + 1))
            .collect::<FieldResult<Vec<_>>>()
            .map(Value::Array);
    }
    if obj.hasattr("__fspath__").unwrap_or(false) {
        if let Ok(p) = obj.call_method0("__fspath__").and_then(|p| p.extract::<String>()) {
            return Ok(Value::String(p));
        }
    }
    let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    let hint = if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() { " (decode it to a str)" } else { "" };
    Err(at(format!("{type_name} is not a file value{hint}: use str, int, float, bool, list or dict")))
}

/// A mapping's items as a table: every key a str.
fn dict_items<'py>(items: impl Iterator<Item = PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)>>, path: &str, depth: usize) -> FieldResult<Value> {
    let at = |reason: String| FieldError::new(if path.is_empty() { "(top level)" } else { path }, reason);
    let mut map = Map::new();
    for item in items {
        let (k, v) = item.map_err(|e| at(e.to_string()))?;
        let Ok(key) = k.downcast::<PyString>().map_err(|_| ()).and_then(|s| s.to_str().map(str::to_string).map_err(|_| ())) else {
            let text = k.repr().map(|r| r.to_string()).unwrap_or_default();
            let type_name = k.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            return Err(at(format!("the key {} is a {type_name}; keys are strings, as in a file", quote(&text))));
        };
        let value = py_to_value(&v, &field_path(path, &key), depth + 1)?;
        map.insert(key, value);
    }
    Ok(Value::Object(map))
}

/// `UnknownTaskError`: `TaskSystem.task(name)` with no such task. An
/// `InputError` (one line: file, `task`, reason) and a `LookupError`, so
/// `except LookupError` and `except criticore.InputError` both catch it.
static UNKNOWN_TASK: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// Add `UnknownTaskError` to the module (after `InputError`).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let builtins = py.import("builtins")?;
    let bases = PyTuple::new(py, [py.get_type::<InputError>().into_any(), builtins.getattr("LookupError")?])?;
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "criticore._core")?;
    namespace.set_item("__doc__", "No task of that name (TaskSystem.task): an InputError and a LookupError.")?;
    let class = builtins.getattr("type")?.call1(("UnknownTaskError", bases, namespace))?.downcast_into::<PyType>()?;
    m.add("UnknownTaskError", &class)?;
    let _ = UNKNOWN_TASK.set(py, class.unbind());
    Ok(())
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

    /// Parse a document given as Python values (dicts, lists, str, int,
    /// float, bool); `file` names it in errors. A value a file cannot hold
    /// is an InputError naming its path.
    #[staticmethod]
    fn from_dict(document: &Bound<'_, PyAny>, file: &str) -> PyResult<Self> {
        if document.downcast::<PyMapping>().is_err() {
            let type_name = document.get_type().name()?.to_string();
            return Err(to_py(FieldError::new("(top level)", format!("expected a dict, got {type_name}")).in_file(file)));
        }
        System::new(py_to_value(document, "", 1).map_err(|e| to_py(e.in_file(file)))?, file)
    }

    /// The index of the task called `name`; UnknownTaskError if there is none.
    fn task_index(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<usize> {
        let Ok(name) = name.extract::<String>() else {
            let type_name = name.get_type().name()?.to_string();
            return Err(option_error(&self.file, "task", format!("a task name is a str, got {type_name}")));
        };
        if let Some(i) = self.model.tasks.iter().position(|t| t.name == name) {
            return Ok(i);
        }
        let names = self.model.tasks.iter().map(|t| t.name.as_str());
        let reason = format!("no task named {} (tasks: {})", quote(&name), if self.model.tasks.is_empty() { "none".to_string() } else { quote_list(names) });
        let e = FieldError::new("task", reason).in_file(&self.file);
        let class = UNKNOWN_TASK.get(py).expect("registered with the module").bind(py);
        Err(PyErr::from_type(class.clone(), (e.to_string(), e.file, e.field, e.reason)))
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
                "background": t.is_background(),
                "runnables": t.runnables.iter().map(|r| (r.name.clone(), r.pet_ns)).collect::<Vec<_>>(),
                "label_accesses": t.runnables.iter().flat_map(|r| r.accesses.iter().map(move |a| json!({
                    "runnable": r.name, "label": m.labels[a.label].name, "reads": a.reads, "writes": a.writes,
                }))).collect::<Vec<_>>(),
                "preemption": t.preemption.name(),
                "activation_limit": t.activation_limit,
                "communication": t.communication.name(),
                "copy_in_ns": t.copy_in_ns,
                "copy_out_ns": t.copy_out_ns,
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
            "clock_hz": p.clock_hz, "instructions_per_cycle": p.instructions_per_cycle, "memories": p.memories.iter().map(|x| x.name.clone()).collect::<Vec<_>>(),
        },
        "tasks": tasks,
        "servers": servers,
        "allocation": m.allocation.as_ref().map(|a| json!({
            "llc_ways": partitions(&a.llc_ways), "llc_colors": partitions(&a.llc_colors), "banks": partitions(&a.banks),
            "os_isolation": a.os_isolation,
        })),
        "regulation": m.regulation.as_ref().map(|r| json!({"kind": r.kind, "period_ns": r.period_ns})),
        "labels": m.labels.iter().map(|l| json!({"name": l.name, "size_bytes": l.size_bytes, "memory": p.memories[l.memory].name})).collect::<Vec<_>>(),
        "chains": m.chains.iter().map(|c| json!({"name": c.name, "tasks": c.tasks.iter().map(|&t| m.tasks[t].name.clone()).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "implied_scheduler": SchedulerKind::implied_by(m).name(),
    })
}

/// What the engine functions take: a `System` or a file's bytes.
pub(crate) enum Source<'py> {
    System(PyRef<'py, System>),
    Bytes(PyBackedBytes),
}

/// Anything else is an InputError naming the argument, not a TypeError.
impl<'py> FromPyObject<'py> for Source<'py> {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(system) = obj.downcast::<System>() {
            return Ok(Source::System(system.borrow()));
        }
        if let Ok(bytes) = obj.extract::<PyBackedBytes>() {
            return Ok(Source::Bytes(bytes));
        }
        let type_name = obj.get_type().name()?.to_string();
        Err(option_error(PYTHON, "system", format!("expected a task system or a file's bytes, got {type_name}")))
    }
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
    Bytes(PyBackedBytes),
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
