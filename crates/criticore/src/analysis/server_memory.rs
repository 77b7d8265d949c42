//! A task inside an idling periodic server, with memory stalls and the
//! server's MRS memory budget (mrs-multi-resource-server §III rules 4-5;
//! docs/analysis.md, "Memory stalls").
//!
//! In every period in which the server has work pending it either runs its
//! whole CPU budget Q or spends its memory budget M and is suspended until the
//! next period (rule 5). So a window in which the server's jobs need W of
//! processor time and issue N requests, opened at t0 in a period that started
//! at s0, ends in the period J after it at the latest, with the periods
//! between spending M (a ≤ ⌊N/M⌋ of them, each running at least d of its
//! work, d the time the server's tasks need to issue M at their fastest,
//! `memory::issue_ns`) or running Q (b), and the last doing w ≤ Q of work by
//! R_s − Q + w into its period (its Q lies within R_s of its start, R_s the
//! server's own response time): W ≥ a·d + b·Q + w, J = 1 + a + b. What the
//! opening period costs: if its CPU budget ran out, t0 − s0 ≥ Q less the
//! window's work there; if its memory budget ran out, ≥ d less it (of M,
//! what the window did not issue was issued before t0, at most at the
//! fastest rate). So the window is at most (1 + a + b)·P + R_s − Q − d + w,
//! largest at the most a with a·d < W (each one more adds P − d or Q − d).
//! A budget the server cannot spend within Q never suspends it: the supply
//! bound's `time_for(W)`, as without a memory budget.
//!
//! Where every job of the window's tasks is released at a start of the
//! server's period (periodic tasks, their periods and offsets multiples of
//! it, the servers' periods all from 0), a window opens at a release, so at
//! a period's start, with Q and M whole: no period is lost before it, and
//! its first period is one of the a or b (or the last). The window is then
//! at most (a + b)·P + R_s − Q + w, and without a memory budget at most
//! ⌊(W − 1)/Q⌋·P + R_s − Q + w (each period serves Q within R_s of its start).
//!
//! A CBS reservation under MRS: its memory budget is renewed on the grid of
//! its period from 0 (as the simulator does), while its CPU
//! budget is replenished at its scheduling deadlines; a spent M throttles it
//! until its deadline, and it then runs on unregulated for the rest of that
//! grid period. So each of its periods still either runs Q, or is cut short
//! by a spend (at most one per period of either kind), and the rest is as
//! above with R_s = P, but with no least running d (the M may have been
//! issued mostly in its budget before) and one more spend: the grid period
//! open as the window opens, whose M the window's requests need not issue
//! in full. A grid period may hold the ends of two of its budgets, so a
//! budget it cannot spend within 2Q never throttles it.
//!
//! Co-runners held by their own MRS memory budgets (every phase of their
//! jobs issues requests at some least rate r while it runs) run at most
//! a = min(Q_k, M_k / r) per period of theirs: the costs leave them out, and a
//! window adds the time they can run in it, (⌈w/P_k⌉ + 1)·a, since a job
//! beside them is slowed at most while they run (its rate is still at least
//! its worst-case rate then).
//!
//! Requests are bounded twice, the smaller counting: every job at its worst
//! (all co-runners beside it throughout), or its requests alone (its LLC
//! partition to itself) plus at most `excess_per_work` for each ns a task
//! on another core that can raise their misses runs (docs/analysis.md,
//! "Co-runners that raise no miss"): at most (⌈w/P_k⌉ + 1)·a_k of a window
//! for its server (a_k its budget, or its MRS cap), at most its jobs'
//! Bertogna–Cirinei workload where its response is known (from the round
//! before, as pfp's), at most w per core (docs/analysis.md, "Requests
//! bounded by the co-runners' presence", "A co-runner server present only
//! while its pressing jobs run"). Time too: every job at its worst, or
//! beside no co-runner that raises its misses plus `pressed_share` of that
//! presence. And a period can spend M only with M alone requests or with a
//! pressing co-runner running in it: a job of one runs within its response
//! R, so in at most ⌈R/P⌉ + 1 of the server's periods, and so does its
//! server's service in each of its periods, within that server's response;
//! and one period's alone requests reach M only if the fastest alone rate
//! over Q and a reload per resumption in it do. (A co-runner server never
//! served at once with this one on the common grid is not among them:
//! classic.rs, `server_supply::services_meet`.)
//!
//! Every time the server loses its core to another (its budget or memory
//! spent, or a higher-priority server released) the job resumes with a
//! reload; a window holds at most ⌈w/P⌉ + 1 such losses of its own and
//! ⌈w/P_h⌉ + 1 preemptions by each higher-priority server h on the core.
//! All of a job's reloads together miss at most once per reference, so the
//! window's reloads are also at most its jobs' caps (`Demand::reload_ns`),
//! plus each resumption's rounding; the smaller counts.
//!
//! Under MemGuard or MCTI budgets per core (mcti-task-isolation §4 rules 1-4)
//! a core whose requests reach Q in a regulation period P_r stalls until the
//! period ends, and the server holding it pays the stall from its CPU budget
//! (the simulator and SCHED_DEADLINE charge a reservation for the time it
//! holds the core, progressing or not), so the servers' supply is unchanged
//! and a window's demand grows by its stalls. In every stalled period but the
//! first (spent before the window, perhaps) the core issued Q before the stall
//! began, from this server's jobs (at most N in the window, at most r_s per
//! ns while they run) or the core's other servers (at most their fastest rate
//! r_o times what they can hold in the window: their budget per period,
//! served within their response, Bertogna and Cirinei's workload); the
//! running that issued it, at least Q over the sources' rates, the faster
//! first, is time of the period the stall cannot take. So k stalled periods,
//! k ≤ min(⌈w/P_r⌉ + 1, ⌊(N + N_o(w))/Q⌋ + 1), cost at most
//! k·P_r − (running to issue (k − 1)·Q) (less 2 ns per period for the
//! engine's rounding), concave in k: its largest at the most periods or where
//! the faster source runs out. MCTI never stalls a critical task (rule 5): a
//! window whose tasks are all critical pays none.

use super::server_supply::Guarantee;
use super::supply::{best_block, Supply};
use super::memory::{jobs_overlapping, jobs_running_ns, jobs_running_share, memguard_stalls_ns, periods_overlapping, running_ns, running_share, workload_ns};
use super::NotDecided;

/// One job's worst case: processor time and requests, every period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    pub time_ns: u64,
    /// Its time beside only the co-runners that raise none of its misses
    /// (those that do add their presence, `ServerView::pressed_share`).
    pub unpressed_time_ns: u64,
    pub requests: f64,
    /// Of `requests`, those it issues with no co-runner running.
    pub alone_requests: f64,
    pub period_ns: u64,
    /// Most time and requests all of a job's resumptions add together.
    pub reload_ns: u64,
    pub reload_requests: f64,
}

/// What a resumption in the window costs: at most `each` (the largest over
/// the window's tasks), and beyond its job's cap at most `unit` (rounding).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reload {
    pub each_ns: u64,
    pub each_requests: f64,
    pub unit_ns: u64,
    pub unit_requests: f64,
}

/// The server as its tasks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerView {
    pub period_ns: u64,
    /// Q per period (what a service may run at most).
    pub budget_ns: u64,
    /// What its tasks are sure of (server_supply.rs): all of Q within R_s of
    /// each period's start, or less, or per K periods.
    pub guarantee: Guarantee,
    /// M per period, if MRS regulates it and its tasks issue requests.
    pub memory_budget: Option<u64>,
    /// d: the least running time in which its tasks can issue M (0: none known).
    pub issue_ns: u64,
    /// A CBS reservation: M is renewed on its period's grid from 0, not at
    /// its replenishments, so a spend is credited no least running (module doc).
    pub memory_grid_apart: bool,
    /// Every job of the window's tasks is released at a start of the
    /// server's period (periodic tasks whose periods and offsets are
    /// multiples of it): a window opens with Q and M whole (module doc).
    pub opens_at_period_start: bool,
    /// Periods of the higher-priority servers on its core.
    pub higher_periods_ns: Vec<u64>,
    /// Co-runners taken out of the jobs' costs: per server on another core,
    /// (period, longest time its jobs can run in one period). A job is slowed
    /// by them at most while they run, so a window adds Σ (⌈w/P⌉ + 1)·a.
    pub interference: Vec<(u64, u64)>,
    /// Per other core, its servers with a task that can raise the misses of
    /// this server's tasks: the time a co-runner may run in a window.
    pub corunners: Vec<Vec<CoRunner>>,
    /// Most requests per ns of work a co-runner's presence adds, over the
    /// window's tasks.
    pub excess_per_work: f64,
    /// Most requests per ns of work with no co-runner running, over the
    /// window's tasks (their cold starts included).
    pub alone_per_work: f64,
    /// Most share of a pressing co-runner's presence a job's progress loses,
    /// over the window's tasks: 1 − fastest unpressed / slowest beside all
    /// (time per work).
    pub pressed_share: f64,
    /// The core's MemGuard or MCTI budget, where its stalls fall on this
    /// server's window (module doc).
    pub core_stalls: Option<CoreStalls>,
}

/// A server on another core with tasks that can raise the misses of this
/// server's tasks (pressing tasks; docs/analysis.md, "Co-runners that raise
/// no miss"): they run only while it is served, and only their own jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct CoRunner {
    pub period_ns: u64,
    /// The longest it runs in one period (its budget, or its MRS cap).
    pub per_period_ns: u64,
    /// Its pressing tasks: (period, longest time of a job with all its
    /// reloads, response bound where known).
    pub tasks: Vec<(u64, u64, Option<u64>)>,
    /// What a resumption of one of them may add by rounding, and the periods
    /// of the events that may make one resume (its own period, the servers
    /// above it, the releases of its tasks ranked above one of them).
    pub unit_ns: u64,
    pub events: Vec<u64>,
    /// A periodic server's service lies within this of each of its periods'
    /// starts (its response, or its period); None for a CBS reservation.
    pub within_ns: Option<u64>,
}

impl CoRunner {
    /// The longest its pressing tasks run in a window of `w`: at most its
    /// service in every period the window overlaps, and at most their
    /// Bertogna–Cirinei workload (all of w where a response is unknown) with
    /// a rounding per resumption.
    fn running_ns(&self, w: u64) -> f64 {
        running_ns(&[(self.period_ns, self.per_period_ns)], w).min(jobs_running_ns(&self.tasks, self.unit_ns, &self.events, w))
    }

    /// The most periods of `period_ns` in a window of `w` it can run in: each
    /// job of a pressing task runs within its response R of its release, so
    /// in at most ⌈R/P⌉ + 1 of them (u64::MAX where a response is unknown).
    /// So does the server's service in each of its periods, within its response.
    fn touched(&self, period_ns: u64, w: u64) -> u64 {
        let spans = |t: u64, r: u64| jobs_overlapping(t, Some(r), w).saturating_mul(periods_overlapping(r, period_ns));
        let by_jobs = self.tasks.iter().map(|&(t, _, r)| r.map_or(u64::MAX, |r| spans(t, r))).fold(0, u64::saturating_add);
        self.within_ns.map_or(by_jobs, |r| by_jobs.min(spans(self.period_ns, r)))
    }

    /// Those periods per ns in the long run (infinite where a response is unknown).
    fn touched_rate(&self, period_ns: u64) -> f64 {
        let spans = |t: u64, r: u64| periods_overlapping(r, period_ns) as f64 / t as f64;
        let by_jobs: f64 = self.tasks.iter().map(|&(t, _, r)| r.map_or(f64::INFINITY, |r| spans(t, r))).sum();
        self.within_ns.map_or(by_jobs, |r| by_jobs.min(spans(self.period_ns, r)))
    }

    /// The long-run share of the time they run: its service share, and
    /// their utilization where every response is known.
    fn running_share(&self) -> f64 {
        let served = running_share(&[(self.period_ns, self.per_period_ns)]);
        jobs_running_share(&self.tasks, self.unit_ns, &self.events).map_or(served, |jobs| served.min(jobs))
    }
}

impl ServerView {
    /// The least running a service that spends M is credited with: d, or
    /// none where M is renewed apart from the CPU budget (its requests may
    /// have been issued mostly in the budget before).
    fn spend_credit_ns(&self) -> u64 {
        if self.memory_grid_apart { 0 } else { self.issue_ns }
    }
}

/// A core's budget of Q requests per regulation period and what else on
/// the core may spend it.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreStalls {
    pub period_ns: u64,
    pub budget: u64,
    /// The fastest this server's tasks issue requests while they run.
    pub own_fastest_request_rate: f64,
    /// The core's other servers: period, budget, response (their service
    /// ends within it of each period's start) and the fastest their tasks
    /// issue requests while they run.
    pub others: Vec<OtherServer>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OtherServer {
    pub period_ns: u64,
    pub budget_ns: u64,
    pub within_ns: u64,
    pub fastest_request_rate: f64,
}

impl CoreStalls {
    /// The other servers' fastest request rate and most requests in a window of `w`.
    fn others(&self, w: u64) -> (f64, f64) {
        let rate = self.others.iter().map(|o| o.fastest_request_rate).fold(0.0, f64::max);
        (rate, self.others.iter().map(|o| o.fastest_request_rate * workload_ns(o.period_ns, o.budget_ns, Some(o.within_ns), w)).sum())
    }

    /// Stall time in a window of `w` whose own jobs issue `requests`.
    fn stall_ns(&self, w: u64, requests: f64) -> u64 {
        let (rate, issued) = self.others(w);
        let sources = fastest_first((self.own_fastest_request_rate, requests), (rate, issued));
        let by_periods = periods_overlapping(w, self.period_ns);
        let by_requests = if self.budget == 0 { u64::MAX } else { (((requests + issued) / self.budget as f64).floor() as u64).saturating_add(1) };
        let most = by_periods.min(by_requests);
        // Concave in the count: its largest at the most periods or where the
        // faster source runs out.
        let turn = if self.budget == 0 { most } else { ((sources[0].1 / self.budget as f64).floor() as u64).saturating_add(1) };
        [most, turn.min(most), (turn + 1).min(most)]
            .into_iter()
            .map(|k| {
                let p = self.period_ns as f64;
                // The first stalled period whole (spent before the window,
                // perhaps); every other one less the running that spent Q.
                let others = (k - 1) as f64;
                (p * k as f64 - (running_for(others * self.budget as f64, &sources) - 2.0 * others).max(0.0)).max(0.0)
            })
            .fold(0.0, f64::max)
            .min(memguard_stalls_ns(most, self.period_ns, 0) as f64)
            .ceil() as u64
    }

    /// Long-run stall time per ns with own requests at `request_rate` per ns.
    fn stall_rate(&self, request_rate: f64) -> f64 {
        let others: f64 = self.others.iter().map(|o| o.fastest_request_rate * o.budget_ns as f64 / o.period_ns as f64).sum();
        let (rate, _) = self.others(0);
        let p = self.period_ns as f64;
        if self.budget == 0 {
            return 1.0;
        }
        let q = self.budget as f64;
        let sources = fastest_first((self.own_fastest_request_rate, request_rate), (rate, others));
        let most = ((request_rate + others) / q).min(1.0 / p);
        [most, (sources[0].1 / q).min(most)].into_iter().map(|k| (k * p - (running_for(k * q, &sources) - 2.0 * k).max(0.0)).max(0.0)).fold(0.0, f64::max)
    }
}

/// Two request sources as (fastest rate per ns while running, most
/// requests), the faster first.
fn fastest_first(a: (f64, f64), b: (f64, f64)) -> [(f64, f64); 2] {
    if a.0 >= b.0 { [a, b] } else { [b, a] }
}

/// The least running time in which the sources issue `requests`, the faster
/// first (more than they can issue: all of their running, and the rest at
/// the faster rate, which only shortens it).
fn running_for(requests: f64, sources: &[(f64, f64); 2]) -> f64 {
    let mut left = requests;
    let mut time = 0.0;
    for &(rate, most) in sources {
        if rate > 0.0 && left > 0.0 {
            let n = left.min(most);
            time += n / rate;
            left -= n;
        }
    }
    if left > 0.0 && sources[0].0 > 0.0 {
        time += left / sources[0].0;
    }
    time
}

/// The end of a window of `time` of work with at most `spent` services
/// that spend M, its tasks sure of `q` within `within_ns` of each period's
/// start (module doc): a services that spend M (each running d at least), b
/// that serve q, and the last, w ≤ q, done by within − q + w into its period;
/// before them the period the window opens in, lost (its M spent d after its
/// start at least), or none where the window opens at a period's start.
fn per_period_end(server: &ServerView, time: u64, spent: u64, q: u64, within_ns: u64) -> Option<u64> {
    let d = server.spend_credit_ns().min(q);
    let time = time.max(1);
    let a = (time - 1).checked_div(d).map_or(spent, |most| spent.min(most));
    // The b services of q and the last: the rest from a period's start.
    let rest = Supply::per_period(server.period_ns, q, within_ns, true).time_for(time - a * d);
    let (lost, credit) = if server.opens_at_period_start { (0, 0) } else { (1, d) };
    (lost + a).checked_mul(server.period_ns)?.checked_add(rest)?.checked_sub(credit)
}

/// Most jobs of one busy window examined before saying "not decided".
pub const MAX_JOBS: u64 = 1_000_000;

/// Worst-case response time of `own` below `higher` (same server) with a
/// reload at every preemption; Ok(None) if the long-run demand on a budget
/// reaches the server's (no window closes).
/// The window that ends with a task's worst job, split by what fills it
/// (`--explain`): the jobs' time as charged, the part of the window the CPU
/// supply alone leaves it waiting, and what the memory budget's suspensions
/// add beyond that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// Its jobs in the window; the worst is the last.
    pub jobs: u64,
    /// The task's own jobs and the higher-priority jobs released in the
    /// window, at the costs charged (at their worst, or beside no pressing
    /// co-runner).
    pub own_ns: u64,
    pub higher_ns: u64,
    /// What co-runners add beyond those costs: held ones while they run, or
    /// the pressing ones' presence.
    pub corunners_ns: u64,
    pub reload_ns: u64,
    /// The core's MemGuard or MCTI stalls, paid from the server's budget.
    pub core_stall_ns: u64,
    /// The window's end without the memory budget (the CPU supply's
    /// `time_for` the jobs' time), and with it.
    pub supply_only_ns: u64,
    pub w_ns: u64,
}

impl Window {
    /// The jobs' time: what the server must supply.
    pub fn time_ns(&self) -> u64 {
        self.own_ns + self.higher_ns + self.corunners_ns + self.reload_ns + self.core_stall_ns
    }
}

/// The worst response of a task of the server (module doc), None where the
/// server's long-run rates reach its supply.
pub fn response_time(own: Demand, higher: &[Demand], reload: Reload, server: &ServerView) -> Result<Option<u64>, NotDecided> {
    Ok(response_window(own, higher, reload, server)?.map(|w| w.w_ns - (w.jobs - 1) * own.period_ns))
}

/// [`response_time`] with the window that gives it.
pub fn response_window(own: Demand, higher: &[Demand], reload: Reload, server: &ServerView) -> Result<Option<Window>, NotDecided> {
    let p = server.period_ns as f64;
    // Per other core, the time its pressing tasks run, at most w.
    let presence = |w: u64| -> f64 { server.corunners.iter().map(|core| core.iter().map(|c| c.running_ns(w)).sum::<f64>().min(w as f64)).sum() };
    let presence_rate: f64 = server.corunners.iter().map(|core| core.iter().map(CoRunner::running_share).sum::<f64>().min(1.0)).sum();
    // Reloads: one per loss of the core (each own period, each higher server's
    // release) and per release of a higher task, in the long run.
    let losses_rate = 1.0 / p + server.higher_periods_ns.iter().map(|&ph| 1.0 / ph as f64).sum::<f64>() + higher.iter().map(|h| 1.0 / h.period_ns as f64).sum::<f64>();
    // Long-run processor time and requests per ns of the server's jobs.
    let interference_rate: f64 = server.interference.iter().map(|&(pk, a)| a as f64 / pk as f64).sum();
    let rate = |r: fn(&Demand) -> f64| r(&own) / own.period_ns as f64 + higher.iter().map(|h| r(h) / h.period_ns as f64).sum::<f64>();
    let reload_time_rate = (losses_rate * reload.each_ns as f64).min(rate(|d| d.reload_ns as f64) + losses_rate * reload.unit_ns as f64);
    let reload_request_rate = (losses_rate * reload.each_requests).min(rate(|d| d.reload_requests) + losses_rate * reload.unit_requests);
    let alone_request_rate = rate(|d| d.alone_requests) + reload_request_rate;
    let request_rate = rate(|d| d.requests).min(rate(|d| d.alone_requests) + server.excess_per_work * presence_rate) + reload_request_rate;
    let losses = |w: u64| -> u64 { periods_overlapping(w, server.period_ns) + server.higher_periods_ns.iter().map(|&ph| periods_overlapping(w, ph)).sum::<u64>() };
    // A period whose M no co-runner helped spend spent M of alone requests;
    // any other one is one of its periods a pressing co-runner runs in (per
    // other core, at most every period of the window).
    let touched = |w: u64| -> u64 {
        let periods = periods_overlapping(w, server.period_ns);
        server.corunners.iter().map(|core| core.iter().map(|c| c.touched(server.period_ns, w)).fold(0, u64::saturating_add).min(periods)).fold(0, u64::saturating_add)
    };
    let touched_rate: f64 = server.corunners.iter().map(|core| core.iter().map(|c| c.touched_rate(server.period_ns)).sum::<f64>().min(1.0 / p)).sum();
    let stall_rate = server.core_stalls.as_ref().map_or(0.0, |c| c.stall_rate(request_rate));
    let time_rate = (rate(|d| d.time_ns as f64) + interference_rate).min(rate(|d| d.unpressed_time_ns as f64) + server.pressed_share * presence_rate) + reload_time_rate + stall_rate;
    // Services per ns: those that spend M (each running at least d) and
    // those that run Q (module doc); at most every period. A service that
    // spends M loses at most the rest of what its period holds: Q' − d with
    // Q' sure per period, Q − d where it is sure per K periods (server_supply.rs).
    let (cap, (k, g)) = match server.guarantee {
        Guarantee::PerPeriod { budget_ns, .. } => (budget_ns, (1, budget_ns)),
        Guarantee::Blocks { budgets, .. } => (server.budget_ns, best_block(&budgets).unwrap_or((1, 0))),
    };
    // A period that no pressing co-runner touches spends M only if its alone
    // requests can reach M: at most the fastest alone rate over its Q of work
    // (2Q for a CBS reservation's grid period) and a reload per resumption in it.
    let alone_in_period = server.alone_per_work * ((1 + server.memory_grid_apart as u64) * server.budget_ns) as f64
        + (losses(server.period_ns) + higher.iter().map(|h| server.period_ns.div_ceil(h.period_ns) + 1).sum::<u64>()) as f64 * reload.each_requests;
    let alone_spend = server.memory_budget.is_some_and(|m| alone_in_period >= m as f64);
    let alone_spend_rate = server.memory_budget.filter(|_| alone_spend).map_or(0.0, |m| alone_request_rate / m.max(1) as f64);
    let d = server.spend_credit_ns().min(cap) as f64;
    let spending = match server.memory_budget {
        Some(m) => {
            let by_requests = (request_rate / m.max(1) as f64).min(alone_spend_rate + touched_rate);
            if d > 0.0 { by_requests.min(time_rate / d) } else { by_requests }
        }
        None => 0.0,
    };
    if (time_rate.max(spending * d) + spending * (cap as f64 - d)) * (k as f64 * p) >= g as f64 {
        return Ok(None);
    }
    let supply = server.guarantee.supply(server.period_ns, server.opens_at_period_start);
    let window = |jobs: u64, w: u64| -> Option<Window> {
        let releases: Vec<u64> = higher.iter().map(|h| w.div_ceil(h.period_ns)).collect();
        let preemptions = losses(w) + releases.iter().sum::<u64>();
        let slowed: u128 = server.interference.iter().map(|&(pk, a)| (w.div_ceil(pk) + 1) as u128 * a as u128).sum();
        let time_of = |r: fn(&Demand) -> u64| jobs as u128 * r(&own) as u128 + higher.iter().zip(&releases).map(|(h, &n)| n as u128 * r(h) as u128).sum::<u128>();
        let reloads = (preemptions as u128 * reload.each_ns as u128).min(time_of(|d| d.reload_ns) + preemptions as u128 * reload.unit_ns as u128);
        // Jobs at their cost beside the co-runners, or beside none that raise
        // their misses and slowed by those while they run.
        let present = presence(w);
        let pressed = (server.pressed_share * present).ceil() as u128;
        let (at_worst, unpressed) = (time_of(|d| d.time_ns), time_of(|d| d.unpressed_time_ns));
        let (jobs_ns, corunners, own_each) = if at_worst + slowed <= unpressed + pressed { (at_worst, slowed, own.time_ns) } else { (unpressed, pressed, own.unpressed_time_ns) };
        let time = jobs_ns + corunners + reloads;
        let requests_of = |r: fn(&Demand) -> f64| jobs as f64 * r(&own) + higher.iter().zip(&releases).map(|(h, &n)| n as f64 * r(h)).sum::<f64>();
        let reload_requests = (preemptions as f64 * reload.each_requests).min(requests_of(|d| d.reload_requests) + preemptions as f64 * reload.unit_requests);
        let requests = requests_of(|d| d.requests).min(requests_of(|d| d.alone_requests) + server.excess_per_work * present) + reload_requests;
        let stalls = server.core_stalls.as_ref().map_or(0, |c| c.stall_ns(w, requests));
        let time = u64::try_from(time + stalls as u128).ok()?;
        let own_ns = u64::try_from(jobs as u128 * own_each as u128).ok()?;
        // Without the memory budget: the supply's wait.
        let supply_only = supply.time_for(time);
        let split = |w_ns: u64| -> Option<Window> {
            Some(Window {
                jobs,
                own_ns,
                higher_ns: u64::try_from(jobs_ns).ok()? - own_ns,
                corunners_ns: u64::try_from(corunners).ok()?,
                reload_ns: u64::try_from(reloads).ok()?,
                core_stall_ns: stalls,
                supply_only_ns: supply_only,
                w_ns,
            })
        };
        let Some(m) = server.memory_budget else { return split(supply_only) };
        // A CBS reservation's memory period open as the window opens may be
        // spent later in the window, by fewer of its requests.
        let alone = requests_of(|d| d.alone_requests) + reload_requests;
        let alone_spends = if alone_spend { (alone / m.max(1) as f64).floor() as u64 } else { 0 };
        let by_requests = ((requests / m.max(1) as f64).floor() as u64).min(alone_spends.saturating_add(touched(w)));
        let spent = by_requests.saturating_add(server.memory_grid_apart as u64);
        // What is sure of each period, Q' within R' (`per_period_end`).
        let per_period = |q: u64, within_ns: u64| per_period_end(server, time, spent, q, within_ns);
        let end = match server.guarantee {
            Guarantee::PerPeriod { budget_ns, within_ns } => per_period(budget_ns, within_ns),
            Guarantee::Blocks { budgets, per_period: sure } => {
                // Any K periods serve G_K (the one the window opens in lost
                // whole, unless it opens at a period's start), less Q − d per
                // service that spends M (it runs d at least, and Q at most); or, where some is sure of each
                // period, the bound above with it (not the supply's own: the
                // period the window opens in may have spent M).
                let d = server.spend_credit_ns().min(server.budget_ns);
                let blocks = Supply::Blocks { period_ns: server.period_ns, budgets, per_period: None, from_start: server.opens_at_period_start }.time_for(time.checked_add(spent.checked_mul(server.budget_ns - d)?)?);
                Some(sure.and_then(|(q, r)| per_period(q, r)).map_or(blocks, |p| p.min(blocks)))
            }
        };
        split(end?)
    };
    // With every long-run rate below 1 the window closes; these limits only
    // bound the work, and hitting one is "not decided", never a verdict.
    let not_decided = NotDecided { limit: MAX_JOBS, of: "jobs of the server's busy window" };
    let mut worst: Option<Window> = None;
    let mut w = 0u64;
    for jobs in 1..=MAX_JOBS {
        let mut at = window(jobs, w).ok_or(not_decided)?;
        while at.w_ns > w {
            w = at.w_ns;
            at = window(jobs, w).ok_or(not_decided)?;
        }
        // The fixed point's own split: the window of w (its end no later).
        let at = Window { w_ns: w, ..at };
        let release = (jobs - 1) * own.period_ns;
        if worst.is_none_or(|b| w - release > b.w_ns - (b.jobs - 1) * own.period_ns) {
            worst = Some(at);
        }
        if w <= release + own.period_ns {
            return Ok(worst);
        }
    }
    Err(not_decided)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job of `time_ns` and `requests` (all alone) every `period_ns`, its
    /// reloads capped only per resumption.
    fn demand(time_ns: u64, requests: f64, period_ns: u64) -> Demand {
        Demand { time_ns, unpressed_time_ns: time_ns, requests, alone_requests: requests, period_ns, reload_ns: u64::MAX / 4, reload_requests: f64::INFINITY }
    }

    fn reload(each_ns: u64) -> Reload {
        Reload { each_ns, each_requests: 0.0, unit_ns: 0, unit_requests: 0.0 }
    }

    fn server(memory_budget: Option<u64>) -> ServerView {
        ServerView { period_ns: 10, budget_ns: 4, guarantee: Guarantee::PerPeriod { budget_ns: 4, within_ns: 4 }, memory_budget, issue_ns: 0, memory_grid_apart: false, opens_at_period_start: false, higher_periods_ns: vec![], interference: vec![], corunners: vec![], excess_per_work: 0.0, alone_per_work: f64::INFINITY, pressed_share: 0.0, core_stalls: None }
    }

    #[test]
    fn without_memory_it_is_the_supply_bound() {
        // Top server (served within 4 of each start), one task of 3 every 100, no
        // reload: time_for(3) = 6 + 0 + 3 = 9.
        let d = demand(3, 0.0, 100);
        assert_eq!(response_time(d, &[], reload(0), &server(None)), Ok(Some(9)));
    }

    #[test]
    fn a_spent_memory_budget_costs_whole_periods() {
        // 3 of time and 250 requests against M = 100 per period, served Q = 4 within
        // R_s = 4 of each period's start, d = 0: the window opens just as a lower task
        // spent the period's M (at the period's start: d = 0), then a = ⌊250/100⌋ = 2
        // services spend M (the first 100 requests, the next 100), b = ⌈3/4⌉ − 1 = 0
        // run Q, and the last does the 3 of work with the last 50 by R_s − Q + 3:
        // 3·10 + 0 + 3 = 33. With M = 1,000: 10 + 3 = 13.
        let d = demand(3, 250.0, 1_000);
        assert_eq!(response_time(d, &[], reload(0), &server(Some(100))), Ok(Some(33)));
        assert_eq!(response_time(d, &[], reload(0), &server(Some(1_000))), Ok(Some(13)));
        // Served within R_s = 7 instead: the last service's 3 done by 7 − 4 + 3 = 6
        // into its period: 10 + 6 = 16.
        let later = ServerView { guarantee: Guarantee::PerPeriod { budget_ns: 4, within_ns: 7 }, ..server(Some(1_000)) };
        assert_eq!(response_time(d, &[], reload(0), &later), Ok(Some(16)));
        // A reload of 1 per loss of the core (⌈w/10⌉ + 1 of them): w = 0: 1 loss,
        // time 4 → 10 + 4 = 14; 3 losses, time 6: b = 1, the last 2 → 2·10 + 2 =
        // 22; 4 losses, time 7 → 23; 4 losses again: 23.
        assert_eq!(response_time(d, &[], reload(1), &server(Some(1_000))), Ok(Some(23)));
        // The same job whose reloads together add at most 1: w = 14 holds 3 losses
        // but min(3·1, 1) = 1 of reload, time 4 → 14. A rounding of 1 per
        // resumption on top: min(3, 1 + 3) = 3, time 6 → 22, then 7 → 23 as before.
        let capped = Demand { reload_ns: 1, ..d };
        assert_eq!(response_time(capped, &[], reload(1), &server(Some(1_000))), Ok(Some(14)));
        assert_eq!(response_time(capped, &[], Reload { unit_ns: 1, ..reload(1) }, &server(Some(1_000))), Ok(Some(23)));
        // More demand than the budgets give: no bound.
        let heavy = demand(3, 250.0, 20);
        assert_eq!(response_time(heavy, &[], reload(0), &server(Some(100))), Ok(None));
    }

    #[test]
    fn a_server_sure_per_block_pays_the_spent_period_it_opens_in_too() {
        // As above (3 of time, M = 1,000), its tasks sure of 4 in every
        // period (within 4) beside blocks of 4 per period: the window may open
        // just after a lower task spent M (10 lost), then 3 by 4 − 4 + 3 into
        // the next: 13, as with the per-period guarantee alone; the blocks
        // give (⌈3/4⌉ + 1)·10 = 20. (The per-period supply alone, which serves
        // its 4 right after the window opens, would give 6 + 3 = 9 < 13.)
        let mut budgets = [0; crate::analysis::supply::BLOCKS];
        budgets[0] = 4;
        let blocks = ServerView { guarantee: Guarantee::Blocks { budgets, per_period: Some((4, 4)) }, ..server(Some(1_000)) };
        let d = demand(3, 250.0, 1_000);
        assert_eq!(response_time(d, &[], reload(0), &blocks), Ok(Some(13)));
        assert_eq!(response_time(d, &[], reload(0), &server(Some(1_000))), Ok(Some(13)));
    }

    #[test]
    fn a_period_that_spends_the_memory_budget_also_runs() {
        // As above (3 of time, 250 requests, M = 100) with tasks that need at
        // least d = 2 of running to issue 100: the period the window opens in
        // spent M at least 2 before it; two services that spend M would run 4 >
        // 3, so a = 1 (100 with 2 of work) and the last does the 1 left with
        // the last 50 (it cannot issue 100 in 1): 2·10 + 0 + 1 − 2 = 19.
        let d = demand(3, 250.0, 1_000);
        let view = ServerView { issue_ns: 2, ..server(Some(100)) };
        assert_eq!(response_time(d, &[], reload(0), &view), Ok(Some(19)));
        // In the long run a service that spends M runs d of Q too: 6 of time and
        // 100 requests every 20 with d = 3 (they issue at most 100 per 3):
        // 100/20/100 = 0.05 spending services per ns and (6/20 − 0.05·3)/4 =
        // 0.0375 running Q, 0.875 per period < 1 (with d = 0: 0.05 + 0.075,
        // 1.25 per period, no bound). Its window: job 1, a = 1 (100 with 3 of
        // work), the last 3: 2·10 + 3 − 3 = 20, done by the next release.
        let heavy = demand(6, 100.0, 20);
        assert_eq!(response_time(heavy, &[], reload(0), &ServerView { issue_ns: 3, ..server(Some(100)) }), Ok(Some(20)));
        assert_eq!(response_time(heavy, &[], reload(0), &server(Some(100))), Ok(None));
    }

    #[test]
    fn a_cbs_reservations_memory_budget_runs_on_its_own_grid() {
        // 3 of time and 250 requests against M = 100, Q = 4 of P = 10 served
        // by each deadline (R = P). The window opens in a period lost at
        // worst (10); the memory period open then, renewed on its own grid,
        // may be spent later in the window by fewer than 100 of its requests,
        // and ⌊250/100⌋ = 2 more by 100 each: 3 periods cut short, each
        // perhaps with none of the work done (its M issued before the
        // budget's replenishment: no least running d); the last serves the 3
        // by P − Q + 3 = 9 into its period: 10 + 30 + 9 = 49. As a periodic
        // server served within 10: 2 spends, 39.
        let d = demand(3, 250.0, 1_000);
        let periodic = ServerView { guarantee: Guarantee::PerPeriod { budget_ns: 4, within_ns: 10 }, ..server(Some(100)) };
        assert_eq!(response_time(d, &[], reload(0), &periodic), Ok(Some(39)));
        let cbs = ServerView { memory_grid_apart: true, ..periodic.clone() };
        assert_eq!(response_time(d, &[], reload(0), &cbs), Ok(Some(49)));
        // Its tasks' least running to issue M (2 here) is no credit for it.
        assert_eq!(response_time(d, &[], reload(0), &ServerView { issue_ns: 2, ..cbs.clone() }), Ok(Some(49)));
        // In the long run each spend may take a whole period's Q. 1 of time
        // and 100 requests every 30: per period of 10, 1/3 of work and 1/3 of
        // a spend, 1/3 + 4/3 < 4. Its first job: 2 spends (the open memory
        // period and 100 of its own), the last serves 1: 3·10 + 10 − 4 + 1 =
        // 37 > 30; with the second, 3 spends, 4·10 + 10 − 4 + 2 = 48, done by
        // its release + 30 (60): 37.
        let light = demand(1, 100.0, 30);
        assert_eq!(response_time(light, &[], reload(0), &cbs), Ok(Some(37)));
        // 2 of time and 100 requests every 10: a spend every period (4) and 2
        // of work besides: 6 > 4, no bound.
        let heavy = demand(2, 100.0, 10);
        assert_eq!(response_time(heavy, &[], reload(0), &cbs), Ok(None));
    }

    #[test]
    fn a_window_that_opens_at_a_period_start_loses_no_period_before_it() {
        // As in `a_spent_memory_budget_costs_whole_periods` (3 of time, 250
        // requests, M = 100, Q = 4 within 4), every release at a start of the
        // server's period: the window opens with Q and M whole, the first
        // two periods spend M (100 each), the third serves the 3 by 3: 2·10
        // + 3 = 23 (33 where it may open anywhere).
        let d = demand(3, 250.0, 1_000);
        let aligned = |v: ServerView| ServerView { opens_at_period_start: true, ..v };
        assert_eq!(response_time(d, &[], reload(0), &aligned(server(Some(100)))), Ok(Some(23)));
        // With M = 1,000 nothing is spent: the 3 within the first period's
        // Q, served first: 3 (13 where it may open anywhere). Without a memory
        // budget too (the supply alone: 9).
        assert_eq!(response_time(d, &[], reload(0), &aligned(server(Some(1_000)))), Ok(Some(3)));
        assert_eq!(response_time(d, &[], reload(0), &aligned(server(None))), Ok(Some(3)));
        assert_eq!(response_time(d, &[], reload(0), &server(None)), Ok(Some(9)));
        // A spend runs d = 2 of work at least: one period spends M with 2,
        // the next serves the last 1 by 1: 11 (19 where it may open anywhere).
        assert_eq!(response_time(d, &[], reload(0), &aligned(ServerView { issue_ns: 2, ..server(Some(100)) })), Ok(Some(11)));
        // Served within R_s = 7: the last 3 by 7 − 4 + 3 = 6 into the third
        // period: 26.
        let later = ServerView { guarantee: Guarantee::PerPeriod { budget_ns: 4, within_ns: 7 }, ..server(Some(100)) };
        assert_eq!(response_time(d, &[], reload(0), &aligned(later)), Ok(Some(26)));
    }

    /// Another core with one server (P = 10, running up to 8 or 10 of it)
    /// whose one pressing task runs `c` every 1,000 (or 100), done within `r`.
    fn corunner(per_period_ns: u64, period: u64, c: u64, r: Option<u64>) -> Vec<Vec<CoRunner>> {
        vec![vec![CoRunner { period_ns: 10, per_period_ns, tasks: vec![(period, c, r)], unit_ns: 0, events: vec![], within_ns: None }]]
    }

    #[test]
    fn a_co_runner_server_is_present_only_while_its_pressing_jobs_run() {
        // 3 of time beside every co-runner, 1 beside none that raises its
        // misses, losing 0.4 of each ns a pressing one runs beside it. The
        // co-runner server runs 8 of every 10, but its pressing task only 1
        // every 100, done within 10 of its release: in any window at most
        // min(1, w) of it (Bertogna–Cirinei: ⌊(w + 10 − 1)/100⌋ = 0 whole jobs
        // for w < 91, and 1 of the one before). w = 0: time min(3, 1) = 1,
        // time_for(1) = 6 + 1 = 7; w = 7: min(3, 1 + ⌈0.4·1⌉) = 2 → 8; w = 8: 8.
        let d = Demand { unpressed_time_ns: 1, ..demand(3, 0.0, 100) };
        let view = ServerView { corunners: corunner(8, 100, 1, Some(10)), pressed_share: 0.4, ..server(None) };
        assert_eq!(response_time(d, &[], reload(0), &view), Ok(Some(8)));
        // Its response unknown, the task may run all of a window the server
        // serves: w = 7: min(3, 1 + ⌈0.4·7⌉) = 3 → 9, as at its cost beside all.
        let unknown = ServerView { corunners: corunner(8, 100, 1, None), ..view.clone() };
        assert_eq!(response_time(d, &[], reload(0), &unknown), Ok(Some(9)));
    }

    #[test]
    fn a_memory_budget_is_spent_only_in_periods_a_pressing_co_runner_runs_in() {
        // 3 of time and 450 requests, none of them alone: 1,000 per ns of a
        // pressing co-runner's presence, M = 100. The co-runner's task runs 2
        // every 1,000 within 5 of its release: at most 2 of presence (so all
        // 450 requests may come, ⌊450/100⌋ = 4 spends by requests), but in at
        // most ⌈5/10⌉ + 1 = 2 periods of the server per job of it (⌈(w + 5)/1,000⌉
        // = 1 job): 2 spends. w = 0: 1 period, no request, 10 + 4 + 3 − 4 = 13;
        // w = 13: 2 spends, 3·10 + 3 = 33; w = 33: 33.
        let d = Demand { alone_requests: 0.0, ..demand(3, 450.0, 1_000) };
        let view = ServerView { corunners: corunner(10, 1_000, 2, Some(5)), excess_per_work: 1_000.0, ..server(Some(100)) };
        assert_eq!(response_time(d, &[], reload(0), &view), Ok(Some(33)));
        // Its response unknown: every period of the window may spend (w = 13:
        // 3 of them, 43; w = 43: all 4 by requests, 53), as by requests alone.
        let unknown = ServerView { corunners: corunner(10, 1_000, 2, None), ..view.clone() };
        assert_eq!(response_time(d, &[], reload(0), &unknown), Ok(Some(53)));
        // Unknown too, but the co-runner server (period 1,000) is served within
        // 5 of each of its periods' starts: ⌈(w + 5)/1,000⌉ = 1 service in the
        // window, touching ⌈5/10⌉ + 1 = 2 periods: 33 again.
        let served = ServerView { corunners: vec![vec![CoRunner { period_ns: 1_000, within_ns: Some(5), ..corunner(10, 1_000, 2, None)[0][0].clone() }]], ..view.clone() };
        assert_eq!(response_time(d, &[], reload(0), &served), Ok(Some(33)));
    }

    #[test]
    fn a_period_no_co_runner_touches_spends_only_if_its_alone_requests_can_reach_the_budget() {
        // 12 of time and 250 requests, all alone, M = 100, Q = 4 per 10 (d = 0),
        // no co-runner. At most 21 alone requests per ns of work: one period's
        // Q of work issues at most 84 < 100, so no period spends: the window is
        // the supply's, 10 + 2·10 + 4 = 34 (opening period lost, two of Q, the
        // last 4 by R_s). At 25 per ns (100 in Q) ⌊250/100⌋ = 2 may: 54.
        let d = demand(12, 250.0, 1_000);
        let slow = ServerView { alone_per_work: 21.0, ..server(Some(100)) };
        assert_eq!(response_time(d, &[], reload(0), &slow), Ok(Some(34)));
        let fast = ServerView { alone_per_work: 25.0, ..server(Some(100)) };
        assert_eq!(response_time(d, &[], reload(0), &fast), Ok(Some(54)));
    }

    /// A server holding its core throughout (budget = period), the core's
    /// budget Q = 100 requests per 10 ns.
    fn stalled(own_rate: f64, others: Vec<OtherServer>, budget: u64) -> ServerView {
        let core_stalls = CoreStalls { period_ns: 10, budget, own_fastest_request_rate: own_rate, others };
        ServerView { period_ns: 10, budget_ns: 10, guarantee: Guarantee::PerPeriod { budget_ns: 10, within_ns: 10 }, core_stalls: Some(core_stalls), ..server(None) }
    }

    #[test]
    fn the_cores_stalls_are_paid_from_the_servers_budget() {
        // 30 of time, 250 requests. Issuing 10 per ns, the jobs need the whole
        // period to spend Q: the first stalled period costs 10 (spent before the
        // window, perhaps), the other ⌊250/100⌋ = 2 only the 2 ns of rounding
        // each: 30 + 10 + 4 = 44.
        let d = demand(30, 250.0, 1_000);
        assert_eq!(response_time(d, &[], reload(0), &stalled(10.0, vec![], 100)), Ok(Some(44)));
        // Issuing 20 per ns they spend Q in 5: each of the two stalls 10 − 5 + 2: 54.
        assert_eq!(response_time(d, &[], reload(0), &stalled(20.0, vec![], 100)), Ok(Some(54)));
        // Another server on the core (5 of every 10, served within 10, 10
        // requests per ns) spends the budget too. At w = 65 it holds at most
        // 7·5 = 35 (Bertogna-Cirinei: ⌊(65 + 10 − 5)/10⌋ = 7 whole periods, and
        // min(5, 70 − 70) of one before) and issues 350: ⌊(250 + 350)/100⌋ + 1 =
        // 7 stalled periods (of ⌈65/10⌉ + 1 = 8). The 6 after the first hold 600
        // requests issued in at least 250/20 + 350/10 = 47.5 of running: stalls
        // 10 + 60 − 47.5 + 6·2 = 34.5 → 35; 30 + 35 = 65, the least fixed point
        // (w = 40 gives 30.5 → 61; w = 61, 34.5 → 65).
        let other = OtherServer { period_ns: 10, budget_ns: 5, within_ns: 10, fastest_request_rate: 10.0 };
        assert_eq!(response_time(d, &[], reload(0), &stalled(20.0, vec![other], 100)), Ok(Some(65)));
        // A budget of 0 stalls every period from its start: no bound.
        assert_eq!(response_time(d, &[], reload(0), &stalled(20.0, vec![], 0)), Ok(None));
    }
}
