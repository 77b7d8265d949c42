"""Many task systems at once (issue 13): files from folders and globs,
simulated in parallel by the engine over all cores, one summary row per
system in a table (the building block of simulation-based schedulability
studies)."""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import criticore
from criticore import _core, read_input
from criticore.simulation import Interrupted

if TYPE_CHECKING:
    from criticore.system import TaskSystem

SUFFIXES = (".toml", ".json")
ROW_FIELDS = (
    ("file", "string"), ("scheduler", "string"), ("cores", "uint32"), ("tasks", "uint32"), ("utilization", "float64"),
    ("duration_ns", "uint64"), ("partial", "bool"), ("events", "uint64"), ("released", "uint64"), ("completed", "uint64"),
    ("deadline_misses", "uint64"), ("unfinished", "uint64"), ("max_response_ns", "uint64"), ("mean_response_ns", "float64"),
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
        raise criticore.InputError(f"{paths[0]}: (files): {reason}", str(paths[0]), "(files)", reason)
    return found


def schema():
    import pyarrow as pa

    return pa.schema([(name, pa.type_for_alias(kind)) for name, kind in ROW_FIELDS])


def simulate_many(
    paths: "Sequence[str | os.PathLike[str] | TaskSystem]",
    duration_ns: int,
    scheduler: str | None = None,
    seed: int = 0,
    exec_level: str = "C",
    best_case_fraction: float | None = None,
    regulator: str | None = None,
    memory: bool = True,
    memory_model: str | None = None,
    quantum_ns: int | None = None,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
):
    """Simulate every system (a file or a :class:`~criticore.TaskSystem`) for
    ``duration_ns`` (summary only), in parallel over
    all cores (or ``threads``); returns a pyarrow table with one row per system,
    in the order given (columns: :data:`ROW_FIELDS`). Every file is read and
    checked first: a bad one raises InputError before anything runs.
    ``progress(systems_done, jobs)`` every 50 ms. Ctrl-C raises
    :class:`Interrupted` holding the rows of the systems simulated so far (a
    system stopped midway has ``partial`` set)."""
    import pyarrow as pa

    from criticore.system import TaskSystem

    # Files are read here and parsed by the engine in parallel; systems are parsed already.
    files = [(p._core, p.name) if isinstance(p, TaskSystem) else (read_input(p), str(p)) for p in paths]
    rows, interrupted = _core.simulate_many(
        files, duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level,
        best_case_fraction=best_case_fraction, regulator=regulator, memory=memory,
        memory_model=memory_model, quantum_ns=quantum_ns, threads=threads, on_progress=progress,
    )
    table = pa.Table.from_pylist([json.loads(r) for r in rows], schema=schema())
    if interrupted:
        raise Interrupted(table)
    return table


def command(paths: list[Path], duration_ns: int, *, table: Path | None, threads: int | None, as_json: bool, force: bool,
            refused: list[tuple[Path | None, str]], **options) -> None:
    """`criticore simulate` on several systems."""
    import typer
    from rich.console import Console

    from criticore.errors import bad, fail
    from criticore.outputs import writable, write_table
    from criticore.progress import ProgressBar

    first = paths[0]
    for given, option in refused:
        if given is not None:
            bad(first, option, "one file per system is not written for several systems; use --table for their summaries")
    if threads is not None and threads < 1:
        bad(first, "--threads", "must be at least 1")
    interrupted = False
    try:
        if table is not None:
            writable(table, force, "--table", suffixes=(".parquet", ".csv"))
        started = time.monotonic()
        with ProgressBar(len(paths), f"simulating {len(paths):,} systems") as bar:
            try:
                rows = simulate_many(paths, duration_ns, threads=threads, progress=bar.update, **options)
            except Interrupted as stop:
                rows, interrupted = stop.partial, True
        wall_s = time.monotonic() - started
        if table is not None:
            write_table(rows, table, "--table")
    except criticore.InputError as e:
        fail(e)
    if as_json:
        print(json.dumps(rows.to_pylist(), indent=2))
    else:
        _render(Console(), rows, len(paths), duration_ns, wall_s, table, interrupted)
    if interrupted:
        raise typer.Exit(130)


def _render(console, rows, asked: int, duration_ns: int, wall_s: float, table: Path | None, interrupted: bool) -> None:
    from rich.table import Table

    data = rows.to_pylist()
    if len(data) <= 20:
        t = Table(title=f"{len(data)} systems, {duration_ns / 1e9:g} s each", title_justify="left")
        for col, just in (("file", "left"), ("sched", "left"), ("U", "right"), ("jobs", "right"), ("miss", "right"), ("max tard (ms)", "right")):
            t.add_column(col, justify=just, overflow="fold")
        for r in data:
            miss = f"[bold red]{r['deadline_misses']}[/]" if r["deadline_misses"] else "[green]0[/]"
            t.add_row(r["file"], r["scheduler"], f"{r['utilization']:.3f}", f"{r['completed']}/{r['released']}", miss,
                      f"{r['max_tardiness_ns'] / 1e6:.6g}")
        console.print(t)
    jobs = sum(r["completed"] for r in data)
    clean = sum(1 for r in data if r["no_deadline_miss"])
    console.print(f"{len(data):,} of {asked:,} systems simulated: {clean:,} without a deadline miss; "
                  f"{jobs:,} jobs in {wall_s:.3g} s ({jobs / max(wall_s, 1e-9):,.0f} jobs/s)")
    if interrupted:
        console.print("[bold yellow]partial[/]: stopped by Ctrl-C")
    if table is not None:
        console.print(f"  summary rows: {table}")
    elif len(data) > 20:
        console.print("  write every row with --table FILE.parquet")
