"""Fitting the fluid memory model to the transaction model (issue 11).

The workloads are the µB experiments of mc2-hardware-management §4.1 on the
i.MX6: a µB task (256 KiB, random line order) on core 0 beside three stress
tasks (1 MiB), in the three loaded configurations, over a grid of LLC areas.
The transaction model gives each point's execution time, and each task's time
alone in its own area (the PET, as the fluid model defines work). The fluid
model is given the same tasks, areas and banks as a task-system file, and
its µB time is compared. `fit` picks the fluid model's DRAM read latency L
and row-conflict penalty R (docs/memory-model.md) that minimize the squared
log error over the grid.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import criticore._core as _core
from criticore.simulation.options import SimOptions

UB_WSS = 256 * 1024
STRESS_WSS = 1024 * 1024
LINE = 32
ITERATIONS_PAPER = 500
CONFIGS = ("cache+bank", "cache", "unmanaged")
#: The comparison grid: colours × ways × configurations (36 points).
GRID = tuple((c, w, iso) for iso in CONFIGS for w in (2, 8, 16) for c in (2, 4, 8, 16))


@dataclass(frozen=True)
class Point:
    colours: int
    ways: int
    isolation: str
    #: Transaction model: the µB's time loaded, alone in its area, and the stress tasks' time alone in theirs (ns, 500 iterations).
    loaded_ns: float
    ub_alone_ns: float
    stress_alone_ns: float


def stress_area(colours: int, ways: int, isolation: str) -> tuple[int, int]:
    """The stress tasks' area (colours, ways), as `mc2_ub.rs` gives it."""
    if isolation == "unmanaged":
        return colours, ways
    by_colour, by_way = (16 - colours) * 16, 16 * (16 - ways)
    if by_colour == 0 and by_way == 0:
        return 0, 0
    return (16 - colours, 16) if by_colour >= by_way else (16, 16 - ways)


def transaction_points(grid=GRID, iterations: int = 20, runs: int = 1, seed: int = 1) -> list[Point]:
    loaded = _core.mc2_ub([(UB_WSS, c, w, iso) for c, w, iso in grid], iterations=iterations, runs=runs, seed=seed)
    alone_keys = sorted({(UB_WSS, c, w) for c, w, _ in grid} | {(STRESS_WSS, *stress_area(c, w, iso)) for c, w, iso in grid if stress_area(c, w, iso) != (0, 0)})
    alone = _core.mc2_ub([(wss, c, w, "idle") for wss, c, w in alone_keys], iterations=iterations, runs=runs, seed=seed)
    t_alone = {(r["wss_bytes"], r["colours"], r["ways"]): r["acet_ns"] for r in alone}
    out = []
    for (c, w, iso), r in zip(grid, loaded):
        sa = stress_area(c, w, iso)
        # A stress task with no LLC area: every reference misses; alone it runs as with one colour × one way.
        stress = t_alone.get((STRESS_WSS, *sa)) or _core.mc2_ub([(STRESS_WSS, 1, 1, "idle")], iterations=iterations, runs=runs, seed=seed)[0]["acet_ns"]
        out.append(Point(c, w, iso, r["acet_ns"], t_alone[(UB_WSS, c, w)], stress))
    return out


def _toml(p: Point, read_latency_ns: float, row_conflict_ns: float) -> str:
    """The point as a task-system file for the fluid model."""
    ub_refs = ITERATIONS_PAPER * UB_WSS // LINE
    stress_refs = ITERATIONS_PAPER * STRESS_WSS // LINE
    colours = lambda lo, n: "[" + ", ".join(map(str, range(lo, lo + n))) + "]"
    lines = [
        "[platform]",
        'preset = "imx6"',
        "cores = 4",
        f'dram = {{ read_latency = "{read_latency_ns:.3f}ns", row_conflict = "{row_conflict_ns:.3f}ns" }}',
        "[allocation]",
    ]
    # The stress tasks (no level, cores 1–3, no core partition named) share Level C.
    if p.isolation == "unmanaged":
        # Everyone in the µB's area and bank.
        lines += [f"llc_ways = {{ levelC = {p.ways} }}", f"llc_colors = {{ levelC = {colours(0, p.colours)} }}", "banks = { levelC = [4] }"]
    else:
        # The fluid model sizes a partition by ways × colours; the remainder is
        # given the ways the µB leaves (none when it has all 16: every stress reference misses).
        banks = "[4]" if p.isolation == "cache" else "[5, 6, 7]"
        ways = f"core0 = {p.ways}" + (f", levelC = {16 - p.ways}" if p.ways < 16 else "")
        lines += [f"llc_ways = {{ {ways} }}", f"llc_colors = {{ core0 = {colours(0, p.colours)} }}", f"banks = {{ core0 = [4], levelC = {banks} }}"]
    for k in range(4):
        wss, refs, alone = (UB_WSS, ub_refs, p.ub_alone_ns) if k == 0 else (STRESS_WSS, stress_refs, p.stress_alone_ns)
        lines += [
            "[[task]]",
            f'name = "{"ub" if k == 0 else f"stress{k}"}"',
            f"core = {k}",
            'period = "20s"',
            f'pet = "{alone:.0f}ns"' if k == 0 else 'pet = "20s"',
            f'memory = {{ wss = "{wss}B", pattern = "random", read_fraction = 1.0, accesses_per_ms = {refs / (alone / 1e6):.3f} }}',
        ]
    return "\n".join(lines) + "\n"


def fluid_ns(p: Point, read_latency_ns: float, row_conflict_ns: float) -> float:
    """The µB's execution time under the fluid model at this point."""
    report = json.loads(_core.simulate(_toml(p, read_latency_ns, row_conflict_ns).encode(), "calibration point", SimOptions(int(max(10 * p.loaded_ns, 1e9))))[0])
    ub = next(t for t in report["per_task"] if t["task"] == "ub")
    return float(ub["max_response_ns"])


def errors(points: list[Point], read_latency_ns: float, row_conflict_ns: float) -> list[float]:
    """Fluid / transaction − 1 at every point."""
    return [fluid_ns(p, read_latency_ns, row_conflict_ns) / p.loaded_ns - 1 for p in points]


def fit(points: list[Point], latencies=None, conflicts=None) -> tuple[float, float, float]:
    """(L, R, rms log error): a grid search, then a finer one around the best."""
    def cost(l, r):
        return math.sqrt(sum(math.log1p(e) ** 2 for e in errors(points, l, r)) / len(points))

    latencies = latencies or [60 + 20 * k for k in range(13)]
    conflicts = conflicts or [0, 30, 60, 90, 120, 180, 240, 320]
    best = min((cost(l, r), l, r) for l in latencies for r in conflicts)
    _, l0, r0 = best
    fine = min((cost(l, r), l, r) for l in (l0 - 10, l0 - 5, l0, l0 + 5, l0 + 10) if l > 0 for r in (max(0, r0 - 20), max(0, r0 - 10), r0, r0 + 10, r0 + 20))
    return fine[1], fine[2], fine[0]
