"""Typed results of :func:`criticore.analyze`, :func:`criticore.optimize`,
:func:`criticore.simulate` and :func:`criticore.study`.

Each keeps the engine's report as ``json`` (what ``--json`` prints), and
exposes the fields people reach for as attributes in SI units; records are
pyarrow tables (``table.to_pandas()``, ``polars.from_arrow(table)``), plots
are methods returning matplotlib figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from criticore.simulation.run import SimRun, _job_table
from criticore.units import duration_text

if TYPE_CHECKING:
    import pyarrow as pa
    from matplotlib.figure import Figure

    from criticore.study.report import Curves
    from criticore.study.run import StudySummary
    from criticore.system import TaskSystem


def _take(cls, data: Mapping[str, Any], **extra: Any):
    """``cls`` from the keys of ``data`` it declares (the report may hold more)."""
    names = {f.name for f in fields(cls)} - set(extra)
    return cls(**{k: data[k] for k in names if k in data}, **extra)


def _named(items, key: str, name: str):
    """The item whose ``key`` is ``name`` (KeyError if none)."""
    for item in items:
        if getattr(item, key) == name:
            return item
    raise KeyError(name)


def _table(cls, items, schema=None) -> pa.Table:
    """Dataclass items as a pyarrow table, one column per field."""
    import pyarrow as pa

    names = [f.name for f in fields(cls)]
    return pa.Table.from_pylist([{n: getattr(item, n) for n in names} for item in items], schema=schema)


# --------------------------------------------------------------------------- analysis


@dataclass(frozen=True)
class TaskBound:
    """A classic test's response-time bound for one task (docs/analysis.md)."""

    task: str
    on: str | None
    pet_ns: int
    period_ns: int
    deadline_ns: int
    bound_ns: int | None
    schedulable: bool
    note: str | None = None


@dataclass(frozen=True)
class Configuration:
    """One of the four MC² configurations of mc2-hardware-management §4.3."""

    name: str
    label: str
    available: bool
    reason: str | None
    total_utilization: float | None
    schedulable: bool | None
    levels: Mapping[str, bool] | None = None


@dataclass(frozen=True)
class ChainBound:
    """A cause-effect chain's end-to-end bounds (ns; None with the reason in
    ``note``): docs/analysis.md, "Cause-effect chains"."""

    name: str
    tasks: tuple[str, ...]
    reaction_ns: int | None
    data_age_ns: int | None
    note: str | None = None


@dataclass(frozen=True)
class Analysis:
    """A schedulability analysis. ``scheduler`` "mc2" fills ``levels`` and
    ``configurations``; the classic tests fill ``tasks`` (bounds in ns)."""

    scheduler: str
    schedulable: bool | None
    test: str | None
    tasks: tuple[TaskBound, ...]
    levels: Mapping[str, bool]
    configurations: Mapping[str, Configuration]
    json: dict = field(repr=False)
    #: The file's cause-effect chains, bounded (empty without ``[[chain]]``).
    chains: tuple[ChainBound, ...] = ()

    @classmethod
    def from_json(cls, report: dict) -> Analysis:
        levels = {k: v["schedulable"] for k, v in (report.get("levels") or {}).items()}
        configurations = {k: _take(Configuration, c, name=k) for k, c in (report.get("configurations") or {}).items()}
        tasks = tuple(_take(TaskBound, t) for t in report.get("tasks") or () if isinstance(t, dict))
        chains = tuple(_take(ChainBound, c, tasks=tuple(c["tasks"])) for c in report.get("chains") or ())
        return cls(report["scheduler"], report.get("schedulable"), report.get("test"), tasks, levels, configurations, report, chains)

    def bound(self, task: str) -> TaskBound:
        """The bound of ``task`` (KeyError if the test gives none)."""
        return _named(self.tasks, "task", task)

    def table(self) -> pa.Table:
        """The per-task bounds as a pyarrow table (empty for MC²)."""
        return _table(TaskBound, self.tasks, _bound_schema())


def _bound_schema():
    import pyarrow as pa

    return pa.schema([("task", pa.string()), ("on", pa.string()), ("pet_ns", pa.uint64()), ("period_ns", pa.uint64()),
                      ("deadline_ns", pa.uint64()), ("bound_ns", pa.uint64()), ("schedulable", pa.bool_()), ("note", pa.string())])


# --------------------------------------------------------------------------- optimizer


@dataclass(frozen=True)
class Optimization:
    """The three-phase optimizer's outcome (mc2-io-ipc-os-isolation §6.1).
    ``system`` is the input with cores, buffer placements and LLC ways set,
    or None when the system is not schedulable under ``scheme``."""

    scheme: str
    schedulable: bool
    reason: str | None
    system: TaskSystem | None
    json: dict = field(repr=False)


# --------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class TaskStats:
    """One task's simulated statistics (times in ns)."""

    task: str
    level: str
    core: int | None
    server: str | None
    released: int
    completed: int
    deadline_misses: int
    unfinished: int
    #: Release of the oldest job unfinished at the end; None when every job finished.
    oldest_unfinished_release_ns: int | None
    #: Of the finished jobs (0 when none finished: see ``completed``).
    max_response_ns: int
    mean_response_ns: float
    max_tardiness_ns: int
    preemptions: int
    migrations: int
    memory_requests: int
    memory_stall_ns: int
    #: Releases lost to the task's ``activation_limit`` (never jobs).
    lost_activations: int = 0


@dataclass(frozen=True)
class ChainLatency:
    """A cause-effect chain's latencies in a run (ns; None when none was
    seen): how many reactions and outputs, their largest, mean and 99th
    percentile (docs/simulator.md, "Cause-effect chains")."""

    chain: str
    tasks: tuple[str, ...]
    reactions: int
    max_reaction_ns: int | None
    mean_reaction_ns: int | None
    p99_reaction_ns: int | None
    outputs: int
    max_data_age_ns: int | None
    mean_data_age_ns: int | None
    p99_data_age_ns: int | None


@dataclass(frozen=True)
class Simulation:
    """A simulation run. Totals are over all tasks; ``per_task`` per task.
    ``jobs``, ``segments`` and ``bandwidth`` are pyarrow tables when asked for
    (``jobs=True``, ``segments=True``, ``bin_ns=``); ``partial`` marks a run
    stopped by Ctrl-C before its duration."""

    system: TaskSystem = field(repr=False)
    scheduler: str
    duration_ns: int
    partial: bool
    events: int
    released: int
    completed: int
    deadline_misses: int
    unfinished: int
    #: Release of the oldest job unfinished at the end; None when every job finished.
    oldest_unfinished_release_ns: int | None
    #: Of the finished jobs (0 when none finished: see ``completed``).
    max_response_ns: int
    mean_response_ns: float
    max_tardiness_ns: int
    preemptions: int
    migrations: int
    memory_requests: int
    memory_stall_ns: int
    per_task: tuple[TaskStats, ...] = field(repr=False)
    jobs: pa.Table | None = field(repr=False)
    segments: pa.Table | None = field(repr=False)
    bandwidth: pa.Table | None = field(repr=False)
    trace: str | None = field(repr=False)
    json: dict = field(repr=False)
    _run: SimRun = field(repr=False, compare=False)
    #: The file's cause-effect chains, measured (empty without ``[[chain]]``).
    chains: tuple[ChainLatency, ...] = ()

    @classmethod
    def from_run(cls, system: TaskSystem, run: SimRun) -> Simulation:
        report = run.report
        names = [t.name for t in system.tasks]
        jobs = _job_table(run.jobs, names) if run.jobs is not None else None
        segments = _segment_table(run.segments, names) if run.segments is not None else None
        bandwidth = None
        if run.bandwidth is not None and run.bin_ns is not None:
            bandwidth = _bandwidth_table(run.bandwidth, run.bin_ns, system.platform.line_bytes)
        per_task = tuple(_take(TaskStats, t) for t in report["per_task"])
        chains = tuple(_take(ChainLatency, c, tasks=tuple(c["tasks"])) for c in report.get("chains") or ())
        return _take(cls, report, system=system, partial=bool(report.get("partial")), per_task=per_task, jobs=jobs,
                     segments=segments, bandwidth=bandwidth, trace=run.trace, json=report, _run=run, chains=chains)

    def task(self, name: str) -> TaskStats:
        """The statistics of task ``name`` (KeyError if none)."""
        return _named(self.per_task, "task", name)

    def per_task_table(self) -> pa.Table:
        """``per_task`` as a pyarrow table."""
        return _table(TaskStats, self.per_task)

    def gantt(self, title: str | None = None) -> Figure:
        """Execution trace: tasks and servers over time (needs ``jobs=True, segments=True``)."""
        import criticore.plots as plots  # matplotlib: loaded when a figure is asked for, not with criticore

        if self._run.segments is None:
            raise ValueError("simulate(..., segments=True) keeps the execution segments a Gantt chart draws")
        s = self.system
        return plots.gantt_figure(self._run, [t.name for t in s.tasks], [v.name for v in s.servers], s.platform.cores,
                                  title if title is not None else f"{s.name}, {duration_text(self.duration_ns)}")

    def bandwidth_figure(self, title: str | None = None) -> Figure:
        """Memory bandwidth per core over time (needs ``bin_ns=``)."""
        import criticore.plots as plots  # matplotlib: loaded when a figure is asked for, not with criticore

        if self.bandwidth is None:
            raise ValueError("simulate(..., bin_ns=...) keeps the bandwidth series")
        return plots.bandwidth_figure(self.bandwidth, title if title is not None else self.system.name)

    def response_figure(self, title: str | None = None) -> Figure:
        """Response time of every job per task (needs ``jobs=True``)."""
        import criticore.plots as plots  # matplotlib: loaded when a figure is asked for, not with criticore

        if self.jobs is None:
            raise ValueError("simulate(..., jobs=True) keeps the job records")
        return plots.response_figure(self.jobs, [t.name for t in self.system.tasks], title if title is not None else self.system.name)


def _segment_table(seg: dict[str, np.ndarray], names: list[str]) -> pa.Table:
    import pyarrow as pa

    return pa.table({
        "task": pa.array(np.asarray(names, dtype=object)[seg["task"].astype(np.int64)], type=pa.string()),
        "job": seg["job"], "core": seg["core"], "start_ns": seg["start_ns"], "end_ns": seg["end_ns"],
    })


def _bandwidth_table(requests: np.ndarray, bin_ns: int, line_bytes: int) -> pa.Table:
    """Long form: one row per core and bin, requests and MB/s (decimal)."""
    import pyarrow as pa

    cores, bins = requests.shape
    start = np.tile(np.arange(bins, dtype=np.uint64) * np.uint64(bin_ns), cores)
    flat = requests.reshape(-1)
    return pa.table({
        "core": np.repeat(np.arange(cores, dtype=np.uint32), bins),
        "bin_start_ns": start,
        "requests": flat,
        "mb_s": flat * line_bytes / bin_ns * 1e3,
    })


# --------------------------------------------------------------------------- study


@dataclass(frozen=True)
class Study:
    """A schedulability study's folder and results (mc2-io-ipc-os-isolation §6).
    ``rows``: one row per (scenario, point, system, scheme), a pyarrow table;
    ``sua``: schedulable-utilization area per scheme over all scenarios."""

    folder: Path
    #: What this run did (None when loaded from a folder).
    summary: StudySummary | None = field(repr=False)
    rows: pa.Table = field(repr=False)
    curves: Curves = field(repr=False)
    #: Scenario → the point after which it stopped early (None if it did not).
    stops: Mapping[int, int | None] = field(repr=False)

    @property
    def sua(self) -> dict[str, float]:
        return dict(zip(self.curves.schemes, (float(a) for a in self.curves.sua())))

    def figure(self, scenario_id: int | None = None) -> Figure:
        """Schedulability against system utilization, one line per scheme
        (the first scenario when none is named)."""
        import criticore.plots as plots  # matplotlib: loaded when a figure is asked for, not with criticore

        sid = self.curves.scenario_ids[0] if scenario_id is None else scenario_id
        if sid not in self.curves.scenario_ids:
            raise KeyError(f"scenario {sid} is not in this study")
        return plots.schedulability_figure(self.curves, sid, self.stops.get(sid))

    def sua_figure(self) -> Figure:
        """SUA per scheme, a bar chart."""
        import criticore.plots as plots  # matplotlib: loaded when a figure is asked for, not with criticore

        return plots.sua_figure(self.curves, self.curves.sua())
