"""`criticore regulate --compare-sim` (issue 9): measured vs simulated.

The merge is checked on hand-made columns; one short real run checks that
periodic job processes write their records where the regulator says and that
both sides appear, with the simulator's job count worked out by hand.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from criticore.regulate import compare
from test_regulate import regulate_json


def test_task_stats_by_hand():
    # Three jobs of period 10 ms, deadline = next release; the last finishes late, one never finished.
    jobs = {
        "release_ns": np.array([0, 10, 20, 30]) * 1_000_000,
        "finish_ns": np.array([4, 16, 31, 0]) * 1_000_000,
        "deadline_ns": np.array([10, 20, 30, 40]) * 1_000_000,
    }
    s = compare.task_stats(jobs)
    assert s == {"jobs": 3, "deadline_misses": 1, "response_ms_mean": (4 + 6 + 11) / 3, "response_ms_max": 11.0}


def test_simulated_task_stats_and_shares_by_hand():
    per_task = {"task": "t", "completed": 5, "deadline_misses": 2, "mean_response_ns": 2_500_000, "max_response_ns": 7_000_000}
    assert compare.simulated_task_stats(per_task) == {"jobs": 5, "deadline_misses": 2, "response_ms_mean": 2.5, "response_ms_max": 7.0}
    assert math.isnan(compare.simulated_task_stats({**per_task, "completed": 0})["response_ms_max"])
    # Group 1 stalled 30 ms and 20 ms of a 200 ms run; group 0 never; an index past the groups is ignored.
    reg = {"states": [{"state": "stalled", "index": 1, "total_ns": 30_000_000}, {"state": "stalled", "index": 1, "total_ns": 20_000_000}, {"state": "stalled", "index": 5, "total_ns": 1}]}
    assert compare.simulated_throttled_shares(reg, 2, 200_000_000) == [0.0, 0.25]
    assert compare.simulated_throttled_shares(None, 2, 200_000_000) == [0.0, 0.0]
    # Measured: 4 periods of two groups, group 0 stopped 0.5 ms twice, group 1 never, over 4 ms.
    group = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    throttled = np.array([500_000, 0, 0, 0, 500_000, 0, 0, 0])
    assert compare.throttled_shares(throttled, group, 2, 4_000_000) == [0.25, 0.0]


def test_rows_merge_both_sides():
    m = {"t": {"jobs": 3, "deadline_misses": 1, "response_ms_mean": 7.0, "response_ms_max": 11.0}}
    s = {"t": {"jobs": 4, "deadline_misses": 0, "response_ms_mean": 4.0, "response_ms_max": 4.0}}
    rows = compare.rows(m, s, ["g"], [0.25], [0.5])
    assert [(r["kind"], r["name"], r["what"]) for r in rows] == [
        ("task", "t", "jobs"),
        ("task", "t", "deadline_misses"),
        ("task", "t", "response_ms_mean"),
        ("task", "t", "response_ms_max"),
        ("group", "g", "throttled_share"),
    ]
    assert (rows[0]["measured"], rows[0]["simulated"]) == (3, 4)
    assert (rows[-1]["measured"], rows[-1]["simulated"]) == (0.25, 0.5)


SYSTEM = """[platform]
cores = 2
llc = {{ size = "32MiB", ways = 16, colors = 16, line = "64B" }}

[regulation]
kind = "memguard"
period = "1ms"

[[regulation.group]]
name = "g0"
tasks = ["t0"]
budget = "2000MB/s"

[[regulation.group]]
name = "g1"
tasks = ["t1"]
budget = "100MB/s"

# Working sets twice the LLC: every access misses, so the lines the program
# counts are the LLC misses the simulator charges.
[[task]]
name = "t0"
core = 0
period = "20ms"
pet = "4ms"
memory = {{ wss = "64MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 20000 }}
command = "criticore load --file {file} --task t0"

[[task]]
name = "t1"
core = 1
period = "50ms"
pet = "10ms"
memory = {{ wss = "64MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 20000 }}
command = "criticore load --file {file} --task t1"
"""


def test_a_real_run_beside_its_simulation(tmp_path: Path):
    f = tmp_path / "p.toml"
    f.write_text(SYSTEM.format(file=f))
    summary = regulate_json(str(f), "--counter", "shm", "--duration", "3s", "--compare-sim", timeout=60)
    rows = {(r["name"], r["what"]): r for r in summary["compare_sim"]}
    # The simulator releases t0 at 0, 20, …: 150 jobs in 3 s, each done long before the next.
    assert rows[("t0", "jobs")]["simulated"] == 150
    # The real process starts its first period after its start-up (well under 1 s here).
    assert 100 <= rows[("t0", "jobs")]["measured"] <= 150
    assert rows[("t0", "deadline_misses")]["measured"] == 0
    # t1 demands 1.28 GB/s against 100 MB/s: both sides stop it most of the time.
    assert rows[("g1", "throttled_share")]["measured"] > 0.5 and rows[("g1", "throttled_share")]["simulated"] > 0.5
    assert rows[("g0", "throttled_share")]["measured"] == 0.0 and rows[("g0", "throttled_share")]["simulated"] == 0.0
    assert rows[("t1", "response_ms_max")]["measured"] > 50 and rows[("t1", "response_ms_max")]["simulated"] > 50
