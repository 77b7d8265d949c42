"""Running (or resuming) a study into its folder: the lock, the comparison with
what the folder holds, the sweep in waves of points."""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from criticore.errors import InputError
from criticore.study.backends import _backend
from criticore.study.catalogue import GRID_STEP, categories, format_grid, scenario, schemes, utilization
from criticore.study.parameters import StudyParams, _input_error, _ParamError
from criticore.study.store import (
    FORMAT_VERSION, KILL_AFTER_ENV, LOCK_FILE, RESULTS_DIR, STUDY_FILE, StudyState, _versions, _write_atomic, _write_json,
    chunk_name, columns_to_table, load_study, read_state, result_files,
)


# --------------------------------------------------------------------------- the study folder


@contextlib.contextmanager
def _locked(out: Path):
    """One run per study folder at a time (advisory lock, released when the process dies)."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no lock
        yield
        return
    f = open(out / LOCK_FILE, "w")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise _input_error(out, "--output", "another `criticore study run` is writing this folder") from None
        yield
    finally:
        f.close()


def _differences(old: dict, new: dict) -> str:
    diffs = []
    for k in new:
        if old.get(k) != new[k]:
            if k == "scenario_ids":
                diffs.append(f"scenarios ({len(old.get(k) or [])} vs {len(new[k])} selected)")
            elif k == "points":
                o = old.get(k) or []
                diffs.append(f"utilization grid ({format_grid(o) if o else 'none'} vs {format_grid(new[k])})")
            else:
                diffs.append(f"{k} ({old.get(k)} vs {new[k]})")
    return ", ".join(diffs)


def _clear(out: Path) -> None:
    """Remove what a previous study wrote (only our own files)."""
    for p in result_files(out):
        p.unlink()
    if (out / RESULTS_DIR).is_dir():
        for p in (out / RESULTS_DIR).glob(".tmp-*"):
            p.unlink()
    for name in (STUDY_FILE, "report.md"):
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()
    plots = out / "plots"
    if plots.is_dir():
        for p in plots.glob("*.png"):
            p.unlink()


def _inspect(out: Path, params: StudyParams, force: bool) -> tuple[dict | None, bool]:
    """Check the output folder without changing it: (study.json to resume from, whether to clear first)."""
    if out.exists() and not out.is_dir():
        raise _input_error(out, "--output", "is a file, not a folder")
    if not out.exists():
        if not out.parent.exists():
            raise _input_error(out, "--output", f"folder {out.parent} does not exist")
        return None, False
    if (out / STUDY_FILE).exists():
        try:
            old = load_study(out)
        except InputError:
            if not force:
                raise _input_error(out, "--output", f"holds a damaged {STUDY_FILE}; pass --force to start over") from None
            return None, True
        diffs = _differences(old["parameters"], params.identity())
        if not diffs:
            return old, False
        if not force:
            raise _input_error(
                out, "--output", f"holds a study with other parameters: {diffs}; pass --force to replace it, or choose another folder"
            )
        return None, True
    ours = {LOCK_FILE, RESULTS_DIR}
    if any(p.name not in ours for p in out.iterdir()) or result_files(out):
        if not force:
            raise _input_error(out, "--output", "exists and is not a criticore study; pass --force to write into it, or choose another folder")
        return None, True
    return None, False


@dataclass
class StudySummary:
    out: Path
    complete: bool
    scenarios: int
    points_done: int
    points_evaluated_now: int
    points_skipped: int
    systems: int
    stopped: dict[int, float]
    seconds: float
    backend: str


def _metadata(params: StudyParams, state: StudyState, runs: list, complete: bool, versions: dict) -> dict:
    stopped = {}
    for sid in params.scenario_ids:
        k = state.stop_point(sid)
        if k is not None:
            stopped[str(sid)] = {"point": k, "utilization": utilization(k)}
    skipped = sum(sum(1 for k in params.points if k > int(v["point"])) for v in stopped.values())
    return {
        "format": FORMAT_VERSION,
        "kind": "criticore schedulability study (mc2-io-ipc-os-isolation §6)",
        "parameters": params.identity(),
        "grid": {
            "step": GRID_STEP,
            "rule": "point k is system utilization 0.25*(k+1)",
            "utilizations": [utilization(k) for k in params.points],
        },
        "schemes": schemes(),
        "categories": [{"key": c.key, "choices": list(c.choices)} for c in categories()],
        "scenario_id_rule": "index in the cross product of the categories in this order, first category slowest",
        "scenarios": {str(sid): scenario(sid) for sid in params.scenario_ids},
        "results": {
            "layout": "results/*.parquet, one file per finished chunk of (scenario, point) pairs",
            "columns": {
                "scenario_id": "uint32",
                "point": "uint32",
                "utilization": "float64",
                "system": "uint32",
                "scheme": "dictionary<int8, string> (scheme name)",
                "schedulable": "bool",
                "objective": "float64 (optimized total Level-C utilization; NaN when unschedulable)",
            },
        },
        "versions": versions,
        "progress": {
            "complete": complete,
            "points_done": state.points_done(),
            "systems": state.systems,
            "early_stop_rule": "a scenario's later points are not evaluated once a point is unschedulable under every scheme; they count as 0",
            "points_skipped": skipped,
            "stopped": stopped,
        },
        "runs": runs,
    }


def run_study(
    out: str | Path,
    params: StudyParams,
    *,
    force: bool = False,
    dask=None,
    workers: int | None = None,
    chunk_points: int | None = None,
    console=None,
    progress: bool = True,
    on_chunk: Callable[[int], None] | None = None,
) -> StudySummary:
    """Run (or resume) a study into folder ``out``.

    ``dask``: None (local backend), ``"local"`` (a LocalCluster of ``workers``
    processes), a scheduler address (``tcp://host:8786``) or a
    ``distributed.Client``. ``chunk_points`` overrides the number of points per
    chunk. ``on_chunk(n)`` is called after the n-th chunk file of this run is
    written (a test hook; an exception stops the run like a kill would).
    Raises InputError (one line: folder, option, reason) for bad input.
    """
    out = Path(out)
    try:
        params.check()
    except _ParamError as e:
        raise _input_error(out, e.field, e.reason) from None
    if chunk_points is not None and chunk_points < 1:
        raise _input_error(out, "--chunk", "must be at least 1")
    scheme_names = schemes()
    old, clear = _inspect(out, params, force)
    backend = _backend(dask, workers, out)
    kill_after = int(os.environ.get(KILL_AFTER_ENV, "0") or 0)
    started = time.time()
    try:
        out.mkdir(exist_ok=True)
        with _locked(out):
            if clear:
                _clear(out)
            (out / RESULTS_DIR).mkdir(exist_ok=True)
            for p in (out / RESULTS_DIR).glob(".tmp-*"):  # left by a killed run
                p.unlink()
            state = read_state(out, params, len(scheme_names))
            versions = _versions(backend.versions())
            runs = list(old.get("runs", [])) if old else []
            runs.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "backend": backend.name, "resumed_points": state.points_done()})

            def save(complete: bool = False) -> None:
                _write_json(out / STUDY_FILE, _metadata(params, state, runs, complete, versions))

            save()
            summary = _sweep(out, params, state, backend, scheme_names, chunk_points, console, progress, on_chunk, kill_after, save)
            runs[-1]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            runs[-1]["seconds"] = round(time.time() - started, 3)
            runs[-1]["points_evaluated"] = summary.points_evaluated_now
            save(complete=True)
    finally:
        backend.close()
    summary.seconds = time.time() - started
    summary.backend = backend.name
    return summary


def _expected_total(params: StudyParams, state: StudyState) -> int:
    """Points a finished study will have evaluated, as far as known now (shrinks as scenarios stop)."""
    import bisect

    n = len(params.points)
    return sum(n if (stop := state.stops.get(sid)) is None else bisect.bisect_right(params.points, stop) for sid in params.scenario_ids)


def _sweep(out, params, state, backend, scheme_names, chunk_points, console, progress, on_chunk, kill_after, save) -> StudySummary:
    import pyarrow.parquet as pq

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    console = console or Console(stderr=True)
    total = _expected_total(params, state)
    evaluated_now = 0
    written = 0
    columns = [
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/≤{task.total} points"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
    ]
    with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
        task = bar.add_task("study", total=total, completed=state.points_done(), note="")
        for wave in params.points:
            todo = [
                sid
                for sid in params.scenario_ids
                if wave not in state.done.get(sid, ())
                and (state.stop_point(sid) is None or state.stop_point(sid) > wave)
            ]
            if not todo:
                continue
            size = chunk_points or backend.chunk_size(len(todo))
            groups = [todo[i : i + size] for i in range(0, len(todo), size)]
            payloads = [
                json.dumps(
                    [{"scenario_id": sid, "scenario": scenario(sid), "point": wave, "utilization": utilization(wave)} for sid in g]
                )
                for g in groups
            ]
            bar.update(task, description=f"U = {utilization(wave):5.2f}")
            for i, raw in backend.run(payloads, params):
                table = columns_to_table(raw, scheme_names)
                pairs = [(sid, wave) for sid in groups[i]]
                got = set(zip(table.column("scenario_id").to_numpy().tolist(), table.column("point").to_numpy().tolist()))
                if got != set(pairs):
                    raise RuntimeError(f"study kernel returned rows for {sorted(got ^ set(pairs))[:3]} instead of the chunk's points")
                name = chunk_name(wave, pairs)
                try:
                    _write_atomic(out / RESULTS_DIR / name, lambda f: pq.write_table(table, f, compression="zstd"))
                except OSError as e:
                    raise _input_error(out, "--output", f"cannot write {RESULTS_DIR}/{name}: {e.strerror or e}") from None
                state.add(
                    table.column("scenario_id").to_numpy(),
                    table.column("point").to_numpy(),
                    table.column("schedulable").to_numpy(zero_copy_only=False),
                    len(scheme_names),
                )
                evaluated_now += len(pairs)
                written += 1
                stopped = len(state.stops)
                bar.update(
                    task,
                    completed=state.points_done(),
                    total=_expected_total(params, state),
                    note=f"{state.systems:,} systems, {stopped}/{len(params.scenario_ids)} scenarios stopped early",
                )
                if on_chunk is not None:
                    on_chunk(written)
                if kill_after and written >= kill_after:
                    import signal

                    os.kill(os.getpid(), signal.SIGKILL)
            save()  # progress and early stops after every wave
    stopped = {sid: utilization(k) for sid in params.scenario_ids if (k := state.stop_point(sid)) is not None}
    skipped = sum(sum(1 for k in params.points if k > state.stop_point(sid)) for sid in stopped)
    return StudySummary(
        out=out,
        complete=True,
        scenarios=len(params.scenario_ids),
        points_done=state.points_done(),
        points_evaluated_now=evaluated_now,
        points_skipped=skipped,
        systems=state.systems,
        stopped=stopped,
        seconds=0.0,
        backend="",
    )
