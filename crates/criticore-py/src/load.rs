//! Binding of the load generator (`criticore_rt::workload::load`): `criticore load`
//! runs its hot loop here, with the GIL released.

use crate::{option_error, u64_column};
use criticore_rt::os::counter::perf;
use criticore_rt::os::counter::Counter;
use criticore_rt::os::counter_page::CounterPage;
use criticore_rt::os::launch::pin_current_thread;
use criticore_rt::workload::load::{self, LoadSpec, StopOnSignals, STOP};
use criticore_rt::workload::sizing_cache::SizingCache;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::Ordering;

/// Run the microbenchmark of blin-bandwidth-monitor §3.1 in this thread.
/// `options`: reads (0-10), delay, bandwidth (bytes/s, paced), duration_ns,
/// buffer_bytes, line_bytes, interval_ns, fresh_pages, pattern (stream or
/// random), cpu, count (a perf
/// event counted on this thread over the run: "auto" = LLC misses, reads and
/// write-backs, where there is a PMU, else nothing; "none"; or an event).
/// `on_progress(elapsed_ns, lines, last_interval_lines) -> bool` about every
/// 200 ms (False stops). SIGINT/SIGTERM end the run cleanly.
/// Returns (summary dict, interval columns dict).
#[pyfunction]
#[pyo3(signature = (options, on_progress=None))]
pub fn load_run<'py>(py: Python<'py>, options: &Bound<'py, PyDict>, on_progress: Option<PyObject>) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let get = |key: &str| options.get_item(key).ok().flatten().filter(|v| !v.is_none());
    let mut o = load::LoadOptions {
        reads: get("reads").map(|v| v.extract()).transpose()?.unwrap_or(0),
        delay: get("delay").map(|v| v.extract()).transpose()?.unwrap_or(0),
        bandwidth_bytes_per_s: get("bandwidth").map(|v| v.extract()).transpose()?,
        duration_ns: get("duration_ns").map(|v| v.extract()).transpose()?,
        buffer_bytes: get("buffer_bytes").map(|v| v.extract()).transpose()?,
        line_bytes: get("line_bytes").map(|v| v.extract()).transpose()?,
        interval_ns: get("interval_ns").map(|v| v.extract()).transpose()?,
        fresh_pages: get("fresh_pages").map(|v| v.extract()).transpose()?.unwrap_or(false),
        ..Default::default()
    };
    if let Some(p) = get("pattern").map(|v| v.extract::<String>()).transpose()? {
        o.pattern(&p).map_err(|e| option_error("criticore load", "--pattern", e))?;
    }
    o.cpu = get("cpu").map(|v| v.extract()).transpose()?;
    let (spec, page) = o.prepare().map_err(|(field, reason)| option_error("criticore load", &field, reason))?;
    let count: String = get("count").map(|v| v.extract()).transpose()?.unwrap_or_else(|| "auto".into());
    let event = match count.as_str() {
        "none" => None,
        "auto" => perf::pmu_present().then(|| "llc-misses".to_string()),
        e => Some(e.to_string()),
    };
    let mut counter = match &event {
        None => None,
        Some(e) => {
            let spec = perf::parse_event(e).map_err(|err| option_error("criticore load", "--count", err.to_string()))?;
            Some(perf::open(&spec, perf::Target::this_thread(), false).map_err(|err| option_error("criticore load", "--count", err.to_string()))?)
        }
    };
    let start_counts = match counter.as_mut() {
        Some(c) => Some(c.read().map_err(|err| option_error("criticore load", "--count", err.to_string()))?),
        None => None,
    };
    let result = py.allow_threads(|| {
        let _guard = StopOnSignals::install();
        let mut last = 0u64;
        let mut lines = 0u64;
        load::run(&spec, page.as_ref(), &STOP, |i| {
            lines += i.reads + i.writes;
            let elapsed = i.start_ns + spec.interval_ns;
            if let Some(cb) = &on_progress {
                if elapsed - last >= 200_000_000 {
                    last = elapsed;
                    let keep = Python::with_gil(|py| cb.call1(py, (elapsed, lines, i.reads + i.writes)).and_then(|r| r.extract::<bool>(py)));
                    if !matches!(keep, Ok(true)) {
                        STOP.store(true, Ordering::Relaxed);
                    }
                }
            }
        })
    });
    let report = result.map_err(|e| option_error("criticore load", "--buffer", e.to_string()))?;
    let summary = PyDict::new(py);
    summary.set_item("reads", report.reads)?;
    summary.set_item("writes", report.writes)?;
    summary.set_item("elapsed_ns", report.elapsed_ns)?;
    summary.set_item("stopped", report.stopped)?;
    summary.set_item("passes", report.passes)?;
    summary.set_item("forgiven_lines", report.forgiven_lines)?;
    summary.set_item("line_bytes", spec.line_bytes)?;
    summary.set_item("buffer_bytes", spec.buffer_bytes)?;
    summary.set_item("counter_page", page.as_ref().map(|p| p.path().display().to_string()))?;
    // What the kernel counted for this thread over the run (hardware counts
    // where there is a PMU), beside the lines the loop counted itself.
    let counted = match (counter.as_mut(), start_counts) {
        (Some(c), Some(c0)) => {
            let c1 = c.read().map_err(|err| option_error("criticore load", "--count", err.to_string()))?;
            let d = PyDict::new(py);
            d.set_item("event", c.describe())?;
            d.set_item("reads", c1.reads - c0.reads)?;
            d.set_item("writes", c1.writes - c0.writes)?;
            Some(d)
        }
        _ => None,
    };
    summary.set_item("counted", counted)?;
    let cols = PyDict::new(py);
    cols.set_item("start_ns", u64_column(py, report.intervals.iter().map(|i| i.start_ns)))?;
    cols.set_item("reads", u64_column(py, report.intervals.iter().map(|i| i.reads)))?;
    cols.set_item("writes", u64_column(py, report.intervals.iter().map(|i| i.writes)))?;
    Ok((summary, cols))
}

/// Loaded latency (`criticore load --sweep`): a pointer-chasing victim on
/// `victim_cpu` against one load per CPU in `load_cpus` (reads of 10, delay).
/// Returns (ns per access, bytes/s of all loads together).
#[pyfunction]
#[pyo3(signature = (victim_cpu, load_cpus, reads, delay, duration_ns, buffer_bytes=None))]
pub fn loaded_latency(py: Python<'_>, victim_cpu: usize, load_cpus: Vec<usize>, reads: u32, delay: u64, duration_ns: u64, buffer_bytes: Option<usize>) -> PyResult<(f64, f64)> {
    let spec = LoadSpec::new(reads.min(load::LINES_PER_ITERATION), delay);
    if let Err((field, reason)) = spec.check() {
        return Err(option_error("criticore load", &format!("--{field}"), reason));
    }
    let buffer = buffer_bytes.unwrap_or(spec.buffer_bytes);
    let r = py.allow_threads(|| criticore_rt::workload::chase::loaded_latency(victim_cpu, &load_cpus, &spec, buffer, duration_ns));
    let r = r.map_err(|e| option_error("criticore load", "--cpu", e.to_string()))?;
    Ok((r.latency_ns, r.load_bytes_per_s))
}

/// Periodic mode: run task `task` of the file as a real periodic process in
/// this thread (`criticore_rt::workload::periodic`). `options`: jobs, duration_ns, cpu.
/// `on_job(job, response_ns, deadline_missed) -> bool` per job (False stops).
/// Returns (notes list, job columns dict in the simulator's job-record names,
/// the PET each job runs, ns).
#[pyfunction]
#[pyo3(signature = (data, file, task, options, on_job=None))]
pub fn load_periodic<'py>(py: Python<'py>, data: &[u8], file: &str, task: &str, options: &Bound<'py, PyDict>, on_job: Option<PyObject>) -> PyResult<(Vec<String>, Bound<'py, PyDict>, Option<u64>)> {
    use criticore_rt::workload::periodic::{self, JobPlan};
    let system = crate::parse(data, file, None)?;
    let get = |key: &str| options.get_item(key).ok().flatten().filter(|v| !v.is_none());
    let index = system.tasks.iter().position(|t| t.name == task).ok_or_else(|| option_error(file, "--task", format!("no task named \"{task}\"")))?;
    let t = &system.tasks[index];
    // The engine's PET and phases (the simulator runs the same).
    let job = JobPlan::of(&system, index).map_err(|e| option_error(file, &e.field, e.reason))?;
    if let Some(cpu) = get("cpu").map(|v| v.extract::<usize>()).transpose()?.or(t.core) {
        pin_current_thread(&[cpu]).map_err(|e| option_error(file, "--cpu", e))?;
    }
    // Set-up (buffer, calibration) comes before a held common start.
    let page = CounterPage::from_env_waiting().transpose().map_err(|e| option_error(file, "CRITICORE_COUNTER", format!("cannot attach the counter page: {e}")))?;
    let jobs: Option<u64> = get("jobs").map(|v| v.extract()).transpose()?;
    let duration_ns: Option<u64> = get("duration_ns").map(|v| v.extract()).transpose()?;
    let result = py.allow_threads(|| -> std::io::Result<(Vec<String>, Vec<periodic::JobRecord>)> {
        let _guard = StopOnSignals::install();
        let mut walker = job.walker()?;
        let (spec, notes) = job.prepare(&mut walker, jobs, duration_ns, &mut SizingCache::open());
        let records = periodic::run(&spec, &mut walker, page.as_ref(), &STOP, |r| {
            if let Some(cb) = &on_job {
                let keep = Python::with_gil(|py| cb.call1(py, (r.job, r.finish_ns - r.release_ns, r.finish_ns > r.deadline_ns)).and_then(|x| x.extract::<bool>(py)));
                if !matches!(keep, Ok(true)) {
                    STOP.store(true, Ordering::Relaxed);
                }
            }
        })?;
        Ok((notes, records))
    });
    let (notes, records) = result.map_err(|e| option_error(file, &format!("task \"{task}\""), e.to_string()))?;
    let cols = PyDict::new(py);
    cols.set_item("job", crate::u32_column(py, records.iter().map(|r| r.job)))?;
    cols.set_item("release_ns", u64_column(py, records.iter().map(|r| r.release_ns)))?;
    cols.set_item("start_ns", u64_column(py, records.iter().map(|r| r.start_ns)))?;
    cols.set_item("finish_ns", u64_column(py, records.iter().map(|r| r.finish_ns)))?;
    cols.set_item("deadline_ns", u64_column(py, records.iter().map(|r| r.deadline_ns)))?;
    cols.set_item("exec_ns", u64_column(py, records.iter().map(|r| r.exec_ns)))?;
    cols.set_item("memory_requests", u64_column(py, records.iter().map(|r| r.memory_requests)))?;
    // A background task has no jobs, so no PET per job.
    Ok((notes, cols, (!job.background).then_some(job.pet_ns)))
}

/// Whether the last load run (either mode) was stopped by a Ctrl-C (SIGINT).
#[pyfunction]
pub fn load_stopped_by_ctrl_c() -> bool {
    load::stopped_by_ctrl_c()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load_periodic, m)?)?;
    m.add_function(wrap_pyfunction!(load_run, m)?)?;
    m.add_function(wrap_pyfunction!(load_stopped_by_ctrl_c, m)?)?;
    m.add_function(wrap_pyfunction!(loaded_latency, m)?)?;
    Ok(())
}
