"""criticore: mixed-criticality real-time systems on multicore hardware.

The engine is Rust (``criticore._core``); this package is the thin Python
front: :class:`TaskSystem` (the engine's model, built in Python or loaded
from a file), the functions :func:`analyze`, :func:`optimize`,
:func:`simulate`, :func:`simulate_many`, :func:`run_study` and
:func:`load_study` with typed results
(:mod:`criticore.results`), plots, and the CLI. docs/python.md is the tour.

This module is the face only: it re-exports. The code is in one package per
job (``criticore.analyze``, ``criticore.simulate``, …; docs/architecture.md),
and no module of the package imports this one. The functions ``analyze``,
``optimize`` and ``simulate`` are named like their packages; as attributes of
``criticore`` they are the functions (import the packages' modules by their
full names, ``from criticore.simulate.run import SimRun``).
"""

from __future__ import annotations

from criticore._core import __version__  # noqa: F401
from criticore.errors import InputError
from criticore.system import TaskSystem, check, read_input
from criticore.results import Analysis, Optimization, Simulation, Study
from criticore.analyze import analyze
from criticore.optimize import optimize
from criticore.simulate import SimOptions, simulate, simulate_many
from criticore.simulate import batch, run as simulation  # the streaming run (documented as criticore.simulation)
from criticore.study.library import load_study, run_study

__all__ = [
    "Analysis", "InputError", "Optimization", "SimOptions", "Simulation", "Study", "TaskSystem", "analyze", "check",
    "load_study", "optimize", "read_input", "run_study", "simulate", "simulate_many", "simulation",
]
