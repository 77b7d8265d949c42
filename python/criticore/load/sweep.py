"""`criticore load --sweep`: this machine's bandwidth over the microbenchmark's
read/write ratio × delay grid (blin-bandwidth-monitor §3.1, Fig. 5), and a
loaded-latency curve: a pointer-chasing victim against 0 to 3 loads on other
cores (Intel MLC's loaded latency; docs/references.md, Runtime §3).
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

import criticore._core as _core
from criticore.load import generator as gen

#: Delay-loop iterations of the grid (§3.1 goes from 0 to 8000).
DELAYS = (0, 10, 20, 50, 100, 200, 500, 1000, 2000, 4000, 8000)
#: Reads of every 10 lines (write_nb + read_nb = 10).
READS = tuple(range(11))


def bandwidth_grid(
    cpu: int,
    reads: tuple[int, ...] = READS,
    delays: tuple[int, ...] = DELAYS,
    point_ns: int = 100_000_000,
    buffer_bytes: int | None = None,
    on_point: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """One short run of the generator alone on ``cpu`` per (reads, delay): bytes/s."""
    rows = {"reads": [], "delay": [], "bytes_per_s": []}
    total = len(reads) * len(delays)
    for r in reads:
        for d in delays:
            run = gen.run(reads=r, delay=d, duration_ns=point_ns, cpu=cpu, buffer_bytes=buffer_bytes)
            rows["reads"].append(r)
            rows["delay"].append(d)
            rows["bytes_per_s"].append(run.bandwidth())
            if on_point is not None:
                on_point(len(rows["reads"]), total)
    return {k: np.asarray(v) for k, v in rows.items()}


def non_monotone(grid: dict[str, np.ndarray], tolerance: float = 0.05) -> list[tuple[int, int, int]]:
    """(reads, delay, next delay) where bandwidth rises with more delay by more
    than ``tolerance`` (relative): the grid should only fall along the delays."""
    bad = []
    for r in np.unique(grid["reads"]):
        m = grid["reads"] == r
        order = np.argsort(grid["delay"][m])
        d, bw = grid["delay"][m][order], grid["bytes_per_s"][m][order]
        for i in range(len(d) - 1):
            if bw[i + 1] > bw[i] * (1 + tolerance):
                bad.append((int(r), int(d[i]), int(d[i + 1])))
    return bad


def load_cpus_for(victim: int, most: int = 3) -> list[int]:
    """Up to ``most`` CPUs other than the victim's."""
    return [c for c in range(os.cpu_count() or 1) if c != victim][:most]


def latency_curve(
    victim: int,
    load_cpus: list[int],
    reads: int = 0,
    delays: tuple[int, ...] = (0, 100, 500, 2000, 8000),
    point_ns: int = 200_000_000,
    on_point: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """The victim's ns per access alone and against 1..len(load_cpus) loads at each delay."""
    rows = {"loads": [], "delay": [], "latency_ns": [], "load_bytes_per_s": []}
    points = [(0, 0)] + [(n, d) for n in range(1, len(load_cpus) + 1) for d in delays]
    for i, (n, d) in enumerate(points):
        lat, bw = _core.loaded_latency(victim, load_cpus[:n], reads, d, point_ns)
        rows["loads"].append(n)
        rows["delay"].append(d)
        rows["latency_ns"].append(lat)
        rows["load_bytes_per_s"].append(bw)
        if on_point is not None:
            on_point(i + 1, len(points))
    return {k: np.asarray(v) for k, v in rows.items()}


def plot(grid: dict[str, np.ndarray], curve: dict[str, np.ndarray] | None, path) -> None:
    """Fig. 5's bandwidth per ratio over the delays, and latency against load bandwidth."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2 if curve is not None else 1, figsize=(11 if curve is not None else 6, 4.2), squeeze=False)
    ax = axes[0][0]
    cmap = plt.get_cmap("viridis")
    for r in np.unique(grid["reads"]):
        m = grid["reads"] == r
        order = np.argsort(grid["delay"][m])
        x = np.maximum(grid["delay"][m][order], 1)
        ax.plot(x, grid["bytes_per_s"][m][order] / 1e6, marker="o", ms=3, color=cmap(r / 10), label=f"{r}r:{10 - r}w")
    ax.set_xscale("log")
    ax.set_xlabel("delay-loop iterations per 10 lines (0 drawn at 1)")
    ax.set_ylabel("bandwidth (MB/s)")
    ax.set_title("Load generator alone (cf. blin-bandwidth-monitor Fig. 5)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    if curve is not None:
        ax = axes[0][1]
        for n in np.unique(curve["loads"]):
            m = curve["loads"] == n
            ax.plot(curve["load_bytes_per_s"][m] / 1e6, curve["latency_ns"][m], marker="o", label=f"{n} load(s)")
        ax.set_xlabel("bandwidth of the loads (MB/s)")
        ax.set_ylabel("victim latency (ns per access)")
        ax.set_title("Loaded latency (pointer chase)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
