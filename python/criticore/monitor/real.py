"""Profiling a real real-time program for the bandwidth monitor
(blin-bandwidth-monitor §3.1–3.2): the measured source of a profile dataset
(docs/format.md, "Profile dataset"), which :mod:`criticore.monitor.tables`
turns into an overhead table (`criticore profile FILE -- CMD`, then
`criticore tables build`; method and choices in docs/bandwidth-monitor.md).

As in the paper, the program runs pinned to its core alone, then next to
every constant load of the grid: the load microbenchmark (Fig. 4: ``reads``
of every 10 lines read, the rest written, then a delay loop of ``delay``
iterations, times the core's multiplier) on the best-effort cores. Each
*point* (one load, or none) is one launch of the program
(:func:`criticore._core.profile_point`, criticore-rt's ``profile.rs``):

- a program that marks its jobs on its counter page (``criticore.h``,
  ``criticore.instrument``) runs until it has ended ``jobs`` jobs; each job
  is one run of the dataset, the first ``warmup`` of every point are marked
  warm-up (the paper drops its first runs, §2.2);
- a program that marks nothing is launched ``jobs`` times per point, each
  execution one job from launch to exit (start-up included).

Job and phase times come from the program's marks (its own clock). A job
with no phase marks is split by time, in the proportions of the file task's
phase ``work`` (one phase if it has none). Bytes are the global traffic: the
load generators' own counts plus the program's, or per-CPU hardware counters
where the machine has a PMU, read off the counts recorded every ``tick_ns``
(linear in between: exact for a constant load).
"""

from __future__ import annotations

import json
import os
import platform as _platform
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

import criticore._core as _core
from criticore.monitor import dataset as ds

__all__ = ["Point", "grid", "Recording", "jobs_of", "Job", "RealProfile", "profile"]

JOB_BEGIN, JOB_END, PHASE = 1, 2, 3


@dataclass(frozen=True)
class Point:
    """A constant load: on the i-th best-effort core, the microbenchmark with
    ``reads`` reads per 10 lines and ``multipliers[i] × delay`` delay-loop
    iterations (§3.1's symmetric and asymmetric loads)."""

    reads: int
    delay: int
    multipliers: tuple[int, ...]

    def label(self) -> str:
        return f"{self.reads}r{10 - self.reads}w x={self.delay} [{','.join(f'{m}x' for m in self.multipliers)}]"

    def instances(self, cores: Sequence[int]) -> list[tuple[int, int, int]]:
        """(cpu, reads, delay) of every load instance."""
        return [(c, self.reads, self.delay * m) for c, m in zip(cores, self.multipliers)]


def grid(reads: Sequence[int], delays: Sequence[int], configs: Sequence[tuple[int, ...]]) -> list[Point]:
    """Every ratio × configuration × delay (§3.1)."""
    return [Point(r, d, tuple(c)) for r in reads for c in configs for d in delays]


@dataclass
class Recording:
    """What one point recorded (times in CLOCK_MONOTONIC ns). ``lines`` is
    the loads' cumulative count at each tick (or, with hardware counters, all
    traffic), ``program_lines`` the program's own count (zeros with hardware)."""

    tick_ns: np.ndarray
    lines: np.ndarray
    event_t_ns: np.ndarray
    event_kind: np.ndarray
    event_arg: np.ndarray
    start_ns: int
    exit_ns: int
    end: str
    exit_code: int | None
    program_lines: np.ndarray | None = None
    lost_events: int = 0
    notices: list[str] = field(default_factory=list)

    @classmethod
    def from_core(cls, d: dict) -> "Recording":
        u8 = lambda k: np.frombuffer(d[k], dtype="<u8").astype(np.int64)  # noqa: E731
        own = u8("program_lines")
        if d["hardware_lines"] is not None:
            lines, own = np.frombuffer(d["hardware_lines"], dtype="<u8").astype(np.int64), np.zeros_like(own)
        else:
            lines = u8("lines") - own
        return cls(
            tick_ns=u8("tick_ns"), lines=lines, program_lines=own,
            event_t_ns=u8("event_t_ns"),
            event_kind=np.frombuffer(d["event_kind"], dtype="<u4").astype(np.int64),
            event_arg=np.frombuffer(d["event_arg"], dtype="<u4").astype(np.int64),
            start_ns=int(d["program_start_ns"]), exit_ns=int(d["program_exit_ns"]), end=d["end"], exit_code=d["exit_code"],
            lost_events=int(d["lost_events"]), notices=list(d["notices"]),
        )

    def _active(self, jobs: list[tuple[int, int]]):
        """The program's active clock: ns spent inside jobs up to each instant.
        Without job marks (one execution) it is the wall clock."""
        if not jobs:
            return lambda t: np.asarray(t, dtype=np.float64)
        knots_t = np.array([x for b, e in jobs for x in (b, e)], dtype=np.float64)
        knots_a = np.concatenate([[0.0], np.cumsum([e - b for b, e in jobs], dtype=np.float64)]).repeat(2)[1:-1]
        return lambda t: np.interp(np.asarray(t, dtype=np.float64), knots_t, knots_a, left=0.0, right=float(knots_a[-1]))

    def lines_at(self, t_ns, jobs: list[tuple[int, int]] | None = None) -> np.ndarray:
        """Cumulative global lines at ``t_ns``: the loads' count linear between
        ticks in wall time (a constant load); the program's linear between ticks
        in its active time (it counts only inside its jobs, ``jobs``), so what
        it counted in a tick lands in the jobs of that tick, not in the idle
        time around them."""
        ticks = self.tick_ns.astype(np.float64)
        t = np.asarray(t_ns, dtype=np.float64)
        total = np.interp(t, ticks, self.lines.astype(np.float64))
        own = self.program_lines
        if own is not None and len(own) and own[-1] > 0:
            active = self._active(jobs or [])
            total = total + np.interp(active(t), active(ticks), own.astype(np.float64))
        return total


@dataclass
class Job:
    """One job of the program: its phases' times and global bytes, and its samples."""

    begin_ns: int
    end_ns: int
    phase_ns: list[int]
    phase_bytes: list[int]
    samples: list[int]
    by_time: bool  # phases split by the file's work shares, not by marks


def _marked_jobs(rec: Recording) -> list[tuple[int, int | None, list[tuple[int, int]], bool]]:
    """(begin, end, [(phase, t)…], ended) of every job the program marked. A
    job that never ended has end None, or the next job's begin if one came
    (``ended`` False: it is not a measured job, only time spent inside one)."""
    out: list = []
    for t, k, a in zip(rec.event_t_ns.tolist(), rec.event_kind.tolist(), rec.event_arg.tolist()):
        if k == JOB_BEGIN:
            if out and out[-1][1] is None:
                out[-1][1] = t
            out.append([t, None, [], False])
        elif out and out[-1][1] is None:
            if k == PHASE:
                out[-1][2].append((a, t))
            elif k == JOB_END:
                out[-1][1], out[-1][3] = max(t, out[-1][0]), True
    return [tuple(j) for j in out]


def _intervals(rec: Recording, marked) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """(begin, end, [(phase, t)…]) of every job the program began and ended
    while the counts were recorded; without job marks, the whole execution."""
    last = int(rec.tick_ns[-1]) if len(rec.tick_ns) else 0
    if not marked:
        return [(rec.start_ns, min(rec.exit_ns, last), [])] if rec.end == "exited" and rec.exit_code == 0 else []
    return [(b, e, m) for b, e, m, ended in marked if ended and b < e <= last]


def jobs_of(rec: Recording, shares: Sequence[float], sample_ns: int, line_bytes: int) -> list[Job]:
    """The jobs in a recording. ``shares``: the file task's phase work
    fractions, for jobs without phase marks."""
    jobs = []
    marked = _marked_jobs(rec)
    last = int(rec.tick_ns[-1]) if len(rec.tick_ns) else 0
    # The program's time inside jobs, ended or not (one still running ends at the last tick).
    spans_of_jobs = [(b, max(last, b) if e is None else e) for b, e, _, _ in marked]
    intervals = _intervals(rec, marked)
    for begin, end, marks in intervals:
        by_time = not marks
        if by_time:
            cuts = begin + np.round(np.cumsum([0.0, *shares]) * (end - begin)).astype(np.int64)
            cuts[-1] = end
            spans = [(p, int(cuts[p]), int(cuts[p + 1])) for p in range(len(shares))]
        else:
            # A job starts in phase 0 (as the monitor takes it); each mark starts its phase.
            starts = ([(0, begin)] if marks[0][1] > begin else []) + marks
            spans = [(p, t, starts[i + 1][1] if i + 1 < len(starts) else end) for i, (p, t) in enumerate(starts)]
        n = max(p for p, _, _ in spans) + 1
        phase_ns, phase_lines = [0] * n, [0.0] * n
        for p, a, b in spans:
            phase_ns[p] += b - a
            phase_lines[p] += float(rec.lines_at(b, spans_of_jobs) - rec.lines_at(a, spans_of_jobs))
        whole = (end - begin) // sample_ns
        edges = rec.lines_at(begin + sample_ns * np.arange(whole + 1), spans_of_jobs)
        jobs.append(
            Job(
                begin_ns=begin, end_ns=end, phase_ns=phase_ns,
                phase_bytes=[int(round(x * line_bytes)) for x in phase_lines],
                samples=[int(round(x * line_bytes)) for x in np.diff(edges)], by_time=by_time,
            )
        )
    return jobs


@dataclass
class RealProfile:
    """A measured profile dataset and what happened while measuring it."""

    table: object  # pyarrow.Table (validated)
    notices: list[str]
    points_done: int
    points: int
    interrupted: bool
    jobs_by_time: bool
    phases: int
    #: Per point label: (jobs kept, mean job ns).
    summary: dict[str, tuple[int, float]]


def _machine() -> str:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    return f"{_platform.node()} ({cpu or _platform.machine()}, {os.cpu_count()} CPUs)"


def profile(
    argv: Sequence[str],
    *,
    task: str,
    rt_cpu: int,
    be_cpus: Sequence[int],
    points: Sequence[Point],
    shares: Sequence[float],
    sample_ns: int,
    line_bytes: int,
    jobs: int = 20,
    warmup: int = 3,
    tick_ns: int = 1_000_000,
    fifo: int | None = None,
    buffer_bytes: int | None = None,
    event: str | None = None,
    limit_ns: int = 60_000_000_000,
    quiet: bool = True,
    on_point: Callable[[int, int, str], None] | None = None,
) -> RealProfile:
    """Profile ``argv`` (pinned to ``rt_cpu``) alone, then against every load
    of ``points`` on ``be_cpus``: the dataset of docs/format.md. ``on_point(done,
    total, label)`` after each point. SIGINT/SIGTERM stop after the current
    point is cut short; what was measured so far is returned (``interrupted``)."""
    if warmup >= jobs:
        raise ValueError(f"--warmup ({warmup}) must be below --jobs ({jobs})")
    options = {"limit_ns": limit_ns, "fifo": fifo, "buffer_bytes": buffer_bytes, "line_bytes": line_bytes, "event": event, "quiet": quiet}
    rows: dict[str, list] = {name: [] for name in [*ds.COLUMNS, ds.SAMPLES]}
    notices: list[str] = []
    summary: dict[str, tuple[int, float]] = {}
    marks_jobs: bool | None = None
    by_time = False
    run_id = 0
    n_phases: int | None = None
    todo = [None, *points]
    done = 0
    interrupted = False

    def record(load: Point | None) -> tuple[list[Job], bool]:
        """The jobs of one point (one launch, or `jobs` launches), and whether it was interrupted."""
        nonlocal marks_jobs
        instances = [] if load is None else load.instances(be_cpus)
        out: list[Job] = []
        launches = 1 if marks_jobs is not False else jobs
        for _ in range(launches):
            d = _core.profile_point(list(argv), rt_cpu, instances, tick_ns, {**options, "jobs": jobs if marks_jobs is not False else None})
            rec = Recording.from_core(d)
            for n in rec.notices:
                if n not in notices:
                    notices.append(n)
            if rec.lost_events:
                notices.append(f"{rec.lost_events} job/phase marks were overwritten before they were read (more than 128 between two ticks): use a shorter --tick")
            if rec.end == "interrupted":
                return out, True
            if rec.end == "exited" and rec.exit_code != 0:
                raise RuntimeError(f"`{' '.join(argv)}` exited with status {rec.exit_code}" if rec.exit_code is not None else f"`{' '.join(argv)}` was killed by a signal")
            if rec.end == "limit":
                notices.append(f"{load.label() if load else 'alone'}: stopped at the time limit")
            if marks_jobs is None:
                marks_jobs = bool((rec.event_kind == JOB_BEGIN).any())
                if not marks_jobs:
                    return record(load)  # this launch was the first of `jobs`: measure them all alike
            out += jobs_of(rec, shares, sample_ns, line_bytes)
        return out, False

    for load in todo:
        try:
            found, stop = record(load)
        except KeyboardInterrupt:  # between two points: Python's handler ran
            found, stop = [], True
        if stop:
            interrupted = True
            break
        label = ds.ALONE if load is None else load.label()
        if not found:
            raise RuntimeError(f"{label}: the program ended no job while it was recorded")
        n = max(len(j.phase_ns) for j in found)
        n_phases = n if n_phases is None else n_phases
        if n != n_phases:
            raise RuntimeError(f"the program marked {n} phases next to {label}, {n_phases} before")
        by_time |= any(j.by_time for j in found)
        point_rows: list[dict] = []
        kept = 0
        for rep, job in enumerate(found):
            if len(job.phase_ns) != n_phases or min(job.phase_ns) <= 0:
                notices.append(f"{label}: job {rep} skipped a phase; left out")
                continue
            warm = rep < warmup
            kept += not warm
            base = {
                "run": run_id, "repetition": rep, "warmup": warm, "load": label,
                "load_reads": None if load is None else load.reads,
                "load_delay": None if load is None else float(load.delay),
                "load_cores": 0 if load is None else len(load.multipliers),
                "load_multipliers": "" if load is None else ",".join(str(m) for m in load.multipliers),
            }
            for p in range(n_phases):
                point_rows.append({**base, "phase": p, "exec_ns": job.phase_ns[p], "bytes": job.phase_bytes[p], ds.SAMPLES: None})
            point_rows.append({**base, "phase": ds.WHOLE_JOB, "exec_ns": job.end_ns - job.begin_ns, "bytes": sum(job.phase_bytes), ds.SAMPLES: job.samples})
            run_id += 1
        # A point's rows go in together, so an interrupted profile stays a valid dataset.
        for row in point_rows:
            for k, v in row.items():
                rows[k].append(v)
        summary[label] = (kept, float(np.mean([j.end_ns - j.begin_ns for j in found[warmup:]])) if kept else 0.0)
        done += 1
        if on_point is not None:
            on_point(done, len(todo), label)

    metadata = {
        "task": task, "line_bytes": line_bytes, "sample_ns": sample_ns, "source": "real", "machine": _machine(),
        "be_cores": len(be_cpus), "be_core_ids": ",".join(str(c) for c in be_cpus), "rt_core": rt_cpu,
        "command": json.dumps(list(argv)), "jobs": jobs, "warmup": warmup, "tick_ns": tick_ns,
        "counts": "hardware" if event else "software (load generators and the program's counter page)",
        "phases": "by time (file's work shares)" if by_time else "program marks",
    }
    table = None
    if done >= 2:
        table = ds.make(rows, metadata, file="criticore profile")
    return RealProfile(
        table=table, notices=notices, points_done=done, points=len(todo), interrupted=interrupted,
        jobs_by_time=marks_jobs is False, phases=n_phases or 0, summary=summary,
    )
