"""Running the simulator from Python: the engine returns a JSON summary and
streams columns of little-endian integers, kept here as numpy arrays or
written to files batch by batch."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

import criticore._core as _core
from criticore.simulation.options import SimOptions
from criticore.system import TaskSystem, as_system, read_input

_U32 = {"task", "job", "core", "preemptions", "migrations", "server_core", "server", "unfinished_task", "unfinished_job", "interval_core"}
#: Columns the engine hands over as lists of names, not bytes.
_NAMES_COLUMNS = {"interval_state"}


def _empty(name: str) -> np.ndarray:
    return np.zeros(0, dtype=object if name in _NAMES_COLUMNS else "<u4" if name in _U32 else "<u8")


def _columns(raw: dict[str, bytes | list[str]] | None) -> dict[str, np.ndarray] | None:
    if raw is None:
        return None
    return {k: np.asarray(v, dtype=object) if k in _NAMES_COLUMNS else np.frombuffer(v, dtype="<u4" if k in _U32 else "<u8")
            for k, v in raw.items()}


@dataclass
class SimRun:
    report: dict
    jobs: dict[str, np.ndarray] | None
    trace: str | None
    #: Execution segments of jobs and servers and, as ``interval_*`` columns,
    #: the regulator's state spans (core or MRS server, state, start, end).
    segments: dict[str, np.ndarray] | None
    #: Memory requests per core and bin (cores × bins), when a bin width was given.
    bandwidth: np.ndarray | None = None
    bin_ns: int | None = None
    #: The file's outline (cores, tasks, servers), as `criticore.check` returns it.
    outline: dict | None = None

    @property
    def partial(self) -> bool:
        """Stopped by Ctrl-C before its duration: the report covers ``report["duration_ns"]``."""
        return bool(self.report.get("partial"))

    def bandwidth_mb_s(self, line_bytes: int) -> np.ndarray:
        """The bandwidth series in MB/s (decimal) per core and bin."""
        assert self.bandwidth is not None and self.bin_ns
        return self.bandwidth * line_bytes / self.bin_ns * 1e3


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a simulation; ``partial`` holds what was simulated until
    then (a :class:`SimRun` whose report is marked partial, or a batch's rows)
    and the output files are complete up to it."""

    def __init__(self, partial):
        super().__init__("simulation interrupted")
        self.partial = partial


class _Kept:
    """Batches the engine streams, kept in memory and joined at the end."""

    def __init__(self, cores: int):
        self.cores = cores
        self.parts: dict[str, list] = {}

    def __call__(self, kind: str, payload) -> None:
        self.parts.setdefault(kind, []).append(payload)

    def columns(self, kinds: tuple[str, ...]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for kind in kinds:
            batches = [_columns(b) for b in self.parts.get(kind, [])]
            for name in _NAMES[kind]:
                out[name] = np.concatenate([b[name] for b in batches]) if batches else _empty(name)
        return out

    def bandwidth(self) -> np.ndarray:
        rows = [np.frombuffer(b, dtype="<f8") for _, b in self.parts.get("bandwidth", [])]
        flat = np.concatenate(rows) if rows else np.zeros(0)
        return flat.reshape(-1, self.cores).T.copy()

    def trace(self) -> str:
        return "".join(self.parts.get("trace", []))


_NAMES = {
    "jobs": ("task", "job", "core", "release_ns", "start_ns", "finish_ns", "deadline_ns", "exec_ns", "preemptions", "migrations", "memory_requests", "memory_stall_ns"),
    "unfinished": ("unfinished_task", "unfinished_job", "unfinished_release_ns", "unfinished_deadline_ns"),
    "segments": ("core", "task", "job", "start_ns", "end_ns"),
    "server_segments": ("server_core", "server", "server_start_ns", "server_end_ns"),
    "intervals": ("interval_core", "interval_state", "interval_start_ns", "interval_end_ns"),
}


class _Files:
    """Batches the engine streams, written to their files as they come: job
    records and the bandwidth series as Parquet row groups or CSV rows, the
    trace as text. Files are complete (footer, closing bracket) once closed."""

    def __init__(self, jobs: Path | None, trace: Path | None, bandwidth: Path | None, names: list[str], line_bytes: int, bin_ns: int | None, cores: int):
        self.paths = {"jobs": jobs, "bandwidth": bandwidth}
        self.writers: dict = {}
        self.names, self.line_bytes, self.bin_ns, self.cores = names, line_bytes, bin_ns, cores
        self.trace = None if trace is None else open(trace, "w", encoding="utf-8")

    def __call__(self, kind: str, payload) -> None:
        if kind == "trace":
            self.trace.write(payload)
        elif kind == "jobs":
            self._write("jobs", _job_table(_columns(payload), self.names))
        elif kind == "bandwidth":
            first, raw = payload
            self._write("bandwidth", self._bandwidth_table(first, np.frombuffer(raw, dtype="<f8").reshape(-1, self.cores)))

    def _bandwidth_table(self, first: int, requests: np.ndarray):
        import pyarrow as pa

        mb_s = requests * self.line_bytes / self.bin_ns * 1e3
        cols = {"start_ns": (np.arange(requests.shape[0], dtype="u8") + first) * self.bin_ns}
        cols.update({f"core{c}_mb_s": mb_s[:, c] for c in range(self.cores)})
        return pa.table(cols)

    def _write(self, kind: str, table) -> None:
        writer = self.writers.get(kind)
        if writer is None:
            path = self.paths[kind]
            if path.suffix.lower() == ".parquet":
                import pyarrow.parquet as pq

                writer = pq.ParquetWriter(path, table.schema)
            else:
                import pyarrow.csv as pcsv

                writer = pcsv.CSVWriter(path, table.schema)
            self.writers[kind] = writer
        writer.write_table(table)

    def close(self) -> None:
        # A run with no records still leaves a valid file with the columns.
        if self.paths["jobs"] is not None and "jobs" not in self.writers:
            self._write("jobs", _job_table({n: _empty(n) for n in _NAMES["jobs"]}, self.names))
        if self.paths["bandwidth"] is not None and "bandwidth" not in self.writers:
            self._write("bandwidth", self._bandwidth_table(0, np.zeros((0, self.cores))))
        for writer in self.writers.values():
            writer.close()
        if self.trace is not None:
            self.trace.close()


def simulate(
    path: "str | Path | TaskSystem",
    duration_ns: int | str,
    *,
    jobs_file: Path | None = None,
    trace_file: Path | None = None,
    bandwidth_file: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options,
) -> SimRun:
    """Simulate a task-system file or :class:`~criticore.TaskSystem`; see
    docs/simulator.md and docs/memory-model.md. ``options`` are the fields of
    :class:`~criticore.simulation.SimOptions` (``scheduler``, ``seed``,
    ``bin_ns``, …; durations as ns or strings with a unit).

    ``regulator`` overrides the file's [regulation] ("none" switches it off);
    ``memory=False`` runs CPU-only; ``memory_model`` is "fluid" (default) or
    "transaction" (request-level, run in quanta of ``quantum_ns``, default
    20 µs); ``bin_ns`` keeps a per-core bandwidth series.

    ``jobs``, ``trace``, ``segments`` and ``bin_ns`` keep those records in the
    returned run. ``jobs_file``, ``trace_file`` and ``bandwidth_file`` (with
    ``bin_ns``) instead stream them to files as the engine produces them, so
    memory stays flat however long the run. ``progress(simulated_ns, jobs)``
    is called every 50 ms. Ctrl-C stops the run where it is: files are closed
    complete and :class:`Interrupted` carries the partial run.
    """
    system = as_system(path)
    return run(system, SimOptions.of(system.name, duration_ns, **options), jobs_file=jobs_file, trace_file=trace_file,
               bandwidth_file=bandwidth_file, progress=progress)


def run(
    system: TaskSystem,
    options: SimOptions,
    *,
    jobs_file: Path | None = None,
    trace_file: Path | None = None,
    bandwidth_file: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SimRun:
    """:func:`simulate` with the options checked already (the CLI's path)."""
    jobs, trace, segments, bin_ns, regulator = options.jobs, options.trace, options.segments, options.bin_ns, options.regulator
    outline = system.outline()
    table_text = table_file = None
    reg = outline.get("regulation") or {}
    wants_monitor = regulator == "monitor" or (regulator is None and reg.get("kind") == "monitor")
    if wants_monitor and reg.get("overhead_table"):
        # Relative to the file, or to the working folder for a system built in Python.
        table_file = (system.path.parent if system.path is not None else Path()) / reg["overhead_table"]
        table_text = read_input(table_file).decode("utf-8", errors="replace")
    cores = outline["cores"]
    kept = _Kept(cores)
    streaming = any(p is not None for p in (jobs_file, trace_file, bandwidth_file))
    files = None
    if streaming:
        names = [t["name"] for t in outline["tasks"]]
        files = _Files(jobs_file, trace_file, bandwidth_file, names, outline["line_bytes"], bin_ns, cores)
    # Streaming to files keeps in memory only what the flags ask for.
    keep_bandwidth = bin_ns is not None and not streaming
    wanted = {"jobs": jobs, "unfinished": jobs, "trace": trace, "segments": segments, "server_segments": segments, "intervals": segments, "bandwidth": keep_bandwidth}
    to_file = {"jobs": jobs_file, "trace": trace_file, "bandwidth": bandwidth_file}

    def on_batch(kind: str, payload) -> None:
        if files is not None and to_file.get(kind) is not None:
            files(kind, payload)
        if wanted[kind]:
            kept(kind, payload)

    try:
        report, _partial = _core.simulate(
            system._core,
            system.name,
            replace(options, jobs=jobs or jobs_file is not None, trace=trace or trace_file is not None),
            overhead_table=table_text,
            overhead_file=None if table_file is None else str(table_file),
            on_batch=on_batch,
            on_progress=progress,
        )
    finally:
        if files is not None:
            files.close()
    run = SimRun(
        json.loads(report),
        kept.columns(("jobs", "unfinished")) if jobs else None,
        kept.trace() if trace else None,
        kept.columns(("segments", "server_segments", "intervals")) if segments else None,
        kept.bandwidth() if keep_bandwidth else None,
        bin_ns,
        outline,
    )
    if run.partial:
        raise Interrupted(run)
    return run


def _job_table(cols: dict[str, np.ndarray], task_names: list[str]):
    """Job records as a pyarrow table with names and derived response/tardiness."""
    import pyarrow as pa

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


def job_table(run: SimRun, task_names: list[str]):
    """Job records of a run as a pyarrow table with names and derived response/tardiness."""
    assert run.jobs is not None, "simulate(..., jobs=True) keeps job records"
    return _job_table(run.jobs, task_names)
