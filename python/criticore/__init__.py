"""criticore: mixed-criticality real-time systems on multicore hardware.

The engine is Rust (``criticore._core``); this package is the thin Python
front: :class:`TaskSystem` (the engine's model, built in Python or loaded
from a file), the functions :func:`analyze`, :func:`optimize`,
:func:`simulate`, :func:`simulate_many`, :func:`run_study` and
:func:`load_study` with typed results, :func:`import_amalthea` (an Amalthea model as a task system)
(:mod:`criticore.results`), :func:`make_report` (an HTML report page),
plots, and the CLI. docs/python.md is the tour.

This module is the face only: it re-exports. The code is in one package per
job (``criticore.analysis``, ``criticore.simulation``, ``criticore.study``,
…; README "Layout"), and no module of the package imports this one.
"""

from __future__ import annotations

from criticore._core import __version__  # noqa: F401
from criticore.errors import InputError
from criticore.system import TaskSystem, check, read_input
from criticore.results import Analysis, Optimization, Simulation, Study
from criticore.analysis import analyze
from criticore.optimization import optimize
from criticore import simulation
from criticore.simulation import SimOptions, batch
from criticore.simulation.library import simulate, simulate_many
from criticore.study.library import load_study, run_study
from criticore.report.library import make_report
from criticore.imports import import_amalthea

__all__ = [
    "Analysis", "InputError", "Optimization", "SimOptions", "Simulation", "Study", "TaskSystem", "analyze", "check", "import_amalthea",
    "load_study", "make_report", "optimize", "read_input", "run_study", "simulate", "simulate_many", "simulation",
]
