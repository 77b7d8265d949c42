//! What a run leaves behind besides its statistics, handed over as it happens
//! (issue 13): job records, execution segments, regulator intervals and
//! closed bandwidth bins go to a [`Sink`] the caller chooses, so a long run
//! keeps in memory only what the caller keeps. [`Collect`] keeps everything
//! (what [`super::simulate`] returns); a front end streams to files instead.

use super::job::JobRecord;
use super::regulate::Interval;
use super::{Segment, ServerSegment, Unfinished, WorkSpan};

/// Receives a run's records in simulated-time order of their end. Only what
/// the [`super::SimConfig`] asks for is sent.
pub trait Sink {
    /// A job finished (`record_jobs`).
    fn job(&mut self, _record: &JobRecord) {}
    /// The run ends (or was stopped) at `end_ns`; what is still open follows.
    fn run_ends(&mut self, _end_ns: u64) {}
    /// A job still unfinished at the end (`record_jobs`), sorted by release, then task.
    fn unfinished(&mut self, _job: &Unfinished) {}
    /// A job left a core (`record_segments`).
    fn segment(&mut self, _segment: &Segment) {}
    /// The same segment's work done, for a task with runnables (after `segment`).
    fn work_span(&mut self, _span: &WorkSpan) {}
    /// A server left a core (`record_segments`).
    fn server_segment(&mut self, _segment: &ServerSegment) {}
    /// A regulator state span closed.
    fn interval(&mut self, _interval: &Interval) {}
    /// Bandwidth bin `index` closed (`bandwidth_bin_ns`): memory requests per core.
    fn bandwidth_bin(&mut self, _index: u64, _requests: &[f64]) {}
}

/// Keeps nothing.
pub struct Discard;

impl Sink for Discard {}

/// Keeps everything in memory.
#[derive(Debug, Default)]
pub struct Collect {
    pub records: Vec<JobRecord>,
    pub unfinished: Vec<Unfinished>,
    pub segments: Vec<Segment>,
    pub work_spans: Vec<WorkSpan>,
    pub server_segments: Vec<ServerSegment>,
    pub intervals: Vec<Interval>,
    /// Per core, requests in each bin.
    pub bandwidth: Vec<Vec<f64>>,
}

impl Sink for Collect {
    fn job(&mut self, record: &JobRecord) {
        self.records.push(*record);
    }
    fn unfinished(&mut self, job: &Unfinished) {
        self.unfinished.push(*job);
    }
    fn segment(&mut self, segment: &Segment) {
        self.segments.push(*segment);
    }
    fn work_span(&mut self, span: &WorkSpan) {
        self.work_spans.push(*span);
    }
    fn server_segment(&mut self, segment: &ServerSegment) {
        self.server_segments.push(*segment);
    }
    fn interval(&mut self, interval: &Interval) {
        self.intervals.push(*interval);
    }
    fn bandwidth_bin(&mut self, _index: u64, requests: &[f64]) {
        self.bandwidth.resize_with(requests.len(), Vec::new);
        for (bins, &r) in self.bandwidth.iter_mut().zip(requests) {
            bins.push(r);
        }
    }
}

/// Progress and cancellation: the engine calls `proceed` every few hundred
/// events with the simulated time and the jobs finished so far; false stops
/// the run there (a partial result, as if the duration had been `now_ns`).
pub trait Progress {
    fn proceed(&mut self, now_ns: u64, completed_jobs: u64) -> bool;
}

impl<F: FnMut(u64, u64) -> bool> Progress for F {
    fn proceed(&mut self, now_ns: u64, completed_jobs: u64) -> bool {
        self(now_ns, completed_jobs)
    }
}

/// Runs to the end.
pub struct ToTheEnd;

impl Progress for ToTheEnd {
    fn proceed(&mut self, _now_ns: u64, _completed_jobs: u64) -> bool {
        true
    }
}
