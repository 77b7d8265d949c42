//! Jobs in flight and the record a finished job leaves.

/// Index of a job in the [`Jobs`] slab (reused once the job finishes).
pub type JobId = u32;

/// Sentinel for "none" in compact u32/u64 fields.
pub const NONE_U32: u32 = u32::MAX;
pub const NONE_U64: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Job {
    pub task: u32,
    /// 1-based job number J_{i,number}.
    pub number: u32,
    pub release_ns: u64,
    /// Absolute deadline.
    pub deadline_ns: u64,
    /// Actual execution demand (work at rate 1).
    pub exec_ns: u64,
    /// Work left, in nanoseconds at rate 1.
    pub remaining_ns: u64,
    /// First time the job ran, or NONE_U64.
    pub start_ns: u64,
    pub preemptions: u32,
    pub migrations: u32,
    /// Core the job last ran on, or NONE_U32.
    pub last_core: u32,
    /// Memory requests issued so far.
    pub memory_requests: f64,
    /// Time stalled on memory or by a regulator so far.
    pub memory_stall_ns: f64,
    /// Preempted since it last ran: its cache contents may be gone.
    pub needs_reload: bool,
    /// The memory model's mark when the job was last preempted (fluid: lines
    /// brought into its LLC partition so far).
    pub cache_mark: f64,
    /// Reload work added to `exec_ns` so far (its PET is `exec_ns` less this).
    pub reload_ns: u64,
    /// Lines reloaded so far, its start's included: a job misses at most
    /// once per reference, so never more than its references.
    pub reloaded_lines: f64,
    /// Work done beyond `exec_ns − remaining_ns` at rates below 1, less
    /// than 1 ns: carried, so whole-ns bookkeeping never loses work event
    /// after event.
    pub work_carry: f64,
    /// Cooperative and non-preemptive tasks: the next region to start, where
    /// the current one ends (work done, as `exec_ns − remaining_ns`), and
    /// whether the job is inside it now (the scheduler may not preempt it).
    pub region: u32,
    pub region_end: u64,
    pub locked: bool,
}

impl Job {
    /// When this job, running at `rate` (work per ns) from `now`, reaches
    /// `work` done (ns at rate 1): its whole ns and the carried fraction
    /// both count, so every boundary (completion, runnable phase, preemption
    /// point) is timed from the work done exactly. `NONE_U64` at rate 0.
    pub fn reaches(&self, now: u64, work: u64, rate: f64) -> u64 {
        let left = work.saturating_sub(self.exec_ns - self.remaining_ns);
        if rate == 1.0 && self.work_carry == 0.0 {
            now + left
        } else if rate > 0.0 {
            now.saturating_add(ceil_ns((left as f64 - self.work_carry).max(0.0) / rate))
        } else {
            NONE_U64
        }
    }
}

/// Whole ns at or after `t` ns, a float's error above a whole ns counting as it.
pub fn ceil_ns(t: f64) -> u64 {
    (t - 1e-6).ceil().max(0.0) as u64
}

/// Slab of live jobs; ids are recycled so memory stays bounded by the jobs in flight.
#[derive(Debug, Default)]
pub struct Jobs {
    slots: Vec<Job>,
    free: Vec<JobId>,
}

impl Jobs {
    pub fn insert(&mut self, job: Job) -> JobId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = job;
                id
            }
            None => {
                self.slots.push(job);
                (self.slots.len() - 1) as JobId
            }
        }
    }

    pub fn remove(&mut self, id: JobId) -> Job {
        self.free.push(id);
        self.slots[id as usize]
    }

    #[inline]
    pub fn get(&self, id: JobId) -> &Job {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: JobId) -> &mut Job {
        &mut self.slots[id as usize]
    }

    /// Live jobs (ids not on the free list), for the end-of-run sweep.
    pub fn live(&self) -> impl Iterator<Item = (JobId, &Job)> {
        let mut free = self.free.clone();
        free.sort_unstable();
        self.slots.iter().enumerate().filter(move |(i, _)| free.binary_search(&(*i as JobId)).is_err()).map(|(i, j)| (i as JobId, j))
    }
}

/// What a finished job leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRecord {
    pub task: u32,
    pub number: u32,
    /// Core it finished on.
    pub core: u32,
    pub release_ns: u64,
    pub start_ns: u64,
    pub finish_ns: u64,
    pub deadline_ns: u64,
    pub exec_ns: u64,
    pub preemptions: u32,
    pub migrations: u32,
    pub memory_requests: u64,
    pub memory_stall_ns: u64,
}

impl JobRecord {
    pub fn response_ns(&self) -> u64 {
        self.finish_ns - self.release_ns
    }

    pub fn tardiness_ns(&self) -> u64 {
        self.finish_ns.saturating_sub(self.deadline_ns)
    }
}
