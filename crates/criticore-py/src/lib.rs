//! Python bindings: `criticore._core`. Thin: parse, run the engine, hand back
//! JSON text; input problems raise `InputError(message, file, field, reason)`.

use criticore::analysis::report::report;
use criticore::model::parse::parse_task_system_bytes;
use criticore::{Format, InputError as EngineInputError, TaskSystem};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(_core, InputError, PyValueError, "A task-system file is malformed: (message, file, field, reason).");

fn to_py(e: EngineInputError) -> PyErr {
    InputError::new_err((e.to_string(), e.file, e.field, e.reason))
}

fn format_of(file: &str, format: Option<&str>) -> PyResult<Format> {
    match format {
        None => Ok(Format::from_path(file)),
        Some("toml") => Ok(Format::Toml),
        Some("json") => Ok(Format::Json),
        Some(other) => Err(PyValueError::new_err(format!("unknown format {other:?} (expected toml or json)"))),
    }
}

fn parse(data: &[u8], file: &str, format: Option<&str>) -> PyResult<TaskSystem> {
    parse_task_system_bytes(data, format_of(file, format)?, file).map_err(to_py)
}

/// Parse and validate a task-system file's bytes; returns a short summary as JSON.
#[pyfunction]
#[pyo3(signature = (data, file, format=None))]
fn check(data: &[u8], file: &str, format: Option<&str>) -> PyResult<String> {
    let system = parse(data, file, format)?;
    Ok(serde_json::json!({
        "cores": system.platform.cores,
        "tasks": system.tasks.len(),
    })
    .to_string())
}

/// Analyze a task-system file's bytes; returns the analysis report as JSON text.
#[pyfunction]
#[pyo3(signature = (data, file, format=None))]
fn analyze(py: Python<'_>, data: &[u8], file: &str, format: Option<&str>) -> PyResult<String> {
    let system = parse(data, file, format)?;
    let text = py.allow_threads(|| serde_json::to_string(&report(&system)));
    text.map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
