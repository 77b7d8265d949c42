//! Regulators: mechanisms that stall or throttle cores (MemGuard, MCTI, MRS
//! memory budgets, the bandwidth monitor). The engine stops a core's progress
//! while its regulator disallows it, and wakes the regulator at its own events.
//! [`Unregulated`] lets every core run.

use crate::sim::job::NONE_U64;

pub trait Regulator {
    /// Next time the regulator changes state by itself (a replenishment, a sample).
    fn next_event(&self) -> u64 {
        NONE_U64
    }
    /// Handle the regulator's events due at `now`.
    fn on_event(&mut self, _now: u64) {}
    /// Whether `core` may make progress now.
    fn core_allowed(&self, _core: usize) -> bool {
        true
    }
}

/// No regulation.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unregulated;

impl Regulator for Unregulated {}
