"""Issue 9 acceptance: four load generators, each demanding more than its
budget, under `criticore regulate --mode memguard` with different budgets.
Each one's traffic over 10 s lies within ±5% of its budget (over the periods
in which it demanded its budget, at least 100 of them), with the
shared-memory counters and with a perf_event software event (page faults of
loads that drop their pages every pass).

Every process is bounded: the loads stop by themselves after 25 s, the CLI is
killed after 90 s, and a finally block resumes and kills whatever is left.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from test_regulate import regulate_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "regulate" / "four-loads.toml"
SETTLE_NS = 2_000_000_000  # start-up of the four load processes (Python import, first pass)
MEASURE_NS = 10_000_000_000


def bounded_example(tmp_path: Path, page_faults: bool) -> Path:
    text = EXAMPLE.read_text()
    # A load outlives a killed CLI (its parent-death signal is SIGCONT): bound it.
    text = text.replace('--fresh-pages"', '--fresh-pages --duration 25s"')
    # Issue 9 measured the budgets with the loads at SCHED_OTHER; the file's
    # priorities (SCHED_FIFO, for `--compare-sim`) gave the lowest one 1.069
    # of its budget with page-fault counters in one run of three (2026-11-28).
    text = re.sub(r"(?m)^priority = \d+\n", "", text)
    if page_faults:
        # One page fault = one 4 KiB page = 64 lines of 64 B: the same bandwidths in faults per 1 ms.
        for mb_s in (100, 200, 300, 400):
            text = text.replace(f'budget = "{mb_s}MB/s"', f"budget = {mb_s * 10**6 // 4096 // 1000}")
    path = tmp_path / "four-loads.toml"
    path.write_text(text)
    return path


def nearest_rank(values: np.ndarray, p: float) -> float:
    v = np.sort(values)
    rank = max(1, int(np.ceil(p / 100 * len(v))))
    return float(v[min(rank, len(v)) - 1])


def lost_periods(cols: dict, window: np.ndarray) -> float:
    """The share of the 1 ms periods of the window the regulator never saw
    begin: it woke past more than one boundary at once, so one record holds
    the traffic of several periods, stops included."""
    worst = 0.0
    for g in np.unique(cols["group"]):
        seen = cols["period"][window & (cols["group"] == g)].astype(np.int64)
        if len(seen):
            worst = max(worst, 1 - len(seen) / (int(seen.max()) - int(seen.min()) + 1))
    return worst


def measure(tmp_path: Path, counter: str) -> tuple[dict, dict, np.ndarray]:
    tmp_path.mkdir()
    file = bounded_example(tmp_path, page_faults=counter != "shm")
    log = tmp_path / "periods.parquet"
    duration_s = (SETTLE_NS + MEASURE_NS) / 1e9 + 0.5
    summary = regulate_json(str(file), "--counter", counter, "--duration", f"{duration_s}s", "--log", str(log), timeout=90)
    assert summary["end"] == "duration"
    t = pq.read_table(log).to_pydict()
    cols = {k: np.asarray(v) for k, v in t.items() if k != "group_name"}
    window = (cols["start_ns"] >= SETTLE_NS) & (cols["start_ns"] < SETTLE_NS + MEASURE_NS)
    return summary, cols, window


@pytest.mark.parametrize("counter", ["shm", "sw:page-faults"])
def test_four_loads_each_hold_their_budget_within_5_percent(tmp_path, counter):
    summary, cols, window = measure(tmp_path / "first", counter)
    # The regulator runs SCHED_FIFO, so only the host (the hypervisor taking
    # the vCPU) can keep it from a period boundary; then a stop it owes lands
    # periods late and the traffic of several periods counts in one. On a
    # shared host it lost 8.2% and 2.5% of the periods in one `make test`
    # (2026-11-28: used 1.21 and 1.17 of the budget), never more than 0.01%
    # otherwise, two CPU hogs beside it included. Such a run measures the
    # host, not the regulator: it is measured again once, and skipped, with
    # the reason, when the host held the regulator back both times.
    first = lost_periods(cols, window)
    if first > 0.01:
        summary, cols, window = measure(tmp_path / "again", counter)
        again = lost_periods(cols, window)
        if again > 0.01:
            pytest.skip(f"the host kept the SCHED_FIFO regulator from {first:.1%} then {again:.1%} of its 1 ms periods")
    # Budgets in the file: 100-400 MB/s at 1 ms and 64 B lines (or 4 KiB pages).
    unit = 64 if counter == "shm" else 4096
    expected = [mb_s * 10**6 // unit // 1000 for mb_s in (100, 200, 300, 400)]
    for g, group in enumerate(summary["per_group"]):
        m = window & (cols["group"] == g)
        periods = int(m.sum())
        assert periods >= 9_000, f"{group['name']}: only {periods} periods of 1 ms in 10 s"
        assert int(cols["budget"][m][0]) == expected[g]
        used = int(cols["used"][m].sum())
        budget = int(cols["budget"][m].sum())
        # Periods in which the load demanded at least its budget (it was stopped):
        # the ±5% holds over those. How many there are is the host's business:
        # with four loads on two CPUs a load got too little CPU to reach its
        # budget in 30-64% of the periods in about one run in three on a busy
        # shared host, and demanded it in only 24.5% once on a quiet one
        # (2026-11-24); with one CPU hog beside the four page-fault loads one
        # got enough CPU in only 2.3% (229 periods, 2026-11-28). A hundredth
        # of the periods, 100, still measures the budget to the ±5%.
        demanded = m & (cols["exhausted_ns"] > 0)
        share = demanded.sum() / periods
        d_used, d_budget = int(cols["used"][demanded].sum()), int(cols["budget"][demanded].sum())
        print(f"{counter} {group['name']}: used/budget {used / budget:.4f} over {periods} periods, "
              f"{d_used / d_budget:.4f} over the {share:.1%} in which it demanded its budget")
        assert demanded.sum() >= 100, f"{group['name']}: demanded its budget in only {share:.1%} of the periods"
        assert 0.95 <= d_used / d_budget <= 1.05, f"{group['name']}: used {d_used} of {d_budget} ({d_used / d_budget:.3f})"
        assert used / budget <= 1.05, f"{group['name']}: used {used} of {budget} over all periods"
    # The per-period overshoot distribution is reported: the summary's nearest-rank
    # percentiles are those of the log's overshoot column, recomputed here.
    for g, group in enumerate(summary["per_group"]):
        over = cols["overshoot"][cols["group"] == g][:-1]  # the last period is unfinished
        assert group["overshoot_p50"] == nearest_rank(over, 50)
        assert group["overshoot_p99"] == nearest_rank(over, 99)
        assert group["overshoot_max"] == int(over.max())
    assert re.search(r"counter page .*\(writer pid \d+\)|perf sw:page-faults", summary["counter"]), summary["counter"]
    # A group is stopped at most once per period; no period is throttled for longer
    # than it lasted, from its start to the next one's (a u64 underflow once
    # logged 2^64 ns). A period lasts longer than 1 ms when the regulator wakes
    # late (the host is shared), so its own length is the bound, not 1 ms.
    for g in range(len(summary["per_group"])):
        m = cols["group"] == g
        lasted = np.diff(cols["start_ns"][m].astype(np.int64))
        throttled = cols["throttled_ns"][m][:-1].astype(np.int64)
        assert (throttled <= lasted).all(), f"group {g}: stopped {throttled.max()} ns in a period of {lasted[throttled.argmax()]} ns"
        assert int(cols["throttled_ns"][m][-1]) < 10**9
    # About one overflow signal per group and period (arming at the budget left).
    # A counter copy firing on its own period (a storm of one signal per count,
    # counter/perf.rs "Per-task counters and threads") shows as many more.
    n_periods = len(cols["period"])
    assert summary["signals"] <= 2 * n_periods, f"{summary['signals']} signals in {n_periods} group-periods"
    # A counter that still signals early is muted and polled (the fallback of
    # counter/perf.rs), with a warning naming its group. How often is the host's
    # business: one group in about one run in six, then two groups in two of
    # three CI runs later that day (2026-11-24, a busier host), and every muted
    # group held its budget (asserted above). The storm itself shows in the
    # signal count (asserted above) and in budgets missed, not in this count.
    muted = [w for w in summary["warnings"] if "signalled" in w]
    names = [g["name"] for g in summary["per_group"]]
    for w in muted:
        assert any(f"group {name}:" in w for name in names), w
    print(f"{counter}: {len(muted)} group(s) muted and polled")
