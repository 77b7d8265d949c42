"""Schedulability analysis (docs/analysis.md): :func:`analyze`, and the check
of its bounds against the simulator (:mod:`criticore.analysis.check_sim`)."""

from __future__ import annotations

import json

import criticore._core as _core
from criticore.results import Analysis
from criticore.system import SystemLike, as_system


def analyze(system: SystemLike, scheduler: str | None = None) -> Analysis:
    """Schedulability analysis under ``scheduler`` (simulate's names: mc2,
    pfp, pedf, gedf, gfp, servers; default: what the system implies).
    docs/analysis.md gives each test."""
    s = as_system(system)
    return Analysis.from_json(json.loads(_core.analyze(s._core, s.name, None, scheduler)))
