"""The library functions: analyze, optimize, simulate (one system or many)
and run_study/load_study, on :class:`~criticore.TaskSystem` objects or task-system files,
returning typed results (:mod:`criticore.results`). The CLI commands of the
same names print these results."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Union

from criticore import _core
from criticore.errors import input_error
from criticore.results import Analysis, Optimization, Simulation, Study
from criticore.simulation import Interrupted
from criticore.system import TaskSystem, as_system

if TYPE_CHECKING:
    import pyarrow as pa

#: A TaskSystem, or the path of a task-system file.
SystemLike = Union[TaskSystem, str, "os.PathLike[str]"]

#: The optimizer's default scheme (mc2-io-ipc-os-isolation §6.1): every buffer optimized.
DEFAULT_SCHEME = "O|C+A/B-ALL"


def duration_ns(duration: int | str, file: str, field: str = "duration") -> int:
    """``duration`` in ns (an int of ns, or a string with a unit such as "10s"),
    positive; an InputError naming ``field`` otherwise."""
    if isinstance(duration, bool) or not isinstance(duration, (int, str)):
        raise input_error(file, field, "expected ns (int) or a string with a unit")
    if isinstance(duration, str):
        try:
            duration = _core.duration_ns(duration)
        except ValueError as e:
            raise input_error(file, field, str(e)) from None
    if duration <= 0:
        raise input_error(file, field, "must be positive")
    return duration


def scheme_name(scheme: str, file: str, field: str = "scheme") -> str:
    """The canonical name of one of the nine schemes of mc2-io-ipc-os-isolation
    §6.1, given in any case; an InputError naming ``field`` otherwise."""
    names = list(_core.study_schemes())
    match = next((n for n in names if n.lower() == scheme.strip().lower()), None)
    if match is None:
        raise input_error(file, field, f"unknown scheme {scheme!r} (expected one of {', '.join(names)})")
    return match


def analyze(system: SystemLike, scheduler: str | None = None) -> Analysis:
    """Schedulability analysis under ``scheduler`` (simulate's names: mc2,
    pfp, pedf, gedf, gfp, servers; default: what the system implies).
    docs/analysis.md gives each test."""
    s = as_system(system)
    return Analysis.from_json(json.loads(_core.analyze(s._core, s.name, None, scheduler)))


def optimize(system: SystemLike, scheme: str = DEFAULT_SCHEME, seed: int = 0) -> Optimization:
    """The three-phase optimizer of mc2-io-ipc-os-isolation §6.1 under
    ``scheme`` (one of the nine of §6.1, case-insensitive): packs Level-A/B
    tasks, places buffers, splits the LLC ways. ``seed`` drives R|R's random
    bank choices. docs/optimizer.md."""
    s = as_system(system)
    canonical = scheme_name(scheme, s.name)
    if not 0 <= seed < 2**64:
        raise input_error(s.name, "seed", "must be between 0 and 2^64 − 1")
    text, report_json = _core.optimize(s._core, s.name, None, canonical, seed)
    report = json.loads(report_json)
    optimized = TaskSystem._wrap(_core.System.from_json(text, s.name)) if report["schedulable"] else None
    return Optimization(report["scheme"], report["schedulable"], report.get("reason"), optimized, report)


def simulate(
    system: SystemLike,
    duration: int | str,
    *,
    scheduler: str | None = None,
    seed: int = 0,
    exec_level: str = "C",
    best_case_fraction: float | None = None,
    jobs: bool = False,
    segments: bool = False,
    trace: bool = False,
    bin_ns: int | None = None,
    regulator: str | None = None,
    memory: bool = True,
    memory_model: str | None = None,
    quantum_ns: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Simulation:
    """Simulate ``duration`` (ns, or a string such as ``"10s"``).

    ``jobs``/``segments`` keep the job records and execution segments as
    pyarrow tables, ``bin_ns`` a per-core bandwidth series, ``trace`` the
    Perfetto trace text. ``regulator`` overrides the system's
    [regulation] ("none" switches it off); ``memory=False`` runs CPU-only;
    ``memory_model`` is "fluid" (default) or "transaction". To stream long
    runs to files, see :func:`criticore.simulation.simulate`. Ctrl-C raises
    :class:`~criticore.simulation.Interrupted` whose ``partial`` is the
    :class:`Simulation` so far."""
    from criticore import simulation

    s = as_system(system)
    length_ns = duration_ns(duration, s.name)
    try:
        run = simulation.simulate(
            s, length_ns, scheduler=scheduler, seed=seed, exec_level=exec_level, best_case_fraction=best_case_fraction,
            jobs=jobs or segments, trace=trace, segments=segments, regulator=regulator, memory=memory, bin_ns=bin_ns,
            memory_model=memory_model, quantum_ns=quantum_ns, progress=progress,
        )
    except Interrupted as stop:
        raise Interrupted(Simulation.from_run(s, stop.partial)) from None
    return Simulation.from_run(s, run)


def simulate_many(
    systems: Sequence[SystemLike],
    duration: int | str,
    *,
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
) -> pa.Table:
    """Simulate many systems (objects or files) in parallel over all cores (or
    ``threads``), summary only: a pyarrow table, one row per system in the
    order given (columns: :data:`criticore.batch.ROW_FIELDS`)."""
    from criticore import batch

    head = systems[0] if systems else None
    first = head.name if isinstance(head, TaskSystem) else str(head) if head is not None else "(no systems)"
    return batch.simulate_many(
        list(systems), duration_ns(duration, first), scheduler=scheduler, seed=seed, exec_level=exec_level,
        best_case_fraction=best_case_fraction, regulator=regulator, memory=memory, memory_model=memory_model,
        quantum_ns=quantum_ns, threads=threads, progress=progress,
    )


def run_study(
    folder: str | os.PathLike[str],
    *,
    scenarios: Sequence[str] | None = None,
    utilization: str | None = None,
    seed: int = 0,
    quick: bool = False,
    half_width: float | None = None,
    max_systems: int | None = None,
    batch: int | None = None,
    preset: str = "imx6",
    dask=None,
    workers: int | None = None,
    force: bool = False,
    progress: bool = False,
) -> Study:
    """Run (or resume) the schedulability study of mc2-io-ipc-os-isolation §6
    into ``folder``, as ``criticore study run`` does with the same options
    (docs/study.md), and return its results. ``scenarios`` are filters such
    as ``"criticality=C-Light,period=Long"`` or ids ``"0,5,10-19"``;
    ``utilization`` a grid ``START:STOP:STEP`` or a list. ``quick`` is the
    six-scenario sweep."""
    from criticore import study as engine

    out = Path(folder)
    base = engine.quick_params(seed) if quick else engine.StudyParams(seed=seed)

    try:
        ids = tuple(engine.select_scenarios(list(scenarios))) if scenarios else (base.scenario_ids or tuple(range(engine.scenario_count())))
    except ValueError as e:
        raise input_error(out, "scenarios", str(e)) from None
    try:
        points = tuple(engine.parse_grid(utilization)) if utilization is not None else base.points
    except ValueError as e:
        raise input_error(out, "utilization", str(e)) from None
    params = engine.StudyParams(
        seed=seed, scenario_ids=ids, points=points, z=base.z, preset=preset,
        half_width=base.half_width if half_width is None else half_width,
        batch=base.batch if batch is None else batch,
        max_systems=base.max_systems if max_systems is None else max_systems,
    )
    summary = engine.run_study(out, params, force=force, dask=dask, workers=workers, progress=progress)
    return load_study(out, summary)


def load_study(folder: str | os.PathLike[str], summary=None) -> Study:
    """The results of a study folder written by :func:`run_study` or ``criticore study run``."""
    from criticore import study as engine
    from criticore import study_report

    out = Path(folder)
    meta = engine.load_study(out)
    curves = study_report.compute_curves(out, meta)
    state = engine.read_state(out, engine.params_of(meta), len(curves.schemes))
    stops = {sid: state.stop_point(sid) for sid in curves.scenario_ids}
    return Study(out, summary, engine.load_results(out), curves, stops)
