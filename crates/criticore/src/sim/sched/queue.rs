//! Ready queues shared by the schedulers: a keyed heap of ready jobs, a
//! per-core queue (partitioned scheduling) and a global queue that places the
//! best jobs on whichever cores are available (global scheduling).
//!
//! Keys order jobs, smallest first. Ready jobs are taken in full key order
//! (ties broken by task index, then job number), but a job only displaces a
//! running one with a strictly smaller *primary* key (an earlier deadline, a
//! higher priority): equal deadlines never preempt, as in SCHED_DEADLINE and SimSo.

use crate::sim::job::JobId;
use crate::sim::quad_heap::QuadHeap;
use std::collections::VecDeque;

/// Priority key of a job: smaller runs first. (primary, secondary, job id).
/// The secondary carries the task index in its upper 32 bits (see
/// `priority::tie`), which [`GlobalQueue`] uses to run a task's jobs in order.
pub type Key = (u64, u64, JobId);

/// Whether a ready job may displace a running one: strictly better primary key.
#[inline]
pub fn preempts(ready: Key, running: Key) -> bool {
    ready.0 < running.0
}

/// Task index of a key (upper 32 bits of the secondary).
#[inline]
fn task_of(key: Key) -> u64 {
    key.1 >> 32
}

/// Min-heap of ready (released, unfinished, not running) jobs. Keys are
/// stored as (primary << 64 | secondary, id): one wide compare per heap step.
#[derive(Debug, Default, Clone)]
pub struct ReadyQueue {
    heap: QuadHeap<(u128, JobId)>,
}

#[inline]
fn packed(key: Key) -> (u128, JobId) {
    ((key.0 as u128) << 64 | key.1 as u128, key.2)
}

#[inline]
fn unpacked(&(wide, id): &(u128, JobId)) -> Key {
    ((wide >> 64) as u64, wide as u64, id)
}

impl ReadyQueue {
    pub fn push(&mut self, key: Key) {
        self.heap.push(packed(key));
    }

    pub fn peek(&self) -> Option<Key> {
        self.heap.peek().map(unpacked)
    }

    pub fn pop(&mut self) -> Option<Key> {
        self.heap.pop().map(|r| unpacked(&r))
    }

    /// Pop the best job and push `key`, in one sift.
    pub fn replace_top(&mut self, key: Key) {
        if self.heap.is_empty() {
            self.heap.push(packed(key));
        } else {
            self.heap.replace_top(packed(key));
        }
    }
}

/// One core's queue: the running job and the ready ones.
#[derive(Debug, Default, Clone)]
pub struct CoreQueue {
    pub ready: ReadyQueue,
    pub running: Option<Key>,
    /// Tasks a regulator holds (stopped until it lets them go), and their
    /// jobs taken out of the queue meanwhile.
    held: Vec<u64>,
    stash: Vec<Key>,
}

impl CoreQueue {
    pub fn release(&mut self, key: Key) {
        self.ready.push(key);
    }

    /// The running job finished.
    pub fn complete(&mut self, job: JobId) {
        if self.running.is_some_and(|k| k.2 == job) {
            self.running = None;
        }
    }

    /// Hold `task` (a regulator stopped it; the core goes to the others) or
    /// let it go; its jobs keep their keys.
    pub fn hold(&mut self, task: u32, held: bool) {
        let task = task as u64;
        if held {
            if !self.held.contains(&task) {
                self.held.push(task);
            }
            if let Some(run) = self.running.filter(|&k| task_of(k) == task) {
                self.running = None;
                self.stash.push(run);
            }
        } else {
            self.held.retain(|&t| t != task);
            let (back, keep): (Vec<Key>, Vec<Key>) = self.stash.drain(..).partition(|&k| task_of(k) == task);
            self.stash = keep;
            for k in back {
                self.ready.push(k);
            }
        }
    }

    /// Put the best job on the core (preempting a worse running one); returns the running job.
    pub fn dispatch(&mut self) -> Option<JobId> {
        self.dispatch_unless(|_| false)
    }

    /// As [`CoreQueue::dispatch`], but a running job that `locked` says is in
    /// a non-preemptive region keeps the core (cooperative tasks).
    pub fn dispatch_unless(&mut self, locked: impl Fn(JobId) -> bool) -> Option<JobId> {
        if !self.held.is_empty() {
            // Held tasks' jobs step aside until they are let go.
            while let Some(k) = self.ready.peek().filter(|&k| self.held.contains(&task_of(k))) {
                self.ready.pop();
                self.stash.push(k);
            }
        }
        match (self.running, self.ready.peek()) {
            (None, Some(_)) => self.running = self.ready.pop(),
            (Some(run), Some(best)) if preempts(best, run) && !locked(run.2) => {
                self.ready.pop();
                self.ready.push(run);
                self.running = Some(best);
            }
            _ => {}
        }
        self.running.map(|k| k.2)
    }

    /// Take the core away (a higher level needs it): the running job goes back to ready.
    pub fn yield_core(&mut self) {
        if let Some(run) = self.running.take() {
            self.ready.push(run);
        }
    }

}

/// Global scheduling over m cores: at every dispatch the best jobs occupy the
/// available cores. A running job keeps its core unless that core is taken
/// away or a better job needs a core and this is the worst running one.
///
/// A task is one thread: its jobs run one after another, in release order
/// (every policy here orders a task's jobs that way). So only a task's
/// earliest unfinished job competes; later ones wait in the task's own FIFO,
/// and a decision never looks at them (overloaded systems pile them up).
#[derive(Debug, Clone)]
pub struct GlobalQueue {
    /// The earliest unfinished job of each task that is not running.
    pub ready: ReadyQueue,
    /// Per core: the job of this queue running there.
    pub running: Vec<Option<Key>>,
    /// The same, as job ids (what a scheduler hands the engine).
    pub ids: Vec<Option<JobId>>,
    /// Cores with no job of this queue (most decisions under load find none).
    idle: usize,
    /// Per core: the primary key of its job (0 when idle), scanned for the worst.
    primary: Vec<u64>,
    /// Per task: a job of it is ready or running.
    busy: Vec<bool>,
    /// Per task: its jobs behind that one.
    later: Vec<VecDeque<Key>>,
    /// Jobs in all of `later`. Under the engine's parked releases it stays 0,
    /// and a completion need not read its task's FIFO (a cache miss per job
    /// with tens of thousands of tasks).
    queued: usize,
    /// Cores the last `dispatch` gave a job, in core order (repeats possible).
    pub touched: Vec<usize>,
}

impl GlobalQueue {
    pub fn new(cores: usize) -> Self {
        GlobalQueue { ready: ReadyQueue::default(), running: vec![None; cores], ids: vec![None; cores], idle: cores, primary: vec![0; cores], busy: Vec::new(), later: Vec::new(), queued: 0, touched: Vec::with_capacity(cores) }
    }

    pub fn release(&mut self, key: Key) {
        let task = task_of(key) as usize;
        if task >= self.busy.len() {
            self.busy.resize(task + 1, false);
            self.later.resize_with(task + 1, VecDeque::new);
        }
        if self.busy[task] {
            self.later[task].push_back(key);
            self.queued += 1;
        } else {
            self.busy[task] = true;
            self.ready.push(key);
        }
    }

    pub fn complete(&mut self, job: JobId, core: usize) {
        let Some(key) = self.running[core].filter(|k| k.2 == job) else { return };
        self.running[core] = None;
        self.ids[core] = None;
        self.primary[core] = 0;
        self.idle += 1;
        let task = task_of(key) as usize;
        let next = if self.queued > 0 { self.later[task].pop_front() } else { None };
        match next {
            Some(next) => {
                self.queued -= 1;
                self.ready.push(next);
            }
            None => self.busy[task] = false,
        }
    }

    /// Core `core` is no longer available to this queue.
    pub fn vacate(&mut self, core: usize) {
        if let Some(run) = self.running[core].take() {
            self.ids[core] = None;
            self.primary[core] = 0;
            self.idle += 1;
            self.ready.push(run);
        }
    }

    /// Note core `c` as given a job, keeping `touched` in core order (as the
    /// engine sees cores when it compares them all: segments closing at one
    /// instant go out in that order). A decision touches few cores.
    fn touch(&mut self, c: usize) {
        self.touched.push(c);
        let mut i = self.touched.len() - 1;
        while i > 0 && self.touched[i - 1] > c {
            self.touched.swap(i - 1, i);
            i -= 1;
        }
    }

    /// Write the cores the last `dispatch` gave a job into `running` (a global
    /// scheduler's view; completions are the engine's own, so no other core
    /// differs).
    #[inline]
    pub fn hand_out(&self, running: &mut [Option<JobId>]) {
        for &c in &self.touched {
            running[c] = self.ids[c];
        }
    }

    /// Place ready jobs on `available` cores. `last_core(job)` helps keep a job
    /// where it ran before (no migration when an idle core allows it).
    pub fn dispatch(&mut self, available: impl Fn(usize) -> bool, last_core: impl Fn(JobId) -> u32) {
        let m = self.running.len();
        self.touched.clear();
        while let Some(best) = self.ready.peek() {
            // An idle available core, preferring the job's previous one.
            if self.idle > 0 {
                let last = last_core(best.2) as usize;
                let idle = if last < m && self.running[last].is_none() && available(last) {
                    Some(last)
                } else {
                    (0..m).find(|&c| self.running[c].is_none() && available(c))
                };
                if let Some(c) = idle {
                    self.ready.pop();
                    self.running[c] = Some(best);
                    self.ids[c] = Some(best.2);
                    self.primary[c] = best.0;
                    self.idle -= 1;
                    self.touch(c);
                    continue;
                }
            }
            // Otherwise the available core running the worst job, if best beats it:
            // only a strictly larger primary key can be preempted.
            let mut latest = 0;
            for (c, &p) in self.primary.iter().enumerate() {
                if p > latest && available(c) {
                    latest = p;
                }
            }
            if best.0 >= latest {
                break;
            }
            let worst = (0..m)
                .filter(|&c| self.primary[c] == latest && available(c))
                .filter_map(|c| self.running[c].map(|k| (k, c)))
                .max();
            let Some((k, c)) = worst else { break };
            self.ready.replace_top(k);
            self.running[c] = Some(best);
            self.ids[c] = Some(best.2);
            self.primary[c] = best.0;
            self.touch(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_queue_preempts_only_on_a_strictly_better_key() {
        let mut q = CoreQueue::default();
        q.release((10, 5 << 32, 1));
        assert_eq!(q.dispatch(), Some(1));
        q.release((10, 0, 2)); // equal deadline, lower task index: still no preemption
        assert_eq!(q.dispatch(), Some(1));
        q.release((5, 0, 3));
        assert_eq!(q.dispatch(), Some(3));
        q.complete(3);
        // Both 1 and 2 are now ready: full key order picks the lower task index.
        assert_eq!(q.dispatch(), Some(2));
    }

    #[test]
    fn global_queue_does_not_preempt_on_an_equal_deadline() {
        let mut g = GlobalQueue::new(1);
        g.release((10, 5 << 32 | 1, 1));
        g.dispatch(|_| true, |_| NONE);
        g.release((10, 1 << 32 | 1, 2)); // same deadline, lower task index
        g.dispatch(|_| true, |_| NONE);
        assert_eq!(g.running, vec![Some((10, 5 << 32 | 1, 1))]);
    }

    #[test]
    fn global_queue_fills_idle_cores_then_preempts_the_worst() {
        // One job each of tasks 1, 2, 3 (secondary = task << 32 | job).
        let (a, b, c) = ((30, 1 << 32 | 1, 1), (20, 2 << 32 | 1, 2), (10, 3 << 32 | 1, 3));
        let mut g = GlobalQueue::new(2);
        g.release(a);
        g.release(b);
        g.dispatch(|_| true, |_| NONE);
        assert_eq!(g.running, vec![Some(b), Some(a)]);
        g.release(c);
        g.dispatch(|_| true, |_| NONE);
        // Job 1 (deadline 30) is the worst running: job 3 takes its core.
        assert_eq!(g.running, vec![Some(b), Some(c)]);
        assert_eq!(g.ready.peek(), Some(a));
    }

    #[test]
    fn global_queue_keeps_a_job_on_its_previous_core_when_idle() {
        let mut g = GlobalQueue::new(3);
        g.release((5, 0, 7));
        g.dispatch(|_| true, |_| 2);
        assert_eq!(g.running[2], Some((5, 0, 7)));
    }

    #[test]
    fn global_queue_never_runs_two_jobs_of_one_task_at_once() {
        // Task 1's jobs 1 and 2 (secondary = task << 32 | job) and task 2's job 1; 3 idle cores.
        let mut g = GlobalQueue::new(3);
        g.release((10, 1 << 32 | 1, 1));
        g.release((20, 1 << 32 | 2, 2));
        g.release((30, 2 << 32 | 1, 3));
        g.dispatch(|_| true, |_| NONE);
        assert_eq!(g.running, vec![Some((10, 1 << 32 | 1, 1)), Some((30, 2 << 32 | 1, 3)), None]);
        // Job 2 waits behind job 1, outside the ready queue.
        assert_eq!(g.ready.peek(), None);
        // Once job 1 finishes, job 2 runs.
        g.complete(1, 0);
        g.dispatch(|_| true, |_| NONE);
        assert_eq!(g.running, vec![Some((20, 1 << 32 | 2, 2)), Some((30, 2 << 32 | 1, 3)), None]);
        // Nothing waits behind job 2: once it finishes, task 1's next job is ready at once.
        g.complete(2, 0);
        g.release((40, 1 << 32 | 3, 4));
        assert_eq!(g.ready.peek(), Some((40, 1 << 32 | 3, 4)));
    }

    #[test]
    fn global_queue_names_the_cores_it_gave_a_job_in_core_order() {
        // Job 7 ran on core 2 before, so it goes there first; then 8 and 9 fill cores 0 and 1.
        let mut g = GlobalQueue::new(3);
        g.release((5, 1 << 32 | 1, 7));
        g.release((6, 2 << 32 | 1, 8));
        g.release((7, 3 << 32 | 1, 9));
        g.dispatch(|_| true, |id| if id == 7 { 2 } else { NONE });
        assert_eq!(g.ids, vec![Some(8), Some(9), Some(7)]);
        assert_eq!(g.touched, vec![0, 1, 2]);
        // Nothing new: nothing touched.
        g.dispatch(|_| true, |_| NONE);
        assert!(g.touched.is_empty());
        // Job 10 (deadline 1) preempts job 9 (deadline 7, the latest) on core 1 alone.
        g.release((1, 4 << 32 | 1, 10));
        g.dispatch(|_| true, |_| NONE);
        assert_eq!(g.touched, vec![1]);
        assert_eq!(g.ids[1], Some(10));
    }

    const NONE: u32 = u32::MAX;
}
