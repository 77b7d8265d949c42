//! Perfetto / Chrome trace export (JSON trace-event format, loadable in
//! ui.perfetto.dev and chrome://tracing). Process 1 has one track per core with
//! job slices, and within them a task's runnables by name; process 2 one track per server (when the server holds a core);
//! process 3 one track per task with instants for releases, deadlines and
//! deadline misses; process 4 one track per core (or MRS server) with the
//! regulator's stalled / overload / suspended / depleted spans; per-core
//! bandwidth counters (MB/s) when a bandwidth series was kept; a flow arrow
//! for every hop of a cause-effect chain, writing job to reading job. Timestamps are
//! microseconds with nanosecond decimals.
//!
//! [`TraceWriter`] builds the document as the run goes (it is a [`Sink`]);
//! events come in the order things happen, which the trace format allows.

use super::job::JobRecord;
use super::regulate::Interval;
use super::sink::Sink;
use super::{Segment, ServerSegment, SimResult, Unfinished, WorkSpan};
use crate::model::TaskSystem;
use std::fmt::Write;

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

fn meta(pid: u32, tid: Option<u32>, kind: &str, name: &str) -> String {
    match tid {
        Some(tid) => format!("{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":\"{kind}\",\"args\":{{\"name\":{}}}}}", quoted(name)),
        None => format!("{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"{kind}\",\"args\":{{\"name\":{}}}}}", quoted(name)),
    }
}

fn instant(tid: u32, ns: u64, name: &str) -> String {
    format!("{{\"ph\":\"i\",\"s\":\"t\",\"pid\":3,\"tid\":{tid},\"ts\":{},\"name\":\"{name}\",\"cat\":\"{name}\"}}", us(ns))
}

/// The steps a job ran in one segment (`Task::steps`: copies and
/// runnables, drawn if the run drew, shortened in a job shorter than its
/// PET: `draws::Shape::runnable_ns`), as (name, start, end): step k holds the job's work from the
/// steps' sum before it to the sum with it,
/// scaled to the job's execution time (a drawn time, its reloads), and the
/// work maps onto the segment's time at its mean rate (exact at rate 1, as
/// CPU-only; docs/simulator.md).
fn runnable_slices<'t>(task: &'t crate::model::Task, span: &WorkSpan, drawn: Option<u64>) -> Vec<(&'t str, u64, u64)> {
    let (s, ws, we) = (&span.segment, span.work_start_ns as u128, span.work_end_ns as u128);
    let steps = super::draws::steps(task, drawn, s.task, s.number, span.exec_ns);
    let base: u128 = steps.iter().map(|&(_, w)| w as u128).sum();
    if we <= ws || base == 0 || s.end_ns <= s.start_ns {
        return Vec::new();
    }
    let time = |x: u128| s.start_ns + ((x - ws) * (s.end_ns - s.start_ns) as u128 / (we - ws)) as u64;
    let mut out = Vec::new();
    let mut before = 0u128;
    for (name, work) in steps {
        let (lo, hi) = (before * span.exec_ns as u128 / base, (before + work as u128) * span.exec_ns as u128 / base);
        before += work as u128;
        let (a, b) = (lo.max(ws), hi.min(we));
        if a < b {
            out.push((name, time(a), time(b)));
        }
    }
    out
}

/// A core and an instant on it.
type CoreAt = (u32, u64);

/// The trace document, built event by event. Take the text written so far
/// with [`TraceWriter::take`] (to stream it) and close it with [`TraceWriter::finish`].
pub struct TraceWriter<'a> {
    system: &'a TaskSystem,
    out: String,
    first: bool,
    bin_ns: u64,
    /// Counters start with the first bin that has traffic (a CPU-only run has
    /// none); the all-zero bins before it are written then.
    zero_bins: u64,
    any_traffic: bool,
    regulator_named: bool,
    end_ns: u64,
    /// Tasks of a cause-effect chain, and per job of theirs (task, number)
    /// its first slice's (core, start) and its last's (core, end).
    in_chain: Vec<bool>,
    chain_jobs: std::collections::HashMap<(u32, u32), (CoreAt, CoreAt)>,
    /// The seed of the run's drawn runnables (`sim::draws`), if it drew.
    drawn: Option<u64>,
}

impl<'a> TraceWriter<'a> {
    /// Name the steps of a run that drew its runnables' times with `seed` (`SimResult::drawn_seed`).
    pub fn drawn(mut self, seed: Option<u64>) -> Self {
        self.drawn = seed;
        self
    }

    /// `bin_ns`: width of the bandwidth bins, if a series is kept.
    pub fn new(system: &'a TaskSystem, bin_ns: u64) -> Self {
        let mut w = TraceWriter {
            system,
            out: String::with_capacity(1 << 16),
            first: true,
            bin_ns,
            zero_bins: 0,
            any_traffic: false,
            regulator_named: false,
            end_ns: u64::MAX,
            in_chain: system.tasks.iter().enumerate().map(|(i, _)| system.chains.iter().any(|c| c.tasks.contains(&i))).collect(),
            chain_jobs: std::collections::HashMap::new(),
            drawn: None,
        };
        w.out.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        w.event(&meta(1, None, "process_name", "cores"));
        for c in 0..system.platform.cores {
            w.event(&meta(1, Some(c as u32), "thread_name", &format!("core {c}")));
        }
        if !system.servers.is_empty() {
            w.event(&meta(2, None, "process_name", "servers"));
            for (i, s) in system.servers.iter().enumerate() {
                w.event(&meta(2, Some(i as u32), "thread_name", &format!("{} (core {})", s.name, s.core)));
            }
        }
        w.event(&meta(3, None, "process_name", "tasks"));
        for (i, t) in system.tasks.iter().enumerate() {
            w.event(&meta(3, Some(i as u32), "thread_name", &t.name));
        }
        w
    }

    fn event(&mut self, text: &str) {
        if !self.first {
            self.out.push_str(",\n");
        }
        self.first = false;
        self.out.push_str(text);
    }

    /// Bytes written and not yet taken.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// The text written since the last call.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    /// Close the document; returns the text not yet taken.
    pub fn finish(mut self) -> String {
        self.out.push_str("\n]}\n");
        self.out
    }

    /// Flow arrows of the chains' hops (`sim::chains`, after the run): from
    /// the end of the writing job's last slice to the start of the reading
    /// job's first, one flow per hop, named after its chain.
    pub fn chain_flows(&mut self, chains: &[super::chains::ChainStats]) {
        let mut id = 0u64;
        for c in chains {
            for h in &c.hops {
                let (Some(&(_, (wc, we))), Some(&((rc, rs), _))) = (self.chain_jobs.get(&h.from), self.chain_jobs.get(&h.to)) else { continue };
                id += 1;
                // Inside the slices, so each end binds to its job's slice.
                let (s, f) = (we.saturating_sub(1), rs + 1);
                let name = quoted(&c.name);
                self.event(&format!("{{\"ph\":\"s\",\"id\":{id},\"pid\":1,\"tid\":{wc},\"ts\":{},\"name\":{name},\"cat\":\"chain\"}}", us(s)));
                self.event(&format!("{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"pid\":1,\"tid\":{rc},\"ts\":{},\"name\":{name},\"cat\":\"chain\"}}", us(f)));
            }
        }
    }

    fn counters(&mut self, index: u64, requests: &[f64]) {
        let line = self.system.platform.llc.line_bytes as f64;
        for (c, r) in requests.iter().enumerate() {
            let mb_s = r * line / self.bin_ns as f64 * 1e3;
            let e = format!(
                "{{\"ph\":\"C\",\"pid\":1,\"ts\":{},\"name\":\"bandwidth core {c} (MB/s)\",\"args\":{{\"MB/s\":{mb_s:.3}}}}}",
                us(index * self.bin_ns)
            );
            self.event(&e);
        }
    }
}

impl Sink for TraceWriter<'_> {
    // Unfinished jobs missed if their deadline passed by then.
    fn run_ends(&mut self, end_ns: u64) {
        self.end_ns = end_ns;
    }

    fn job(&mut self, r: &JobRecord) {
        self.event(&instant(r.task, r.release_ns, "release"));
        self.event(&instant(r.task, r.deadline_ns, "deadline"));
        if r.finish_ns > r.deadline_ns {
            self.event(&instant(r.task, r.deadline_ns, "miss"));
        }
    }

    // A job unfinished at the end: its release, and a miss if the deadline has passed.
    fn unfinished(&mut self, u: &Unfinished) {
        self.event(&instant(u.task, u.release_ns, "release"));
        if u.deadline_ns <= self.end_ns {
            self.event(&instant(u.task, u.deadline_ns, "deadline"));
            self.event(&instant(u.task, u.deadline_ns, "miss"));
        }
    }

    fn segment(&mut self, s: &Segment) {
        if self.in_chain[s.task as usize] {
            let e = self.chain_jobs.entry((s.task, s.number)).or_insert(((s.core, s.start_ns), (s.core, s.end_ns)));
            e.1 = (s.core, s.end_ns);
        }
        let name = &self.system.tasks[s.task as usize].name;
        let mut e = String::new();
        let _ = write!(
            e,
            "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"job\",\"args\":{{\"task\":{},\"job\":{}}}}}",
            s.core,
            us(s.start_ns),
            us(s.end_ns - s.start_ns),
            quoted(&format!("{name}#{}", s.number)),
            quoted(name),
            s.number
        );
        self.event(&e);
    }

    fn work_span(&mut self, span: &WorkSpan) {
        let s = &span.segment;
        let task = &self.system.tasks[s.task as usize];
        for (name, start, end) in runnable_slices(task, span, self.drawn) {
            let e = format!(
                "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"runnable\",\"args\":{{\"task\":{},\"job\":{}}}}}",
                s.core,
                us(start),
                us(end - start),
                quoted(name),
                quoted(&task.name),
                s.number
            );
            self.event(&e);
        }
    }

    fn server_segment(&mut self, s: &ServerSegment) {
        let e = format!(
            "{{\"ph\":\"X\",\"pid\":2,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"server\"}}",
            s.server,
            us(s.start_ns),
            us(s.end_ns - s.start_ns),
            quoted(&self.system.servers[s.server as usize].name)
        );
        self.event(&e);
    }

    fn interval(&mut self, i: &Interval) {
        if !self.regulator_named {
            self.regulator_named = true;
            self.event(&meta(4, None, "process_name", "regulator"));
        }
        let e = format!(
            "{{\"ph\":\"X\",\"pid\":4,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"{}\",\"cat\":\"regulator\"}}",
            i.core,
            us(i.start_ns),
            us(i.end_ns - i.start_ns),
            i.state
        );
        self.event(&e);
    }

    // Per-core bandwidth counters in MB/s per bin.
    fn bandwidth_bin(&mut self, index: u64, requests: &[f64]) {
        if !self.any_traffic {
            if requests.iter().all(|&r| r <= 0.0) {
                self.zero_bins += 1;
                return;
            }
            self.any_traffic = true;
            let zeros = vec![0.0; requests.len()];
            for k in 0..self.zero_bins {
                self.counters(k, &zeros);
            }
        }
        self.counters(index, requests);
    }
}

/// The whole trace of a run that kept its job records and segments.
pub fn perfetto_json(system: &TaskSystem, result: &SimResult) -> String {
    let mut w = TraceWriter::new(system, result.bandwidth_bin_ns).drawn(result.drawn_seed);
    for i in &result.regulator_intervals {
        w.interval(i);
    }
    let bins = result.bandwidth.first().map_or(0, Vec::len);
    let mut requests = vec![0.0; result.bandwidth.len()];
    for k in 0..bins {
        for (r, core) in requests.iter_mut().zip(&result.bandwidth) {
            *r = core[k];
        }
        w.bandwidth_bin(k as u64, &requests);
    }
    // Each segment, then its runnables (the order a run streams them in).
    let mut spans = result.work_spans.iter().peekable();
    for s in &result.segments {
        w.segment(s);
        if let Some(span) = spans.next_if(|span| span.segment == *s) {
            w.work_span(span);
        }
    }
    for s in &result.server_segments {
        w.server_segment(s);
    }
    w.chain_flows(&result.chains);
    for r in &result.records {
        w.job(r);
    }
    w.run_ends(result.duration_ns);
    for u in &result.unfinished {
        w.unfinished(u);
    }
    w.finish()
}
