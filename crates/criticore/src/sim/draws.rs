//! Drawn execution times (`simulate --drawn`, `ExecModel::Drawn`): each run of a
//! runnable with a `draw` takes a time from its distribution
//! (`model::need`), the others their PET. A draw is a pure function of
//! (seed, task, job, runnable), so the release (the job's time), the regions
//! (a cooperative job's preemption points) and the trace (its steps) read
//! the same times without storing them.

use crate::model::need::Need;
use crate::model::{Task, TaskSystem};

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

/// How a job of a task splits its time among its steps: its runnables'
/// PETs and its copies. The regions, the crossbar's phases and the trace
/// all read this one rule ([`Shape::runnable_ns`]); the release draws a
/// shortened job at least its copies.
pub struct Shape {
    /// Where each runnable starts in the runnables' PETs (their prefix
    /// sums, one more at the end: their total), so a split is O(1) per
    /// runnable (a region's length is read at every preemption point).
    starts: Box<[u64]>,
    copies_ns: u64,
}

impl Shape {
    pub fn of(task: &Task) -> Self {
        let starts = std::iter::once(0).chain(task.runnables.iter().scan(0u64, |sum, r| {
            *sum += r.pet_ns;
            Some(*sum)
        }));
        Shape { starts: starts.collect(), copies_ns: task.copy_in_ns + task.copy_out_ns }
    }

    /// Its copies, `copy_in` + `copy_out`: a job shorter than its PET still runs them whole.
    pub fn copies_ns(&self) -> u64 {
        self.copies_ns
    }

    /// Runnable `k`'s time in a job that runs `time_ns` of its own work
    /// (reloads aside) and draws nothing: its PET; in a job shorter than its
    /// PET (`simulate --best-case`, given times) the copies run whole and
    /// the runnables share the rest in proportion to their PETs (cumulative,
    /// rounded down, so they add up to it exactly).
    pub fn runnable_ns(&self, k: usize, time_ns: u64) -> u64 {
        let (from, to) = (self.starts[k], self.starts[k + 1]);
        let total = self.starts[self.starts.len() - 1];
        let body = time_ns.saturating_sub(self.copies_ns);
        if body >= total {
            return to - from;
        }
        let at = |x: u64| (x as u128 * body as u128 / total as u128) as u64;
        at(to) - at(from)
    }
}

/// A job's named steps as it ran them (`Task::steps`): runnables drawn
/// with `seed`, else shortened to the job's own time `time_ns`
/// ([`Shape::runnable_ns`]).
pub fn steps(task: &Task, seed: Option<u64>, ti: u32, number: u32, time_ns: u64) -> Vec<(&str, u64)> {
    match seed {
        Some(seed) => task.steps_with(|k, r| sample(r.need, r.pet_ns, seed, ti, number, k), u64::MAX),
        None => {
            let shape = Shape::of(task);
            task.steps_with(|k, _| shape.runnable_ns(k, time_ns), time_ns)
        }
    }
}

/// One run's draws: per task with a drawn runnable, its copies and its
/// runnables' (PET, need); read by the release and the regions.
pub struct Draws {
    seed: u64,
    tasks: Vec<Option<DrawnTask>>,
}

struct DrawnTask {
    copies_ns: u64,
    runnables: Box<[(u64, Option<Need>)]>,
}

impl Draws {
    pub fn new(system: &TaskSystem, seed: u64) -> Self {
        let tasks = system
            .tasks
            .iter()
            .map(|t| {
                let drawn = !t.is_background() && t.runnables.iter().any(|r| r.need.is_some());
                drawn.then(|| DrawnTask { copies_ns: t.copy_in_ns + t.copy_out_ns, runnables: t.runnables.iter().map(|r| (r.pet_ns, r.need)).collect() })
            })
            .collect();
        Draws { seed, tasks }
    }

    /// Whether task `ti` draws (else its runnables run their PETs).
    pub fn draws(&self, ti: u32) -> bool {
        self.tasks[ti as usize].is_some()
    }

    /// Runnable `k`'s time in job `number` of task `ti`; None if the task draws nothing.
    pub fn runnable_ns(&self, ti: u32, number: u32, k: usize) -> Option<u64> {
        let (pet_ns, need) = self.tasks[ti as usize].as_ref()?.runnables[k];
        Some(sample(need, pet_ns, self.seed, ti, number, k))
    }

    /// A job's time: its copies and its runnables' draws; None for a task
    /// that draws nothing (it runs its PET).
    pub fn job_ns(&self, ti: u32, number: u32) -> Option<u64> {
        let t = self.tasks[ti as usize].as_ref()?;
        let runnables: u64 = t.runnables.iter().enumerate().map(|(k, &(pet_ns, need))| sample(need, pet_ns, self.seed, ti, number, k)).sum();
        Some((t.copies_ns + runnables).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::Shape;

    #[test]
    fn a_shorter_job_shares_what_its_copies_leave_in_proportion() {
        // Runnables of 3, 5 and 2 with copies of 4, a job of 9: 5 left for
        // them, at 5/10 of each cumulative PET rounded down: ⌊1.5⌋ = 1,
        // ⌊4⌋ − 1 = 3, 5 − 4 = 1; they add up to 5.
        let shape = Shape { starts: Box::new([0, 3, 8, 10]), copies_ns: 4 };
        let split = |time_ns: u64| (0..3).map(|k| shape.runnable_ns(k, time_ns)).collect::<Vec<_>>();
        assert_eq!(split(9), [1, 3, 1]);
        // At or past the PET (14), their PETs; under the copies, nothing.
        assert_eq!(split(14), [3, 5, 2]);
        assert_eq!(split(20), [3, 5, 2]);
        assert_eq!(split(3), [0, 0, 0]);
    }
}
