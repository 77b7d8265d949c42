//! CPU budgets and node schedulers of the Multi-Resource Server
//! (mrs-multi-resource-server §II-B, §III), driven by a clock alone.
//!
//! Each server S_s = ⟨P_s, Q_s, M_s⟩ sits on one core; per core a node
//! scheduler runs, by fixed priority, one of the servers whose CPU budget q_s
//! is left. The rules kept here:
//! - Rule 1: at the start of each period of S_s, q_s = Q_s.
//! - Rule 2: a server with q_s > 0 is ready; the node scheduler of a core runs
//!   the highest-priority ready server of that core.
//! - Rule 3: the CPU time the server runs is charged to q_s.
//! - Rule 5: a server with q_s = 0 is suspended until its next period; a
//!   depleted memory budget ([`super::mrs::MrsMemoryRules`]) discards q_s too
//!   ([`MrsCpuRules::deplete`]).
//! - Rule 6: idling periodic server: the running server is charged wall time
//!   whether or not it has a ready task, and lower-priority servers do not run
//!   meanwhile.
//!
//! Because of rule 6, which server runs and how much budget it has left depend
//! on time alone: a driver advances the clock ([`MrsCpuRules::advance`]),
//! reads which server holds each core ([`MrsCpuRules::running`]) and wakes up
//! again at [`MrsCpuRules::next_event_ns`]. Which task of the running server
//! runs (its local scheduler) is the driver's business.
//!
//! Events at one instant: the time up to the instant is charged first (a
//! budget that runs out then belongs to the period that ends there), then the
//! periods starting at the instant refill their servers. A server whose budget
//! runs out exactly at its own period boundary therefore keeps running with a
//! full budget.

/// A server's CPU parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MrsServer {
    pub core: usize,
    /// Node-scheduler priority: higher runs first; among equals, the lower index.
    pub priority: i64,
    /// P_s, > 0.
    pub period_ns: u64,
    /// Q_s: CPU budget per period.
    pub budget_ns: u64,
    /// Start of the first period; before it the server is suspended (q_s = 0).
    pub offset_ns: u64,
}

impl MrsServer {
    /// A server whose first period starts at 0.
    pub fn new(core: usize, priority: i64, period_ns: u64, budget_ns: u64) -> Self {
        MrsServer { core, priority, period_ns, budget_ns, offset_ns: 0 }
    }

    /// The same server with its first period starting at `offset_ns`.
    pub fn with_offset(self, offset_ns: u64) -> Self {
        MrsServer { offset_ns, ..self }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MrsCpuRules {
    servers: Vec<MrsServer>,
    /// q_s: CPU budget left in the current period.
    q: Vec<u64>,
    /// Start of each server's next period.
    next_period: Vec<u64>,
    /// Per core: its servers, highest priority first (ties by index).
    by_priority: Vec<Vec<usize>>,
    /// The time the budgets are accounted up to.
    now: u64,
}

impl MrsCpuRules {
    /// The rules at time 0: servers whose first period starts at 0 hold their
    /// full budget, the others are suspended until their offset.
    ///
    /// # Panics
    /// If a server's period is 0.
    pub fn new(servers: &[MrsServer]) -> Self {
        assert!(servers.iter().all(|s| s.period_ns > 0), "an MRS server's period must be positive");
        let cores = servers.iter().map(|s| s.core + 1).max().unwrap_or(0);
        let mut by_priority = vec![Vec::new(); cores];
        for (i, s) in servers.iter().enumerate() {
            by_priority[s.core].push(i);
        }
        for list in &mut by_priority {
            list.sort_by_key(|&i| (std::cmp::Reverse(servers[i].priority), i));
        }
        let mut rules = MrsCpuRules {
            servers: servers.to_vec(),
            q: vec![0; servers.len()],
            next_period: servers.iter().map(|s| s.offset_ns).collect(),
            by_priority,
            now: 0,
        };
        rules.start_periods_due();
        rules
    }

    /// Number of servers.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    pub fn server(&self, s: usize) -> &MrsServer {
        &self.servers[s]
    }

    /// The time the budgets are accounted up to.
    pub fn now_ns(&self) -> u64 {
        self.now
    }

    /// q_s: CPU budget left in the current period of `s`.
    pub fn q_ns(&self, s: usize) -> u64 {
        self.q[s]
    }

    /// Whether `s` is suspended until its next period (MRS §III rule 5): its
    /// CPU budget ran out or was discarded, or its first period has not begun.
    pub fn depleted(&self, s: usize) -> bool {
        self.q[s] == 0
    }

    /// Start of the next period of `s` (its current one started `period_ns` earlier).
    pub fn next_period_ns(&self, s: usize) -> u64 {
        self.next_period[s]
    }

    /// The server the node scheduler of `core` runs now, if any.
    pub fn running(&self, core: usize) -> Option<usize> {
        // MRS §III rule 2: the highest-priority ready server (q > 0). Rule 6: it
        // is chosen whether or not it has a ready task.
        self.by_priority.get(core)?.iter().copied().find(|&s| self.q[s] > 0)
    }

    /// The next instant at which the rules change which server runs where: a
    /// period start (rule 1) or the depletion of a running server's CPU budget
    /// (rule 5). u64::MAX if none. A driver sleeps until then (or until the
    /// memory rules deplete a server).
    pub fn next_event_ns(&self) -> u64 {
        let periods = self.next_period.iter().copied().min().unwrap_or(u64::MAX);
        (0..self.by_priority.len())
            .filter_map(|c| self.running(c))
            .map(|s| self.now.saturating_add(self.q[s]))
            .fold(periods, u64::min)
    }

    /// Account time up to `now_ns` (earlier times change nothing): every event
    /// on the way is applied in time order, at each instant charges first, then
    /// period starts (see the module documentation).
    pub fn advance(&mut self, now_ns: u64) {
        while self.now < now_ns {
            let step = self.next_event_ns().min(now_ns);
            self.charge_running(step - self.now);
            self.now = step;
            self.start_periods_due();
        }
    }

    /// The memory budget of `s` ran out at `now_ns` (MRS §III rule 5): after
    /// accounting up to `now_ns`, the remaining CPU budget of `s` is discarded
    /// and `s` is suspended until its next period. Returns whether `s` was
    /// ready until then.
    ///
    /// The depletion counts against the period of `s` that contains `now_ns`:
    /// at a period boundary, the period that starts there. A depletion that
    /// belongs to the period ending at `now_ns` is not to be reported
    /// ([`super::mrs::MrsMemoryRules::replenish_due`] after the last charge of
    /// that period clears it).
    pub fn deplete(&mut self, s: usize, now_ns: u64) -> bool {
        self.advance(now_ns);
        let was_ready = self.q[s] > 0;
        self.q[s] = 0;
        was_ready
    }

    /// MRS §III rules 3 and 6: every core's running server pays `dt` of wall
    /// time, busy or idling. `dt` never passes a depletion (`advance` stops there).
    fn charge_running(&mut self, dt: u64) {
        for c in 0..self.by_priority.len() {
            if let Some(s) = self.running(c) {
                debug_assert!(dt <= self.q[s], "charged past a depletion");
                // q = 0 from here suspends s until its next period (rule 5).
                self.q[s] = self.q[s].saturating_sub(dt);
            }
        }
    }

    /// MRS §III rule 1: q = Q for every server whose period starts at or before now.
    fn start_periods_due(&mut self) {
        for s in 0..self.servers.len() {
            if self.next_period[s] > self.now {
                continue;
            }
            self.q[s] = self.servers[s].budget_ns;
            while self.next_period[s] <= self.now {
                self.next_period[s] = self.next_period[s].saturating_add(self.servers[s].period_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (running server per core, q per server) at the current time.
    fn state(r: &MrsCpuRules, cores: usize) -> (Vec<Option<usize>>, Vec<u64>) {
        ((0..cores).map(|c| r.running(c)).collect(), (0..r.len()).map(|s| r.q_ns(s)).collect())
    }

    /// Step from event to event up to `until`, recording (time, running on core 0).
    fn events(r: &mut MrsCpuRules, until: u64) -> Vec<(u64, Option<usize>)> {
        let mut out = vec![(r.now_ns(), r.running(0))];
        loop {
            let t = r.next_event_ns();
            if t > until {
                break;
            }
            r.advance(t);
            out.push((t, r.running(0)));
        }
        out
    }

    #[test]
    fn two_servers_on_a_core_idle_deplete_and_refill() {
        // Core 0: A (index 0) P = 10, Q = 3, priority 2; B (index 1) P = 15,
        // Q = 6, priority 1. Core 1: C (index 2) P = 7, Q = 7, alone.
        // Nothing here knows about tasks: A runs whenever q_A > 0 (rule 6).
        // 0–3 A (q_A → 0 at 3, suspended); 3–9 B (q_B → 0 at 9); 9–10 none;
        // 10 A refilled: 10–13 A; 13–15 none; 15 B refilled: 15–20 B (q_B = 1);
        // 20 A refilled, preempts B: 20–23 A; 23–24 B (q_B → 0 at 24);
        // 24–30 none; 30 both refilled (coinciding): 30–33 A, 33–39 B, 39–40 none.
        let servers = [MrsServer::new(0, 2, 10, 3), MrsServer::new(0, 1, 15, 6), MrsServer::new(1, 0, 7, 7)];
        let mut r = MrsCpuRules::new(&servers);
        let want = vec![
            (0, Some(0)),
            (3, Some(1)),
            (7, Some(1)), // C's period boundary on core 1
            (9, None),
            (10, Some(0)),
            (13, None),
            (14, None),
            (15, Some(1)),
            (20, Some(0)),
            (21, Some(0)),
            (23, Some(1)),
            (24, None),
            (28, None),
            (30, Some(0)),
            (33, Some(1)),
            (35, Some(1)),
            (39, None),
            (40, Some(0)),
        ];
        assert_eq!(events(&mut r, 40), want);

        // Mid-interval values: at 5, A is suspended and B has run 2 of its 6.
        let mut r = MrsCpuRules::new(&servers);
        r.advance(1);
        // Rule 6: A is charged although nothing says it has work, and B waits.
        assert_eq!(state(&r, 2), (vec![Some(0), Some(2)], vec![2, 6, 6]));
        r.advance(5);
        assert_eq!(state(&r, 2), (vec![Some(1), Some(2)], vec![0, 4, 2]));
        assert!(r.depleted(0) && !r.depleted(1));
        assert_eq!((r.next_period_ns(0), r.next_period_ns(1)), (10, 15));
        assert_eq!(r.next_event_ns(), 7); // C's period; B would run out at 9
        r.advance(22);
        // A: refilled at 20, q = 1. B: refilled at 15, ran 15–20, q = 1.
        assert_eq!(state(&r, 2), (vec![Some(0), Some(2)], vec![1, 1, 6]));
        assert_eq!(r.next_event_ns(), 23);
    }

    #[test]
    fn one_long_advance_equals_stepping_through_the_events() {
        // The schedule above, overslept: advance(37) in one call applies every
        // depletion and period start in time order. At 37: A refilled at 30 and
        // ran 30–33 (q = 0); B refilled at 30 and ran 33–37 (q = 2); C refilled
        // at 35 (q = 7 − 2 = 5).
        let servers = [MrsServer::new(0, 2, 10, 3), MrsServer::new(0, 1, 15, 6), MrsServer::new(1, 0, 7, 7)];
        let mut once = MrsCpuRules::new(&servers);
        once.advance(37);
        assert_eq!(state(&once, 2), (vec![Some(1), Some(2)], vec![0, 2, 5]));
        let mut stepped = MrsCpuRules::new(&servers);
        while stepped.next_event_ns() <= 37 {
            let t = stepped.next_event_ns();
            stepped.advance(t);
        }
        stepped.advance(37);
        assert_eq!(once, stepped);
        // An earlier time changes nothing.
        once.advance(30);
        assert_eq!(once, stepped);
    }

    #[test]
    fn a_depletion_at_a_period_start_is_charged_to_the_period_that_ends() {
        // Core 0: L (index 0) P = 12, Q = 3, priority 0; H (index 1) P = 4,
        // Q = 1, priority 5. 0–1 H; 1–4 L, whose budget runs out at 4, exactly
        // when H's period starts: L is charged all 3 (q_L = 0, suspended until
        // 12), then H is refilled and runs 4–5. 5–8 none; 8–9 H; 9–12 none.
        let mut r = MrsCpuRules::new(&[MrsServer::new(0, 0, 12, 3), MrsServer::new(0, 5, 4, 1)]);
        r.advance(1);
        assert_eq!(r.next_event_ns(), 4); // both L's depletion and H's period
        r.advance(4);
        assert_eq!(state(&r, 1), (vec![Some(1)], vec![0, 1]));
        assert_eq!(r.next_event_ns(), 5);
        r.advance(6);
        assert_eq!(state(&r, 1), (vec![None], vec![0, 0]));
        assert_eq!(r.next_event_ns(), 8);

        // A server whose budget is its whole period runs out at its own period
        // start: refilled at that same instant, it keeps the core, and the
        // lower-priority server never runs (and is never charged).
        let mut r = MrsCpuRules::new(&[MrsServer::new(0, 1, 5, 5), MrsServer::new(0, 0, 5, 2)]);
        for t in [5, 10, 15] {
            assert_eq!(r.next_event_ns(), t);
            r.advance(t);
            assert_eq!(state(&r, 1), (vec![Some(0)], vec![5, 2]));
        }
        r.advance(17);
        assert_eq!(state(&r, 1), (vec![Some(0)], vec![3, 2]));
    }

    #[test]
    fn memory_depletion_discards_the_cpu_budget_until_the_next_period() {
        // Core 0: A (index 0) P = 10, Q = 4, priority 2; B (index 1) P = 10,
        // Q = 5, priority 1. 0–2 A (q_A = 2); at 2 A's memory budget runs out
        // (rule 5): q_A = 0, its 2 left are discarded; 2–7 B (q_B → 0 at 7);
        // 7–10 none; 10 both refilled, A runs with q_A = 4.
        let mut r = MrsCpuRules::new(&[MrsServer::new(0, 2, 10, 4), MrsServer::new(0, 1, 10, 5)]);
        assert!(r.deplete(0, 2));
        assert_eq!(state(&r, 1), (vec![Some(1)], vec![0, 5]));
        assert!(r.depleted(0));
        assert_eq!(r.next_event_ns(), 7);
        assert!(!r.deplete(0, 3)); // already suspended
        r.advance(8);
        assert_eq!(state(&r, 1), (vec![None], vec![0, 0]));
        r.advance(10);
        assert_eq!(state(&r, 1), (vec![Some(0)], vec![4, 5]));

        // B depleted while it waits: it is not charged, and at 14, when A runs
        // out, nothing runs until 20.
        assert!(r.deplete(1, 11));
        assert_eq!(state(&r, 1), (vec![Some(0)], vec![3, 0]));
        r.advance(14);
        assert_eq!(state(&r, 1), (vec![None], vec![0, 0]));
        assert_eq!(r.next_event_ns(), 20);

        // Reported at 20, A's period boundary, the depletion counts against the
        // period starting at 20: A is suspended until 30 and B runs 20–25.
        assert!(r.deplete(0, 20));
        assert_eq!(state(&r, 1), (vec![Some(1)], vec![0, 5]));
        assert_eq!((r.next_period_ns(0), r.next_event_ns()), (30, 25));
    }

    #[test]
    fn offsets_ties_and_cores_without_servers() {
        // Core 1: X (index 0) P = 10, Q = 2, priority 1, first period at 5;
        // Y (index 1) P = 10, Q = 6, priority 1 (equal: the lower index wins).
        // 0–5 Y (q_Y = 1; X has not started, q_X = 0); 5 X starts and takes
        // the core: 5–7 X; 7–8 Y (q_Y → 0); 8–10 none; 10 Y refilled: 10–15 Y
        // (q_Y = 1); 15 X refilled: 15–17 X; 17–18 Y; 18–20 none.
        let mut r = MrsCpuRules::new(&[MrsServer::new(1, 1, 10, 2).with_offset(5), MrsServer::new(1, 1, 10, 6)]);
        assert!(r.depleted(0));
        assert_eq!((r.running(0), r.running(1), r.running(7)), (None, Some(1), None));
        let mut seen = Vec::new();
        while r.next_event_ns() <= 18 {
            let t = r.next_event_ns();
            r.advance(t);
            seen.push((t, r.running(1), r.q_ns(0), r.q_ns(1)));
        }
        assert_eq!(
            seen,
            vec![
                (5, Some(0), 2, 1),
                (7, Some(1), 0, 1),
                (8, None, 0, 0),
                (10, Some(1), 0, 6),
                (15, Some(0), 2, 1),
                (17, Some(1), 0, 1),
                (18, None, 0, 0),
            ]
        );
        assert_eq!(r.next_event_ns(), 20);
        assert_eq!(MrsCpuRules::new(&[]).next_event_ns(), u64::MAX);
    }
}
