//! Bindings of the Linux runtime (`criticore-rt`): the regulation session
//! and the tiny counting/phase/job API for Python programs
//! (`criticore.instrument`). The watchdog is native (`criticore-watchdog`).

use crate::{option_error, parse, u32_column, u64_column};

fn f64_column<'py>(py: Python<'py>, values: impl Iterator<Item = f64>) -> Bound<'py, pyo3::types::PyBytes> {
    pyo3::types::PyBytes::new(py, &values.flat_map(f64::to_le_bytes).collect::<Vec<u8>>())
}
use criticore::model::overhead::parse_overhead_table;
use criticore::model::RegulationKind;
use criticore_rt::os::counter_page::{CounterPage, EventKind};
use criticore_rt::loops::{percentile, EndReason, Snapshot};
use criticore_rt::session::{self, CounterChoice, Options, ThrottleChoice};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::OnceLock;

fn snapshot_dict<'py>(py: Python<'py>, s: &Snapshot) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("elapsed_ns", s.elapsed_ns)?;
    d.set_item("periods", s.periods)?;
    let groups: Vec<Bound<'py, PyDict>> = s
        .groups
        .iter()
        .map(|g| {
            let x = PyDict::new(py);
            x.set_item("name", &g.name)?;
            x.set_item("budget", g.budget)?;
            x.set_item("used_last_period", g.used_last_period)?;
            x.set_item("throttled_ns", g.throttled_ns)?;
            x.set_item("events_per_s", g.events_per_s)?;
            x.set_item("stopped", g.stopped)?;
            Ok(x)
        })
        .collect::<PyResult<_>>()?;
    d.set_item("groups", groups)?;
    Ok(d)
}

/// Regulate real processes as the file says. `options` is a dict:
/// mode, duration_ns, period_ns, poll_ns, counter ("auto"|"shm"|event),
/// throttle ("signal"|"freezer"), attach [(pid, task)], command (task, argv),
/// watchdog argv (empty: the native criticore-watchdog in the package's
/// _bin/ or $CRITICORE_WATCHDOG), criticore argv, output path, fifo_priority, snapshot_ns.
/// `on_snapshot(dict) -> bool` is called from time to time (False stops).
/// Returns (summary dict, period columns dict).
#[pyfunction]
#[pyo3(signature = (data, file, options, on_snapshot=None))]
pub fn regulate<'py>(
    py: Python<'py>,
    data: &[u8],
    file: &str,
    options: &Bound<'py, PyDict>,
    on_snapshot: Option<PyObject>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let system = parse(data, file, None)?;
    let get = |key: &str| options.get_item(key).ok().flatten().filter(|v| !v.is_none());
    let mode = match get("mode") {
        None => None,
        Some(v) => {
            let name: String = v.extract()?;
            Some(RegulationKind::parse(&name).ok_or_else(|| option_error(file, "--mode", format!("unknown mode \"{name}\" (expected memguard, mcti, mrs or monitor)")))?)
        }
    };
    let counter = match get("counter").map(|v| v.extract::<String>()).transpose()?.as_deref() {
        None | Some("auto") => CounterChoice::Auto,
        Some("shm") => CounterChoice::Shm,
        Some(event) => CounterChoice::Perf(event.to_string()),
    };
    let throttle = match get("throttle").map(|v| v.extract::<String>()).transpose()?.as_deref() {
        None | Some("signal") => ThrottleChoice::Signal,
        Some("freezer") => ThrottleChoice::Freezer,
        Some(other) => return Err(option_error(file, "--throttle", format!("unknown throttle \"{other}\" (expected signal or freezer)"))),
    };
    let opts = Options {
        mode,
        duration_ns: get("duration_ns").map(|v| v.extract()).transpose()?,
        period_ns: get("period_ns").map(|v| v.extract()).transpose()?,
        poll_ns: get("poll_ns").map(|v| v.extract()).transpose()?,
        counter,
        throttle,
        attach: get("attach").map(|v| v.extract()).transpose()?.unwrap_or_default(),
        command: get("command").map(|v| v.extract()).transpose()?,
        watchdog: get("watchdog").map(|v| v.extract()).transpose()?.unwrap_or_default(),
        criticore: get("criticore").map(|v| v.extract()).transpose()?.unwrap_or_default(),
        output: get("output").map(|v| v.extract::<String>()).transpose()?.map(Into::into),
        fifo_priority: get("fifo_priority").map(|v| v.extract()).transpose()?,
        snapshot_ns: get("snapshot_ns").map(|v| v.extract()).transpose()?.unwrap_or(200_000_000),
        lead: get("lead").map(|v| v.extract()).transpose()?.unwrap_or(true),
        regulator_cpu: get("regulator_cpu").map(|v| v.extract()).transpose()?,
        job_log_dir: get("job_log_dir").map(|v| v.extract::<String>()).transpose()?.map(Into::into),
        overhead_table: match get("overhead_table") {
            None => None,
            Some(text) => {
                let text: String = text.extract()?;
                let name: String = get("overhead_file").map(|v| v.extract()).transpose()?.unwrap_or_else(|| "(overhead table)".into());
                Some(parse_overhead_table(&text, &name).map_err(crate::to_py)?)
            }
        },
    };
    // A Ctrl-C that came before the session took the signals over.
    py.check_signals()?;
    let mut ctrl_c = false;
    let result = py.allow_threads(|| {
        session::run(&system, &opts, |s| match &on_snapshot {
            None => true,
            Some(cb) => Python::with_gil(|py| {
                let keep = snapshot_dict(py, s).and_then(|d| cb.call1(py, (d,))).and_then(|r| r.extract::<bool>(py));
                // A failing view must not end the run; a Ctrl-C in Python does.
                match keep {
                    Ok(k) => k,
                    Err(e) => {
                        ctrl_c |= e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py);
                        !ctrl_c
                    }
                }
            }),
        })
    });
    let mut r = result.map_err(|e| option_error(file, &e.field, e.reason))?;
    // Stopped by a Ctrl-C that reached the interpreter: interrupted, as any other.
    if ctrl_c && r.report.end == EndReason::Stopped {
        r.report.end = EndReason::Interrupted;
    }
    let summary = PyDict::new(py);
    summary.set_item("mode", r.mode)?;
    summary.set_item("counter", &r.counter)?;
    summary.set_item("throttle", &r.throttle)?;
    summary.set_item("period_ns", r.period_ns)?;
    summary.set_item("elapsed_ns", r.report.elapsed_ns)?;
    summary.set_item("cpu_ns", r.report.cpu_ns)?;
    summary.set_item("signals", r.report.signals)?;
    summary.set_item("throttle_errors", r.report.throttle_errors)?;
    summary.set_item("overload_periods", r.report.overload_periods)?;
    summary.set_item(
        "end",
        match r.report.end {
            EndReason::Duration => "duration",
            EndReason::AllExited => "all processes ended",
            EndReason::Interrupted => "interrupted",
            EndReason::Stopped => "stopped",
        },
    )?;
    summary.set_item("notices", &r.notices)?;
    summary.set_item("tasks_failed", r.tasks_failed)?;
    summary.set_item("warnings", &r.report.warnings)?;
    let groups: Vec<Bound<'py, PyDict>> = r
        .groups
        .iter()
        .zip(&r.processes)
        .map(|(g, procs)| {
            let d = PyDict::new(py);
            d.set_item("name", &g.name)?;
            d.set_item("budget", g.budget)?;
            d.set_item("criticality", g.criticality)?;
            d.set_item("processes", procs.clone())?;
            Ok(d)
        })
        .collect::<PyResult<_>>()?;
    summary.set_item("groups", groups)?;
    let mut lateness: Vec<u64> = r.report.periods.iter().filter(|p| p.group == 0 && p.period > 0).map(|p| p.lateness_ns).collect();
    let mut reaction: Vec<u64> = r.report.periods.iter().filter(|p| p.exhausted_ns > 0).map(|p| p.reaction_ns).collect();
    summary.set_item("lateness_p50_ns", percentile(&mut lateness, 50.0))?;
    summary.set_item("lateness_p99_ns", percentile(&mut lateness, 99.0))?;
    summary.set_item("reaction_p50_ns", percentile(&mut reaction, 50.0))?;
    summary.set_item("reaction_p99_ns", percentile(&mut reaction, 99.0))?;
    // End to end (the crossing timestamped by the program, to the stop issued): counter pages only.
    let mut e2e: Vec<u64> = r.report.periods.iter().filter(|p| p.reaction_e2e_ns > 0).map(|p| p.reaction_e2e_ns).collect();
    summary.set_item("reaction_e2e_stops", e2e.len())?;
    summary.set_item("reaction_e2e_p50_ns", percentile(&mut e2e, 50.0))?;
    summary.set_item("reaction_e2e_p99_ns", percentile(&mut e2e, 99.0))?;
    let p = &r.report.periods;
    let cols = PyDict::new(py);
    cols.set_item("period", u64_column(py, p.iter().map(|x| x.period)))?;
    cols.set_item("group", u32_column(py, p.iter().map(|x| x.group)))?;
    cols.set_item("start_ns", u64_column(py, p.iter().map(|x| x.start_ns)))?;
    cols.set_item("lateness_ns", u64_column(py, p.iter().map(|x| x.lateness_ns)))?;
    cols.set_item("budget", u64_column(py, p.iter().map(|x| x.budget)))?;
    cols.set_item("used", u64_column(py, p.iter().map(|x| x.used)))?;
    cols.set_item("overshoot", u64_column(py, p.iter().map(|x| x.overshoot)))?;
    cols.set_item("exhausted_ns", u64_column(py, p.iter().map(|x| x.exhausted_ns)))?;
    cols.set_item("reaction_ns", u64_column(py, p.iter().map(|x| x.reaction_ns)))?;
    cols.set_item("reaction_e2e_ns", u64_column(py, p.iter().map(|x| x.reaction_e2e_ns)))?;
    cols.set_item("throttled_ns", u64_column(py, p.iter().map(|x| x.throttled_ns)))?;
    cols.set_item("lead", u64_column(py, p.iter().map(|x| x.lead)))?;
    cols.set_item("overload", u32_column(py, p.iter().map(|x| u32::from(x.overload))))?;
    if let Some((samples, jobs)) = &r.monitor {
        let m = PyDict::new(py);
        m.set_item("job", u32_column(py, samples.iter().map(|x| x.job)))?;
        m.set_item("index", u32_column(py, samples.iter().map(|x| x.index)))?;
        m.set_item("end_ns", u64_column(py, samples.iter().map(|x| x.end_ns)))?;
        m.set_item("length_ns", u64_column(py, samples.iter().map(|x| x.length_ns)))?;
        m.set_item("phase", u32_column(py, samples.iter().map(|x| x.phase)))?;
        m.set_item("bytes", u64_column(py, samples.iter().map(|x| x.bytes)))?;
        m.set_item("sum", f64_column(py, samples.iter().map(|x| x.sum)))?;
        m.set_item("suspends", u32_column(py, samples.iter().map(|x| x.suspends as u32)))?;
        summary.set_item("monitor_samples", m)?;
        let j = PyDict::new(py);
        j.set_item("job", u32_column(py, jobs.iter().map(|x| x.job)))?;
        j.set_item("begin_ns", u64_column(py, jobs.iter().map(|x| x.begin_ns)))?;
        j.set_item("end_ns", u64_column(py, jobs.iter().map(|x| x.end_ns)))?;
        j.set_item("by_deadline", u32_column(py, jobs.iter().map(|x| x.by_deadline as u32)))?;
        j.set_item("suspended_ns", u64_column(py, jobs.iter().map(|x| x.suspended_ns)))?;
        j.set_item("samples", u32_column(py, jobs.iter().map(|x| x.samples)))?;
        j.set_item("sum", f64_column(py, jobs.iter().map(|x| x.sum)))?;
        summary.set_item("monitor_jobs", j)?;
    }
    Ok((summary, cols))
}

/// Undo what dead runs left (`criticore regulate --clean`): one line per
/// thing undone (docs/runtime.md, "Nothing is left stopped or frozen").
#[pyfunction]
pub fn regulate_clean(py: Python<'_>) -> Vec<String> {
    py.allow_threads(session::clean_dead_runs)
}

static PAGE: OnceLock<Result<Option<CounterPage>, String>> = OnceLock::new();

/// The page of `CRITICORE_COUNTER`; none without the variable, an OSError
/// if it names a page that cannot be attached (as the C header's -1).
fn page() -> PyResult<Option<&'static CounterPage>> {
    let p = PAGE.get_or_init(|| CounterPage::from_env().transpose().map_err(|e| format!("{}: {e}", criticore_rt::os::counter_page::ENV)));
    p.as_ref().map(|p| p.as_ref()).map_err(|e| pyo3::exceptions::PyOSError::new_err(e.clone()))
}

/// Whether this process was started with a counter page (under `criticore regulate` or `profile`).
#[pyfunction]
pub fn instrument_attached() -> PyResult<bool> {
    Ok(page()?.is_some())
}

/// Count cache lines this program read and wrote (no-op without a page).
#[pyfunction]
#[pyo3(signature = (reads, writes=0))]
pub fn instrument_count(reads: u64, writes: u64) -> PyResult<()> {
    if let Some(p) = page()? {
        p.count(reads, writes);
    }
    Ok(())
}

/// Mark a job boundary or a phase: kind "job_begin", "job_end" or "phase".
#[pyfunction]
pub fn instrument_mark(kind: &str, arg: u32) -> PyResult<()> {
    let kind = match kind {
        "job_begin" => EventKind::JobBegin,
        "job_end" => EventKind::JobEnd,
        "phase" => EventKind::Phase,
        other => return Err(PyValueError::new_err(format!("unknown mark {other:?} (expected job_begin, job_end or phase)"))),
    };
    if let Some(p) = page()? {
        p.mark(kind, arg);
    }
    Ok(())
}

/// Take part in the run's common start: the runtime waits for this
/// program's set-up before it launches the next or starts regulating.
#[pyfunction]
pub fn instrument_will_wait() -> PyResult<()> {
    if let Some(p) = page()? {
        p.will_start();
        p.attach_writer();
    }
    Ok(())
}

/// Set up: wait for the common start; time 0 on CLOCK_MONOTONIC (ns), or
/// now when no start is held (no page, or a run that holds none).
#[pyfunction]
pub fn instrument_wait_start(py: Python<'_>) -> PyResult<u64> {
    let Some(p) = page()? else { return Ok(criticore_rt::os::counter_page::now_ns()) };
    let stop = std::sync::atomic::AtomicBool::new(false);
    Ok(py.allow_threads(|| p.wait_start(&stop)).unwrap_or_else(criticore_rt::os::counter_page::now_ns))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(regulate, m)?)?;
    m.add_function(wrap_pyfunction!(regulate_clean, m)?)?;
    m.add_function(wrap_pyfunction!(instrument_attached, m)?)?;
    m.add_function(wrap_pyfunction!(instrument_count, m)?)?;
    m.add_function(wrap_pyfunction!(instrument_mark, m)?)?;
    m.add_function(wrap_pyfunction!(instrument_wait_start, m)?)?;
    m.add_function(wrap_pyfunction!(instrument_will_wait, m)?)?;
    Ok(())
}
