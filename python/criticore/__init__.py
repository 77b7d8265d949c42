"""criticore: mixed-criticality real-time systems on multicore hardware.

The engine is Rust (``criticore._core``); this package is the thin Python front:
file reading, the CLI, rendering and (later) orchestration and plots.
"""

from __future__ import annotations

import json
from pathlib import Path

from criticore._core import InputError  # noqa: F401  (re-exported)
from criticore._core import __version__  # noqa: F401
from criticore import _core

__all__ = ["InputError", "analyze", "check", "read_input", "simulation"]


def read_input(path: str | Path) -> bytes:
    """Read a task-system file, turning OS errors into an InputError."""
    path = Path(path)
    try:
        return path.read_bytes()
    except OSError as e:
        reason = e.strerror or str(e)
        raise InputError(f"{path}: (file): cannot read: {reason}", str(path), "(file)", f"cannot read: {reason}") from None


def analyze(path: str | Path, scheduler: str | None = None) -> dict:
    """Schedulability analysis of a task-system file under ``scheduler``
    (simulate's names: mc2, pfp, pedf, gedf, gfp, servers; default: what the
    file implies). mc2 gives the MC² report; the others per-task response-time
    bounds in ns under ``tasks`` (docs/analysis.md). Both carry ``scheduler``."""
    return json.loads(_core.analyze(read_input(path), str(path), None, scheduler))


def check(path: str | Path) -> dict:
    """Parse and validate a task-system file; returns its outline (cores, tasks, servers)."""
    return json.loads(_core.check(read_input(path), str(path)))


from criticore import simulation  # noqa: E402  (needs read_input above)
from criticore import batch  # noqa: E402
