//! MRS memory budgets in the simulator: the fluid model's request rates of
//! the cores a server holds drive `regulate::mrs::MrsMemoryRules` (rules 1,
//! 4, 5); a depleted server is handed to the scheduler, which suspends it
//! and discards its CPU budget (rule 5).

use super::{exhaustion_time, CoreView, EntityTotals, HeldTime, Interval, IntervalLog, Regulator};
use crate::model::TaskSystem;
use crate::regulate::entities::{EntityPlan, Holder};
use crate::regulate::mrs::MrsMemoryRules;
use crate::sim::job::NONE_U64;

#[derive(Debug, Clone)]
pub struct Mrs {
    plan: EntityPlan,
    rules: MrsMemoryRules,
    holder: Vec<Option<u32>>,
    exhaust_at: Vec<u64>,
    depleted: Vec<u32>,
    log: IntervalLog,
    /// Per server: requests charged and depleted in its current period, its
    /// whole periods, and its time without a core.
    period_used: Vec<f64>,
    period_depleted: Vec<bool>,
    totals: Vec<EntityTotals>,
    held: HeldTime,
}

impl Mrs {
    /// MRS over the per-server entities of `plan` (`regulate::entities`).
    pub fn new(plan: EntityPlan, system: &TaskSystem) -> Self {
        let servers: Vec<(u64, Option<u64>)> = plan
            .entities
            .iter()
            .map(|e| match e.holder {
                Holder::Server(s) => (system.servers[s].period_ns, e.budget),
                _ => unreachable!("MRS entities are servers"),
            })
            .collect();
        Mrs {
            plan,
            rules: MrsMemoryRules::new(&servers),
            holder: vec![None; system.platform.cores],
            exhaust_at: vec![NONE_U64; system.platform.cores],
            depleted: Vec::new(),
            log: IntervalLog::new(servers.len()),
            period_used: vec![0.0; servers.len()],
            period_depleted: vec![false; servers.len()],
            totals: vec![EntityTotals::default(); servers.len()],
            held: HeldTime::new(servers.len()),
        }
    }
}

impl Regulator for Mrs {
    fn next_event(&self) -> u64 {
        self.exhaust_at.iter().copied().min().unwrap_or(NONE_U64).min(self.rules.next_replenish_ns())
    }

    fn advance(&mut self, from: u64, to: u64, requests_per_ns: &[f64]) {
        let dt = (to - from) as f64;
        for (c, h) in self.holder.iter().enumerate() {
            if let Some(s) = h {
                // Rule 4; depletion itself is the computed event below.
                let s = *s as usize;
                let n = (requests_per_ns[c] * dt).min(self.rules.left(s));
                if n < self.rules.left(s) {
                    self.rules.charge(s, n);
                    self.period_used[s] += n;
                }
            }
        }
    }

    fn on_event(&mut self, now: u64, _cores: &[CoreView]) {
        // Exhaustions first: one at a period boundary belongs to the period that ends.
        for c in 0..self.exhaust_at.len() {
            if self.exhaust_at[c] <= now {
                self.exhaust_at[c] = NONE_U64;
                if let Some(s) = self.holder[c] {
                    let left = self.rules.left(s as usize);
                    if self.rules.deplete(s as usize) {
                        self.period_used[s as usize] += left;
                        self.period_depleted[s as usize] = true;
                        self.depleted.push(s); // rule 5
                        self.log.set(s as usize, Some("depleted"), now);
                    }
                }
            }
        }
        let (depleted, log, totals) = (&mut self.depleted, &mut self.log, &mut self.totals);
        let (used, depleted_in_period) = (&mut self.period_used, &mut self.period_depleted);
        self.rules.replenish_due(now, |s| {
            depleted.retain(|&d| d as usize != s);
            log.set(s, None, now);
            totals[s].period_ended(std::mem::take(&mut used[s]), std::mem::take(&mut depleted_in_period[s]));
        });
    }

    fn update(&mut self, now: u64, cores: &[CoreView]) {
        for (h, c) in self.holder.iter_mut().zip(cores) {
            *h = c.server;
        }
        for s in 0..self.totals.len() {
            let holds = self.holder.contains(&Some(s as u32));
            self.held.set(s, !holds, now);
        }
    }

    fn set_flows(&mut self, now: u64, requests_per_ns: &[f64]) {
        for c in 0..self.holder.len() {
            let r = requests_per_ns[c];
            self.exhaust_at[c] = match self.holder[c] {
                Some(s) if r > 0.0 && self.rules.limited(s as usize) && !self.rules.depleted(s as usize) => {
                    exhaustion_time(now, self.rules.left(s as usize), r)
                }
                _ => NONE_U64,
            };
        }
    }

    fn take_depleted_servers(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.depleted);
    }

    fn drain_intervals(&mut self, out: &mut Vec<Interval>) {
        self.log.drain(out);
    }

    fn finish(&mut self, end: u64) -> Vec<Interval> {
        self.log.finish(end)
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

    /// One server (10 ms period and CPU budget), a task issuing 1 request/µs:
    /// a memory budget of exactly one period's demand is never depleted, so
    /// every 100 ms of requests pass; one request less depletes every period.
    #[test]
    fn exhaustion_at_the_period_boundary_does_not_cost_the_next_period() {
        let text = |budget: u64| {
            format!(
                "[platform]\ncores = 1\n[[server]]\nname = \"s\"\ncore = 0\nperiod = \"10ms\"\nbudget = \"10ms\"\nmemory_budget = {budget}\n\
                 [regulation]\nkind = \"mrs\"\n[[task]]\nname = \"t\"\nserver = \"s\"\nperiod = \"100ms\"\npet = \"100ms\"\n\
                 memory = {{ wss = \"64MiB\", pattern = \"stream\", read_fraction = 0.0, accesses_per_ms = 1000 }}\n"
            )
        };
        let requests = |budget: u64| {
            let system = crate::parse_task_system(&text(budget), crate::Format::Toml, "t.toml").unwrap();
            let r = simulate(&system, SchedulerKind::Servers, &SimConfig::new(100_000_000)).unwrap();
            r.per_task[0].memory_requests.round() as u64
        };
        // 1 request/µs of work; the task runs at rate 1 (1000/ms × 15.84 ns ≪ 1).
        assert_eq!(requests(10_000), 100_000);
        assert!(requests(9_999) < 100_000);
        // Half the demand: depleted after about 5 ms of every period, then
        // suspended without a core until the next (rule 5).
        let system = crate::parse_task_system(&text(5_000), crate::Format::Toml, "t.toml").unwrap();
        let e = simulate(&system, SchedulerKind::Servers, &SimConfig::new(100_000_000)).unwrap().regulator_entities;
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].periods, e[0].exhausted_periods), (9, 9), "{e:?}");
        assert!((e[0].used - 45_000.0).abs() < 1e-6, "{e:?}");
        assert!(e[0].stopped_ns.abs_diff(50_000_000) < 100_000, "{e:?}");
    }
}
