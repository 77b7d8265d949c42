"""Measured vs simulated (`criticore regulate --compare-sim`): the same task
file run on real processes and in the simulator, side by side.

Per task that ran as a periodic job process (`criticore load --file F --task
T`, which writes its job records where `criticore regulate` tells it): jobs,
deadline misses, mean and max response time. Per regulated group: the share
of the run it spent stopped. Small pure functions; the CLI prints the rows.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

#: Modes whose stops are budget stalls on both sides. In `mrs` the runtime also
#: stops a server that does not hold its core (the CPU rules), which the
#: simulator schedules rather than stalls; in `monitor` the stopped groups are
#: the best-effort cores. Their time stopped is not compared.
STALL_MODES = ("memguard", "mcti")

#: One row per task, then one per group; None where a side has no value.
ROW_KEYS = ("kind", "name", "what", "measured", "simulated")


def task_stats(jobs: dict[str, np.ndarray]) -> dict:
    """Jobs, deadline misses and response times (ms) of finished jobs, from
    job columns in the simulator's names (release_ns, finish_ns, deadline_ns)."""
    release, finish, deadline = (np.asarray(jobs[k], dtype=np.int64) for k in ("release_ns", "finish_ns", "deadline_ns"))
    done = finish > 0
    response = (finish - release)[done]
    return {
        "jobs": int(done.sum()),
        "deadline_misses": int((finish[done] > deadline[done]).sum()),
        "response_ms_mean": float(response.mean() / 1e6) if len(response) else math.nan,
        "response_ms_max": float(response.max() / 1e6) if len(response) else math.nan,
    }


def simulated_task_stats(per_task: dict) -> dict:
    """The same four numbers from a simulator report's `per_task` entry."""
    completed = per_task["completed"]
    return {
        "jobs": int(completed),
        "deadline_misses": int(per_task["deadline_misses"]),
        "response_ms_mean": per_task["mean_response_ns"] / 1e6 if completed else math.nan,
        "response_ms_max": per_task["max_response_ns"] / 1e6 if completed else math.nan,
    }


def throttled_shares(throttled_ns: np.ndarray, group: np.ndarray, groups: int, elapsed_ns: int) -> list[float]:
    """Share of the run each group spent stopped, from the per-period log."""
    return [float(throttled_ns[group == k].sum()) / elapsed_ns if elapsed_ns else math.nan for k in range(groups)]


def simulated_throttled_shares(regulation: dict | None, groups: int, duration_ns: int) -> list[float]:
    """The simulator's stalled (or suspended) time per regulated group, as a
    share of the run; its `index` counts the groups in the order of the file,
    as the runtime's do."""
    shares = [0.0] * groups
    for s in (regulation or {}).get("states") or []:
        if 0 <= s["index"] < groups:
            shares[s["index"]] += s["total_ns"] / duration_ns
    return shares


def rows(measured_tasks: dict[str, dict], simulated_tasks: dict[str, dict], group_names: list[str], measured_shares: list[float], simulated_shares: list[float]) -> list[dict]:
    """Merge both sides into rows of (kind, name, what, measured, simulated)."""
    out = []
    for name, m in measured_tasks.items():
        s = simulated_tasks.get(name, {})
        for what in ("jobs", "deadline_misses", "response_ms_mean", "response_ms_max"):
            out.append({"kind": "task", "name": name, "what": what, "measured": m[what], "simulated": s.get(what)})
    for name, m, s in zip(group_names, measured_shares, simulated_shares):
        out.append({"kind": "group", "name": name, "what": "throttled_share", "measured": m, "simulated": s})
    return out


def read_jobs(path: Path) -> dict[str, np.ndarray] | None:
    """A task's job records, if it wrote any (a task that is not a periodic
    `criticore load`, or that was killed before writing, has none)."""
    if not path.exists():
        return None
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return {k: t.column(k).to_numpy() for k in ("release_ns", "finish_ns", "deadline_ns")}


def compare_with_simulation(file: str | Path, run, job_dir: Path) -> list[dict]:
    """Simulate `file` as long as `run` lasted, under the same regulation, and
    merge: the rows of `rows`."""
    from criticore.simulation import simulate

    summary = run.summary
    elapsed = int(summary["elapsed_ns"])
    sim = simulate(file, elapsed, regulator=summary["mode"])
    names = [t["task"] for t in sim.report["per_task"]]
    simulated = {t["task"]: simulated_task_stats(t) for t in sim.report["per_task"]}
    measured = {}
    for name in names:
        jobs = read_jobs(job_dir / f"{name}.parquet")
        if jobs is not None:
            measured[name] = task_stats(jobs)
    if summary["mode"] not in STALL_MODES:
        return rows(measured, simulated, [], [], [])
    groups = run.group_names()
    c = run.columns
    return rows(
        measured,
        simulated,
        groups,
        throttled_shares(c["throttled_ns"], c["group"], len(groups), elapsed),
        simulated_throttled_shares(sim.report.get("regulation"), len(groups), elapsed),
    )
