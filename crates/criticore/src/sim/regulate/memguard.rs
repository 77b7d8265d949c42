//! MemGuard in the simulator: the fluid model's request rates drive
//! [`MemguardRules`] (the rules themselves, with reclaim and spare sharing,
//! are in `regulate::memguard`). An entity is a core, or a group of tasks
//! when the file gives `[[regulation.group]]`s: a core's requests are charged
//! to the group of the task it runs. An exhausted group's tasks are held
//! until the next period and their cores go to the other tasks, as the
//! runtime stops a group's processes (a scheduler that cannot hold a task
//! stalls the core running it instead); an exhausted core stalls. Exhaustion
//! is computed exactly from the rates.

use super::{exhaustion_time, CoreView, EntityTotals, HeldTime, Interval, IntervalLog, Regulator};
use crate::model::Regulation;
use crate::regulate::entities::EntityPlan;
use crate::regulate::memguard::MemguardRules;
use crate::sim::job::NONE_U64;

#[derive(Debug, Clone)]
pub struct Memguard {
    pub rules: MemguardRules,
    /// Who the budgets belong to (the runtime's groups are the same plan).
    pub plan: EntityPlan,
    /// Per task, its group (group mode only).
    group_of_task: Option<Vec<Option<usize>>>,
    /// Per core, the entity its requests are charged to.
    entity_of_core: Vec<Option<usize>>,
    /// Per entity, when its budget runs out at the current rates.
    exhaust_at: Vec<u64>,
    /// Per entity: runs a task on some core.
    active: Vec<bool>,
    stalled: Vec<bool>,
    /// Scratch: per entity, the request rate.
    rate: Vec<f64>,
    pub log: IntervalLog,
    /// Per entity, its whole periods and time stalled; scratch: stalled now.
    totals: Vec<EntityTotals>,
    held: HeldTime,
    held_now: Vec<bool>,
    /// Group mode: per entity its tasks, whether they are held now, and the
    /// holds and releases the engine has not taken yet (with when they came).
    tasks_of: Vec<Vec<u32>>,
    holding: Vec<bool>,
    pending: Vec<(u32, bool)>,
    pending_at: u64,
    /// Group mode: per group, its "held" spans.
    held_log: IntervalLog,
}

impl Memguard {
    /// MemGuard over the entities of `plan` (`regulate::entities`).
    pub fn new(plan: EntityPlan, config: &Regulation, tasks: usize, cores: usize) -> Self {
        let budgets = plan.budgets();
        let group_of_task = plan.group_of_task(tasks);
        let entity_of_core = if group_of_task.is_some() { vec![None; cores] } else { (0..cores).map(Some).collect() };
        let n = budgets.len();
        Memguard {
            rules: MemguardRules::new(config.period_ns, &budgets, config.memguard),
            plan,
            entity_of_core,
            exhaust_at: vec![NONE_U64; n],
            active: vec![false; n],
            stalled: vec![false; cores],
            rate: vec![0.0; n],
            log: IntervalLog::new(cores),
            totals: vec![EntityTotals::default(); n],
            held: HeldTime::new(n),
            held_now: vec![false; n],
            tasks_of: match &group_of_task {
                Some(of) => (0..n).map(|k| (0..tasks as u32).filter(|&t| of[t as usize] == Some(k)).collect()).collect(),
                None => vec![Vec::new(); n],
            },
            holding: vec![false; n],
            pending: Vec::new(),
            pending_at: NONE_U64,
            held_log: IntervalLog::new(if group_of_task.is_some() { n } else { 0 }),
            group_of_task,
        }
    }

    /// Group mode: hold the tasks of every exhausted group (rule 4, as the
    /// runtime stops its processes) and let go the rest.
    fn hold_groups(&mut self, now: u64) {
        for k in 0..self.holding.len() {
            // Rule 4 itself (a held group has work: `map_cores` keeps it active).
            let hold = !self.tasks_of[k].is_empty() && self.rules.must_stall(k, &self.active);
            if hold != self.holding[k] {
                self.holding[k] = hold;
                self.pending.extend(self.tasks_of[k].iter().map(|&t| (t, hold)));
                self.pending_at = now;
                self.held_log.set(k, hold.then_some("held"), now);
            }
        }
    }

    /// Budgets that run out now (an exhaustion at a period boundary belongs
    /// to the period that ends), then the period start.
    pub fn on_time(&mut self, now: u64) -> bool {
        for k in 0..self.exhaust_at.len() {
            if self.exhaust_at[k] <= now {
                self.exhaust_at[k] = NONE_U64;
                self.rules.exhaust(k);
            }
        }
        if now >= self.rules.next_period_ns() {
            for (k, t) in self.totals.iter_mut().enumerate() {
                t.period_ended(self.rules.used(k), self.rules.exhausted(k));
            }
        }
        let started = self.rules.replenish_if_due(now);
        self.hold_groups(now);
        started
    }

    /// Map cores to entities for what runs now and mark active entities.
    pub fn map_cores(&mut self, cores: &[CoreView]) {
        if let Some(of) = &self.group_of_task {
            for (e, v) in self.entity_of_core.iter_mut().zip(cores) {
                *e = v.task.and_then(|t| of[t as usize]);
            }
        }
        self.active.fill(false);
        for (e, v) in self.entity_of_core.iter().zip(cores) {
            if let (Some(k), Some(_)) = (e, v.task) {
                self.active[*k] = true;
            }
        }
        // A held group has work to do, though no core runs it.
        for (a, &h) in self.active.iter_mut().zip(&self.holding) {
            *a |= h;
        }
    }

    pub fn set_stalled(&mut self, core: usize, stalled: bool) {
        self.stalled[core] = stalled;
    }

    /// After the cores' stalls are set: an entity is held while a core of it stalls.
    pub fn note_held(&mut self, now: u64) {
        self.held_now.fill(false);
        for (e, &stalled) in self.entity_of_core.iter().zip(&self.stalled) {
            if let (Some(k), true) = (e, stalled) {
                self.held_now[*k] = true;
            }
        }
        for (h, &holding) in self.held_now.iter_mut().zip(&self.holding) {
            *h |= holding;
        }
        for (k, &held) in self.held_now.iter().enumerate() {
            self.held.set(k, held, now);
        }
    }
}

impl Regulator for Memguard {
    fn next_event(&self) -> u64 {
        // Holds decided after a dispatch (spare sharing) are taken at once.
        let pending = if self.pending.is_empty() { NONE_U64 } else { self.pending_at };
        self.exhaust_at.iter().copied().min().unwrap_or(NONE_U64).min(self.rules.next_period_ns()).min(pending)
    }

    fn advance(&mut self, from: u64, to: u64, requests_per_ns: &[f64]) {
        let dt = (to - from) as f64;
        for (c, r) in requests_per_ns.iter().enumerate() {
            if let Some(k) = self.entity_of_core[c] {
                if *r > 0.0 {
                    // Rule 3; exhaustion itself is the computed event (on_time).
                    let left = self.rules.left(k);
                    self.rules.charge(k, (r * dt).min(left));
                }
            }
        }
    }

    fn on_event(&mut self, now: u64, _cores: &[CoreView]) {
        self.on_time(now);
    }

    fn update(&mut self, now: u64, cores: &[CoreView]) {
        self.map_cores(cores);
        if self.rules.share_spare(&self.active) {
            self.hold_groups(now);
        }
        // Rule 4: a core whose entity is exhausted stalls until the next period.
        for c in 0..self.stalled.len() {
            self.stalled[c] = cores[c].task.is_some() && self.entity_of_core[c].is_some_and(|k| self.rules.must_stall(k, &self.active));
            self.log.set(c, self.stalled[c].then_some("stalled"), now);
        }
        self.note_held(now);
    }

    fn set_flows(&mut self, now: u64, requests_per_ns: &[f64]) {
        self.rate.fill(0.0);
        for (c, r) in requests_per_ns.iter().enumerate() {
            if let Some(k) = self.entity_of_core[c] {
                self.rate[k] += r;
            }
        }
        for (k, &r) in self.rate.iter().enumerate() {
            self.exhaust_at[k] =
                if !self.rules.exhausted(k) && r > 0.0 { exhaustion_time(now, self.rules.left(k), r) } else { NONE_U64 };
        }
    }

    fn allowed(&self, core: usize) -> bool {
        !self.stalled[core]
    }

    fn take_holds(&mut self, out: &mut Vec<(u32, bool)>) {
        out.append(&mut self.pending);
    }

    fn drain_intervals(&mut self, out: &mut Vec<Interval>) {
        self.log.drain(out);
        self.held_log.drain(out);
    }

    fn finish(&mut self, end: u64) -> Vec<Interval> {
        let mut out = self.log.finish(end);
        out.append(&mut self.held_log.finish(end));
        out
    }

    fn entities(&mut self, end: u64) -> Vec<EntityTotals> {
        self.held.finish(end, &mut self.totals);
        self.totals.clone()
    }

    fn entity_plan(&self) -> Option<&EntityPlan> {
        Some(&self.plan)
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::{sched::SchedulerKind, simulate, SimConfig};

    /// Two tasks on two cores, each issuing 1 request per µs of work and
    /// never finishing within 100 ms. `regulation` is the [regulation] body.
    fn run(regulation: &str) -> crate::sim::SimResult {
        let mut text = String::from("[platform]\ncores = 2\n");
        for (name, core) in [("t0", 0), ("t1", 1)] {
            text += &format!(
                "[[task]]\nname = \"{name}\"\ncore = {core}\nperiod = \"200ms\"\npet = \"200ms\"\n\
                 memory = {{ wss = \"64MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 1000 }}\n"
            );
        }
        text += "[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\n";
        text += regulation;
        let system = crate::parse_task_system(&text, crate::Format::Toml, "t.toml").unwrap();
        simulate(&system, SchedulerKind::Pfp, &SimConfig::new(100_000_000)).unwrap()
    }

    fn requests(regulation: &str) -> Vec<u64> {
        run(regulation).per_task.iter().map(|t| t.memory_requests.round() as u64).collect()
    }

    #[test]
    fn entity_totals_count_whole_periods_and_time_stalled_per_group() {
        // t0 alone in "a" demands about 1000 per 1 ms period against 500; t1
        // alone in "b" about 1000 against 2000. Groups listed b first: the
        // entities follow the file's groups, not the cores. (Memory latency
        // slows the tasks a little below 1 request per µs.)
        let r = run("[[regulation.group]]\nname = \"b\"\ntasks = [\"t1\"]\nbudget = 2000\n\
                     [[regulation.group]]\nname = \"a\"\ntasks = [\"t0\"]\nbudget = 500\n");
        let e = &r.regulator_entities;
        assert_eq!(e.len(), 2);
        // 99 whole periods: the boundary at the end closes none.
        assert_eq!((e[0].periods, e[0].exhausted_periods, e[0].stopped_ns), (99, 0, 0));
        assert!((e[0].used / 99_000.0 - 1.0).abs() < 1e-3, "{e:?}");
        // t0 uses its 500 in about 0.5 ms, then stalls the rest of every period.
        assert_eq!((e[1].periods, e[1].exhausted_periods), (99, 99));
        assert!((e[1].used - 99.0 * 500.0).abs() < 1.0, "{e:?}");
        assert!(e[1].stopped_ns.abs_diff(50_000_000) < 100_000, "{e:?}");
    }

    #[test]
    fn a_group_budget_is_shared_by_its_tasks_on_every_core() {
        // Per core: 250 requests per 1 ms period each, for 100 periods.
        assert_eq!(requests("budgets = [250, 250]\n"), vec![25_000, 25_000]);
        // One group of both tasks with 500 per period: they share it; running
        // at the same rate they use 250 each before the group stalls.
        assert_eq!(requests("[[regulation.group]]\nname = \"g\"\ntasks = [\"t0\", \"t1\"]\nbudget = 500\n"), vec![25_000, 25_000]);
        // A group of t0 alone: t1 is not regulated.
        let r = requests("[[regulation.group]]\nname = \"g\"\ntasks = [\"t0\"]\nbudget = 500\n");
        assert_eq!(r[0], 50_000);
        assert!(r[1] > 90_000, "{r:?}");
    }

    #[test]
    fn a_bandwidth_budget_is_lines_per_period() {
        // 16 MB/s with 32 B lines (the default platform) at 1 ms: 500 lines per period.
        let r = requests("[[regulation.group]]\nname = \"g\"\ntasks = [\"t0\"]\nbudget = \"16MB/s\"\n");
        assert_eq!(r[0], 500 * 100);
        let r = requests("[[regulation.group]]\nname = \"g\"\ntasks = [\"t0\"]\nbudget = \"8MB/s\"\n");
        assert_eq!(r[0], 250 * 100);
    }

    #[test]
    fn an_exhausted_group_gives_its_core_to_the_other_tasks() {
        // Both tasks on core 0, "hi" first by priority, 1 request per µs of
        // work, 64 MiB streams (every access misses). "hi" has 400 per 1 ms
        // period: it runs until its budget is gone, then its group is held
        // and "lo" (no group) takes the core for the rest of the period, as
        // the runtime stops hi's process and lets lo run. Were the core
        // stalled instead, lo would never run.
        let mut text = String::from("[platform]\ncores = 1\n");
        // (P-EDF: hi's earlier deadline gives it the same precedence.)
        for (name, prio, deadline) in [("hi", 2, 150), ("lo", 1, 200)] {
            text += &format!(
                "[[task]]\nname = \"{name}\"\ncore = 0\npriority = {prio}\nperiod = \"200ms\"\ndeadline = \"{deadline}ms\"\npet = \"200ms\"\n\
                 memory = {{ wss = \"64MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 1000 }}\n"
            );
        }
        text += "[regulation]\nkind = \"memguard\"\nperiod = \"1ms\"\n[[regulation.group]]\nname = \"g\"\ntasks = [\"hi\"]\nbudget = 400\n";
        let system = crate::parse_task_system(&text, crate::Format::Toml, "t.toml").unwrap();
        for kind in [SchedulerKind::Pfp, SchedulerKind::Pedf] {
            let r = simulate(&system, kind, &SimConfig::new(100_000_000)).unwrap();
            let req: Vec<f64> = r.per_task.iter().map(|t| t.memory_requests).collect();
            // 100 periods: hi issues its 400 in each (0.4 ms of work at
            // 1 per µs, a little more with the bus time of a write: at most
            // 0.6 ms of lo's), lo issues one per µs of the rest.
            assert!((req[0] - 40_000.0).abs() < 1.0, "{kind:?}: {req:?}");
            assert!(req[1] > 0.4 * 100_000.0 * 0.9 && req[1] <= 60_000.0, "{kind:?}: {req:?}");
            // The group is held from exhaustion to the period's end: about 0.6 ms of each 1 ms.
            let e = &r.regulator_entities;
            assert_eq!((e[0].periods, e[0].exhausted_periods), (99, 99), "{kind:?}");
            assert!(e[0].stopped_ns.abs_diff(60_000_000) < 2_000_000, "{kind:?}: {e:?}");
        }
    }
}
