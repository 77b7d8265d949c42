"""`criticore regulate --mode mrs` (mrs-multi-resource-server §III) on real
processes: two idling periodic servers share core 1, each running an unpaced
load generator.

On any host (issue 24) the tests check what the mechanism guarantees: the
regulator's records show each server holding its core for its budget and
stopped for the rest of every period, within twice the wake-up lateness the
same run recorded; the loads' own logs (the 1 ms intervals in which each moved
any line) show no load running beyond what its server held. How much of that
time a load gets depends on what else runs on the core, so the shares to the
percent are an experiment: benches/mrs_shares.py, benches/RESULTS.md.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from test_regulate import descendants, regulate_json, started_cli

SYSTEM = """[platform]
cores = 2
llc = {{ size = "32MiB", ways = 16, colors = 16, line = "64B" }}

[[server]]
name = "A"
core = 1
kind = "periodic"
priority = 2
period = "20ms"
budget = "5ms"
{memory_a}

[[server]]
name = "B"
core = 1
kind = "periodic"
priority = 1
period = "20ms"
budget = "10ms"

[regulation]
kind = "mrs"

[[task]]
name = "a"
server = "A"
period = "100ms"
pet = "100ms"
command = "criticore load --buffer 64MiB --duration 20s --log {tmp}/a.parquet"

[[task]]
name = "b"
server = "B"
period = "100ms"
pet = "100ms"
command = "criticore load --buffer 64MiB --duration 20s --log {tmp}/b.parquet"
"""


PERIOD_MS = 20  # both servers' period in SYSTEM
PERIOD_NS = PERIOD_MS * 1_000_000


def run_mrs(tmp_path: Path, memory_a: str, duration: str = "4s") -> dict:
    f = tmp_path / "mrs.toml"
    f.write_text(SYSTEM.format(memory_a=memory_a, tmp=tmp_path))
    log = tmp_path / "periods.parquet"
    summary = regulate_json(str(f), "--duration", duration, "--log", str(log))
    assert summary["mode"] == "mrs" and summary["end"] == "duration"
    return summary


def running_share(path: Path, skip_ms: int = 1000) -> float:
    """Share of 1 ms intervals, after the first second, in which the load moved lines."""
    t = pq.read_table(path).to_pydict()
    lines = (np.asarray(t["reads"]) + np.asarray(t["writes"]))[skip_ms:]
    # No interval after the first second: the load never ran again.
    return float((lines > 0).mean()) if len(lines) else 0.0


def running_intervals(path: Path, skip_ms: int = 1000) -> tuple[int, int]:
    """(intervals with lines moved, intervals) of a load's log after its first second."""
    t = pq.read_table(path).to_pydict()
    lines = (np.asarray(t["reads"]) + np.asarray(t["writes"]))[skip_ms:]
    return int((lines > 0).sum()), len(lines)


def period_log(tmp_path: Path) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in pq.read_table(tmp_path / "periods.parquet").to_pydict().items() if k != "group_name"}


def held_ns(p: dict[str, np.ndarray], group: int) -> np.ndarray:
    """Per whole period of a server (not the first, not the unfinished last):
    how long it held its core, its period's length as it came out less the
    time it was stopped (the regulator's own records)."""
    m = p["group"] == group
    start, throttled = p["start_ns"][m].astype(np.int64), p["throttled_ns"][m].astype(np.int64)
    return (np.diff(start) - throttled[:-1])[1:]


def check_holds(p: dict[str, np.ndarray], group: int, budget_ns: int) -> np.ndarray:
    """Rules 2, 6: the server held its core for its budget in its whole periods."""
    held = held_ns(p, group)
    assert len(held) > 0
    # Each hold starts and ends when the regulator (SCHED_FIFO 90) wakes, late
    # by its wake-up lateness: in the median period the budget within twice
    # the median lateness the run recorded at its period starts. (A busy host
    # delays some wake-ups by milliseconds: no bound on every period.)
    off = abs(float(np.median(held)) - budget_ns)
    assert off <= 2 * float(np.median(p["lateness_ns"])), (group, np.median(held), np.median(p["lateness_ns"]))
    return held


def check_ran_only_while_held(path: Path, held: np.ndarray) -> None:
    """A load (its own log) moved lines only while its server held the core: a
    hold of h ms touches at most h + 2 of its 1 ms intervals, and its log, after
    its first second, spans at most the whole periods and the two partial ones
    around them. Any other work on the core only lowers the count."""
    ran, intervals = running_intervals(path)
    assert intervals >= PERIOD_MS
    bound = float((held / 1e6 + 2).sum() + 2 * (held.max() / 1e6 + 2))
    assert 0 < ran <= bound, (path.name, ran, bound)


def check_ran_in_phase(path: Path, p: dict[str, np.ndarray], held: np.ndarray) -> None:
    """The server's holds recur at the same point of every period (the load's
    1 ms intervals and the 20 ms periods run on one clock), so the load's
    running intervals, folded over 20, fill one arc of the hold's median
    length + 3: each end partly held, and one more for what the tolerance
    below lets a period move (a start up to half an interval late and a hold
    up to half an interval longer than the median; a busy host once put one
    interval of 1,646 just past an arc of + 2). Only a period whose holds were
    displaced further, by a period start late by half an interval or more or a
    hold that many off its median, may put its intervals elsewhere; and a load
    itself held back at the end of one of its 1 ms intervals books what it
    moved to the next one, at most one stray interval in 100 (a busy host
    once put 1 of 1,258 past the arc with no period displaced). A load the
    regulator did not stop spreads over the whole period (about 3 in 4 of its
    intervals outside an arc of 5 of 20)."""
    t = pq.read_table(path).to_pydict()
    ran = np.flatnonzero((np.asarray(t["reads"]) + np.asarray(t["writes"]))[1000:] > 0)
    assert len(ran) > 0
    by_phase = np.bincount(ran % PERIOD_MS, minlength=PERIOD_MS)
    width = int(np.ceil(float(np.median(held)) / 1e6)) + 3
    in_arc = max(int(by_phase[(s + np.arange(width)) % PERIOD_MS].sum()) for s in range(PERIOD_MS))
    rows = np.flatnonzero(p["lateness_ns"] >= 500_000)
    periods = set(p["period"][rows].tolist())
    for g in np.unique(p["group"]):
        h = held_ns(p, int(g))
        off = np.flatnonzero(np.abs(h - np.median(h)) >= 500_000)
        # held_ns leaves out each group's first period: its index i is period i + 1.
        periods |= set((off + 1).tolist())
    assert len(ran) - in_arc <= len(periods) * PERIOD_MS + len(ran) // 100, (path.name, len(ran), in_arc, sorted(periods))


def test_idling_servers_share_their_core_by_their_budgets(tmp_path):
    summary = run_mrs(tmp_path, memory_a="")
    p = period_log(tmp_path)
    # Rule 1: one period every 20 ms of the run for each server (the last
    # unfinished; one more if the end came before the last one's start was handled).
    for g in (0, 1):
        assert 0 <= (p["group"] == g).sum() - summary["elapsed_ns"] // PERIOD_NS <= 1
    # Rules 1-3, 6: A (high) holds core 1 for its 5 ms of every 20 ms, then B
    # (low) its 10 ms, then nobody; the loads ran only then.
    for name, g, budget in (("a", 0, 5_000_000), ("b", 1, 10_000_000)):
        held = check_holds(p, g, budget)
        check_ran_only_while_held(tmp_path / f"{name}.parquet", held)
        check_ran_in_phase(tmp_path / f"{name}.parquet", p, held)


def test_a_spent_memory_budget_suspends_the_server_until_its_next_period(tmp_path):
    # 5,000 lines per 20 ms: an unpaced load spends that in well under 1 ms.
    summary = run_mrs(tmp_path, memory_a="memory_budget = 5000", duration="6s")
    assert summary["per_group"][0]["budget"] == 5000
    t = period_log(tmp_path)
    # Whole periods of A (not the first, not the unfinished last).
    a = np.flatnonzero(t["group"] == 0)[1:-1]
    used, exhausted = t["used"][a], t["exhausted_ns"][a]
    depleted = exhausted > 0
    # Rules 4, 5: every period in which A spent its budget, and only those,
    # saw it spent. Two races with the clock, both the regulator's own: a
    # budget within the counter's lead of being spent is stopped as spent
    # (lead.rs), so the stop may land before the count reaches it; and a
    # count that crosses just before the period ends is read only with it. On
    # a busy host the second can take a period now and then: at most 1 in 20.
    assert depleted.any()
    early = depleted & (used < 5000)
    assert (used[early] + t["lead"][a][early] >= 5000).all(), list(zip(used[early], t["lead"][a][early]))
    late = ~depleted & (used >= 5000)
    assert late.sum() <= max(1, len(a) // 20), list(zip(used[late], t["overshoot"][a][late]))
    # Rule 5: A then held the core no more: from its period's start until its
    # budget was spent, not its 5 ms. Both ends are the regulator's own wake-ups
    # (the start late by the lateness recorded, the stop issued on seeing the
    # spend). A busy host can delay a stop now and then beyond what the
    # records show (the freezer takes effect asynchronously): at most 1 in 20,
    # as the count's race above.
    held = held_ns(t, 0)
    spent_after = (exhausted - t["start_ns"][a]).astype(np.int64)
    slack = 2 * int(t["lateness_ns"].max()) + int(t["reaction_ns"][a].max())
    off = depleted & (np.abs(held - spent_after) > slack)
    assert off.sum() <= max(1, depleted.sum() // 20), (off.sum(), depleted.sum(), list(zip(held[off][:5], spent_after[off][:5])), slack)
    check_ran_only_while_held(tmp_path / "a.parquet", held)
    # B holds its 10 ms still (rule 2: A no longer holds the core before it).
    check_ran_only_while_held(tmp_path / "b.parquet", check_holds(t, 1, 10_000_000))


FP_SYSTEM = """[platform]
cores = 2
llc = {{ size = "32MiB", ways = 16, colors = 16, line = "64B" }}

[[server]]
name = "S"
core = 1
kind = "periodic"
priority = 1
period = "20ms"
budget = "10ms"

[regulation]
kind = "mrs"

[[task]]
name = "hi"
server = "S"
priority = 98
period = "100ms"
pet = "100ms"
command = "criticore load --buffer 64MiB --duration 20s --log {tmp}/hi.parquet"

[[task]]
name = "lo"
server = "S"
priority = 97
period = "100ms"
pet = "100ms"
command = "criticore load --buffer 64MiB --duration 20s --log {tmp}/lo.parquet"
"""


def test_tasks_inside_a_server_run_by_fixed_priority(tmp_path):
    # MRS §III (Table V's 98 and 97): inside a server, fixed priority. The two
    # tasks run SCHED_FIFO 2 and 1, below the regulator's 90; the higher one,
    # never idle, holds all of the server's 10 ms of every 20 ms.
    f = tmp_path / "fp.toml"
    f.write_text(FP_SYSTEM.format(tmp=tmp_path))
    policies = {}
    with started_cli("regulate", str(f), "--duration", "3s", "--json", "--log", str(tmp_path / "periods.parquet")) as (cli, seen):
        deadline = time.monotonic() + 20
        # They go SCHED_FIFO once both are set up (the common start).
        while time.monotonic() < deadline and not (len(policies) == 2 and all(p[0] == os.SCHED_FIFO for p in policies.values())):
            seen.update(descendants(cli.pid))
            for pid in seen:
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                    if "hi.parquet" in cmd or "lo.parquet" in cmd:
                        policies["hi" if "hi.parquet" in cmd else "lo"] = (os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority)
                except (OSError, ProcessLookupError):
                    pass
            time.sleep(0.05)
        out, err = cli.communicate(timeout=60)
        assert cli.returncode == 0, err
    assert policies == {"hi": (os.SCHED_FIFO, 2), "lo": (os.SCHED_FIFO, 1)}, policies
    summary = json.loads(out)
    assert any("98 → 2" in n and "97 → 1" in n for n in summary["notices"]), summary["notices"]
    # S held core 1 for its 10 ms of every 20 ms, and hi ran only then.
    p = period_log(tmp_path)
    held = check_holds(p, 0, 10_000_000)
    check_ran_only_while_held(tmp_path / "hi.parquet", held)
    check_ran_in_phase(tmp_path / "hi.parquet", p, held)
    # The lower one runs only when the higher one blocks: set up before the
    # common start, after the first second it moved no line.
    lo = tmp_path / "lo.parquet"
    assert not lo.exists() or running_share(lo) <= 0.02
