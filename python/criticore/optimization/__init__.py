"""The three-phase optimizer of mc2-io-ipc-os-isolation §6.1 (docs/optimizer.md):
:func:`optimize`, and the exact and MILP LLC-way solvers (:mod:`criticore.optimization.milp`)."""

from __future__ import annotations

import json

import criticore._core as _core
import criticore.units as units
from criticore.errors import input_error
from criticore.results import Optimization
from criticore.system import SystemLike, TaskSystem, as_system

#: The optimizer's default scheme (mc2-io-ipc-os-isolation §6.1): every buffer optimized.
DEFAULT_SCHEME = "O|C+A/B-ALL"


def optimize(system: SystemLike, scheme: str = DEFAULT_SCHEME, seed: int = 0) -> Optimization:
    """The three-phase optimizer of mc2-io-ipc-os-isolation §6.1 under
    ``scheme`` (one of the nine of §6.1, case-insensitive): packs Level-A/B
    tasks, places buffers, splits the LLC ways. ``seed`` drives R|R's random
    bank choices. docs/optimizer.md."""
    s = as_system(system)
    if s.platform.memories:
        raise input_error(s.name, "platform.memory", "a scratchpad platform: its optimization is label placement (criticore.optimization.place_labels)")
    canonical = units.scheme_name(scheme, s.name)
    units.seed(seed, s.name)
    text, report_json = _core.optimize(s._core, s.name, None, canonical, seed)
    report = json.loads(report_json)
    optimized = TaskSystem._wrap(_core.System.from_json(text, s.name)) if report["schedulable"] else None
    return Optimization(report["scheme"], report["schedulable"], report.get("reason"), optimized, report)


def place_labels(system: SystemLike, objective: str = "response", budget: int = 100) -> tuple[TaskSystem, dict]:
    """Label placement on a scratchpad platform (issue 27, Build 7;
    docs/optimizer.md "Label placement"): labels moved between the memories,
    within their sizes, to lower ``objective`` ("response": the worst bound
    over deadline under pfp; "chain": the worst chain's reaction time bound),
    judging at most ``budget`` placements. Returns the placed system and the
    report (``before``, ``after``: unbounded, worst, sum; ``moves``)."""
    s = as_system(system)
    if not s.platform.memories:
        raise input_error(s.name, "platform.memory", "label placement needs a scratchpad platform ([[platform.memory]] and [[label]]s)")
    text, report_json = _core.optimize(s._core, s.name, None, objective=objective, budget=budget)
    return TaskSystem._wrap(_core.System.from_json(text, s.name)), json.loads(report_json)
