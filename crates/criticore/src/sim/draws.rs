//! Drawn execution times (`simulate --drawn`, `ExecModel::Drawn`): each run of a
//! runnable with a `draw` takes a time from its distribution
//! (`model::need`), the others their PET. A draw is a pure function of
//! (seed, task, job, runnable), so the release (the job's time), the regions
//! (a cooperative job's preemption points) and the trace (its steps) read
//! the same times without storing them.

use crate::model::need::Need;
use crate::model::Task;

/// Uniform in [0, 1) for one run of one runnable (SplitMix64 of the four).
pub fn unit(seed: u64, task: u32, number: u32, runnable: usize) -> f64 {
    let mut z = seed ^ (task as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (number as u64).wrapping_mul(0xd1b5_4a32_d192_ed03) ^ (runnable as u64).wrapping_mul(0x8cb9_2ba7_2f3d_8dd7);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Runnable `k` (PET `pet_ns`, its `need`) in job `number` of task `ti`.
pub fn sample(need: Option<Need>, pet_ns: u64, seed: u64, ti: u32, number: u32, k: usize) -> u64 {
    need.map_or(pet_ns, |n| n.sample(pet_ns, unit(seed, ti, number, k)))
}

/// Runnable `k`'s time in job `number` of task `task` (index `ti`).
pub fn runnable_ns(task: &Task, seed: u64, ti: u32, number: u32, k: usize) -> u64 {
    let r = &task.runnables[k];
    sample(r.need, r.pet_ns, seed, ti, number, k)
}

/// A job's time: its copies and its runnables' draws; None for a task
/// none of whose runnables is drawn (it runs its PET).
pub fn job_ns(task: &Task, seed: u64, ti: u32, number: u32) -> Option<u64> {
    if !task.runnables.iter().any(|r| r.need.is_some()) {
        return None;
    }
    let runnables: u64 = (0..task.runnables.len()).map(|k| runnable_ns(task, seed, ti, number, k)).sum();
    Some((task.copy_in_ns + runnables + task.copy_out_ns).max(1))
}

/// A job's named steps as it ran them (`Task::steps` with drawn runnables).
pub fn steps<'t>(task: &'t Task, seed: Option<u64>, ti: u32, number: u32) -> Vec<(&'t str, u64)> {
    let Some(seed) = seed.filter(|_| task.runnables.iter().any(|r| r.need.is_some())) else { return task.steps() };
    let runnables = task.runnables.iter().enumerate().map(|(k, r)| (r.name.as_str(), runnable_ns(task, seed, ti, number, k)));
    std::iter::once(("copy-in", task.copy_in_ns)).chain(runnables).chain(std::iter::once(("copy-out", task.copy_out_ns))).filter(|&(_, w)| w > 0).collect()
}
