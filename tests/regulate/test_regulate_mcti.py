"""MCTI at run time as in the simulator (issue 25, Build 2): a core shared by
a critical and a non-critical periodic task. A budget spent during the
non-critical job stops it until the next period (mcti-task-isolation §4
rule 4); spent during the critical job, the core runs on (rule 5, overload).
The runtime's per-period log and the simulation of the same file must say
the same, period by period.

Core 1, regulation period 10 ms, budget 10,000 lines per period. Both tasks
walk 64 MiB (every line a miss) at 5,000 lines per ms of work, period 20 ms:
- "plain" (not critical), released at 11, 31, 51 ms …: 3 ms of work =
  15,000 lines. Its budget runs out 2 ms in, at 10,000 of them: stopped for
  the rest of the odd period; its last 5,000 lines run at the next period's
  start, 1 ms, half the budget (the runtime may stop a group early by its
  learnt stop lag, lead.rs: a few hundred lines here, far from the other half).
- "crit" (criticality 1), released at 3, 23, 43 ms …: 4 ms = 20,000 lines.
  The even period's budget (the 5,000 plain left of it) runs out 1 ms into
  its job: it runs on, overloaded, to its end.
So every odd period is "stalled" and every even one "overload", on both sides.
Both run SCHED_FIFO by their priorities (crit above plain), as the
simulation's fixed-priority scheduler runs them. The margins are for a busy
host: the regulator has 1 ms to see plain's budget run out before plain
would finish (3 ms for crit); plain starts 1 ms into its period and its rest
ends 2 ms before crit's release, so a period boundary the regulator sees up
to 1 ms late moves no line (a quiet run here saw boundaries 0.75 ms late and
exhaustion 0.3 ms late, which moved 9 of 98 periods with 0.75 ms jobs).

A host can hold a job or the regulator for longer than that (another
tenant's real-time work, the hypervisor taking the vCPU: 11 of 98 periods
moved in one CI run). The records say when. A job's: its time from release
to finish less its CPU time (at most its task's median job's: the guest
counts a vCPU the hypervisor took as the job's CPU time: the likely cause
of one run's 22 differing periods of 98, none seen as held), the stops the
regulator logged and the CPU time of the job above it is time the host
took; more than HOLD_NS, plus SLIP_NS
per period it spans (wake-ups), and its periods and the next (where its
late lines land) are left out of the comparison. The regulator's: a period
it began more than HOLD_NS late or never saw begin, and the one before.
The regulator's own mistakes are not excused so: a stop it should not have
made is in its log, subtracted, and leaves the job unheld.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import criticore
import pytest
from test_regulate import started_cli, descendants

MS = 1_000_000
PERIOD_NS = 10 * MS
DURATION_MS = 1000


def system_file(tmp_path: Path) -> Path:
    """The file, its tasks' commands writing their job records beside it."""
    tmp_path.mkdir(exist_ok=True)
    f = tmp_path / "mcti.toml"
    mem = 'memory = { wss = "64MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 5000 }\n'
    f.write_text(
        '[platform]\ncores = 2\nllc = { size = "32MiB", ways = 16, colors = 16, line = "64B" }\n'
        '[regulation]\nkind = "mcti"\nperiod = "10ms"\nbudgets = [1000000, 10000]\n'
        f'[[task]]\nname = "crit"\nlevel = 1\ncore = 1\npriority = 2\nperiod = "20ms"\noffset = "3ms"\npet = "4ms"\n{mem}'
        f'command = "criticore load --file {f} --task crit --log {tmp_path / "crit.csv"}"\n'
        f'[[task]]\nname = "plain"\ncore = 1\npriority = 1\nperiod = "20ms"\noffset = "11ms"\npet = "3ms"\n{mem}'
        f'command = "criticore load --file {f} --task plain --log {tmp_path / "plain.csv"}"\n'
    )
    return f


def measured(f: Path, log: Path) -> tuple[dict[int, set[str]], set[int]]:
    """Per regulation period of core 1's group, what the runtime logged; and
    the periods a host hold may have moved."""
    with started_cli("regulate", str(f), "--counter", "shm", "--duration", f"{DURATION_MS}ms", "--log", str(log), "--json") as (cli, seen):
        try:
            out, err = cli.communicate(timeout=120)
        finally:
            seen.update(descendants(cli.pid))
        assert cli.returncode == 0, err
    assert json.loads(out)["mode"] == "mcti"
    states: dict[int, set[str]] = {}
    starts: dict[int, int] = {}
    throttled: dict[int, int] = {}
    late = set()
    with log.open() as fh:
        for row in csv.DictReader(fh):
            if int(row["group"]) != 1:
                continue
            p = int(row["period"])
            states[p] = {"overload"} if int(row["overload"]) else set()
            if int(row["throttled_ns"]) > 0:
                states[p].add("stalled")
            starts[p], throttled[p] = int(row["start_ns"]), int(row["throttled_ns"])
            if int(row["lateness_ns"]) > HOLD_NS:
                late.update((p - 1, p))
    for p in range(max(states)):
        if p not in states:  # it woke past this period's start: the one before holds its traffic
            states[p] = set()
            late.update((p - 1, p))
    # A stop lasts to the next period's start (MCTI §4 rule 4).
    stops = [(starts[p + 1] - t, starts[p + 1]) for p, t in throttled.items() if t > 0 and p + 1 in starts]
    jobs = {}
    for task in ("crit", "plain"):
        with (f.parent / f"{task}.csv").open() as fh:
            jobs[task] = [(int(r["release_ns"]), int(r["start_ns"]), int(r["finish_ns"]), int(r["exec_ns"])) for r in csv.DictReader(fh)]
    return states, late | held_periods([jobs["crit"], jobs["plain"]], stops)


HOLD_NS = MS
SLIP_NS = MS // 4


def held_periods(tasks: list[list[tuple[int, int, int, int]]], stops: list[tuple[int, int]]) -> set[int]:
    """The regulation periods a host's hold of a job may have moved. `tasks`
    holds one core's tasks from the highest priority down, each its jobs as
    (release, start, finish, CPU time). A job is ready from its release or its
    predecessor's finish (a task's jobs run one after another) to its finish;
    what of that is neither its own CPU time, nor the regulator's stops, nor
    the CPU time of a higher task's jobs it overlaps, the host took. Its own
    CPU time is at most its task's median job's: a vCPU the hypervisor took
    while the job ran counts as the job's CPU time in the guest, and issues
    no line meanwhile (the jobs are equal: the same lines, paced alike). More than
    HOLD_NS plus SLIP_NS per period it spans (a wake-up costs ~0.1 ms; a job
    starved for a hundred periods gathers many): the periods it spans and the
    next (its late lines) are moved."""
    held = set()
    for rank, jobs in enumerate(tasks):
        ready_from = 0
        typical = sorted(cpu for *_, cpu in jobs)[len(jobs) // 2] if jobs else 0
        for release, _, finish, cpu in jobs:
            own = min(cpu, typical)
            ready = max(release, ready_from)
            ready_from = finish
            def overlap(a: int, b: int) -> int:
                return max(0, min(finish, b) - max(ready, a))
            stopped = sum(overlap(a, b) for a, b in stops)
            above = sum(c * overlap(s, f) // max(f - s, 1) for higher in tasks[:rank] for _, s, f, c in higher)
            spans = range(ready // PERIOD_NS, finish // PERIOD_NS + 1)
            if finish - ready - own - stopped - above > HOLD_NS + SLIP_NS * len(spans):
                held.update(spans, [spans[-1] + 1])
    return held


def test_held_periods_by_hand():
    # Period 10 ms. A job released at 12 ms, finished at 25 ms with 1 ms of CPU:
    # 12 ms off its CPU; the regulator stopped it 15-20 ms, so 7 ms held, over
    # 1 ms + 0.25 ms for each of the 2 periods it spans: periods 1, 2 and the next, 3.
    job = (12 * MS, 12 * MS, 25 * MS, 1 * MS)
    assert held_periods([[job]], [(15 * MS, 20 * MS)]) == {1, 2, 3}
    # Stopped 12.5-23 ms instead: 1.5 ms held, not more: none; 1 ns more: held.
    assert held_periods([[job]], [(12 * MS + MS // 2, 23 * MS)]) == set()
    assert held_periods([[job]], [(12 * MS + MS // 2, 23 * MS - 1)]) == {1, 2, 3}
    # A stop outside the job does not count: 12 ms held.
    assert held_periods([[job]], [(30 * MS, 40 * MS)]) == {1, 2, 3}
    # Its predecessor finished at 20 ms: ready from 20, 4 ms held in 1 period: periods 2 and 3.
    assert held_periods([[(0, 0, 20 * MS, 20 * MS), job]], []) == {2, 3}
    # A higher task ran 10.5 ms of CPU within 12.5-23 ms: 1.5 ms held, none; 10 ms: 2 ms, held.
    assert held_periods([[(12 * MS + MS // 2, 12 * MS + MS // 2, 23 * MS, 10 * MS + MS // 2)], [job]], []) == set()
    assert held_periods([[(12 * MS + MS // 2, 12 * MS + MS // 2, 23 * MS, 10 * MS)], [job]], []) == {1, 2, 3}
    # Its job ran 3-23 ms with 18.5 ms of CPU (1.5 ms held in 3 periods, under
    # 1.75: not itself held): 11/20 of it within ours, 10.175 ms, leaves
    # 1.825 ms held: held; with 19.5 ms, 10.725 ms leaves 1.275: none.
    assert held_periods([[(3 * MS, 3 * MS, 23 * MS, 18 * MS + MS // 2)], [job]], []) == {1, 2, 3}
    assert held_periods([[(3 * MS, 3 * MS, 23 * MS, 19 * MS + MS // 2)], [job]], []) == set()
    # Its task's jobs take 4 ms of CPU each, but one ready 10-16 ms took 6 ms:
    # the host took 2 ms the guest counted as its CPU time, over 1 ms + 0.25 ms:
    # periods 1 and the next, 2. With 5 ms: 1 ms, none.
    steady = [(k * 20 * MS, k * 20 * MS, k * 20 * MS + 4 * MS, 4 * MS) for k in (3, 4, 5)]
    assert held_periods([[(10 * MS, 10 * MS, 16 * MS, 6 * MS)] + steady], []) == {1, 2}
    assert held_periods([[(10 * MS, 10 * MS, 15 * MS, 5 * MS)] + steady], []) == set()


def simulated_states(f: Path) -> dict[int, set[str]]:
    """Per regulation period, the states of core 1 in the simulation's regulator track."""
    sim = criticore.simulate(str(f), f"{DURATION_MS}ms", scheduler="pfp", trace=True)
    events = json.loads(sim.trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    states: dict[int, set[str]] = {p: set() for p in range(DURATION_MS * MS // PERIOD_NS)}
    for e in events:
        if e.get("cat") != "regulator" or e.get("ph") != "X" or e.get("tid") != 1:
            continue
        start, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)  # µs in the trace
        for p in range(start // PERIOD_NS, min((end - 1) // PERIOD_NS + 1, len(states))):
            states[p].add(e["name"])
    return states


def test_mcti_stops_the_non_critical_job_and_lets_the_critical_one_overload(tmp_path: Path):
    f = system_file(tmp_path)
    simulated = simulated_states(f)
    # The simulation, worked out above: odd periods stalled, even ones overloaded.
    assert all(simulated[p] == ({"stalled"} if p % 2 else {"overload"}) for p in range(len(simulated))), simulated
    # Compared from period 1 (period 0 holds the programs' first moments
    # after the common start) to the last whole period, but for the periods a
    # host hold may have moved (above); 5 % of those compared may differ. A
    # run that fails so, or that the host held in more than a fifth of its
    # periods, is measured once more; the last run held less must hold, and
    # if the host held both, the test is skipped with the reason: it
    # measured the host.
    tries = []
    for attempt in range(2):
        states, held = measured(system_file(tmp_path / f"run-{attempt}"), tmp_path / f"periods-{attempt}.csv")
        last = max(states) - 1
        assert last >= 90, sorted(states)
        periods = range(1, last)
        compared = [p for p in periods if p not in held]
        differ = {p: (states[p], simulated[p]) for p in compared if states[p] != simulated[p]}
        tries.append((len(periods) - len(compared), len(periods), differ))
        if len(compared) >= 0.8 * len(periods) and len(differ) <= 0.05 * len(compared):
            break
    measured_runs = [t for t in tries if t[0] <= 0.2 * t[1]]
    if not measured_runs:
        pytest.skip(f"the host held core 1's jobs or its regulator over {HOLD_NS / MS:g} ms in {tries[0][0]} then {tries[1][0]} of {tries[1][1]} periods")
    held_n, n, differ = measured_runs[-1]
    assert len(differ) <= 0.05 * (n - held_n), tries
