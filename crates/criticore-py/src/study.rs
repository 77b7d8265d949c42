//! Bindings for the optimizer and the schedulability study
//! (mc2-io-ipc-os-isolation §6): `optimize`, `generate_system`,
//! `study_points` and the scenario/scheme catalogues.

use crate::{option_error, to_py};
use criticore::generate::mc2_io::{generate, Scenario, CATEGORIES};
use criticore::model::parse::Format;
use criticore::model::write::{study_system_toml, with_placements};
use criticore::model::TaskSystem;
use criticore::optimize::{try_optimize, Scheme, Unschedulable};
use criticore::study::{evaluate_points, Point, Sampling};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::{json, Value};

/// Table 3's categories and choices as JSON: `[{"key", "choices"}, …]`.
#[pyfunction]
pub fn study_categories() -> String {
    let cats: Vec<Value> = CATEGORIES.iter().map(|(k, c)| json!({"key": k, "choices": c})).collect();
    Value::Array(cats).to_string()
}

/// The nine schemes of §6.1, in the paper's order.
#[pyfunction]
pub fn study_schemes() -> Vec<&'static str> {
    Scheme::names()
}

fn scenario_of(v: &Value, field: &str) -> PyResult<Scenario> {
    let obj = v.as_object().ok_or_else(|| PyValueError::new_err(format!("{field}: expected an object of category: choice")))?;
    let mut pairs = Vec::new();
    for (k, c) in obj {
        let c = c.as_str().ok_or_else(|| PyValueError::new_err(format!("{field}.{k}: expected a choice name")))?;
        pairs.push((k.as_str(), c));
    }
    Scenario::from_names(pairs).map_err(|e| PyValueError::new_err(format!("{field}: {e}")))
}

fn column<'py, T: Copy>(py: Python<'py>, values: impl Iterator<Item = T>, bytes: impl Fn(T) -> Vec<u8>) -> Bound<'py, PyBytes> {
    let data: Vec<u8> = values.flat_map(bytes).collect();
    PyBytes::new(py, &data)
}

/// Evaluate utilization points of the study (rayon over points). `points_json`:
/// `[{"scenario_id", "scenario": {key: choice}, "point", "utilization"}, …]`.
/// Returns little-endian columns, one row per system × scheme.
#[pyfunction]
#[pyo3(signature = (points_json, seed, half_width=0.05, z=1.96, batch=50, max_systems=400, preset="imx6"))]
#[allow(clippy::too_many_arguments)]
pub fn study_points<'py>(
    py: Python<'py>,
    points_json: &str,
    seed: u64,
    half_width: f64,
    z: f64,
    batch: u32,
    max_systems: u32,
    preset: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let platform = criticore::model::Platform::preset(preset).ok_or_else(|| PyValueError::new_err(format!("preset: unknown platform preset \"{preset}\" (imx6 or imx6-transaction)")))?;
    let items: Vec<Value> = serde_json::from_str(points_json).map_err(|e| PyValueError::new_err(format!("points: not JSON: {e}")))?;
    if !(half_width > 0.0 && z > 0.0 && batch > 0 && max_systems > 0) {
        return Err(PyValueError::new_err("half_width, z, batch and max_systems must be positive"));
    }
    let mut points = Vec::with_capacity(items.len());
    let mut ids = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("points[{i}]");
        let scenario = scenario_of(item.get("scenario").unwrap_or(&Value::Null), &format!("{field}.scenario"))?;
        let id = item.get("scenario_id").and_then(Value::as_u64).ok_or_else(|| PyValueError::new_err(format!("{field}.scenario_id: expected a whole number")))?;
        if id != scenario.id() as u64 {
            return Err(PyValueError::new_err(format!("{field}.scenario_id: {id} is not the id of {} ({})", scenario.label(), scenario.id())));
        }
        let point = item.get("point").and_then(Value::as_u64).ok_or_else(|| PyValueError::new_err(format!("{field}.point: expected a whole number")))? as u32;
        let utilization = item.get("utilization").and_then(Value::as_f64).filter(|u| *u > 0.0 && u.is_finite()).ok_or_else(|| PyValueError::new_err(format!("{field}.utilization: expected a positive number")))?;
        points.push(Point { scenario, point, utilization });
        ids.push(id as u32);
    }
    let sampling = Sampling { half_width, z, batch, max_systems };
    let results = py.allow_threads(|| evaluate_points(&platform, &points, seed, sampling));
    let rows = || points.iter().zip(&ids).zip(&results).flat_map(|((p, id), rows)| rows.iter().map(move |r| (p, *id, r)));
    let d = PyDict::new(py);
    d.set_item("scenario_id", column(py, rows().map(|(_, id, _)| id), |v: u32| v.to_le_bytes().to_vec()))?;
    d.set_item("point", column(py, rows().map(|(p, _, _)| p.point), |v: u32| v.to_le_bytes().to_vec()))?;
    d.set_item("utilization", column(py, rows().map(|(p, _, _)| p.utilization), |v: f64| v.to_le_bytes().to_vec()))?;
    d.set_item("system", column(py, rows().map(|(_, _, r)| r.system), |v: u32| v.to_le_bytes().to_vec()))?;
    d.set_item("scheme", column(py, rows().map(|(_, _, r)| r.scheme), |v: u8| vec![v]))?;
    d.set_item("schedulable", column(py, rows().map(|(_, _, r)| r.schedulable as u8), |v: u8| vec![v]))?;
    d.set_item("objective", column(py, rows().map(|(_, _, r)| r.objective), |v: f64| v.to_le_bytes().to_vec()))?;
    Ok(d)
}

/// One generated system (TOML text) of a scenario at a utilization.
#[pyfunction]
pub fn generate_system(scenario_json: &str, utilization: f64, seed: u64) -> PyResult<String> {
    let v: Value = serde_json::from_str(scenario_json).map_err(|e| PyValueError::new_err(format!("scenario: not JSON: {e}")))?;
    let scenario = scenario_of(&v, "scenario")?;
    if !(utilization > 0.0 && utilization.is_finite()) {
        return Err(PyValueError::new_err("utilization: expected a positive number"));
    }
    Ok(study_system_toml(&generate(scenario, utilization, seed).0))
}

/// Optimize a task system (a `System` or a file's bytes), parsed once: on a
/// scratchpad platform, label placement (`objective`, at most `budget`
/// analyses, `on_progress(done, budget)` between them; Ctrl-C raises
/// KeyboardInterrupt); otherwise the three-phase optimizer under `scheme`
/// (`objective` or `budget` given is then an error). Returns (the text with
/// what was placed written in, JSON report with `kind` "labels" or "mc2").
/// A `System` comes back as JSON text, a file's bytes in the file's format;
/// the text is the input's when the system is not schedulable.
#[pyfunction]
#[pyo3(signature = (data, file, format=None, scheme="O|C+A/B-ALL", seed=0, objective=None, budget=None, on_progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn optimize(
    py: Python<'_>,
    data: crate::Source<'_>,
    file: &str,
    format: Option<&str>,
    scheme: &str,
    seed: u64,
    objective: Option<&str>,
    budget: Option<i64>,
    on_progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let (text, fmt) = data.text(file, format)?;
    let system = data.model(file, format)?;
    if !system.platform.memories.is_empty() {
        return place_labels(py, &text, fmt, &system, file, objective.unwrap_or("response"), budget.unwrap_or(100), on_progress);
    }
    for (given, option) in [(objective.is_some(), "--objective"), (budget.is_some(), "--budget")] {
        if given {
            return Err(option_error(file, option, "label placement is for scratchpad platforms ([[platform.memory]]); this file has an LLC and DRAM"));
        }
    }
    mc2_optimize(py, &text, fmt, &system, file, scheme, seed)
}

/// The three-phase optimizer of mc2-io-ipc-os-isolation §6.1 (`optimize`).
fn mc2_optimize(py: Python<'_>, text: &str, fmt: Format, system: &TaskSystem, file: &str, scheme: &str, seed: u64) -> PyResult<(String, String)> {
    let scheme = Scheme::parse(scheme)
        .ok_or_else(|| option_error(file, "--scheme", format!("unknown scheme \"{scheme}\" (expected one of: {})", Scheme::names().join(", "))))?;
    // Tasks without a cost curve keep their PETs whatever the ways (docs/optimizer.md).
    let without_curve: Vec<&str> = system
        .tasks
        .iter()
        .filter(|t| matches!(t.level, Some(criticore::model::Level::A | criticore::model::Level::B | criticore::model::Level::C)) && t.cost.is_none())
        .map(|t| t.name.as_str())
        .collect();
    let curves = system.tasks.iter().filter(|t| t.cost.is_some()).count();
    let any_curve = curves > 0;
    // Refused (one line) when the optimizer would test no task or leave some out.
    let result = py.allow_threads(|| try_optimize(system, scheme, seed)).map_err(|e| option_error(file, &e.field, e.reason))?;
    let tasks: Vec<Value> = result
        .system
        .tasks
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "level": t.level.map(|l| l.to_string()),
                "core": t.core,
                "ipc": t.ipc.map(|l| match (l.method, l.buffer) {
                    (Some(m), _) => m.name().to_string(),
                    (None, Some(p)) => format!("unmanaged in {p}"),
                    (None, None) => "unmanaged in levelC".to_string(),
                }),
                "io": t.io.and_then(|io| io.buffer).map(|p| p.to_string()),
            })
        })
        .collect();
    let (schedulable, solution, reason) = match &result.outcome {
        Ok(s) => (true, serde_json::to_value(s).unwrap_or(Value::Null), Value::Null),
        Err(Unschedulable::Packing { task }) => (false, Value::Null, json!(format!("phase 1: task {} fits on no core even with the whole LLC", system.tasks[*task].name))),
        Err(Unschedulable::Ways) if !any_curve => (false, Value::Null, json!("Level C fails its test (no task has a cost curve, so no split of the LLC ways changes it)")),
        Err(Unschedulable::Ways) => (false, Value::Null, json!("phase 3: no split of the LLC ways passes every level's test")),
    };
    let report = json!({
        "kind": "mc2", "scheme": scheme.name(), "schedulable": schedulable, "solution": solution, "reason": reason, "tasks": tasks,
        "cost_curves": curves, "without_cost_curve": without_curve,
    });
    let out = if schedulable { with_placements(text, fmt, file, &result.system).map_err(to_py)? } else { text.to_string() };
    Ok((out, report.to_string()))
}

/// The phase-3 way problem (JSON, the `solve_llc_ways` format) of one
/// generated system under `scheme` after phases 1–2 (ungrouped packing, no
/// buffer locked), or None if phase 1 fails: real study instances for
/// checking the exact solver against the MILP.
#[pyfunction]
pub fn study_way_problem(scenario_json: &str, utilization: f64, seed: u64, scheme: &str) -> PyResult<Option<String>> {
    use criticore::optimize::{framework, packing};
    use criticore::policy::cost::CostModel;
    let v: Value = serde_json::from_str(scenario_json).map_err(|e| PyValueError::new_err(format!("scenario: not JSON: {e}")))?;
    let scenario = scenario_of(&v, "scenario")?;
    let scheme = Scheme::parse(scheme).ok_or_else(|| PyValueError::new_err(format!("unknown scheme \"{scheme}\"")))?;
    let (system, _) = generate(scenario, utilization, seed);
    let Ok(cores) = packing::pack(&system, false) else { return Ok(None) };
    let placed = framework::place(&system, &cores, scheme, seed);
    let cost = CostModel::new(&placed);
    let problem = framework::way_problem(&placed, &cost, placed.platform.llc.ways, 0);
    serde_json::to_string(&problem).map(Some).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Label placement on a scratchpad platform (`optimize::labels`, issue 27
/// Build 7; `optimize`).
#[allow(clippy::too_many_arguments)]
fn place_labels(py: Python<'_>, text: &str, fmt: Format, system: &TaskSystem, file: &str, objective: &str, budget: i64, on_progress: Option<Py<PyAny>>) -> PyResult<(String, String)> {
    use criticore::optimize::labels::{self, Objective};
    let budget = usize::try_from(budget).ok().filter(|&b| b > 0).ok_or_else(|| option_error(file, "--budget", "must be a positive number of analyses"))?;
    let objective = match objective {
        "response" => Objective::Response,
        "chain" => Objective::Chain,
        other => return Err(option_error(file, "--objective", format!("unknown objective \"{other}\" (expected response or chain)"))),
    };
    let mut stopped: Option<PyErr> = None;
    let placed = py.allow_threads(|| {
        let mut go_on = |done: usize, budget: usize| {
            Python::with_gil(|py| {
                let checked = py.check_signals().and_then(|_| on_progress.as_ref().map_or(Ok(()), |f| f.call1(py, (done, budget)).map(|_| ())));
                match checked {
                    Ok(()) => true,
                    Err(e) => {
                        stopped = Some(e);
                        false
                    }
                }
            })
        };
        labels::place_labels(system, objective, budget, &mut go_on)
    });
    if let Some(e) = stopped {
        return Err(e);
    }
    let placed = placed.map_err(|e| option_error(file, &e.field, e.reason))?;
    let out = criticore::model::write::with_label_placements(text, fmt, file, &placed.system).map_err(to_py)?;
    let report = json!({
        "kind": "labels", "objective": match objective { Objective::Response => "response", Objective::Chain => "chain" },
        "before": placed.before, "after": placed.after, "moves": placed.moves, "analyses": placed.analyses, "budget": budget,
    });
    Ok((out, report.to_string()))
}
