//! Job arrivals and execution demands. Periodic tasks release every period
//! from their offset; sporadic ones at least a period apart plus a seeded
//! uniform jitter. Each task draws from its own ChaCha stream, so a task's
//! jobs do not depend on what other tasks do.
//!
//! A task whose job is still unfinished when its next release comes can be
//! *parked* (issue 13): the release leaves the queue and the job is made only
//! when the one before it finishes, with its own release time. Under a
//! scheduler that runs a task's jobs one after another this changes nothing
//! but the cost: an overloaded task's backlog is a counter, not jobs in
//! memory, and its releases are not events. Draws stay in the same order.

use super::job::Job;
use super::draws::Draws;
use super::ExecModel;
use std::sync::Arc;
use crate::model::{Arrival, TaskSystem};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use super::quad_heap::QuadHeap;

struct TaskArrivals {
    /// A background task: one job that never ends nor misses (release once).
    endless: bool,
    period_ns: u64,
    deadline_ns: u64,
    pet_ns: u64,
    /// Its copies: a job drawn shorter than its PET still runs them whole.
    copies_ns: u64,
    max_jitter_ns: u64,
    next_number: u32,
    /// The task's next release (on the heap unless parked).
    next_ns: u64,
    parked: bool,
    /// Boxed: 300-odd bytes inline would make the hot fields of many tasks miss the cache.
    rng: Option<Box<ChaCha8Rng>>,
    /// Given execution times by job number (SimConfig::given_exec_ns).
    given: Box<[u64]>,
}

/// Pending releases as time << shift | task: one integer compare per heap step.
/// A u64 key when task indices and every time up to the end fit in it
/// (times past the end are clamped: they are never popped before it), else
/// u128 (`wide`, kept out of line: runs that long are rare).
struct Keys {
    heap: QuadHeap<u64>,
    shift: u32,
    mask: u64,
    cap: u64,
    wide: Option<Box<QuadHeap<u128>>>,
}

impl Keys {
    fn new(tasks: usize, end: u64) -> Self {
        let shift = usize::BITS - tasks.saturating_sub(1).leading_zeros();
        let narrow = shift < 64 && end < u64::MAX >> shift;
        let shift = if narrow { shift } else { 0 };
        let wide = (!narrow).then(|| Box::new(QuadHeap::default()));
        Keys { heap: QuadHeap::default(), shift, mask: !(u64::MAX << shift), cap: u64::MAX >> shift, wide }
    }

    #[inline]
    fn key(&self, time_ns: u64, task: u32) -> u64 {
        time_ns.min(self.cap) << self.shift | task as u64
    }

    /// (time, task) of the next release, read once per change: the loop asks often.
    fn peek(&self) -> Option<(u64, u32)> {
        match &self.wide {
            None => self.heap.peek().map(|&k| (k >> self.shift, (k & self.mask) as u32)),
            Some(heap) => heap.peek().map(|&k| ((k >> 32) as u64, k as u32)),
        }
    }

    fn push(&mut self, time_ns: u64, task: u32) {
        match &mut self.wide {
            None => self.heap.push(self.key(time_ns, task)),
            Some(heap) => heap.push((time_ns as u128) << 32 | task as u128),
        }
    }

    fn pop(&mut self) -> Option<u32> {
        match &mut self.wide {
            None => self.heap.pop().map(|k| (k & self.mask) as u32),
            Some(heap) => heap.pop().map(|k| k as u32),
        }
    }

    /// Pop the top and push (time, task) in one sift.
    #[inline]
    fn replace_top(&mut self, time_ns: u64, task: u32) {
        match &mut self.wide {
            None => {
                self.heap.replace_top(self.key(time_ns, task));
            }
            Some(heap) => wide_replace_top(heap, time_ns, task),
        }
    }
}

#[cold]
#[inline(never)]
fn wide_replace_top(heap: &mut QuadHeap<u128>, time_ns: u64, task: u32) {
    heap.replace_top((time_ns as u128) << 32 | task as u128);
}

pub struct Releases {
    tasks: Vec<TaskArrivals>,
    heap: Keys,
    /// The heap's top as (time, task), or (u64::MAX, u32::MAX) when empty.
    next: (u64, u32),
    times: Times,
}

/// How a job's execution time is made (`ExecModel`).
enum Times {
    Pet,
    Uniform { best_case_fraction: f64 },
    Drawn(Arc<Draws>),
}

impl Releases {
    /// Releases of `system` for a run ending at `end`; `draws`: the run's
    /// draws under `ExecModel::Drawn`.
    pub fn new(system: &TaskSystem, exec: ExecModel, seed: u64, end: u64, draws: Option<Arc<Draws>>) -> Self {
        let (level, best_case_fraction) = match exec {
            ExecModel::Pet(level) | ExecModel::Drawn(level) => (level, None),
            ExecModel::Uniform { level, best_case_fraction } => (level, Some(best_case_fraction)),
        };
        let tasks: Vec<TaskArrivals> = system
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let max_jitter_ns = match t.arrival {
                    Arrival::Periodic | Arrival::Background => 0,
                    Arrival::Sporadic { max_jitter_ns } => max_jitter_ns,
                };
                let endless = t.is_background();
                let random = !endless && (max_jitter_ns > 0 || best_case_fraction.is_some());
                let (period_ns, deadline_ns) = t.running_period_deadline_ns();
                TaskArrivals {
                    endless,
                    period_ns,
                    deadline_ns,
                    // A background job has more work than the run has time: it never finishes.
                    pet_ns: if endless { end.saturating_add(1) } else { t.pet_at(level) },
                    copies_ns: t.copy_in_ns + t.copy_out_ns,
                    max_jitter_ns,
                    next_number: 1,
                    next_ns: t.offset_ns,
                    parked: false,
                    rng: random.then(|| {
                        let mut rng = ChaCha8Rng::seed_from_u64(seed);
                        rng.set_stream(i as u64);
                        Box::new(rng)
                    }),
                    given: Box::default(),
                }
            })
            .collect();
        let mut heap = Keys::new(system.tasks.len(), end);
        for (i, t) in system.tasks.iter().enumerate() {
            heap.push(t.offset_ns, i as u32);
        }
        let next = heap.peek().unwrap_or((u64::MAX, u32::MAX));
        let times = match (draws, best_case_fraction) {
            (Some(draws), _) => Times::Drawn(draws),
            (None, Some(best_case_fraction)) => Times::Uniform { best_case_fraction },
            (None, None) => Times::Pet,
        };
        Releases { tasks, heap, next, times }
    }


    /// Jobs run the execution times `given[task][number - 1]` where given
    /// (at least 1 ns); the others as the ExecModel says, drawn as before.
    pub fn with_given(mut self, given: &[Vec<u64>]) -> Self {
        for (a, g) in self.tasks.iter_mut().zip(given) {
            a.given = g.clone().into_boxed_slice();
        }
        self
    }

    /// Time of the next release.
    #[inline]
    pub fn next_time(&self) -> u64 {
        self.next.0
    }

    /// The task of the next release.
    #[inline]
    pub fn next_task(&self) -> u32 {
        self.next.1
    }

    /// The next job due at `now`, if any; schedules the task's following release.
    #[inline(always)]
    pub fn pop_due(&mut self, now: u64) -> Option<Job> {
        let (time, task) = self.next;
        if time > now || task == u32::MAX {
            return None;
        }
        let job = self.make(task);
        // The task's next release replaces this one at the top (one sift).
        self.heap.replace_top(self.tasks[task as usize].next_ns, task);
        self.next = self.heap.peek().unwrap_or((u64::MAX, u32::MAX));
        Some(job)
    }

    /// Take the next release off the queue: its task is busy (see the module doc).
    pub fn park_next(&mut self) {
        if let Some(task) = self.heap.pop() {
            self.tasks[task as usize].parked = true;
        }
        self.next = self.heap.peek().unwrap_or((u64::MAX, u32::MAX));
    }

    /// Jobs of `task` made so far (released, or listed by `never_made`).
    pub fn made(&self, task: u32) -> u64 {
        self.tasks[task as usize].next_number as u64 - 1
    }

    /// A background task's: its one job is no job of the statistics.
    pub fn is_endless(&self, task: u32) -> bool {
        self.tasks[task as usize].endless
    }

    pub fn is_parked(&self, task: u32) -> bool {
        self.tasks[task as usize].parked
    }

    /// A parked task's waiting job, made now with its own release time; the
    /// release after it goes back on the queue.
    pub fn unpark(&mut self, task: u32) -> Job {
        self.tasks[task as usize].parked = false;
        let job = self.make(task);
        self.heap.push(self.tasks[task as usize].next_ns, task);
        self.next = self.heap.peek().unwrap_or((u64::MAX, u32::MAX));
        job
    }

    /// At the end of a run: every release before `end` that was never made
    /// into a job, as (task, job number, release, deadline). Parks what is
    /// still queued before `end` first.
    pub fn never_made(&mut self, end: u64, mut f: impl FnMut(u32, u32, u64, u64)) {
        while self.next_time() < end {
            self.park_next();
        }
        for task in 0..self.tasks.len() as u32 {
            while self.tasks[task as usize].parked && self.tasks[task as usize].next_ns < end {
                let job = self.make(task);
                f(task, job.number, job.release_ns, job.deadline_ns);
            }
        }
    }

    /// Task `task`'s job at its next release; draws its execution time and
    /// jitter (in that order) and moves the next release on.
    #[inline(always)]
    fn make(&mut self, task: u32) -> Job {
        let a = &mut self.tasks[task as usize];
        let time = a.next_ns;
        let exec_ns = match (&self.times, a.rng.as_mut()) {
            (Times::Pet, _) | (Times::Uniform { .. }, None) => a.pet_ns,
            (Times::Uniform { best_case_fraction }, Some(rng)) => {
                let low = ((a.pet_ns as f64 * best_case_fraction).ceil() as u64).max(a.copies_ns).clamp(1, a.pet_ns);
                rng.random_range(low..=a.pet_ns)
            }
            (Times::Drawn(draws), _) => draws.job_ns(task, a.next_number).unwrap_or(a.pet_ns),
        };
        let exec_ns = match a.given.get(a.next_number as usize - 1) {
            Some(&g) if !a.endless => g.max(1),
            _ => exec_ns,
        };
        let jitter = match a.rng.as_mut() {
            Some(rng) if a.max_jitter_ns > 0 => rng.random_range(0..=a.max_jitter_ns),
            _ => 0,
        };
        let job = Job {
            task,
            number: a.next_number,
            release_ns: time,
            deadline_ns: time.saturating_add(a.deadline_ns),
            exec_ns,
            remaining_ns: exec_ns,
            start_ns: u64::MAX,
            preemptions: 0,
            migrations: 0,
            last_core: u32::MAX,
            memory_requests: 0.0,
            memory_stall_ns: 0.0,
            needs_reload: false,
            cache_mark: 0.0,
            reload_ns: 0,
            reloaded_lines: 0.0,
            work_carry: 0.0,
            region: 0,
            region_end: 0,
            locked: false,
        };
        a.next_number += 1;
        a.next_ns = time.saturating_add(a.period_ns).saturating_add(jitter);
        job
    }
}

#[cfg(test)]
mod tests {
    use super::Releases;
    use crate::model::{parse_task_system, Format};
    use crate::sim::ExecModel;

    #[test]
    fn wide_keys_release_what_narrow_ones_do() {
        let mut text = String::from("[platform]\ncores = 2\n");
        for i in 0..40 {
            text += &format!("[[task]]\nname = \"t{i}\"\nperiod = \"{}us\"\npet = \"10us\"\narrival = \"sporadic\"\njitter = \"{}us\"\n", 100 + 7 * (i % 5), 3 * i);
        }
        let system = parse_task_system(&text, Format::Toml, "many.toml").unwrap();
        let exec = ExecModel::Uniform { level: crate::model::Level::C, best_case_fraction: 0.5 };
        // An end this far needs u128 keys; a short one fits u64 keys.
        let mut wide = Releases::new(&system, exec, 3, u64::MAX - 1, None);
        let mut narrow = Releases::new(&system, exec, 3, 1_000_000_000, None);
        assert!(wide.heap.wide.is_some() && narrow.heap.wide.is_none());
        for now in (0..2_000_000u64).step_by(997) {
            assert_eq!(wide.next_time(), narrow.next_time());
            while let Some(job) = narrow.pop_due(now) {
                assert_eq!(wide.pop_due(now), Some(job));
            }
            assert_eq!(wide.pop_due(now), None);
        }
    }

    #[test]
    fn given_execution_times_replace_the_pet_job_by_job_then_the_pet_again() {
        let text = "[platform]\ncores = 1\n[[task]]\nname = \"a\"\nperiod = \"10us\"\npet = \"2us\"\n[[task]]\nname = \"b\"\nperiod = \"10us\"\npet = \"3us\"\n";
        let system = parse_task_system(text, Format::Toml, "two.toml").unwrap();
        let given = vec![vec![5_000, 0, 1_500]];
        let mut r = Releases::new(&system, ExecModel::Pet(crate::model::Level::C), 0, 50_000, None).with_given(&given);
        let mut exec = [Vec::new(), Vec::new()];
        for now in (0..40_000u64).step_by(10_000) {
            while let Some(job) = r.pop_due(now) {
                exec[job.task as usize].push(job.exec_ns);
            }
        }
        // a: its three given jobs (0 ns runs as 1 ns), then its PET; b: none given.
        assert_eq!(exec, [vec![5_000, 1, 1_500, 2_000], vec![3_000; 4]]);
    }

    #[test]
    fn made_counts_every_release_before_the_end_parked_or_not() {
        let text = "[platform]\ncores = 1\n[[task]]\nname = \"a\"\nperiod = \"10us\"\npet = \"1us\"\n[[task]]\nname = \"b\"\nperiod = \"25us\"\npet = \"1us\"\n";
        let system = parse_task_system(text, Format::Toml, "two.toml").unwrap();
        let end = 100_000;
        let mut r = Releases::new(&system, ExecModel::Pet(crate::model::Level::C), 0, end, None);
        assert_eq!((r.pop_due(0).unwrap().task, r.pop_due(0).unwrap().task), (0, 1));
        // At 10 µs task a is busy: its release is parked, then made at 30 µs.
        assert_eq!(r.next_task(), 0);
        r.park_next();
        assert!(r.pop_due(20_000).is_none());
        assert_eq!(r.pop_due(25_000).unwrap().number, 2);
        let late = r.unpark(0);
        assert_eq!((late.number, late.release_ns), (2, 10_000));
        let mut never = [0u64; 2];
        r.never_made(end, |task, _, _, _| never[task as usize] += 1);
        // Releases before 100 µs, by hand: a at 0, 10, …, 90; b at 0, 25, 50, 75.
        assert_eq!((r.made(0), r.made(1)), (10, 4));
        assert_eq!(never, [8, 2]);
    }
}
