"""`criticore regulate --mode mrs` (mrs-multi-resource-server §III) on real
processes: two idling periodic servers share core 1, each running an unpaced
load generator. The shares of the core come from the rules, worked out by
hand, and are checked against what the loads themselves record (the 1 ms
intervals in which each moved any line), not against the regulator's log.
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


def test_idling_servers_share_their_core_by_their_budgets(tmp_path):
    run_mrs(tmp_path, memory_a="")
    # Rules 1-3, 6: A (high) holds core 1 for its 5 ms of every 20 ms, then B (low)
    # its 10 ms, then nobody: shares 25% and 50%. A 1 ms interval in which the
    # server changes counts for both, so each share may read up to 2/20 high.
    a, b = running_share(tmp_path / "a.parquet"), running_share(tmp_path / "b.parquet")
    assert 0.22 <= a <= 0.25 + 0.1 + 0.02, a
    assert 0.47 <= b <= 0.50 + 0.1 + 0.02, b


def test_a_spent_memory_budget_suspends_the_server_until_its_next_period(tmp_path):
    # 5,000 lines per 20 ms: an unpaced load spends that in well under 1 ms.
    summary = run_mrs(tmp_path, memory_a="memory_budget = 5000", duration="6s")
    t = {k: np.asarray(v) for k, v in pq.read_table(tmp_path / "periods.parquet").to_pydict().items() if k != "group_name"}
    # The load of A starts slowly (its Python start-up gets A's 25% of the core):
    # judge A from its first period with a spent budget on.
    a = t["group"] == 0
    first = t["start_ns"][a][np.argmax(t["exhausted_ns"][a] > 0)]
    a &= t["start_ns"] >= first
    a_periods = int(a.sum()) - 1  # the last one is unfinished
    assert a_periods >= 80, a_periods
    # Rule 5: A's budget ran out in (nearly) every period, and it then held the core no more.
    depleted = (t["exhausted_ns"][a] > 0)[:-1]
    assert depleted.mean() >= 0.9, depleted.mean()
    assert all(u >= 5000 for u, d in zip(t["used"][a][:-1], depleted) if d)
    # A runs only until its memory is spent (well under its 5 ms); B, whose
    # 10 ms no longer wait behind A's, still gets its 50%.
    share_a = running_share(tmp_path / "a.parquet")
    assert share_a <= 0.25 / 2, share_a
    assert 0.47 <= running_share(tmp_path / "b.parquet") <= 0.62
    assert summary["per_group"][0]["budget"] == 5000


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
    with started_cli("regulate", str(f), "--duration", "3s", "--json") as (cli, seen):
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
    assert 0.47 <= running_share(tmp_path / "hi.parquet") <= 0.62
    # The lower one runs only when the higher one blocks: set up before the
    # common start, after the first second it moved no line.
    lo = tmp_path / "lo.parquet"
    assert not lo.exists() or running_share(lo) <= 0.02
