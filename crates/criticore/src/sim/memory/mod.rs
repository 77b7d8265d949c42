//! Memory models: how fast each running job progresses, given what runs on
//! the other cores. The engine asks for rates after every scheduling decision
//! and computes the next completion exactly from them. [`CpuOnly`] is the
//! model without memory interference (every job at rate 1); the fluid and
//! transaction models plug in here.

use crate::sim::job::{JobId, Jobs, NONE_U64};

pub trait MemoryModel {
    /// Work per nanosecond of the job on each core (ignored where idle).
    fn rates(&mut self, now: u64, running: &[Option<JobId>], jobs: &Jobs, rates: &mut [f64]);
    /// Next time rates change by themselves (a phase change); NONE_U64 if never.
    fn next_event(&self) -> u64 {
        NONE_U64
    }
}

/// No memory interference: jobs progress at rate 1.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuOnly;

impl MemoryModel for CpuOnly {
    fn rates(&mut self, _now: u64, _running: &[Option<JobId>], _jobs: &Jobs, rates: &mut [f64]) {
        rates.fill(1.0);
    }
}
