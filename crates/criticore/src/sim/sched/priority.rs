//! Job priority keys (smaller runs first) for the policies the schedulers share.

use super::queue::Key;
use crate::sim::job::{Job, JobId};

/// Tie-breaker shared by every policy: task index, then job number.
#[inline]
fn tie(job: &Job) -> u64 {
    (job.task as u64) << 32 | job.number as u64
}

/// Earliest absolute deadline first; ties by task index, then job number.
pub fn edf(job: &Job, id: JobId) -> Key {
    (job.deadline_ns, tie(job), id)
}

/// Fixed priority by rank; jobs of one task in release order.
pub fn fixed(rank: &[u64], job: &Job, id: JobId) -> Key {
    (rank[job.task as usize], tie(job), id)
}

/// Rate-monotonic: shorter period first (`period` indexed by task).
pub fn rate_monotonic(period: &[u64], job: &Job, id: JobId) -> Key {
    (period[job.task as usize], tie(job), id)
}

/// First in, first out.
pub fn fifo(job: &Job, id: JobId) -> Key {
    (job.release_ns, tie(job), id)
}
