"""Measured vs simulated (`criticore regulate --compare-sim`): the same task
file run on real processes and in the simulator, side by side.

Per task that ran as a periodic job process (`criticore load --file F --task
T`, which writes its job records where `criticore regulate` tells it): jobs,
deadline misses, mean and max response time. Per regulated group (MemGuard's
groups or cores, MCTI's cores, MRS's servers; not the monitor's): mean events
used per period against the budget, the share of periods in which the budget
ran out, and the share of the run the group spent stopped. Small pure
functions; the CLI prints the rows (docs/runtime.md, "Measured vs simulated").

A third column replays the run: the file simulated again with each job of
a periodic worker running the CPU time its job took on the machine (less
the simulator's own stretch of a job by reloads and stalls). This host's speed
drifts 10-20% between the workers' sizing and their run, and a task at its
server's budget edge answers a long job with a whole server period more
response; the replay separates the model's error from the host's
(docs/runtime.md, "Measured vs simulated: tolerances").
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from criticore.analysis import analyze
from criticore.errors import InputError
from criticore.simulation.run import simulate
from criticore.system import TaskSystem

#: The rows' keys: one row per task or group and quantity; None where a side has no value.
ROW_KEYS = ("kind", "name", "what", "measured", "simulated", "replayed", "replay_band", "bound")
TASK_QUANTITIES = ("jobs", "deadline_misses", "response_ms_mean", "response_ms_max", "exec_ms_median")
GROUP_QUANTITIES = ("used_of_budget", "exhausted_share", "throttled_share")
#: The job-record columns read (the simulator's names, `simulate --jobs`),
#: and when each job finished on the machine's clock (the periodic load's).
JOB_COLUMNS = ("release_ns", "finish_ns", "deadline_ns")
CLOCK_COLUMN = "finish_clock_ns"
#: The replay runs the measured job times as they are, and 5% shorter and
#: longer: what a job's CPU time does not show of the wall time it lost on
#: its core (the regulator, interrupts, the kernel), which decides a server
#: period for a job at its budget's edge (docs/runtime.md).
REPLAY_SCALES = (1.0, 0.95, 1.05)
#: CPU time of each job (the periodic worker's thread CPU time; the simulator's work done).
EXEC_COLUMN = "exec_ns"


def finished(jobs: dict[str, np.ndarray], end_clock_ns: int | None = None) -> np.ndarray:
    """Which of a task's measured jobs count: those that finished and, with
    `end_clock_ns` and the jobs' `finish_clock_ns`, finished by then (a job
    running when the run ends finishes after it, no longer regulated)."""
    done = np.asarray(jobs["finish_ns"], dtype=np.int64) > 0
    if end_clock_ns is not None and CLOCK_COLUMN in jobs:
        done &= np.asarray(jobs[CLOCK_COLUMN], dtype=np.int64) <= end_clock_ns
    return done


def task_stats(jobs: dict[str, np.ndarray], end_clock_ns: int | None = None) -> dict:
    """Jobs, deadline misses and response times (ms) of finished jobs, from
    job columns in the simulator's names (release_ns, finish_ns, deadline_ns),
    the jobs that count by `finished`."""
    release, finish, deadline = (np.asarray(jobs[k], dtype=np.int64) for k in JOB_COLUMNS)
    done = finished(jobs, end_clock_ns)
    response = (finish - release)[done]
    return {
        "jobs": int(done.sum()),
        "deadline_misses": int((finish[done] > deadline[done]).sum()),
        "response_ms_mean": float(response.mean() / 1e6) if len(response) else math.nan,
        "response_ms_max": float(response.max() / 1e6) if len(response) else math.nan,
        "exec_ms_median": _median_ms(jobs[EXEC_COLUMN][done]) if EXEC_COLUMN in jobs else math.nan,
    }


def _median_ms(exec_ns) -> float:
    return float(np.median(np.asarray(exec_ns, dtype=np.float64)) / 1e6) if len(exec_ns) else math.nan


def simulated_task_stats(per_task: dict, exec_ns=()) -> dict:
    """The same numbers from a simulator report's `per_task` entry and the
    task's simulated jobs' `exec_ns`."""
    completed = per_task["completed"]
    return {
        "jobs": int(completed),
        "deadline_misses": int(per_task["deadline_misses"]),
        "response_ms_mean": per_task["mean_response_ns"] / 1e6 if completed else math.nan,
        "response_ms_max": per_task["max_response_ns"] / 1e6 if completed else math.nan,
        "exec_ms_median": _median_ms(exec_ns),
    }


def replayed_exec_ns(measured_exec: dict[str, np.ndarray], simulated_stretch: dict[str, float]) -> dict[str, list[int]]:
    """Per task, the execution times that make the simulator's jobs use the
    CPU time the machine's did: each measured job's CPU time divided by how
    much the simulator stretches a job of that task beyond its PET
    (`simulated_stretch`: its median job's work, reloads and stalls over
    the PET; reloads and stalls grow with a job's references, so with its
    work), at least 1 ns. Jobs cut short by the end of the run (no finish)
    are left to the PET."""
    out = {}
    for name, exec_ns in measured_exec.items():
        stretch = simulated_stretch.get(name)
        if stretch is None or not len(exec_ns):
            continue
        out[name] = [max(1, round(float(e) / stretch)) for e in exec_ns]
    return out


def group_stats(periods: int, used: float, exhausted_periods: int, budget: int, throttled_ns: int, elapsed_ns: int) -> dict:
    """One group's three numbers from its totals over whole periods (`used`
    events in `periods` periods, `exhausted_periods` of them exhausted) and its
    time stopped over the whole run."""
    return {
        "used_of_budget": used / periods / budget if periods and budget else math.nan,
        "exhausted_share": exhausted_periods / periods if periods else math.nan,
        "throttled_share": throttled_ns / elapsed_ns if elapsed_ns else math.nan,
    }


def measured_group_stats(columns: dict[str, np.ndarray], budgets: list[int], elapsed_ns: int) -> list[dict]:
    """Per group, from the per-period log (`Run.columns`): whole periods only
    (the last record of a group is its unfinished period, as in `Run.per_group`),
    time stopped over all of them."""
    out = []
    for k, budget in enumerate(budgets):
        mask = columns["group"] == k
        whole = slice(None, -1) if mask.sum() > 1 else slice(None)
        used, exhausted = columns["used"][mask][whole], columns["exhausted_ns"][mask][whole]
        out.append(group_stats(len(used), float(used.sum()), int((exhausted > 0).sum()), budget, int(columns["throttled_ns"][mask].sum()), elapsed_ns))
    return out


def simulated_group_stats(regulation: dict | None, budgets: list[int], duration_ns: int) -> list[dict | None]:
    """Per group, from the simulator's `regulation.entities` (numbered as the
    runtime's groups: MemGuard's groups or cores, MCTI's cores, MRS's
    servers); None for a group it has none for (the monitor)."""
    entities = (regulation or {}).get("entities") or []
    out: list[dict | None] = []
    for k, budget in enumerate(budgets):
        e = entities[k] if k < len(entities) else None
        out.append(None if e is None else group_stats(e["periods"], e["used"], e["exhausted_periods"], budget, e["stopped_ns"], duration_ns))
    return out


def _value(v):
    """NaN (no jobs, no budget) as None: JSON has no NaN."""
    return None if isinstance(v, float) and math.isnan(v) else v


def rows(
    measured_tasks: dict[str, dict],
    simulated_tasks: dict[str, dict],
    group_names: list[str],
    measured_groups: list[dict],
    simulated_groups: list[dict | None],
    bounds_ms: dict[str, float | None] | None = None,
    replays: list[tuple[dict[str, dict], list[dict | None]]] | None = None,
) -> list[dict]:
    """Merge the sides into rows of ROW_KEYS: the tasks, then the groups.
    `replays` are (tasks, groups) of the replay of the run's job times at
    each of REPLAY_SCALES, the exact one first: `replayed` is that one,
    `replay_band` the least and greatest of them (the plain simulation
    where there was nothing to replay). `bound` is the analysis'
    response-time bound (ms), on a task's response_ms_max row only
    (docs/analysis.md)."""
    replays = replays or [(simulated_tasks, simulated_groups)]
    out = []
    for kind, names, measured, simulated, replayed, quantities in (
        ("task", list(measured_tasks), list(measured_tasks.values()), [simulated_tasks.get(n) for n in measured_tasks], [[r[0].get(n) for r in replays] for n in measured_tasks], TASK_QUANTITIES),
        ("group", group_names, measured_groups, simulated_groups, [[r[1][k] for r in replays] for k in range(len(group_names))], GROUP_QUANTITIES),
    ):
        for name, m, s, rs in zip(names, measured, simulated, replayed):
            for what in quantities:
                bound = (bounds_ms or {}).get(name) if kind == "task" and what == "response_ms_max" else None
                values = [_value((r or {}).get(what)) for r in rs]
                band = None if any(v is None for v in values) else [min(values), max(values)]
                out.append({"kind": kind, "name": name, "what": what, "measured": _value(m[what]), "simulated": _value((s or {}).get(what)), "replayed": values[0], "replay_band": band, "bound": bound})
    return out


def analysis_bounds(file: str | Path) -> tuple[dict[str, float | None], dict[str, int]]:
    """Each task's response-time bound (ms) and the PET it runs at (ns, the
    engine's) from `criticore analyze FILE` (the scheduler the file implies);
    none under MC², whose report the comparison does not read."""
    report = analyze(file).json
    if report["scheduler"] == "mc2":
        return {}, {}
    tasks = report["tasks"]
    return {t["task"]: None if t["bound_ns"] is None else t["bound_ns"] / 1e6 for t in tasks}, {t["task"]: int(t["pet_ns"]) for t in tasks}


def read_jobs(path: Path) -> dict[str, np.ndarray] | None:
    """A task's job records, if it wrote any (a task that is not a periodic
    `criticore load`, or that was killed before writing, has none)."""
    if not path.exists():
        return None
    if path.suffix == ".csv":  # the native worker's, and `criticore load`'s under regulate
        import pyarrow.csv as pcsv

        t = pcsv.read_csv(path)
    else:
        import pyarrow.parquet as pq

        t = pq.read_table(path)
    return {k: t.column(k).to_numpy() for k in (*JOB_COLUMNS, CLOCK_COLUMN, EXEC_COLUMN) if k in t.column_names}


def simulate_like(file: str | Path | TaskSystem, duration_ns: int, mode: str | None, **options):
    """The simulation `--compare-sim` sets beside a run: the same file, as
    long, under the same regulation (mode names are the simulator's
    `--regulator` names). Raises InputError for a file it cannot simulate."""
    return simulate(file, duration_ns, regulator=mode, **options)


def simulated_sides(system: TaskSystem, duration_ns: int, mode: str | None, budgets: list[int], pets_ns: dict[str, int], exec_ns: dict[str, list[int]] | None = None):
    """One simulation's task stats, group stats and, per task with a PET,
    how much the simulator stretched its median job (work, reloads and
    stalls over the PET)."""
    sim = simulate_like(system, duration_ns, mode, jobs=True, exec_ns=exec_ns)
    task_of = np.asarray(sim.jobs["task"])
    used = np.asarray(sim.jobs[EXEC_COLUMN], dtype=np.float64) + np.asarray(sim.jobs["memory_stall_ns"], dtype=np.float64)
    tasks, stretch = {}, {}
    for k, t in enumerate(sim.report["per_task"]):
        mine = task_of == k
        tasks[t["task"]] = simulated_task_stats(t, np.asarray(sim.jobs[EXEC_COLUMN])[mine])
        if pets_ns.get(t["task"]) and mine.any():
            stretch[t["task"]] = max(1.0, float(np.median(used[mine])) / pets_ns[t["task"]])
    return tasks, simulated_group_stats(sim.report.get("regulation"), budgets, duration_ns), stretch


class RunClock:
    """When the regulator's run started on the machine's clock (CLOCK_MONOTONIC,
    as `time.monotonic_ns()`): before the run at first, then from its live
    snapshots (now less the elapsed time they give; the earliest is the one
    least delayed)."""

    def __init__(self) -> None:
        self.before_ns = time.monotonic_ns()
        self.start_ns: int | None = None

    def seen(self, snapshot: dict) -> None:
        t = time.monotonic_ns() - int(snapshot["elapsed_ns"])
        self.start_ns = t if self.start_ns is None else min(self.start_ns, t)

    def end_ns(self, elapsed_ns: int) -> int:
        return (self.before_ns if self.start_ns is None else self.start_ns) + elapsed_ns


def check_simulable(file: str | Path, mode: str | None, period_ns: int | None) -> None:
    """Before the run, not after it: the file can be simulated as it will be
    regulated (one simulated millisecond), or an InputError naming the file,
    the field and the reason."""
    if period_ns is not None:
        reason = "--compare-sim simulates the period of the file's [regulation]; set the period there"
        raise InputError(f"{file}: --period: {reason}", str(file), "--period", reason)
    try:
        simulate_like(file, 1_000_000, mode)
    except InputError as e:
        if len(e.args) != 4:
            raise
        _, where, field, reason = e.args
        reason = f"--compare-sim cannot simulate it: {reason}"
        raise InputError(f"{where}: {field}: {reason}", where, field, reason) from None


def compare_with_simulation(file: str | Path, run, job_dir: Path, clock: RunClock | None = None) -> list[dict]:
    """Simulate `file` as long as `run` lasted, under the same regulation, and
    merge: the rows of `rows`. Measured, the jobs that finished within the run
    (by `clock`); simulated, also as a replay of the run's job times
    (`replayed_exec_ns`)."""
    summary = run.summary
    elapsed = int(summary["elapsed_ns"])
    budgets = [int(g["budget"]) for g in summary["groups"]]
    system = TaskSystem.load(file)
    bounds_ms, pets_ns = analysis_bounds(file)
    simulated, simulated_groups, stretch = simulated_sides(system, elapsed, summary["mode"], budgets, pets_ns)
    measured, measured_exec = {}, {}
    for name in simulated:
        jobs = read_jobs(job_dir / f"{name}.csv")
        if jobs is not None:
            measured[name] = task_stats(jobs, None if clock is None else clock.end_ns(elapsed))
            if EXEC_COLUMN in jobs:
                measured_exec[name] = np.asarray(jobs[EXEC_COLUMN])[finished(jobs)]
    given = replayed_exec_ns(measured_exec, stretch)
    replays = [simulated_sides(system, elapsed, summary["mode"], budgets, pets_ns, _scaled(given, f))[:2] for f in REPLAY_SCALES] if given else None
    # The monitor's groups (its real-time task, the best-effort cores it
    # suspends) are no budgets the simulator keeps: its tasks only.
    names = run.group_names() if any(g is not None for g in simulated_groups) else []
    return rows(measured, simulated, names, measured_group_stats(run.columns, budgets, elapsed), simulated_groups, bounds_ms, replays)


def _scaled(given: dict[str, list[int]], factor: float) -> dict[str, list[int]]:
    return given if factor == 1.0 else {name: [max(1, round(t * factor)) for t in times] for name, times in given.items()}
