"""Many task systems at once (issue 13): files from folders and globs,
simulated in parallel by the engine over all cores, one summary row per
system in a table (the building block of simulation-based schedulability
studies)."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Callable

import criticore._core as _core
from criticore.errors import InputError, input_error
from criticore.simulation.options import SimOptions
from criticore.simulation.run import Interrupted
from criticore.system import PYTHON, TaskSystem, read_input

SUFFIXES = (".toml", ".json")
ROW_FIELDS = (
    ("file", "string"), ("scheduler", "string"), ("cores", "uint32"), ("tasks", "uint32"), ("utilization", "float64"),
    ("duration_ns", "uint64"), ("partial", "bool"), ("events", "uint64"), ("released", "uint64"), ("completed", "uint64"),
    ("deadline_misses", "uint64"), ("unfinished", "uint64"), ("oldest_unfinished_release_ns", "uint64"), ("max_response_ns", "uint64"), ("mean_response_ns", "float64"),
    ("max_tardiness_ns", "uint64"), ("preemptions", "uint64"), ("migrations", "uint64"), ("memory_requests", "uint64"),
    ("memory_stall_ns", "uint64"), ("no_deadline_miss", "bool"),
)


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def expand(paths: list[Path]) -> list[Path] | None:
    """The task-system files named by folders, globs and files, in order; None
    when ``paths`` is one plain file (the one-system command)."""
    if len(paths) == 1 and not _is_glob(str(paths[0])) and not paths[0].is_dir():
        return None
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found += sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in SUFFIXES)
        elif _is_glob(str(p)):
            found += sorted(Path(f) for f in glob.glob(str(p)) if Path(f).is_file())
        else:
            found.append(p)
    if not found:
        reason = "no .toml or .json task-system files there"
        raise InputError(f"{paths[0]}: (files): {reason}", str(paths[0]), "(files)", reason)
    return found


def schema():
    import pyarrow as pa

    return pa.schema([(name, pa.type_for_alias(kind)) for name, kind in ROW_FIELDS])


def simulate_many(
    paths: "Sequence[str | os.PathLike[str] | TaskSystem]",
    duration_ns: int | str,
    *,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options,
):
    """Simulate every system (a file or a :class:`~criticore.TaskSystem`) for
    ``duration_ns`` (summary only), in parallel over
    all cores (or ``threads``); returns a pyarrow table with one row per system,
    in the order given (columns: :data:`ROW_FIELDS`). ``options`` are the fields
    of :class:`~criticore.simulation.SimOptions` but the records (jobs, segments,
    trace, bin_ns). Every file is read and checked first: a bad one raises
    InputError before anything runs.
    ``progress(systems_done, jobs)`` every 50 ms. Ctrl-C raises
    :class:`Interrupted` holding the rows of the systems simulated so far (a
    system stopped midway has ``partial`` set)."""
    head = paths[0] if paths else None
    first = head.name if isinstance(head, TaskSystem) else str(head) if head is not None else "(no systems)"
    return run_many(paths, SimOptions.of(first, duration_ns, **options), threads=threads, progress=progress)


#: The most worker threads a batch takes (rayon's pool; more is a typo, not a machine).
MAX_THREADS = 4096


def run_many(paths, options: SimOptions, *, threads: int | None = None, progress: Callable[[int, int], None] | None = None):
    """:func:`simulate_many` with the options checked already (the CLI's path)."""
    import pyarrow as pa

    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS):
        raise input_error(PYTHON, "threads", f"expected a whole number from 1 to {MAX_THREADS}, got {threads!r}")
    for i, p in enumerate(paths):
        if not isinstance(p, (TaskSystem, str, os.PathLike)):
            raise input_error(PYTHON, f"paths[{i}]", f"expected a TaskSystem or the path of a task-system file, got {type(p).__name__}")
    # Files are read here and parsed by the engine in parallel; systems are parsed already.
    files = [(p._core, p.name) if isinstance(p, TaskSystem) else (read_input(p), str(p)) for p in paths]
    rows, interrupted = _core.simulate_many(files, options, threads=threads, on_progress=progress)
    table = pa.Table.from_pylist([json.loads(r) for r in rows], schema=schema())
    if interrupted:
        raise Interrupted(table)
    return table
