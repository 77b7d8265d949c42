"""The study's scenarios (the Table 3 categories of mc2-io-ipc-os-isolation §6,
their cross product and filters) and its utilization grid."""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from dataclasses import dataclass

import criticore._core as _core


#: Step of the utilization grid: point index k is U = GRID_STEP · (k + 1).
GRID_STEP = 0.25
#: The full grid: k = 0 … 63, U = 0.25 … 16.0 (C-Heavy scenarios stay schedulable beyond 10).
FULL_GRID = tuple(range(64))
#: Largest utilization accepted by ``--utilization`` (the platform has 4 cores).
MAX_UTILIZATION = 64.0


def utilization(point: int) -> float:
    """System utilization of grid point ``point``."""
    return GRID_STEP * (point + 1)


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Category:
    key: str
    choices: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _categories() -> tuple[Category, ...]:
    return tuple(Category(c["key"], tuple(c["choices"])) for c in json.loads(_core.study_categories()))


def categories() -> list[Category]:
    """The seven Table 3 categories, in Table 3 order (from the engine)."""
    return list(_categories())


def schemes() -> list[str]:
    """The nine schemes, in the engine's order (the kernel's ``scheme`` column indexes this list)."""
    return list(_core.study_schemes())


def scenario_count() -> int:
    return math.prod(len(c.choices) for c in categories())


def scenario(sid: int) -> dict[str, str]:
    """The choices of scenario ``sid`` (mixed-radix digits, criticality most significant)."""
    cats = categories()
    total = math.prod(len(c.choices) for c in cats)
    if not 0 <= sid < total:
        raise ValueError(f"scenario {sid} out of range (0–{total - 1})")
    out: dict[str, str] = {}
    for c in reversed(cats):
        sid, digit = divmod(sid, len(c.choices))
        out[c.key] = c.choices[digit]
    return {c.key: out[c.key] for c in cats}


def scenario_id(choices: dict[str, str]) -> int:
    """Inverse of :func:`scenario`."""
    sid = 0
    for c in categories():
        sid = sid * len(c.choices) + c.choices.index(choices[c.key])
    return sid


def all_scenarios() -> list[dict[str, str]]:
    """Every scenario, indexed by id (the cross product in Table 3 order)."""
    cats = categories()
    return [dict(zip([c.key for c in cats], combo)) for combo in itertools.product(*[c.choices for c in cats])]


def scenario_label(sid: int) -> str:
    """The paper's tuple notation, e.g. ``(C-Light, Long, Light, Quick, Small, High, Many)``."""
    return "(" + ", ".join(scenario(sid).values()) + ")"


def _norm(text: str) -> str:
    return text.strip().lower().replace("_", "-").rstrip(".")


_ID_TOKEN = re.compile(r"^\d+(-\d+)?$")


def select_scenarios(specs: list[str] | None) -> list[int]:
    """Scenario ids selected by ``--scenarios`` values (union over values; all when none).

    A value is either a filter, ``key=choice`` terms joined by commas (terms on
    different keys must all hold; several terms on one key mean any of them),
    e.g. ``criticality=C-Light,period=Long,period=Short``, or a list of ids and
    ranges, e.g. ``0,5,10-19``. Keys and choices are case-insensitive, ``-`` and
    ``_`` are interchangeable and a trailing dot may be left out (``All-Mod``).
    Raises ValueError with a one-line reason.
    """
    cats = categories()
    total = math.prod(len(c.choices) for c in cats)
    if not specs:
        return list(range(total))
    selected: set[int] = set()
    for spec in specs:
        tokens = [t.strip() for t in spec.split(",") if t.strip()]
        if not tokens:
            raise ValueError(f"{spec!r}: empty selection")
        if all(_ID_TOKEN.match(t) for t in tokens):
            for t in tokens:
                lo, _, hi = t.partition("-")
                a, b = int(lo), int(hi or lo)
                if a > b:
                    raise ValueError(f"{t}: empty range")
                if b >= total:
                    raise ValueError(f"scenario {b} out of range (0–{total - 1})")
                selected.update(range(a, b + 1))
            continue
        if not all("=" in t for t in tokens):
            bad = next(t for t in tokens if "=" not in t)
            raise ValueError(
                f"{bad!r}: expected key=choice (keys: {', '.join(c.key for c in cats)}) or scenario ids like 0,5,10-19"
            )
        allowed: dict[str, set[str]] = {}
        for t in tokens:
            key, _, value = t.partition("=")
            cat = next((c for c in cats if _norm(c.key) == _norm(key)), None)
            if cat is None:
                raise ValueError(f"unknown category {key.strip()!r} (expected {', '.join(c.key for c in cats)})")
            choice = next((ch for ch in cat.choices if _norm(ch) == _norm(value)), None)
            if choice is None:
                raise ValueError(f"{cat.key}: unknown choice {value.strip()!r} (expected {', '.join(cat.choices)})")
            allowed.setdefault(cat.key, set()).add(choice)
        for sid, sc in enumerate(all_scenarios()):
            if all(sc[k] in v for k, v in allowed.items()):
                selected.add(sid)
    return sorted(selected)


#: ``--quick``: six scenarios that together use every choice of every category,
#: including the three of Fig. 15 (a), (b), (c).
QUICK_SCENARIOS = (
    ("C-Light", "Long", "Light", "Quick", "Small", "High", "Many"),  # Fig. 15(a)
    ("C-Light", "Long", "Light", "Quick", "Large", "High", "Many"),  # Fig. 15(b)
    ("C-Light", "Short", "Medium", "Slow", "Large", "High", "Many"),  # Fig. 15(c)
    ("C-Heavy", "Moderate", "Medium", "Quick", "Small", "Low", "Few"),
    ("All-Mod.", "Short", "Heavy", "Slow", "Large", "Medium", "Few"),
    ("C-Heavy", "Long", "Heavy", "Slow", "Small", "Medium", "Many"),
)


def quick_scenarios() -> list[int]:
    keys = [c.key for c in categories()]
    return sorted(scenario_id(dict(zip(keys, combo))) for combo in QUICK_SCENARIOS)


def parse_grid(text: str) -> list[int]:
    """``--utilization``: ``START:STOP:STEP`` (inclusive) or a comma list; every U a multiple of 0.25.

    Returns point indices (U = 0.25·(k + 1)). Raises ValueError with a one-line reason.
    """
    text = text.strip()

    def number(t: str) -> float:
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"{t.strip()!r} is not a number") from None
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"{t.strip()!r}: utilizations must be positive")
        return v

    def index(u: float) -> int:
        k = round(u / GRID_STEP) - 1
        if k < 0 or abs(utilization(k) - u) > 1e-9:
            raise ValueError(f"{u:g} is not a multiple of {GRID_STEP}")
        if u > MAX_UTILIZATION:
            raise ValueError(f"{u:g} is above {MAX_UTILIZATION:g}")
        return k

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ValueError(f"{text!r}: expected START:STOP:STEP, e.g. 0.25:10:0.25")
        start, stop, step = (index(number(p)) for p in parts)
        stride = step + 1
        if stop < start:
            raise ValueError(f"{text!r}: STOP is below START")
        return list(range(start, stop + 1, stride))
    points = [index(number(t)) for t in text.split(",") if t.strip()]
    if not points:
        raise ValueError("no utilization given")
    if any(b <= a for a, b in zip(points, points[1:])):
        raise ValueError(f"{text!r}: utilizations must be increasing")
    return points


def format_grid(points: list[int] | tuple[int, ...]) -> str:
    us = [utilization(k) for k in points]
    if len(us) >= 3 and len({b - a for a, b in zip(points, points[1:])}) == 1:
        return f"{us[0]:g}:{us[-1]:g}:{us[1] - us[0]:g}"
    return ",".join(f"{u:g}" for u in us)
