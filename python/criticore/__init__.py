"""criticore: mixed-criticality real-time systems on multicore hardware.

The engine is Rust (``criticore._core``); this package is the thin Python
front: :class:`TaskSystem` (the engine's model, built in Python or loaded
from a file), the functions :func:`analyze`, :func:`optimize`,
:func:`simulate`, :func:`simulate_many`, :func:`run_study` and
:func:`load_study` with typed results
(:mod:`criticore.results`), plots, and the CLI. docs/python.md is the tour.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from criticore._core import InputError  # noqa: F401  (re-exported)
from criticore._core import __version__  # noqa: F401
from criticore import _core

__all__ = [
    "Analysis", "InputError", "Optimization", "Simulation", "Study", "TaskSystem", "analyze", "check", "load_study",
    "optimize", "read_input", "run_study", "simulate", "simulate_many", "simulation",
]


def _arg(i: int, doc: str) -> property:
    return property(lambda e: e.args[i] if len(e.args) == 4 else None, doc=doc)


# InputError(message, file, field, reason): the parts also as attributes.
InputError.file = _arg(1, "The file (or label of a system built in Python) the error is in.")  # type: ignore[assignment]
InputError.field = _arg(2, "The field's path, as in the file (``task[3].period``), or the option.")  # type: ignore[assignment]
InputError.reason = _arg(3, "Why the value is refused.")  # type: ignore[assignment]
# The one line ("FILE: FIELD: REASON"), not the tuple of arguments, in tracebacks.
InputError.__str__ = lambda e: e.args[0] if len(e.args) == 4 else ValueError.__str__(e)  # type: ignore[method-assign]


def read_input(path: str | os.PathLike[str]) -> bytes:
    """Read a task-system file, turning OS errors into an InputError."""
    path = Path(path)
    try:
        return path.read_bytes()
    except OSError as e:
        reason = e.strerror or str(e)
        raise InputError(f"{path}: (file): cannot read: {reason}", str(path), "(file)", f"cannot read: {reason}") from None


def check(path: str | Path) -> dict:
    """Parse and validate a task-system file; returns its outline (cores, tasks, servers)."""
    return json.loads(_core.check(read_input(path), str(path)))


from criticore import simulation  # noqa: E402  (needs read_input above)
from criticore import batch  # noqa: E402
from criticore.system import TaskSystem  # noqa: E402
from criticore.results import Analysis, Optimization, Simulation, Study  # noqa: E402
from criticore.api import analyze, load_study, optimize, run_study, simulate, simulate_many  # noqa: E402
