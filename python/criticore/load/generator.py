"""The memory-load generator (`criticore load`): blin-bandwidth-monitor §3.1's
microbenchmark (Fig. 4), optionally paced to a target bandwidth, with the
bandwidth it achieved per report interval.

The hot loop is Rust (crates/criticore-rt/src/workload/load.rs); this module runs it in
the calling thread and turns its report into arrays and a table. Under
``criticore regulate`` or ``criticore profile`` the generator publishes its
counts to its counter page, the software counter the regulator reads.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import criticore._core as _core
from criticore.system import read_input

#: Share of paced intervals that must lie within this relative error (issue 10: ±2% per 1 ms).
PACING_TOLERANCE = 0.02


@dataclass
class LoadRun:
    """One run of the generator: totals and per-interval line counts."""

    summary: dict
    interval_ns: int
    target_bytes_per_s: float | None
    start_ns: np.ndarray
    reads: np.ndarray
    writes: np.ndarray

    @property
    def line_bytes(self) -> int:
        return int(self.summary["line_bytes"])

    def bandwidth(self) -> float:
        """Bytes per second over the whole run."""
        ns = self.summary["elapsed_ns"]
        return (self.summary["reads"] + self.summary["writes"]) * self.line_bytes * 1e9 / ns if ns else 0.0

    def interval_bandwidth(self) -> np.ndarray:
        """Bytes per second in each whole report interval."""
        return (self.reads + self.writes).astype(np.float64) * self.line_bytes * 1e9 / self.interval_ns

    def pacing_error(self) -> np.ndarray | None:
        """Relative error of each interval's bandwidth against the target (paced runs).

        The first interval is left out: it includes the start-up of the loop."""
        if self.target_bytes_per_s is None:
            return None
        bw = self.interval_bandwidth()[1:]
        return bw / self.target_bytes_per_s - 1.0

    def stats(self) -> dict:
        """Summary numbers: achieved MB/s, per-interval percentiles, pacing error."""
        bw = self.interval_bandwidth() / 1e6
        out = {
            "bandwidth_mb_s": self.bandwidth() / 1e6,
            "intervals": int(len(bw)),
            "interval_mb_s_p1": float(np.percentile(bw, 1)) if len(bw) else 0.0,
            "interval_mb_s_p50": float(np.percentile(bw, 50)) if len(bw) else 0.0,
            "interval_mb_s_p99": float(np.percentile(bw, 99)) if len(bw) else 0.0,
        }
        err = self.pacing_error()
        if err is not None and len(err):
            a = np.abs(err)
            out.update(
                target_mb_s=self.target_bytes_per_s / 1e6,
                error_p50=float(np.percentile(a, 50)),
                error_p99=float(np.percentile(a, 99)),
                error_max=float(a.max()),
                within_tolerance=float(np.mean(a <= PACING_TOLERANCE)),
            )
        return out

    def table(self):
        import pyarrow as pa

        bw = self.interval_bandwidth()
        return pa.table(
            {
                "start_ns": self.start_ns,
                "reads": self.reads,
                "writes": self.writes,
                "bytes_per_s": bw,
            }
        )


def run(
    *,
    reads: int = 0,
    delay: int = 0,
    bandwidth_bytes_per_s: float | None = None,
    duration_ns: int | None = None,
    cpu: int | None = None,
    buffer_bytes: int | None = None,
    line_bytes: int | None = None,
    interval_ns: int = 1_000_000,
    fresh_pages: bool = False,
    pattern: str = "stream",
    count: str = "auto",
    on_progress: Callable[[int, int, int], bool] | None = None,
) -> LoadRun:
    """Run the generator in this thread until ``duration_ns`` or SIGINT/SIGTERM.

    ``reads`` of every 10 lines are read, the rest written (§3.1); ``delay``
    delay-loop iterations follow each 10 lines; ``bandwidth_bytes_per_s`` paces
    instead. ``pattern`` "random" visits the buffer's lines in a fixed random
    order, each once per pass, instead of in address order. ``count`` is a perf event counted on this thread over the run
    ("auto": LLC misses where there is a PMU; "none"; or e.g. "sw:page-faults"),
    reported as ``summary["counted"]``. ``on_progress(elapsed_ns, lines, last_interval_lines)`` is called
    about every 200 ms; returning False stops the run."""
    options = {
        "reads": reads,
        "delay": delay,
        "bandwidth": bandwidth_bytes_per_s,
        "duration_ns": duration_ns,
        "cpu": cpu,
        "buffer_bytes": buffer_bytes,
        "line_bytes": line_bytes,
        "interval_ns": interval_ns,
        "fresh_pages": fresh_pages,
        "pattern": pattern,
        "count": count,
    }
    summary, cols = _core.load_run(options, on_progress)
    return LoadRun(
        summary=summary,
        interval_ns=interval_ns,
        target_bytes_per_s=bandwidth_bytes_per_s,
        start_ns=np.frombuffer(cols["start_ns"], dtype="<u8"),
        reads=np.frombuffer(cols["reads"], dtype="<u8"),
        writes=np.frombuffer(cols["writes"], dtype="<u8"),
    )


#: Job-record columns of the periodic mode, named as the simulator's (`simulate --jobs`).
JOB_COLUMNS = {
    "job": "<u4",
    "release_ns": "<u8",
    "start_ns": "<u8",
    "finish_ns": "<u8",
    "deadline_ns": "<u8",
    "exec_ns": "<u8",
    "memory_requests": "<u8",
}


@dataclass
class PeriodicRun:
    """Jobs of one task run as a real periodic process."""

    task: str
    notes: list[str]
    jobs: dict[str, np.ndarray]
    #: The PET each job runs (ns): the engine's, as the simulator runs the task;
    #: None for a background task (no jobs).
    pet_ns: int | None = 0
    #: Per job, CLOCK_MONOTONIC (`time.monotonic_ns()`) when it finished: the
    #: jobs on another process's clock (`criticore regulate --compare-sim`).
    finish_clock_ns: np.ndarray | None = None

    def table(self):
        """Job records in the simulator's layout (task, job, release…finish,
        response, tardiness), and when each finished on the machine's clock."""
        import pyarrow as pa

        j = self.jobs
        response = j["finish_ns"] - j["release_ns"]
        tardiness = np.where(j["finish_ns"] > j["deadline_ns"], j["finish_ns"] - j["deadline_ns"], 0).astype("u8")
        return pa.table(
            {
                "task": pa.array([self.task] * len(j["job"]), type=pa.string()),
                "job": j["job"],
                "release_ns": j["release_ns"],
                "start_ns": j["start_ns"],
                "finish_ns": j["finish_ns"],
                "deadline_ns": j["deadline_ns"],
                "exec_ns": j["exec_ns"],
                "response_ns": response,
                "tardiness_ns": tardiness,
                "memory_requests": j["memory_requests"],
                **({} if self.finish_clock_ns is None else {"finish_clock_ns": self.finish_clock_ns}),
            }
        )

    @property
    def background(self) -> bool:
        """A background task: its profile walked until the end, no jobs."""
        return self.pet_ns is None

    def stats(self) -> dict:
        if self.background:
            return {"task": self.task, "background": True, "jobs": 0, "notes": self.notes}
        j = self.jobs
        response = (j["finish_ns"] - j["release_ns"]).astype(np.float64)
        return {
            "task": self.task,
            "pet_ms": self.pet_ns / 1e6,
            "jobs": int(len(response)),
            "deadline_misses": int((j["finish_ns"] > j["deadline_ns"]).sum()),
            "response_ms_p50": float(np.percentile(response, 50) / 1e6) if len(response) else 0.0,
            "response_ms_max": float(response.max() / 1e6) if len(response) else 0.0,
            "exec_ms_mean": float(j["exec_ns"].mean() / 1e6) if len(response) else 0.0,
            "notes": self.notes,
        }


#: Set by `criticore regulate --compare-sim` in the environment of the commands
#: it launches: where a periodic `criticore load` writes its job records.
JOB_LOG_ENV = "CRITICORE_JOB_LOG"


def job_log(log: Path | None, force: bool) -> tuple[Path | None, bool]:
    """Where the periodic mode writes its job records, and whether it may
    overwrite: ``--log``, else the scratch file `criticore regulate` names
    (JOB_LOG_ENV, its own), else nowhere."""
    if log is None and os.environ.get(JOB_LOG_ENV):
        return Path(os.environ[JOB_LOG_ENV]), True
    return log, force


def run_periodic(
    file: str,
    task: str,
    *,
    jobs: int | None = None,
    duration_ns: int | None = None,
    cpu: int | None = None,
    on_job: Callable[[int, int, bool], bool] | None = None,
) -> PeriodicRun:
    """Run ``task`` of the task-system ``file`` as a real periodic process in
    this thread: a job of its work every period (docs/runtime.md)."""
    clock: list[int] = []

    def job_done(job: int, response_ns: int, missed: bool) -> bool:
        clock.append(time.monotonic_ns())
        return True if on_job is None else on_job(job, response_ns, missed)

    notes, cols, pet_ns = _core.load_periodic(read_input(file), str(file), task, {"jobs": jobs, "duration_ns": duration_ns, "cpu": cpu}, job_done)
    records = {k: np.frombuffer(cols[k], dtype=t) for k, t in JOB_COLUMNS.items()}
    finish_clock = np.array(clock, dtype="u8") if len(clock) == len(records["job"]) else None
    return PeriodicRun(task=task, notes=list(notes), jobs=records, pet_ns=pet_ns, finish_clock_ns=finish_clock)
