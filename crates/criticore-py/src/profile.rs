//! Binding of one profiling point (`criticore_rt::workload::profile`): `criticore
//! profile` calls it once per load of the grid, with the GIL released.

use crate::{option_error, u32_column, u64_column};
use criticore_rt::os::counter::perf;
use criticore_rt::os::launch::{LaunchSpec, Output, Policy};
use criticore_rt::workload::load::{self, LoadSpec, StopOnSignals, STOP};
use criticore_rt::workload::profile::{run_point, LoadInstance, PointEnd, PointSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::Ordering;

/// Whether the machine has a hardware PMU (a `cpu`-like perf event source).
#[pyfunction]
pub fn pmu_present() -> bool {
    perf::pmu_present()
}

/// This machine's cache-line size, as the load generator counts in it.
#[pyfunction]
pub fn machine_line_bytes() -> usize {
    load::machine_llc().map(|l| l.1).unwrap_or(64)
}

/// Run the program `argv` pinned to `cpu` against `loads` (a list of
/// `(cpu, reads, delay)`), recording counts every `tick_ns`.
/// `options`: jobs, limit_ns, fifo (SCHED_FIFO priority), buffer_bytes,
/// line_bytes, event (hardware event spec, e.g. "llc-misses"), quiet (the
/// program's output to /dev/null). `on_job(jobs_ended) -> bool` per job end
/// (False stops). SIGINT/SIGTERM end the point cleanly ("interrupted").
/// Returns a dict of columns (little-endian bytes) and values.
#[pyfunction]
#[pyo3(signature = (argv, cpu, loads, tick_ns, options, on_job=None))]
pub fn profile_point<'py>(
    py: Python<'py>,
    argv: Vec<String>,
    cpu: usize,
    loads: Vec<(usize, u32, u64)>,
    tick_ns: u64,
    options: &Bound<'py, PyDict>,
    on_job: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let get = |key: &str| options.get_item(key).ok().flatten().filter(|v| !v.is_none());
    let mut program = LaunchSpec::new(argv.clone());
    program.cpus = Some(vec![cpu]);
    if let Some(p) = get("fifo") {
        program.policy = Policy::Fifo(p.extract()?);
    }
    if get("quiet").map(|v| v.extract::<bool>()).transpose()?.unwrap_or(false) {
        program.stdout = Output::Null;
    }
    let buffer: Option<usize> = get("buffer_bytes").map(|v| v.extract()).transpose()?;
    let line: Option<usize> = get("line_bytes").map(|v| v.extract()).transpose()?;
    let mut instances = Vec::new();
    for (c, reads, delay) in loads {
        if reads > load::LINES_PER_ITERATION {
            return Err(option_error("criticore profile", "--reads", format!("at most {} of 10 lines can be reads, got {reads}", load::LINES_PER_ITERATION)));
        }
        let mut spec = LoadSpec::new(reads, delay);
        spec.buffer_bytes = buffer.unwrap_or(spec.buffer_bytes);
        spec.line_bytes = line.unwrap_or(spec.line_bytes);
        instances.push(LoadInstance { cpu: c, spec });
    }
    let hardware = match get("event").map(|v| v.extract::<String>()).transpose()? {
        None => None,
        Some(e) => Some(perf::parse_event(&e).map_err(|e| option_error("criticore profile", "--counter", e.to_string()))?),
    };
    let spec = PointSpec {
        program,
        loads: instances,
        tick_ns,
        jobs: get("jobs").map(|v| v.extract()).transpose()?,
        limit_ns: get("limit_ns").map(|v| v.extract()).transpose()?.unwrap_or(60_000_000_000),
        hardware,
    };
    let result = py.allow_threads(|| {
        let _guard = StopOnSignals::install();
        run_point(&spec, &STOP, |n| match &on_job {
            None => true,
            Some(cb) => matches!(Python::with_gil(|py| cb.call1(py, (n,)).and_then(|r| r.extract::<bool>(py))), Ok(true)),
        })
    });
    let interrupted = STOP.load(Ordering::Relaxed);
    let rec = result.map_err(|e| option_error("criticore profile", if e.kind() == std::io::ErrorKind::NotFound { "COMMAND" } else { "--cpu" }, e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("tick_ns", u64_column(py, rec.tick_ns.iter().copied()))?;
    out.set_item("lines", u64_column(py, rec.lines.iter().copied()))?;
    out.set_item("program_lines", u64_column(py, rec.program_lines.iter().copied()))?;
    out.set_item("hardware_lines", rec.hardware_lines.as_ref().map(|h| u64_column(py, h.iter().copied())))?;
    out.set_item("event_t_ns", u64_column(py, rec.events.iter().map(|e| e.t_ns)))?;
    out.set_item("event_kind", u32_column(py, rec.events.iter().map(|e| e.kind as u32)))?;
    out.set_item("event_arg", u32_column(py, rec.events.iter().map(|e| e.arg)))?;
    out.set_item("lost_events", rec.lost_events)?;
    out.set_item("program_start_ns", rec.program_start_ns)?;
    out.set_item("program_exit_ns", rec.program_exit_ns)?;
    out.set_item("exit_code", rec.exit_code)?;
    let end = match rec.end {
        Some(PointEnd::Jobs) => "jobs",
        Some(PointEnd::Exited) => "exited",
        Some(PointEnd::Limit) => "limit",
        Some(PointEnd::Interrupted) | None => "interrupted",
    };
    out.set_item("end", if interrupted { "interrupted" } else { end })?;
    out.set_item("load_lines", rec.load_lines)?;
    out.set_item("notices", rec.notices)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(machine_line_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(pmu_present, m)?)?;
    m.add_function(wrap_pyfunction!(profile_point, m)?)?;
    Ok(())
}
