//! Python bindings: `criticore._core`. Thin: parse, run the engine, hand back
//! JSON text; input problems raise `InputError(message, file, field, reason)`.

use criticore::model::units::parse_duration_ns;
use criticore::sim::sched::SchedulerKind;
use pyo3::types::{PyBytes, PyDict};
use criticore::model::parse::parse_task_system_bytes_with;
use criticore::{Format, InputError as EngineInputError, TaskSystem};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod load;
mod profile;
mod runtime;
mod simulate;
mod study;
mod system;
mod transaction;

use system::Source;
pub(crate) use system::Input;

create_exception!(_core, InputError, PyValueError, "A task-system file is malformed: (message, file, field, reason).");

pub(crate) fn to_py(e: EngineInputError) -> PyErr {
    InputError::new_err((e.to_string(), e.file, e.field, e.reason))
}

pub(crate) fn format_of(file: &str, format: Option<&str>) -> PyResult<Format> {
    match format {
        None => Ok(Format::from_path(file)),
        Some("toml") => Ok(Format::Toml),
        Some("json") => Ok(Format::Json),
        Some(other) => Err(PyValueError::new_err(format!("unknown format {other:?} (expected toml or json)"))),
    }
}

pub(crate) fn parse(data: &[u8], file: &str, format: Option<&str>) -> PyResult<TaskSystem> {
    parse_task_system_bytes_with(data, format_of(file, format)?, file, &system::param_reader(file)).map_err(to_py)
}

/// Parse, then replace cost-curve PETs by their conditioned values under the
/// file's allocation (docs/study-model.md): what `analyze` and `simulate` run.
pub(crate) fn parse_conditioned(source: &Source<'_>, file: &str, format: Option<&str>) -> PyResult<TaskSystem> {
    conditioned(&*source.model(file, format)?, file)
}

pub(crate) fn conditioned(system: &TaskSystem, file: &str) -> PyResult<TaskSystem> {
    criticore::policy::pet::conditioned(system).map_err(|e| {
        let e = e.field_error();
        option_error(file, &e.field, e.reason)
    })
}

/// Parse and validate a task-system file's bytes; returns its outline (cores, tasks, servers) as JSON.
#[pyfunction]
#[pyo3(signature = (data, file, format=None))]
fn check(data: &[u8], file: &str, format: Option<&str>) -> PyResult<String> {
    Ok(outline(&parse(data, file, format)?).to_string())
}

/// A system's outline: cores, tasks, servers, implied scheduler, regulation.
pub(crate) fn outline(system: &TaskSystem) -> serde_json::Value {
    let tasks: Vec<_> = system
        .tasks
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name,
                "level": t.level.map(|l| l.to_string()),
                "core": t.core,
                "server": t.server.map(|i| system.servers[i].name.clone()),
            })
        })
        .collect();
    let servers: Vec<_> = system.servers.iter().map(|s| serde_json::json!({"name": s.name, "core": s.core})).collect();
    serde_json::json!({
        "cores": system.platform.cores,
        "line_bytes": system.platform.llc.line_bytes,
        "tasks": tasks,
        "servers": servers,
        "implied_scheduler": SchedulerKind::implied_by(&system).name(),
        "regulation": system.regulation.as_ref().map(|r| serde_json::json!({
            "kind": r.kind,
            "overhead_table": r.monitor.as_ref().map(|m| m.table_file.clone()),
        })),
    })
}

/// Analyze a task system (a `System` or a file's bytes) under `scheduler` (simulate's names;
/// default: what the file implies); returns the report as JSON text: the MC²
/// report for mc2, else the classic test's per-task bounds
/// (`analysis::classic`). Either carries `scheduler`.
#[pyfunction]
#[pyo3(signature = (data, file, format=None, scheduler=None))]
fn analyze(py: Python<'_>, data: Source<'_>, file: &str, format: Option<&str>, scheduler: Option<String>) -> PyResult<String> {
    let system = parse_conditioned(&data, file, format)?;
    let kind = scheduler_kind(&system, file, scheduler.as_deref())?;
    // The engine refuses a request that would analyze no task, or drop some.
    let a = py.allow_threads(|| criticore::analysis::analyze(&system, kind)).map_err(|e| option_error(file, &e.field, e.reason))?;
    let mut value = serde_json::to_value(&a).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let criticore::analysis::Analysis::Mc2(_) = a {
        value["scheduler"] = serde_json::Value::from("mc2");
    }
    Ok(value.to_string())
}

/// The scheduler named, or the one the file implies; an unknown name is one line.
fn scheduler_kind(system: &TaskSystem, file: &str, name: Option<&str>) -> PyResult<SchedulerKind> {
    match name {
        None => Ok(SchedulerKind::implied_by(system)),
        Some(name) => SchedulerKind::parse(name).ok_or_else(|| {
            let names: Vec<_> = SchedulerKind::NAMES.iter().map(|(n, _)| *n).collect();
            option_error(file, "--scheduler", format!("unknown scheduler \"{name}\" (expected one of: {})", names.join(", ")))
        }),
    }
}

pub(crate) fn option_error(file: &str, field: &str, reason: impl Into<String>) -> PyErr {
    let reason = reason.into();
    InputError::new_err((format!("{file}: {field}: {reason}"), file.to_string(), field.to_string(), reason))
}

/// Little-endian bytes of a column, for numpy.frombuffer on the Python side.
pub(crate) fn u32_column<'py>(py: Python<'py>, values: impl Iterator<Item = u32>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &values.flat_map(u32::to_le_bytes).collect::<Vec<u8>>())
}

pub(crate) fn u64_column<'py>(py: Python<'py>, values: impl Iterator<Item = u64>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &values.flat_map(u64::to_le_bytes).collect::<Vec<u8>>())
}

/// Parse a duration string ("10s") into nanoseconds.
#[pyfunction]
fn duration_ns(text: &str) -> PyResult<u64> {
    parse_duration_ns(text).map_err(PyValueError::new_err)
}

/// Parse a size string ("128MiB") into bytes.
#[pyfunction]
fn size_bytes(text: &str) -> PyResult<u64> {
    criticore::model::units::parse_size_bytes(text).map_err(PyValueError::new_err)
}

/// Parse a bandwidth string ("500MB/s") into bytes per second.
#[pyfunction]
fn bandwidth_bytes_per_s(text: &str) -> PyResult<u64> {
    criticore::model::units::parse_bandwidth_bytes_per_s(text).map_err(PyValueError::new_err)
}

/// "LLC-way problem: {field}: {reason}" as a ValueError.
fn way_error(field: &str, reason: &str) -> PyErr {
    PyValueError::new_err(format!("LLC-way problem: {field}: {reason}"))
}

/// The object `obj` as a dict with exactly the keys `keys` (all required).
fn way_object<'py>(obj: &Bound<'py, PyAny>, path: &str, keys: &[&str]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let name = if path.is_empty() { "(problem)" } else { path };
    let dict = obj.downcast::<PyDict>().map_err(|_| way_error(name, "must be an object"))?;
    for key in dict.keys() {
        let key: String = key.str()?.extract()?;
        if !keys.contains(&key.as_str()) {
            return Err(way_error(name, &format!("unknown field `{key}`, expected one of {keys:?}")));
        }
    }
    keys.iter()
        .map(|k| {
            let field = if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
            dict.get_item(k)?.ok_or_else(|| way_error(&field, "missing field"))
        })
        .collect()
}

fn way_floats(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<f64>> {
    obj.extract().map_err(|_| way_error(field, "must be a list of numbers"))
}

fn way_grid(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<Vec<f64>>> {
    let rows: Vec<Bound<'_, PyAny>> = obj.extract().map_err(|_| way_error(field, "must be a list of lists of numbers"))?;
    rows.iter().enumerate().map(|(i, r)| way_floats(r, &format!("{field}[{i}]"))).collect()
}

/// Read a `WayProblem` from Python objects. Floats are taken as Python holds
/// them, bit for bit (serde_json's default float parsing may be 1 ulp off).
fn way_problem(obj: &Bound<'_, PyAny>) -> PyResult<criticore::optimize::llc_ways::WayProblem> {
    use criticore::optimize::llc_ways::{CoreTables, LevelCTables, WayProblem};
    let top = way_object(obj, "", &["ways", "cores", "level_c"])?;
    let ways: u32 = top[0].extract().map_err(|_| way_error("ways", "must be a whole number ≥ 0"))?;
    let cores: Vec<Bound<'_, PyAny>> = top[1].extract().map_err(|_| way_error("cores", "must be a list"))?;
    let cores = cores
        .iter()
        .enumerate()
        .map(|(p, c)| {
            let path = format!("cores[{p}]");
            let f = way_object(c, &path, &["u_a_a", "u_ab_b", "u_ab_c"])?;
            Ok(CoreTables {
                u_a_a: way_floats(&f[0], &format!("{path}.u_a_a"))?,
                u_ab_b: way_floats(&f[1], &format!("{path}.u_ab_b"))?,
                u_ab_c: way_floats(&f[2], &format!("{path}.u_ab_c"))?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let c = way_object(&top[2], "level_c", &["u_c", "u_max", "u_l"])?;
    let level_c = LevelCTables {
        u_c: way_grid(&c[0], "level_c.u_c")?,
        u_max: way_grid(&c[1], "level_c.u_max")?,
        u_l: way_grid(&c[2], "level_c.u_l")?,
    };
    Ok(WayProblem { ways, cores, level_c })
}

/// Phase 3 of the optimizer (LLC ways, docs/optimizer.md): solve a
/// `WayProblem` exactly. `problem` is its JSON text (parsed by Python's json,
/// which rounds floats correctly) or the equivalent dict. Returns the
/// `WayAllocation` as JSON, or None if no allocation passes every level.
/// Malformed input raises ValueError naming the field.
#[pyfunction]
fn solve_llc_ways(py: Python<'_>, problem: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    use criticore::optimize::llc_ways::solve;
    let problem = match problem.extract::<String>() {
        Ok(text) => {
            let parsed = py
                .import("json")?
                .call_method1("loads", (text,))
                .map_err(|e| PyValueError::new_err(format!("LLC-way problem: not JSON: {e}")))?;
            way_problem(&parsed)?
        }
        Err(_) => way_problem(problem)?,
    };
    let solution = py.allow_threads(|| solve(&problem)).map_err(|e| way_error(&e.field, &e.reason))?;
    solution
        .map(|a| serde_json::to_string(&a).map_err(|e| PyValueError::new_err(e.to_string())))
        .transpose()
}

/// Import an Amalthea model's bytes (`.amxmi`, gzip or not) with execution
/// needs times `scale` (decimal text, exact): the task-system file text, the
/// summary and the intermediate model, both as JSON (docs/amalthea.md).
#[pyfunction]
#[pyo3(signature = (data, file, scale=None))]
fn import_amalthea(py: Python<'_>, data: &[u8], file: &str, scale: Option<&str>) -> PyResult<(String, String, String)> {
    use criticore::decimal::Exact;
    let scale = scale
        .map(|s| Exact::parse(s).filter(Exact::is_positive).ok_or_else(|| option_error(file, "--scale", format!("must be a positive number, got {s:?}"))))
        .transpose()?;
    let imported = py.allow_threads(|| criticore::import::import_amalthea(data, file, scale.as_ref())).map_err(to_py)?;
    let s = &imported.summary;
    let summary = serde_json::json!({ "tasks": s.tasks, "cores": s.cores, "not_represented": s.not_represented, "line": s.line() });
    let model = serde_json::to_string(&imported.model).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((imported.toml, summary.to_string(), model))
}

/// The extension is `criticore._core._native`; the package `criticore._core`
/// (python/criticore/_core/__init__.py) re-exports it, a leaf of the import graph.
#[pymodule]
#[pyo3(name = "_native")]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate_many, m)?)?;
    m.add_function(wrap_pyfunction!(duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(bandwidth_bytes_per_s, m)?)?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    system::register(m)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_class::<system::System>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(solve_llc_ways, m)?)?;
    m.add_function(wrap_pyfunction!(import_amalthea, m)?)?;
    m.add_function(wrap_pyfunction!(transaction::mc2_ub, m)?)?;
    m.add_function(wrap_pyfunction!(transaction::mc2_os, m)?)?;
    m.add_function(wrap_pyfunction!(transaction::dram_replay, m)?)?;
    m.add_function(wrap_pyfunction!(transaction::mc2_io_ipc, m)?)?;
    m.add_function(wrap_pyfunction!(transaction::mc2_io_dma, m)?)?;
    m.add_function(wrap_pyfunction!(transaction::mc2_io_cross_core, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_categories, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_schemes, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_points, m)?)?;
    m.add_function(wrap_pyfunction!(study::generate_system, m)?)?;
    m.add_function(wrap_pyfunction!(study::optimize, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_way_problem, m)?)?;
    runtime::register(m)?;
    load::register(m)?;
    profile::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
