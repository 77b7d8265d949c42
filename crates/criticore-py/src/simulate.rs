//! `simulate` and `simulate_many` (issue 13). The engine runs on a thread of
//! its own; this thread, the one holding Python, hands each batch of records
//! the engine streams to `on_batch`, reports progress to `on_progress` every
//! 50 ms and turns Ctrl-C into a stop: the engine ends where it is and the
//! result is marked partial. Memory stays bounded: a few batches in flight.

use crate::{conditioned, option_error, parse_conditioned, Input, Source, scheduler_kind, to_py, u32_column, u64_column};
use criticore::model::overhead::parse_overhead_table;
use criticore::model::{Level, RegulationKind, TaskSystem};
use criticore::sim::job::JobRecord;
use criticore::sim::memory::transaction::model::DEFAULT_QUANTUM_NS;
use criticore::sim::regulate::Interval;
use criticore::sim::sched::SchedulerKind;
use criticore::sim::sink::Sink;
use criticore::sim::trace::TraceWriter;
use criticore::sim::{self, ExecModel, MemoryKind, Segment, ServerSegment, SimConfig, Unfinished};
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

/// Records per batch handed to Python.
const BATCH_ROWS: usize = 1 << 16;
/// Trace text per batch.
const TRACE_CHUNK_BYTES: usize = 4 << 20;
/// Batches in flight: the engine waits when Python falls behind.
const IN_FLIGHT: usize = 4;
/// How often progress is reported and Ctrl-C looked for.
const POLL: Duration = Duration::from_millis(50);

/// What the engine streams, as the Python side receives it.
enum Batch {
    Jobs(Vec<JobRecord>),
    Unfinished(Vec<Unfinished>),
    Segments(Vec<Segment>),
    ServerSegments(Vec<ServerSegment>),
    /// Regulator state spans (stalled, overload, suspended, depleted).
    Intervals(Vec<Interval>),
    /// Index of the first bin, then per bin the requests of every core.
    Bandwidth(u64, Vec<f64>),
    Trace(String),
}

/// Progress and stop requests shared by the engine and the Python thread.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// Simulated ns reached (one run) or systems done (a batch).
    done: AtomicU64,
    /// Jobs finished.
    jobs: AtomicU64,
}

/// Batches records and sends them; keeps nothing else.
struct Streamer<'a> {
    tx: SyncSender<Batch>,
    jobs: Option<Vec<JobRecord>>,
    unfinished: Option<Vec<Unfinished>>,
    segments: Option<(Vec<Segment>, Vec<ServerSegment>)>,
    /// Kept with the segments: what a Gantt chart draws beside them.
    intervals: Option<Vec<Interval>>,
    bandwidth: Option<(u64, Vec<f64>)>,
    trace: Option<TraceWriter<'a>>,
}

impl Streamer<'_> {
    fn send(&self, batch: Batch) {
        // A receiver gone means the run is being abandoned; nothing to keep.
        let _ = self.tx.send(batch);
    }

    fn flush_trace(&mut self, min_bytes: usize) {
        if let Some(w) = self.trace.as_mut().filter(|w| w.pending() >= min_bytes) {
            let text = w.take();
            self.send(Batch::Trace(text));
        }
    }

    /// Send what is left and close the trace.
    fn finish(mut self) {
        if let Some(v) = self.jobs.take().filter(|v| !v.is_empty()) {
            self.send(Batch::Jobs(v));
        }
        if let Some(v) = self.unfinished.take().filter(|v| !v.is_empty()) {
            self.send(Batch::Unfinished(v));
        }
        if let Some((s, v)) = self.segments.take() {
            if !s.is_empty() {
                self.send(Batch::Segments(s));
            }
            if !v.is_empty() {
                self.send(Batch::ServerSegments(v));
            }
        }
        if let Some(v) = self.intervals.take().filter(|v| !v.is_empty()) {
            self.send(Batch::Intervals(v));
        }
        if let Some((first, rows)) = self.bandwidth.take().filter(|b| !b.1.is_empty()) {
            self.send(Batch::Bandwidth(first, rows));
        }
        if let Some(w) = self.trace.take() {
            self.send(Batch::Trace(w.finish()));
        }
    }
}

fn push<T>(buffer: &mut Vec<T>, item: T) -> Option<Vec<T>> {
    buffer.push(item);
    (buffer.len() >= BATCH_ROWS).then(|| std::mem::replace(buffer, Vec::with_capacity(BATCH_ROWS)))
}

impl Sink for Streamer<'_> {
    fn job(&mut self, r: &JobRecord) {
        if let Some(full) = self.jobs.as_mut().and_then(|b| push(b, *r)) {
            self.send(Batch::Jobs(full));
        }
        if let Some(w) = self.trace.as_mut() {
            w.job(r);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
    fn run_ends(&mut self, end_ns: u64) {
        if let Some(w) = self.trace.as_mut() {
            w.run_ends(end_ns);
        }
    }
    fn unfinished(&mut self, u: &Unfinished) {
        if let Some(full) = self.unfinished.as_mut().and_then(|b| push(b, *u)) {
            self.send(Batch::Unfinished(full));
        }
        if let Some(w) = self.trace.as_mut() {
            w.unfinished(u);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
    fn segment(&mut self, s: &Segment) {
        if let Some(full) = self.segments.as_mut().and_then(|b| push(&mut b.0, *s)) {
            self.send(Batch::Segments(full));
        }
        if let Some(w) = self.trace.as_mut() {
            w.segment(s);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
    fn work_span(&mut self, span: &criticore::sim::WorkSpan) {
        if let Some(w) = self.trace.as_mut() {
            w.work_span(span);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
    fn server_segment(&mut self, s: &ServerSegment) {
        if let Some(full) = self.segments.as_mut().and_then(|b| push(&mut b.1, *s)) {
            self.send(Batch::ServerSegments(full));
        }
        if let Some(w) = self.trace.as_mut() {
            w.server_segment(s);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
    fn interval(&mut self, i: &Interval) {
        if let Some(full) = self.intervals.as_mut().and_then(|b| push(b, *i)) {
            self.send(Batch::Intervals(full));
        }
        if let Some(w) = self.trace.as_mut() {
            w.interval(i);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
    fn bandwidth_bin(&mut self, index: u64, requests: &[f64]) {
        if let Some((first, rows)) = self.bandwidth.as_mut() {
            if rows.is_empty() {
                *first = index;
            }
            rows.extend_from_slice(requests);
            if rows.len() >= BATCH_ROWS * requests.len() {
                let full = (*first, std::mem::take(rows));
                self.send(Batch::Bandwidth(full.0, full.1));
            }
        }
        if let Some(w) = self.trace.as_mut() {
            w.bandwidth_bin(index, requests);
            self.flush_trace(TRACE_CHUNK_BYTES);
        }
    }
}

/// The batch as Python values: (kind, payload).
fn to_python<'py>(py: Python<'py>, batch: Batch) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    Ok(match batch {
        Batch::Jobs(r) => {
            let d = PyDict::new(py);
            d.set_item("task", u32_column(py, r.iter().map(|x| x.task)))?;
            d.set_item("job", u32_column(py, r.iter().map(|x| x.number)))?;
            d.set_item("core", u32_column(py, r.iter().map(|x| x.core)))?;
            d.set_item("release_ns", u64_column(py, r.iter().map(|x| x.release_ns)))?;
            d.set_item("start_ns", u64_column(py, r.iter().map(|x| x.start_ns)))?;
            d.set_item("finish_ns", u64_column(py, r.iter().map(|x| x.finish_ns)))?;
            d.set_item("deadline_ns", u64_column(py, r.iter().map(|x| x.deadline_ns)))?;
            d.set_item("exec_ns", u64_column(py, r.iter().map(|x| x.exec_ns)))?;
            d.set_item("preemptions", u32_column(py, r.iter().map(|x| x.preemptions)))?;
            d.set_item("migrations", u32_column(py, r.iter().map(|x| x.migrations)))?;
            d.set_item("memory_requests", u64_column(py, r.iter().map(|x| x.memory_requests)))?;
            d.set_item("memory_stall_ns", u64_column(py, r.iter().map(|x| x.memory_stall_ns)))?;
            ("jobs", d.into_any())
        }
        Batch::Unfinished(u) => {
            let d = PyDict::new(py);
            d.set_item("unfinished_task", u32_column(py, u.iter().map(|x| x.task)))?;
            d.set_item("unfinished_job", u32_column(py, u.iter().map(|x| x.number)))?;
            d.set_item("unfinished_release_ns", u64_column(py, u.iter().map(|x| x.release_ns)))?;
            d.set_item("unfinished_deadline_ns", u64_column(py, u.iter().map(|x| x.deadline_ns)))?;
            ("unfinished", d.into_any())
        }
        Batch::Segments(s) => {
            let d = PyDict::new(py);
            d.set_item("core", u32_column(py, s.iter().map(|x| x.core)))?;
            d.set_item("task", u32_column(py, s.iter().map(|x| x.task)))?;
            d.set_item("job", u32_column(py, s.iter().map(|x| x.number)))?;
            d.set_item("start_ns", u64_column(py, s.iter().map(|x| x.start_ns)))?;
            d.set_item("end_ns", u64_column(py, s.iter().map(|x| x.end_ns)))?;
            ("segments", d.into_any())
        }
        Batch::ServerSegments(v) => {
            let d = PyDict::new(py);
            d.set_item("server_core", u32_column(py, v.iter().map(|x| x.core)))?;
            d.set_item("server", u32_column(py, v.iter().map(|x| x.server)))?;
            d.set_item("server_start_ns", u64_column(py, v.iter().map(|x| x.start_ns)))?;
            d.set_item("server_end_ns", u64_column(py, v.iter().map(|x| x.end_ns)))?;
            ("server_segments", d.into_any())
        }
        Batch::Intervals(v) => {
            let d = PyDict::new(py);
            d.set_item("interval_core", u32_column(py, v.iter().map(|x| x.core)))?;
            d.set_item("interval_state", v.iter().map(|x| x.state).collect::<Vec<_>>())?;
            d.set_item("interval_start_ns", u64_column(py, v.iter().map(|x| x.start_ns)))?;
            d.set_item("interval_end_ns", u64_column(py, v.iter().map(|x| x.end_ns)))?;
            ("intervals", d.into_any())
        }
        Batch::Bandwidth(first, rows) => {
            let bytes = PyBytes::new(py, &rows.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
            ("bandwidth", (first, bytes).into_pyobject(py)?.into_any())
        }
        Batch::Trace(text) => ("trace", text.into_pyobject(py)?.into_any()),
    })
}

/// Run `work` on its own thread while this one delivers its batches, reports
/// progress and watches for Ctrl-C. Returns its result and whether Ctrl-C
/// stopped it; any other Python error (from a callback) is raised once the
/// engine has stopped.
fn drive<T: Send>(
    py: Python<'_>,
    on_batch: Option<Py<PyAny>>,
    on_progress: Option<Py<PyAny>>,
    work: impl FnOnce(SyncSender<Batch>, &Shared) -> T + Send,
) -> PyResult<(T, bool)> {
    let shared = Shared::default();
    let (tx, rx): (SyncSender<Batch>, Receiver<Batch>) = sync_channel(IN_FLIGHT);
    let (out, failure, interrupted) = py.allow_threads(move || {
        let mut failure: Option<PyErr> = None;
        let mut interrupted = false;
        let out = std::thread::scope(|scope| {
            let shared = &shared;
            let worker = std::thread::Builder::new()
                .name("criticore-engine".into())
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || work(tx, shared))
                .expect("spawn the engine thread");
            let mut last = Instant::now();
            loop {
                let message = rx.recv_timeout(POLL);
                let ended = matches!(message, Err(RecvTimeoutError::Disconnected));
                let poll = ended || last.elapsed() >= POLL;
                if message.is_err() && !poll {
                    continue;
                }
                Python::with_gil(|py| {
                    let mut errors: Vec<PyErr> = Vec::new();
                    // After a failure batches are dropped; after Ctrl-C they are still
                    // delivered, so that files hold everything simulated.
                    if let (Ok(batch), Some(callback), true) = (message, on_batch.as_ref(), failure.is_none()) {
                        if let Err(e) = to_python(py, batch).and_then(|(kind, payload)| callback.call1(py, (kind, payload))) {
                            errors.push(e);
                        }
                    }
                    if poll {
                        last = Instant::now();
                        if let Err(e) = py.check_signals() {
                            errors.push(e);
                        }
                        if let Some(callback) = on_progress.as_ref().filter(|_| !ended) {
                            if let Err(e) = callback.call1(py, (shared.done.load(Relaxed), shared.jobs.load(Relaxed))) {
                                errors.push(e);
                            }
                        }
                    }
                    for e in errors {
                        shared.stop.store(true, Relaxed);
                        if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                            interrupted = true;
                        } else if failure.is_none() {
                            failure = Some(e);
                        }
                    }
                });
                if ended {
                    break;
                }
            }
            worker.join().expect("the engine thread does not panic")
        });
        (out, failure, interrupted)
    });
    match failure {
        Some(e) => Err(e),
        None => Ok((out, interrupted)),
    }
}

/// The fields of `criticore.simulate.SimOptions` (python/criticore/simulate/options.py),
/// read by attribute: the one options object from the CLI and the library to
/// the engine's `SimConfig`. Durations are ns, already checked positive there.
#[derive(FromPyObject)]
pub(crate) struct SimOptions {
    duration_ns: u64,
    scheduler: Option<String>,
    seed: u64,
    exec_level: String,
    best_case_fraction: Option<f64>,
    drawn: bool,
    regulator: Option<String>,
    memory: bool,
    memory_model: Option<String>,
    quantum_ns: Option<u64>,
    bin_ns: Option<u64>,
    jobs: bool,
    segments: bool,
    trace: bool,
    exec_ns: Option<std::collections::HashMap<String, Vec<u64>>>,
}

/// `exec_ns` by task index (SimConfig::given_exec_ns), or an error naming an unknown task.
fn given_exec(system: &TaskSystem, file: &str, given: &Option<std::collections::HashMap<String, Vec<u64>>>) -> PyResult<Vec<Vec<u64>>> {
    let mut out = vec![Vec::new(); system.tasks.len()];
    for (name, times) in given.iter().flatten() {
        let i = system.tasks.iter().position(|t| &t.name == name).ok_or_else(|| option_error(file, "exec_ns", format!("no task named \"{name}\"")))?;
        out[i] = times.clone();
    }
    Ok(out)
}

/// Options shared by one run and a batch, checked once.
struct RunOptions {
    scheduler: Option<String>,
    config: SimConfig,
}

fn run_options(file: &str, o: &SimOptions) -> PyResult<RunOptions> {
    let exec_level = o.exec_level.as_str();
    let level = Level::parse(exec_level)
        .ok_or_else(|| option_error(file, "--exec-level", format!("unknown level \"{exec_level}\" (expected A, B, C or D)")))?;
    if o.duration_ns == 0 {
        return Err(option_error(file, "--duration", "must be positive"));
    }
    let exec = match o.best_case_fraction {
        None if o.drawn => ExecModel::Drawn(level),
        Some(_) if o.drawn => return Err(option_error(file, "--drawn", "draws each runnable from its `draw`; --best-case draws every job uniformly: choose one")),
        None => ExecModel::Pet(level),
        Some(f) if (0.0..=1.0).contains(&f) => ExecModel::Uniform { level, best_case_fraction: f },
        Some(f) => return Err(option_error(file, "--best-case", format!("must be between 0 and 1, got {f}"))),
    };
    let regulation = match o.regulator.as_deref() {
        None => None,
        Some("none") => Some(None),
        Some(name) => Some(Some(RegulationKind::parse(name).ok_or_else(|| {
            let names: Vec<_> = RegulationKind::NAMES.iter().map(|(n, _)| *n).collect();
            option_error(file, "--regulator", format!("unknown regulator \"{name}\" (expected none, {})", names.join(", ")))
        })?)),
    };
    if o.quantum_ns == Some(0) {
        return Err(option_error(file, "--quantum", "must be positive"));
    }
    let memory_kind = match o.memory_model.as_deref().unwrap_or("fluid") {
        "fluid" => {
            if o.quantum_ns.is_some() {
                return Err(option_error(file, "--quantum", "only the transaction model runs in quanta (add --memory transaction)"));
            }
            MemoryKind::Fluid
        }
        "transaction" => MemoryKind::Transaction { quantum_ns: o.quantum_ns.unwrap_or(DEFAULT_QUANTUM_NS) },
        other => return Err(option_error(file, "--memory", format!("unknown memory model \"{other}\" (expected {})", MemoryKind::NAMES.join(" or ")))),
    };
    let mut config = SimConfig::new(o.duration_ns);
    config.seed = o.seed;
    config.exec = exec;
    config.memory = o.memory;
    config.memory_kind = memory_kind;
    config.regulation = regulation;
    config.record_jobs = o.jobs || o.trace;
    config.record_segments = o.trace || o.segments;
    config.bandwidth_bin_ns = o.bin_ns;
    Ok(RunOptions { scheduler: o.scheduler.clone(), config })
}

/// Simulate a task-system file, streaming what is asked for to
/// `on_batch(kind, payload)` as it is produced: "jobs", "unfinished",
/// "segments", "server_segments" (dicts of little-endian columns),
/// "intervals" (with the segments: the regulator's state spans, their
/// `interval_state` a list of names, the rest columns),
/// "bandwidth" ((first bin, f64 bytes of bins × cores)) and "trace" (text
/// chunks of the Perfetto JSON, in order). `on_progress(simulated_ns, jobs)`
/// is called every 50 ms. Returns (report JSON, interrupted): Ctrl-C stops
/// the run and the report covers the time reached (`partial`).
#[pyfunction]
#[pyo3(signature = (data, file, options, format=None, overhead_table=None, overhead_file=None, on_batch=None, on_progress=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    py: Python<'_>,
    data: Source<'_>,
    file: &str,
    options: SimOptions,
    format: Option<&str>,
    overhead_table: Option<&str>,
    overhead_file: Option<&str>,
    on_batch: Option<Py<PyAny>>,
    on_progress: Option<Py<PyAny>>,
) -> PyResult<(String, bool)> {
    let system = parse_conditioned(&data, file, format)?;
    let RunOptions { scheduler, mut config } = run_options(file, &options)?;
    config.given_exec_ns = given_exec(&system, file, &options.exec_ns)?;
    let (jobs, trace, segments, bandwidth_bin_ns) = (options.jobs, options.trace, options.segments, options.bin_ns);
    let drawn_seed = matches!(config.exec, ExecModel::Drawn(_)).then_some(config.seed);
    let kind = scheduler_kind(&system, file, scheduler.as_deref())?;
    config.overhead_table = match overhead_table {
        None => None,
        Some(text) => Some(parse_overhead_table(text, overhead_file.unwrap_or("(overhead table)")).map_err(to_py)?),
    };
    let (result, _) = drive(py, on_batch, on_progress, |tx, shared| {
        let mut streamer = Streamer {
            tx,
            jobs: jobs.then(Vec::new),
            unfinished: jobs.then(Vec::new),
            segments: segments.then(Default::default),
            intervals: segments.then(Vec::new),
            bandwidth: bandwidth_bin_ns.map(|_| (0, Vec::new())),
            trace: trace.then(|| TraceWriter::new(&system, bandwidth_bin_ns.unwrap_or(0)).drawn(drawn_seed)),
        };
        let mut progress = |now_ns: u64, finished: u64| {
            shared.done.store(now_ns, Relaxed);
            shared.jobs.store(finished, Relaxed);
            !shared.stop.load(Relaxed)
        };
        let result = sim::simulate_into(&system, kind, &config, &mut streamer, &mut progress);
        if let (Ok(r), Some(w)) = (&result, streamer.trace.as_mut()) {
            w.chain_flows(&r.chains);
        }
        streamer.finish();
        result
    })?;
    let result = result.map_err(|e| to_py(e.in_file(file)))?;
    let summary = serde_json::to_string(&sim::report::report(&system, &result)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((summary, result.partial))
}

/// One row of a batch: a system's summary.
#[derive(serde::Serialize)]
struct Row<'a> {
    file: &'a str,
    scheduler: &'static str,
    cores: usize,
    tasks: usize,
    /// Σ PET/period at the execution level.
    utilization: f64,
    duration_ns: u64,
    partial: bool,
    events: u64,
    #[serde(flatten)]
    total: sim::report::Stats,
    no_deadline_miss: bool,
}

fn row<'a>(file: &'a str, system: &TaskSystem, kind: SchedulerKind, level: Level, result: &sim::SimResult) -> Row<'a> {
    let report = sim::report::report(system, result);
    Row {
        file,
        scheduler: kind.name(),
        cores: system.platform.cores,
        tasks: system.tasks.len(),
        utilization: system.tasks.iter().map(|t| t.pet_at(level) as f64 / t.period_ns as f64).sum(),
        duration_ns: result.duration_ns,
        partial: result.partial,
        events: result.events,
        no_deadline_miss: report.total.deadline_misses == 0,
        total: report.total,
    }
}

/// Simulate many task-system files in parallel over all cores (or `threads`),
/// summary only: one row per system, as JSON text, in the order given. Every
/// file is parsed first, so a bad one is an InputError before anything runs.
/// `on_progress(systems_done, jobs)` every 50 ms; Ctrl-C stops every run
/// where it is (rows of systems not started are left out). Returns (rows, interrupted).
#[pyfunction]
#[pyo3(signature = (files, options, threads=None, on_progress=None))]
pub(crate) fn simulate_many(
    py: Python<'_>,
    files: Vec<(Source<'_>, String)>,
    options: SimOptions,
    threads: Option<usize>,
    on_progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, bool)> {
    let first = files.first().map_or("(no files)", |f| f.1.as_str());
    let RunOptions { scheduler, config } = run_options(first, &options)?;
    if options.exec_ns.is_some() {
        return Err(option_error(first, "exec_ns", "given execution times are for one system, not a batch"));
    }
    let level = match config.exec {
        ExecModel::Pet(l) | ExecModel::Uniform { level: l, .. } | ExecModel::Drawn(l) => l,
    };
    let files: Vec<(Input, String)> = files.into_iter().map(|(source, file)| (source.into(), file)).collect();
    let parsed: Vec<PyResult<(TaskSystem, SchedulerKind)>> = py.allow_threads(|| {
        files
            .par_iter()
            .map(|(input, file)| {
                let system = conditioned(&*input.model(file)?, file)?;
                let kind = scheduler_kind(&system, file, scheduler.as_deref())?;
                if system.regulation.as_ref().is_some_and(|r| r.kind == RegulationKind::Monitor) && config.regulation != Some(None) {
                    return Err(option_error(file, "regulation.kind", "the bandwidth monitor's overhead table is not loaded in a batch; simulate this file alone"));
                }
                Ok((system, kind))
            })
            .collect()
    });
    let systems = parsed.into_iter().collect::<PyResult<Vec<_>>>()?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (rows, interrupted) = drive(py, None, on_progress, |_tx, shared| {
        pool.install(|| {
            systems
                .par_iter()
                .zip(&files)
                .map(|((system, kind), (_, file))| {
                    if shared.stop.load(Relaxed) {
                        return Ok(None);
                    }
                    let mut seen = 0u64;
                    let mut progress = |_now: u64, finished: u64| {
                        shared.jobs.fetch_add(finished - seen, Relaxed);
                        seen = finished;
                        !shared.stop.load(Relaxed)
                    };
                    let result = sim::simulate_into(system, *kind, &config, &mut sim::sink::Discard, &mut progress).map_err(|e| to_py(e.in_file(file)))?;
                    shared.jobs.fetch_add(result.completed() - seen, Relaxed);
                    shared.done.fetch_add(1, Relaxed);
                    let text = serde_json::to_string(&row(file, system, *kind, level, &result)).map_err(|e| PyValueError::new_err(e.to_string()))?;
                    Ok(Some(text))
                })
                .collect::<PyResult<Vec<Option<String>>>>()
        })
    })?;
    Ok((rows?.into_iter().flatten().collect(), interrupted))
}
