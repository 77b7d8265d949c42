//! The Multi-Resource Server on real processes (mrs-multi-resource-server
//! §III): each server is a group of processes with a period, a CPU budget
//! and a memory budget. The engine's rules decide everything —
//! [`MrsCpuRules`] which server holds each core (rules 1–3, 5, 6: idling
//! periodic servers under a fixed-priority node scheduler), [`MrsMemoryRules`]
//! when a server's memory budget is spent (rules 1, 4, 5) — and this loop
//! carries it out: the processes of the server holding a core run, those of
//! every other server on that core are stopped.
//!
//! The rules are time-driven, so the loop sleeps until the next period start
//! or budget depletion, or until a server's memory counter overflows (armed
//! with its memory budget left). Inside a server the kernel schedules its
//! processes (the paper's fixed-priority local scheduler is not imposed).

use crate::counter::{overflow_signal, CounterError};
use crate::counter_page::now_ns;
use crate::regulator::{release, EndReason, Group, GroupSnapshot, Observer, Origins, PeriodRecord, Report, Snapshot};
use crate::throttle::Throttler;
use criticore::regulate::mrs::MrsMemoryRules;
use criticore::regulate::mrs_cpu::MrsCpuRules;

struct ServerState {
    last: Vec<u64>,
    stopped_at: Option<u64>,
    record: PeriodRecord,
    period: u64,
    throttled_total_ns: u64,
}

fn read(g: &mut Group, s: &mut ServerState) -> u64 {
    let mut delta = 0;
    for (c, l) in g.counters.iter_mut().zip(s.last.iter_mut()) {
        if let Ok(t) = c.read() {
            delta += t.total().saturating_sub(*l);
            *l = t.total();
        }
    }
    s.record.used += delta;
    delta
}

fn arm(g: &mut Group, left: f64) -> Result<(), CounterError> {
    if !left.is_finite() {
        return Ok(());
    }
    let after = left.max(1.0) as u64;
    for c in g.counters.iter_mut() {
        c.arm(Some(after))?;
    }
    Ok(())
}

/// Run until the duration, the end of every process, a signal, or the
/// observer says stop. Group `s` is server `s` of both rule sets. Records:
/// one per server period (`used` = memory requests, `budget` = M_s,
/// `exhausted_ns` = memory depletion, `throttled_ns` = time not holding its core).
pub fn run(
    duration_ns: Option<u64>,
    snapshot_ns: u64,
    mut cpu: MrsCpuRules,
    mut mem: MrsMemoryRules,
    groups: &mut [Group],
    throttler: &mut dyn Throttler,
    observer: &mut dyn Observer,
) -> Result<Report, CounterError> {
    let n = groups.len();
    let sig = overflow_signal();
    let set = crate::regulator::signal_set(sig);
    let _blocked = crate::regulator::Blocked::new(&set);
    let origins = Origins::new(groups);
    let t0 = now_ns();
    let cpu0 = crate::regulator::thread_cpu_ns();
    let end_at = duration_ns.map_or(u64::MAX, |d| t0 + d);
    let mut state: Vec<ServerState> = Vec::with_capacity(n);
    for (s, g) in groups.iter_mut().enumerate() {
        let mut last = Vec::new();
        for c in g.counters.iter_mut() {
            last.push(c.read()?.total());
        }
        let budget = if mem.limited(s) { mem.left(s) as u64 } else { 0 };
        state.push(ServerState { last, stopped_at: None, record: PeriodRecord { group: s as u32, budget, ..Default::default() }, period: 0, throttled_total_ns: 0 });
        arm(g, mem.left(s))?;
    }
    let mut report = Report { periods: Vec::new(), elapsed_ns: 0, cpu_ns: 0, end: EndReason::Duration, warnings: Vec::new(), signals: 0, throttle_errors: 0, overload_periods: 0 };
    let mut next_snapshot = t0 + snapshot_ns;
    let mut next_alive = t0 + 10_000_000;

    // Who holds each core now: run it, stop the others (rule 2, rule 6).
    let apply = |cpu: &MrsCpuRules, now: u64, state: &mut [ServerState], throttler: &mut dyn Throttler| {
        for (s, st) in state.iter_mut().enumerate() {
            let holds = cpu.running(cpu.server(s).core) == Some(s);
            match (holds, st.stopped_at) {
                (true, Some(since)) => {
                    let _ = throttler.resume(s);
                    st.record.throttled_ns += now.saturating_sub(since);
                    st.throttled_total_ns += now.saturating_sub(since);
                    st.stopped_at = None;
                }
                (false, None) => {
                    let _ = throttler.stop(s);
                    st.stopped_at = Some(now);
                }
                _ => {}
            }
        }
    };
    apply(&cpu, t0, &mut state, throttler);

    let end = loop {
        let wake = (t0 + cpu.next_event_ns().min(mem.next_replenish_ns())).min(end_at).min(next_snapshot);
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let got = crate::regulator::wait_info(&set, wake, &mut info);
        let now = now_ns();
        let rel = now - t0;
        if got == libc::SIGINT || got == libc::SIGTERM {
            break EndReason::Interrupted;
        }
        if got == libc::SIGCHLD && !observer.any_alive() {
            break EndReason::AllExited;
        }
        if got == sig || got == libc::SIGIO {
            report.signals += 1;
            // An unknown origin (SIGIO): check every server.
            let which: Vec<usize> = origins.group_of(&info).map_or_else(|| (0..n).collect(), |s| vec![s]);
            for s in which {
                let delta = read(&mut groups[s], &mut state[s]);
                // MRS §III rule 4: charge; rule 5: a spent memory budget suspends the server.
                if mem.charge(s, delta as f64) {
                    cpu.deplete(s, rel);
                    state[s].record.exhausted_ns = rel;
                    // Silence it until replenished (regulator.rs `disarm`: a
                    // sampling counter left armed signals every `after` counts).
                    for c in groups[s].counters.iter_mut() {
                        c.arm(None)?;
                    }
                } else if !mem.depleted(s) {
                    arm(&mut groups[s], mem.left(s))?;
                }
            }
        }
        cpu.advance(rel);
        if mem.next_replenish_ns() <= rel {
            // Counts up to the boundary belong to the period that ends.
            for s in 0..n {
                read(&mut groups[s], &mut state[s]);
            }
            let mut due = Vec::new();
            mem.replenish_due(rel, |s| due.push(s)); // rule 1
            for s in due {
                let st = &mut state[s];
                let mut done = std::mem::take(&mut st.record);
                done.overshoot = if mem.limited(s) { done.used.saturating_sub(done.budget) } else { 0 };
                if let Some(since) = st.stopped_at {
                    done.throttled_ns += now.saturating_sub(since);
                    st.throttled_total_ns += now.saturating_sub(since);
                    st.stopped_at = Some(now);
                }
                report.periods.push(done);
                st.period += 1;
                let ideal = st.period * cpu.server(s).period_ns;
                st.record = PeriodRecord {
                    period: st.period,
                    group: s as u32,
                    start_ns: rel,
                    lateness_ns: rel.saturating_sub(ideal),
                    budget: if mem.limited(s) { mem.left(s) as u64 } else { 0 },
                    ..Default::default()
                };
                arm(&mut groups[s], mem.left(s))?;
            }
        }
        apply(&cpu, now, &mut state, throttler);
        if now >= next_alive {
            next_alive = now + 10_000_000;
            if !observer.any_alive() {
                break EndReason::AllExited;
            }
        }
        if now >= next_snapshot {
            next_snapshot = now + snapshot_ns;
            let snap = Snapshot {
                elapsed_ns: rel,
                periods: state.iter().map(|s| s.period).max().unwrap_or(0),
                groups: groups
                    .iter()
                    .zip(&state)
                    .map(|(g, st)| GroupSnapshot {
                        name: g.name.clone(),
                        budget: st.record.budget,
                        used_last_period: st.record.used,
                        throttled_ns: st.throttled_total_ns,
                        stopped: st.stopped_at.is_some(),
                        ..Default::default()
                    })
                    .collect(),
            };
            if !observer.snapshot(&snap) {
                break EndReason::Stopped;
            }
        }
        if now >= end_at {
            break EndReason::Duration;
        }
    };
    let now = now_ns();
    for (s, st) in state.iter_mut().enumerate() {
        if let Some(since) = st.stopped_at.take() {
            st.record.throttled_ns += now.saturating_sub(since);
        }
        st.record.overshoot = if mem.limited(s) { st.record.used.saturating_sub(st.record.budget) } else { 0 };
        report.periods.push(std::mem::take(&mut st.record));
    }
    release(groups, throttler);
    report.end = end;
    report.elapsed_ns = now - t0;
    report.cpu_ns = crate::regulator::thread_cpu_ns() - cpu0;
    Ok(report)
}
