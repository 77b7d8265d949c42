//! Cause-effect chains in a run (docs/simulator.md, "Cause-effect chains";
//! issue 27, Build 6): every job of a chain's tasks reads its inputs and
//! writes its outputs at the instants its `communication` says
//! (`model::Communication`), each task reading the latest value the task
//! before it wrote (a write at the very instant of a read is seen by it).
//!
//! - **Data age** of an output: its write less the read, by the chain's
//!   first task, of the input it is based on (each job's backward chain).
//! - **Reaction time** to an input that changes just after a read of the
//!   first task: the first output based on the next read or a later one,
//!   its write less that earlier read (each job's forward chain, Dürr et
//!   al. 2019; docs/references.md, "Cause-effect chains").
//!
//! Only jobs finished within the run count; [`ChainTap`] collects their
//! times from the engine's job records as they close.

use super::job::JobRecord;
use super::sink::Sink;
use super::regulate::Interval;
use super::{Segment, ServerSegment, Unfinished, WorkSpan};
use crate::model::TaskSystem;

/// One chain's measured latencies (ns), and every hop data took along it
/// (the trace draws each as a flow arrow).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainStats {
    pub name: String,
    pub reaction_ns: Vec<u64>,
    pub data_age_ns: Vec<u64>,
    pub hops: Vec<Hop>,
}

/// Job `from` (task, job number) wrote the value job `to` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub from: (u32, u32),
    pub to: (u32, u32),
}

/// Keeps (release, start, finish) of every finished job of a chain's task,
/// handing everything on to `inner` (job records only if `keep_jobs`).
pub struct ChainTap<'a> {
    pub inner: &'a mut dyn Sink,
    pub keep_jobs: bool,
    in_chain: Vec<bool>,
    /// Per task: its finished jobs' (release, start, finish, number).
    pub jobs: Vec<Vec<(u64, u64, u64, u32)>>,
}

impl<'a> ChainTap<'a> {
    pub fn new(system: &TaskSystem, inner: &'a mut dyn Sink, keep_jobs: bool) -> Self {
        let mut in_chain = vec![false; system.tasks.len()];
        for c in &system.chains {
            for &t in &c.tasks {
                in_chain[t] = true;
            }
        }
        ChainTap { inner, keep_jobs, in_chain, jobs: vec![Vec::new(); system.tasks.len()] }
    }
}

impl Sink for ChainTap<'_> {
    fn job(&mut self, r: &JobRecord) {
        if self.in_chain[r.task as usize] {
            self.jobs[r.task as usize].push((r.release_ns, r.start_ns, r.finish_ns, r.number));
        }
        if self.keep_jobs {
            self.inner.job(r);
        }
    }
    fn run_ends(&mut self, end_ns: u64) {
        self.inner.run_ends(end_ns);
    }
    fn unfinished(&mut self, job: &Unfinished) {
        if self.keep_jobs {
            self.inner.unfinished(job);
        }
    }
    fn segment(&mut self, segment: &Segment) {
        self.inner.segment(segment);
    }
    fn work_span(&mut self, span: &WorkSpan) {
        self.inner.work_span(span);
    }
    fn server_segment(&mut self, segment: &ServerSegment) {
        self.inner.server_segment(segment);
    }
    fn interval(&mut self, interval: &Interval) {
        self.inner.interval(interval);
    }
    fn bandwidth_bin(&mut self, index: u64, requests: &[f64]) {
        self.inner.bandwidth_bin(index, requests);
    }
}

/// Every chain's latencies, from the jobs `ChainTap` kept.
pub fn measure(system: &TaskSystem, jobs: &[Vec<(u64, u64, u64, u32)>]) -> Vec<ChainStats> {
    system.chains.iter().map(|c| measure_one(system, &c.name, &c.tasks, jobs)).collect()
}

fn measure_one(system: &TaskSystem, name: &str, tasks: &[usize], jobs: &[Vec<(u64, u64, u64, u32)>]) -> ChainStats {
    // Per task of the chain, its jobs in release order as (read, write, origin,
    // number, source): origin = the first task's read its input goes back to
    // (None: no data yet); source = the job of the task before it read from.
    let mut prev: Vec<Job> = Vec::new();
    let mut first_reads: Vec<u64> = Vec::new();
    let mut hops = Vec::new();
    for (k, &t) in tasks.iter().enumerate() {
        let task = &system.tasks[t];
        let mut own = jobs[t].clone();
        own.sort_unstable();
        let c = task.communication;
        let cur: Vec<Job> = own
            .iter()
            .map(|&(release, start, finish, number)| {
                let (read, write) = (c.read_ns(release, start), c.write_ns(release, finish, task.period_ns));
                let source = if k == 0 { None } else { latest_before(&prev, read) };
                let origin = if k == 0 { Some(read) } else { source.and_then(|j| prev[j].origin) };
                if let Some(j) = source.filter(|_| origin.is_some()) {
                    hops.push(Hop { from: (tasks[k - 1] as u32, prev[j].number), to: (t as u32, number) });
                }
                Job { read, write, origin, number }
            })
            .collect();
        if k == 0 {
            first_reads = cur.iter().map(|j| j.read).collect();
        }
        prev = cur;
    }
    let data_age_ns = prev.iter().filter_map(|j| j.origin.map(|o| j.write - o)).collect();
    // Outputs in write order, with the newest origin so far (non-decreasing,
    // so the first output based on a read at or after x is found by search).
    let mut outputs: Vec<(u64, Option<u64>)> = prev.iter().map(|j| (j.write, j.origin)).collect();
    outputs.sort_unstable_by_key(|&(w, _)| w);
    let mut newest = Vec::with_capacity(outputs.len());
    let mut m: Option<u64> = None;
    for &(_, o) in &outputs {
        m = m.max(o);
        newest.push(m);
    }
    let reaction_ns = first_reads
        .windows(2)
        .filter_map(|pair| {
            let (before, read) = (pair[0], pair[1]);
            let k = newest.partition_point(|o| o.is_none_or(|o| o < read));
            outputs.get(k).map(|&(w, _)| w - before)
        })
        .collect();
    ChainStats { name: name.to_string(), reaction_ns, data_age_ns, hops }
}

/// A job of a chain's task: when it read and wrote, the first task's read
/// its data goes back to, its number.
struct Job {
    read: u64,
    write: u64,
    origin: Option<u64>,
    number: u32,
}

/// The job (index) with the latest write at or before `read`, among jobs
/// whose writes do not decrease.
fn latest_before(writer: &[Job], read: u64) -> Option<usize> {
    writer.partition_point(|j| j.write <= read).checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{parse_task_system, Format};

    fn system(comm: &str) -> TaskSystem {
        let text = format!(
            "[platform]\ncores = 2\n\
             [[task]]\nname = \"a\"\ncore = 0\nperiod = \"10us\"\npet = \"2us\"\ncommunication = \"{comm}\"\n\
             [[task]]\nname = \"b\"\ncore = 1\nperiod = \"15us\"\npet = \"3us\"\ncommunication = \"{comm}\"\n\
             [[chain]]\nname = \"ab\"\ntasks = [\"a\", \"b\"]\n"
        );
        parse_task_system(&text, Format::Toml, "t.toml").unwrap()
    }

    #[test]
    fn implicit_chain_by_hand() {
        // a reads at its starts 0, 10, 20, 30 and writes at 2, 12, 22, 32; b reads
        // at 0, 15, 30 and writes at 3, 18, 33 (µs). b's job at 0 finds no data;
        // at 15 it reads a's write of 12 (read at 10): age 18 − 10 = 8; at 30 it
        // reads 22's (read at 20): 33 − 20 = 13. Reaction: an input just after
        // a's read at 0 is read at 10, first in b's output of 18: 18 − 0; after
        // 10, read at 20, out at 33: 33 − 10 = 23; after 20, read at 30, never
        // out within the jobs given.
        let us = 1_000;
        let s = system("implicit");
        let mut jobs = vec![Vec::new(); 2];
        jobs[0] = (0..4).map(|k| (k * 10 * us, k * 10 * us, (k * 10 + 2) * us, k as u32 + 1)).collect();
        jobs[1] = (0..3).map(|k| (k * 15 * us, k * 15 * us, (k * 15 + 3) * us, k as u32 + 1)).collect();
        let c = &measure(&s, &jobs)[0];
        assert_eq!(c.data_age_ns, [8 * us, 13 * us]);
        // b's jobs 2 and 3 read a's jobs 2 (written at 12) and 3 (at 22).
        assert_eq!(c.hops, [Hop { from: (0, 2), to: (1, 2) }, Hop { from: (0, 3), to: (1, 3) }]);
        assert_eq!(c.reaction_ns, [18 * us, 23 * us]);
    }

    #[test]
    fn let_chain_by_hand() {
        // LET: a reads at releases 0, 10, 20, 30 and writes at 10, 20, 30, 40; b
        // reads at 0, 15, 30 and writes at 15, 30, 45. b at 15 reads a's write
        // of 10 (read at 0): age 30 − 0 = 30; at 30 it reads the write of 30
        // (read at 20; a write at the instant of a read is seen): 45 − 20 = 25.
        // Reaction after 0: read at 10, written 20, read by b at 30, out at 45:
        // 45; after 10: read at 20, out at 45 too: 35; after 20: never out.
        let us = 1_000;
        let s = system("let");
        let mut jobs = vec![Vec::new(); 2];
        jobs[0] = (0..4).map(|k| (k * 10 * us, k * 10 * us, (k * 10 + 2) * us, k as u32 + 1)).collect();
        jobs[1] = (0..3).map(|k| (k * 15 * us, k * 15 * us, (k * 15 + 3) * us, k as u32 + 1)).collect();
        let c = &measure(&s, &jobs)[0];
        assert_eq!(c.data_age_ns, [30 * us, 25 * us]);
        assert_eq!(c.reaction_ns, [45 * us, 35 * us]);
    }
}
