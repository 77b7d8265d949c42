"""Running the simulator from Python: the engine returns a JSON summary and
columns of little-endian integers, turned here into numpy arrays."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from criticore import _core, read_input

_U32 = {"task", "job", "core", "preemptions", "migrations", "server_core", "server", "unfinished_task", "unfinished_job"}


def _columns(raw: dict[str, bytes] | None) -> dict[str, np.ndarray] | None:
    if raw is None:
        return None
    return {k: np.frombuffer(v, dtype="<u4" if k in _U32 else "<u8") for k, v in raw.items()}


@dataclass
class SimRun:
    report: dict
    jobs: dict[str, np.ndarray] | None
    trace: str | None
    segments: dict[str, np.ndarray] | None
    #: Memory requests per core and bin (cores × bins), when a bin width was given.
    bandwidth: np.ndarray | None = None
    bin_ns: int | None = None
    #: The file's outline (cores, tasks, servers), as `criticore.check` returns it.
    outline: dict | None = None

    def bandwidth_mb_s(self, line_bytes: int) -> np.ndarray:
        """The bandwidth series in MB/s (decimal) per core and bin."""
        assert self.bandwidth is not None and self.bin_ns
        return self.bandwidth * line_bytes / self.bin_ns * 1e3


def simulate(
    path: str | Path,
    duration_ns: int,
    scheduler: str | None = None,
    seed: int = 0,
    exec_level: str = "C",
    best_case_fraction: float | None = None,
    jobs: bool = False,
    trace: bool = False,
    segments: bool = False,
    regulator: str | None = None,
    memory: bool = True,
    bin_ns: int | None = None,
    memory_model: str | None = None,
    quantum_ns: int | None = None,
) -> SimRun:
    """Simulate a task-system file; see docs/simulator.md and docs/memory-model.md.

    ``regulator`` overrides the file's [regulation] ("none" switches it off);
    ``memory=False`` runs CPU-only; ``memory_model`` is "fluid" (default) or
    "transaction" (request-level, run in quanta of ``quantum_ns``, default
    20 µs); ``bin_ns`` keeps a per-core bandwidth series.
    """
    outline = json.loads(_core.check(read_input(path), str(path)))
    table_text = table_file = None
    reg = outline.get("regulation") or {}
    wants_monitor = regulator == "monitor" or (regulator is None and reg.get("kind") == "monitor")
    if wants_monitor and reg.get("overhead_table"):
        table_file = Path(path).parent / reg["overhead_table"]
        table_text = read_input(table_file).decode("utf-8", errors="replace")
    report, job_cols, trace_json, seg_cols, bandwidth = _core.simulate(
        read_input(path),
        str(path),
        duration_ns,
        scheduler=scheduler,
        seed=seed,
        exec_level=exec_level,
        best_case_fraction=best_case_fraction,
        jobs=jobs,
        trace=trace,
        segments=segments,
        regulator=regulator,
        memory=memory,
        bandwidth_bin_ns=bin_ns,
        overhead_table=table_text,
        overhead_file=None if table_file is None else str(table_file),
        memory_model=memory_model,
        quantum_ns=quantum_ns,
    )
    series = None
    if bandwidth is not None:
        series = np.frombuffer(bandwidth, dtype="<f8").reshape(outline["cores"], -1)
    return SimRun(json.loads(report), _columns(job_cols), trace_json, _columns(seg_cols), series, bin_ns, outline)


def job_table(run: SimRun, task_names: list[str]):
    """Job records as a pyarrow table with names and derived response/tardiness."""
    import pyarrow as pa

    cols = run.jobs
    assert cols is not None, "simulate(..., jobs=True) keeps job records"
    response = cols["finish_ns"] - cols["release_ns"]
    late = cols["finish_ns"] > cols["deadline_ns"]
    tardiness = np.where(late, cols["finish_ns"] - np.minimum(cols["finish_ns"], cols["deadline_ns"]), 0).astype("u8")
    names = np.asarray(task_names, dtype=object)
    return pa.table(
        {
            "task": pa.array(names[cols["task"].astype(np.int64)], type=pa.string()),
            "job": cols["job"],
            "core": cols["core"],
            "release_ns": cols["release_ns"],
            "start_ns": cols["start_ns"],
            "finish_ns": cols["finish_ns"],
            "deadline_ns": cols["deadline_ns"],
            "exec_ns": cols["exec_ns"],
            "response_ns": response,
            "tardiness_ns": tardiness,
            "preemptions": cols["preemptions"],
            "migrations": cols["migrations"],
            "memory_requests": cols["memory_requests"],
            "memory_stall_ns": cols["memory_stall_ns"],
        }
    )
