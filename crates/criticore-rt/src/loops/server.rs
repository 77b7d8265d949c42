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

use super::period::{Account, PeriodRecord};
use super::{release, EndReason, Frame, Group, GroupSnapshot, Observer, Origins, Report, Snapshot};
use crate::os::counter::CounterError;
use crate::os::throttle::Throttler;
use criticore::regulate::mrs::MrsMemoryRules;
use criticore::regulate::mrs_cpu::MrsCpuRules;

struct ServerState {
    acc: Account,
    period: u64,
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

/// The budget a server's records show: M_s left, 0 for no memory budget.
fn shown_budget(mem: &MrsMemoryRules, s: usize) -> u64 {
    if mem.limited(s) {
        mem.left(s) as u64
    } else {
        0
    }
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
    let mut frame = Frame::block();
    let origins = Origins::new(groups);
    frame.start(duration_ns);
    let (t0, end_at) = (frame.t0, frame.end_at);
    let mut state: Vec<ServerState> = Vec::with_capacity(n);
    for (s, g) in groups.iter_mut().enumerate() {
        let acc = Account::open(g, PeriodRecord { group: s as u32, budget: shown_budget(&mem, s), ..Default::default() })?;
        state.push(ServerState { acc, period: 0 });
        arm(g, mem.left(s))?;
    }
    let mut report = Report::empty(EndReason::Duration);
    let mut next_snapshot = t0 + snapshot_ns;
    let mut next_alive = t0 + 10_000_000;

    // Who holds each core now: run it, stop the others (rule 2, rule 6).
    let apply = |cpu: &MrsCpuRules, now: u64, state: &mut [ServerState], throttler: &mut dyn Throttler| {
        for (s, st) in state.iter_mut().enumerate() {
            if cpu.running(cpu.server(s).core) == Some(s) {
                st.acc.resume(s, throttler, now);
            } else if st.acc.stopped_at.is_none() {
                let _ = throttler.stop(s);
                st.acc.stopped(now);
            }
        }
    };
    apply(&cpu, t0, &mut state, throttler);

    let end = loop {
        let wake = (t0 + cpu.next_event_ns().min(mem.next_replenish_ns())).min(end_at).min(next_snapshot);
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let (got, now, end) = frame.wait(wake, &mut info, observer);
        if let Some(end) = end {
            break end;
        }
        let rel = now - t0;
        if got == frame.sig || got == libc::SIGIO {
            report.signals += 1;
            // An unknown origin (SIGIO): check every server.
            let which: Vec<usize> = origins.group_of(&info).map_or_else(|| (0..n).collect(), |s| vec![s]);
            for s in which {
                let delta = state[s].acc.read(&mut groups[s])?;
                // MRS §III rule 4: charge; rule 5: a spent memory budget suspends the server.
                if mem.charge(s, delta as f64) {
                    cpu.deplete(s, rel);
                    state[s].acc.record.exhausted_ns = rel;
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
                state[s].acc.read(&mut groups[s])?;
            }
            let mut due = Vec::new();
            mem.replenish_due(rel, |s| due.push(s)); // rule 1
            for s in due {
                let st = &mut state[s];
                st.period += 1;
                let ideal = st.period * cpu.server(s).period_ns;
                let next = PeriodRecord {
                    period: st.period,
                    group: s as u32,
                    start_ns: rel,
                    lateness_ns: rel.saturating_sub(ideal),
                    budget: shown_budget(&mem, s),
                    ..Default::default()
                };
                report.periods.push(st.acc.close(now, next, mem.limited(s)));
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
                        budget: st.acc.record.budget,
                        used_last_period: st.acc.record.used,
                        throttled_ns: st.acc.throttled_total_ns,
                        stopped: st.acc.stopped_at.is_some(),
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
    let now = crate::os::clock::now_ns();
    for (s, st) in state.iter_mut().enumerate() {
        report.periods.push(st.acc.finish(now, mem.limited(s)));
    }
    release(groups, throttler);
    report.end = end;
    report.elapsed_ns = now - t0;
    report.cpu_ns = frame.cpu_ns();
    Ok(report)
}
