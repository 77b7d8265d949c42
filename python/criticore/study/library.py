"""The library functions of the study: :func:`run_study` and :func:`load_study`
return the typed :class:`~criticore.Study` (``criticore.study.run_study``,
which they call, returns the run's summary)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from criticore.errors import input_error
from criticore.results import Study
from criticore.study import run, store
from criticore.study.catalogue import parse_grid, scenario_count, select_scenarios
from criticore.study.parameters import StudyParams, quick_params
from criticore.study.report import compute_curves


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
    out = Path(folder)
    base = quick_params(seed) if quick else StudyParams(seed=seed)

    try:
        ids = tuple(select_scenarios(list(scenarios))) if scenarios else (base.scenario_ids or tuple(range(scenario_count())))
    except ValueError as e:
        raise input_error(out, "scenarios", str(e)) from None
    try:
        points = tuple(parse_grid(utilization)) if utilization is not None else base.points
    except ValueError as e:
        raise input_error(out, "utilization", str(e)) from None
    params = StudyParams(
        seed=seed, scenario_ids=ids, points=points, z=base.z, preset=preset,
        half_width=base.half_width if half_width is None else half_width,
        batch=base.batch if batch is None else batch,
        max_systems=base.max_systems if max_systems is None else max_systems,
    )
    summary = run.run_study(out, params, force=force, dask=dask, workers=workers, progress=progress)
    return load_study(out, summary)


def load_study(folder: str | os.PathLike[str], summary=None) -> Study:
    """The results of a study folder written by :func:`run_study` or ``criticore study run``."""
    out = Path(folder)
    meta = store.load_study(out)
    curves = compute_curves(out, meta)
    state = store.read_state(out, store.params_of(meta), len(curves.schemes))
    stops = {sid: state.stop_point(sid) for sid in curves.scenario_ids}
    return Study(out, summary, store.load_results(out), curves, stops)
