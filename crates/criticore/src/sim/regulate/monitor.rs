//! The bandwidth monitor of blin-bandwidth-monitor §3.3 in the simulator:
//! while a job of the real-time task is active, the global traffic of the
//! fluid model is sampled every Δ (50 µs by default, §4.1) and fed to
//! `regulate::monitor::MonitorRules`, which decides when the best-effort
//! cores are suspended; they resume when the real-time job completes. The
//! job's phase is taken from its work done.

use super::{CoreView, Interval, IntervalLog, Regulator};
use crate::model::overhead::OverheadTable;
use crate::model::{MonitorConfig, TaskSystem};
use crate::regulate::entities::{EntityPlan, Holder};
use crate::regulate::monitor::MonitorRules;
use crate::sim::job::NONE_U64;
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MonitorStats {
    /// Real-time jobs observed.
    pub jobs: u64,
    /// Jobs during which the best-effort cores were suspended.
    pub suspensions: u64,
    /// Per job: the share of its active time before suspension (parallelism).
    pub parallelism: Vec<f64>,
}

#[derive(Debug, Clone)]
pub struct Monitor {
    plan: EntityPlan,
    rt_task: u32,
    be: Vec<bool>,
    rules: MonitorRules,
    line_bytes: f64,
    /// Cumulative work at the end of each memory phase of the real-time task.
    phase_ends: Vec<u64>,
    /// Releases of the real-time jobs not yet completed, oldest first; the
    /// oldest is the activation being monitored.
    pending: std::collections::VecDeque<u64>,
    next_sample: u64,
    window_requests: f64,
    suspended_at: Option<u64>,
    work_done: u64,
    pub stats: MonitorStats,
    log: IntervalLog,
}

impl Monitor {
    /// The monitor over the entities of `plan` (`regulate::entities`): the
    /// real-time task, then the best-effort cores it suspends.
    pub fn new(plan: EntityPlan, system: &TaskSystem, config: &MonitorConfig, table: OverheadTable, exec_ns: u64) -> Self {
        let mut rt_task = config.rt_task;
        let mut be = vec![false; system.platform.cores];
        for e in &plan.entities {
            match e.holder {
                Holder::MonitorTask(t) => rt_task = t,
                Holder::BestEffortCore(c) => be[c] = true,
                _ => unreachable!("monitor entities are its task and best-effort cores"),
            }
        }
        let phase_ends = system.tasks[rt_task].memory.as_ref().map_or_else(|| vec![u64::MAX], |m| m.phase_ends());
        Monitor {
            plan,
            rt_task: rt_task as u32,
            be,
            rules: MonitorRules::new(table, config.sample_ns, config.threshold, exec_ns),
            line_bytes: system.platform.llc.line_bytes as f64,
            phase_ends,
            pending: std::collections::VecDeque::new(),
            next_sample: NONE_U64,
            window_requests: 0.0,
            suspended_at: None,
            work_done: 0,
            stats: MonitorStats::default(),
            log: IntervalLog::new(system.platform.cores),
        }
    }

    fn start_activation(&mut self, now: u64) {
        self.rules.start_job();
        self.window_requests = 0.0;
        self.work_done = 0;
        self.next_sample = now + self.rules.sample_ns;
    }

    fn phase(&self) -> usize {
        self.phase_ends.iter().position(|&e| e > self.work_done).unwrap_or(self.phase_ends.len() - 1)
    }
}

impl Regulator for Monitor {
    fn next_event(&self) -> u64 {
        self.next_sample
    }

    fn advance(&mut self, from: u64, to: u64, requests_per_ns: &[f64]) {
        if !self.pending.is_empty() {
            self.window_requests += requests_per_ns.iter().sum::<f64>() * (to - from) as f64;
        }
    }

    fn observes_releases(&self) -> bool {
        true
    }

    fn job_released(&mut self, now: u64, task: u32) {
        if task != self.rt_task {
            return;
        }
        self.pending.push_back(now);
        if self.pending.len() == 1 {
            self.start_activation(now);
        }
    }

    fn job_completed(&mut self, now: u64, task: u32) {
        if task != self.rt_task {
            return;
        }
        if let Some(since) = self.pending.pop_front() {
            let span = now.saturating_sub(since).max(1) as f64;
            let parallel = self.suspended_at.map_or(now, |s| s.max(since)) - since;
            self.stats.jobs += 1;
            self.stats.parallelism.push(parallel as f64 / span);
        }
        // Resume the best-effort cores when the real-time activation ends (§3.3).
        self.rules.end_job();
        self.suspended_at = None;
        for c in 0..self.be.len() {
            self.log.set(c, None, now);
        }
        // A job released while its predecessor overran is the next activation.
        match self.pending.front() {
            Some(_) => self.start_activation(now),
            None => self.next_sample = NONE_U64,
        }
    }

    fn on_event(&mut self, now: u64, cores: &[CoreView]) {
        if let Some(v) = cores.iter().find(|v| v.task == Some(self.rt_task)) {
            self.work_done = v.work_done_ns;
        }
        if self.pending.is_empty() || now < self.next_sample {
            return;
        }
        let bytes = (self.window_requests * self.line_bytes) as u64;
        self.window_requests = 0.0;
        self.next_sample = now + self.rules.sample_ns;
        if self.rules.sample(self.phase(), bytes) {
            self.suspended_at = Some(now);
            self.stats.suspensions += 1;
            for c in 0..self.be.len() {
                if self.be[c] {
                    self.log.set(c, Some("suspended"), now);
                }
            }
        }
    }

    fn allowed(&self, core: usize) -> bool {
        !(self.suspended_at.is_some() && self.be[core])
    }

    fn report(&self) -> Option<serde_json::Value> {
        serde_json::to_value(&self.stats).ok()
    }

    fn drain_intervals(&mut self, out: &mut Vec<Interval>) {
        self.log.drain(out);
    }

    fn finish(&mut self, end: u64) -> Vec<Interval> {
        self.log.finish(end)
    }

    fn entity_plan(&self) -> Option<&EntityPlan> {
        Some(&self.plan)
    }
}
