"""MCTI at run time as in the simulator (issue 25, Build 2): a core shared by
a critical and a non-critical periodic task. A budget spent during the
non-critical job stops it until the next period (mcti-task-isolation §4
rule 4); spent during the critical job, the core runs on (rule 5, overload).
The runtime's per-period log and the simulation of the same file must say
the same, period by period.

Core 1, regulation period 10 ms, budget 10,000 lines per period. Both tasks
walk 64 MiB (every line a miss) at 20,000 lines per ms of work, period 20 ms:
- "plain" (not critical), released at 10, 30, 50 ms …: 0.75 ms of work =
  15,000 lines. Its budget runs out after 10,000 of them: stopped for the
  rest of the odd period; its last 5,000 lines run at the next period's start,
  half the budget (the runtime may stop a group early by its learnt stop lag,
  lead.rs: a few hundred lines here, far from the other half).
- "crit" (criticality 1), released at 2, 22, 42 ms …: 1 ms = 20,000 lines.
  The even period's budget (what plain left of it) runs out during its job:
  it runs on, overloaded, to its end.
So every odd period is "stalled" and every even one "overload", on both sides.
Both run SCHED_FIFO by their priorities (crit above plain), as the
simulation's fixed-priority scheduler runs them, and the work is small
beside the slack, so that a busy host (which slows the jobs, not the lines
they count) keeps each state in its period: crit has 8 ms to do 1 ms of
work, plain's rest 2 ms for 0.25 ms.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import criticore
from test_regulate import started_cli, descendants

MS = 1_000_000
PERIOD_NS = 10 * MS
DURATION_MS = 1000


def system_file(tmp_path: Path) -> Path:
    f = tmp_path / "mcti.toml"
    mem = 'memory = { wss = "64MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 20000 }\n'
    f.write_text(
        '[platform]\ncores = 2\nllc = { size = "32MiB", ways = 16, colors = 16, line = "64B" }\n'
        '[regulation]\nkind = "mcti"\nperiod = "10ms"\nbudgets = [1000000, 10000]\n'
        f'[[task]]\nname = "crit"\nlevel = 1\ncore = 1\npriority = 2\nperiod = "20ms"\noffset = "2ms"\npet = "1ms"\n{mem}'
        f'command = "criticore load --file {f} --task crit"\n'
        f'[[task]]\nname = "plain"\ncore = 1\npriority = 1\nperiod = "20ms"\noffset = "10ms"\npet = "0.75ms"\n{mem}'
        f'command = "criticore load --file {f} --task plain"\n'
    )
    return f


def measured_states(f: Path, log: Path) -> dict[int, set[str]]:
    """Per regulation period of core 1's group, what the runtime logged."""
    with started_cli("regulate", str(f), "--counter", "shm", "--duration", f"{DURATION_MS}ms", "--log", str(log), "--json") as (cli, seen):
        try:
            out, err = cli.communicate(timeout=120)
        finally:
            seen.update(descendants(cli.pid))
        assert cli.returncode == 0, err
    assert json.loads(out)["mode"] == "mcti"
    states: dict[int, set[str]] = {}
    with log.open() as fh:
        for row in csv.DictReader(fh):
            if int(row["group"]) != 1:
                continue
            s = set()
            if int(row["overload"]):
                s.add("overload")
            if int(row["throttled_ns"]) > 0:
                s.add("stalled")
            states[int(row["period"])] = s
    return states


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
    # after the common start) to the last whole period. Tolerance for timing:
    # 5 % of the periods may differ (a host that holds a job back by more than
    # its slack, 8 times its work, moves its state into the next period). A
    # busy host can do that to a whole stretch of a 1 s run (18 of 98 periods
    # once, in `make test`; 0 in 14 runs alone): measured once more then, and
    # the second run must hold.
    tries = []
    for attempt in range(2):
        measured = measured_states(f, tmp_path / f"periods-{attempt}.csv")
        last = max(measured) - 1
        assert last >= 90, sorted(measured)
        differ = {p: (measured[p], simulated[p]) for p in range(1, last) if measured[p] != simulated[p]}
        tries.append(differ)
        if len(differ) <= 0.05 * (last - 1):
            break
    assert len(tries[-1]) <= 0.05 * (last - 1), tries
