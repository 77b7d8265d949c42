"""Fitting the study's assumed cost constants (docs/study-model.md) to the
transaction model's versions of mc2-io-ipc-os-isolation §5's measurements.

- SBP message time t(z) = fixed + per_byte · z: least squares over §5.1's
  message sizes (mean of send and receive, Fig. 8's SBP curves).
- DMA: Synthetic (random stores over 256 KiB, a small LLC region as in
  Fig. 13(a)) beside DMA of D in total. With buffers in the Level-C banks only
  the bus and controller are shared: slowdown 1 + a_bus·φ(D). With buffers in
  its own bank: (1 + a_bus·φ(D))·(1 + a_bank·φ(D)). φ(D) = 1 − e^(−D/D₀).
- Cross-core bank interference a_cpu: a Level-C task's extra time with a
  frame copy in its bank, as a share of the time it spends on misses (the
  cost model applies it to misses only).
"""

from __future__ import annotations

import math

import criticore._core as _core

SIZES = (64, 256, 1024, 4096, 8192)
BANDWIDTHS = (25e6, 50e6, 100e6, 200e6, 400e6)
#: Fig. 13(a)'s small region: 4 colours × 2 ways (32 KiB) for a 256 KiB Synthetic.
SMALL_REGION = (4, 2)
#: The µB loop's time per reference when it hits the LLC (docs/transaction-model.md T1–T3).
HIT_NS = 74.76


def ipc_rows() -> list[dict]:
    rows = []
    for z in SIZES:
        t = {p: _core.mc2_io_ipc(z, p) for p in ("sbp", "ce", "cl")}
        rows.append({"bytes": z, **{f"{p}_{d}_ns": t[p][k] for p in t for k, d in enumerate(("send", "receive"))}})
    return rows


def fit_sbp(rows) -> tuple[float, float]:
    xs = [r["bytes"] for r in rows]
    ys = [(r["sbp_send_ns"] + r["sbp_receive_ns"]) / 2 for r in rows]
    n, mx, my = len(xs), sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return max(0.0, my - b * mx), b


def ratios(rows) -> dict[str, float]:
    """CE and CL times as shares of SBP, averaged over the sizes (Obs. 1's measure)."""
    out = {}
    for p in ("ce", "cl"):
        for d in ("send", "receive"):
            out[f"{p}_{d}"] = sum(r[f"{p}_{d}_ns"] / r[f"sbp_{d}_ns"] for r in rows) / len(rows)
    return out


def dma_rows() -> list[dict]:
    c, w = SMALL_REGION
    idle = _core.mc2_io_dma(c, w, 0.0, False)
    return [{"bytes_per_s": d, "level_c": _core.mc2_io_dma(c, w, d, False) / idle, "level_ab": _core.mc2_io_dma(c, w, d, True) / idle} for d in BANDWIDTHS]


def fit_dma(rows) -> tuple[float, float, float, float]:
    """(a_bus, a_bank, D₀, rms error): D₀ on a grid, the amplitudes by least squares for each."""
    best = None
    for d0 in [10e6 * 1.25**k for k in range(30)]:
        phi = [1 - math.exp(-r["bytes_per_s"] / d0) for r in rows]
        yc = [r["level_c"] - 1 for r in rows]
        a_bus = max(0.0, sum(p * y for p, y in zip(phi, yc)) / sum(p * p for p in phi))
        yb = [r["level_ab"] / r["level_c"] - 1 for r in rows]
        a_bank = max(0.0, sum(p * y for p, y in zip(phi, yb)) / sum(p * p for p in phi))
        err = sum((1 + a_bus * p - r["level_c"]) ** 2 + ((1 + a_bus * p) * (1 + a_bank * p) - r["level_ab"]) ** 2 for p, r in zip(phi, rows))
        if best is None or err < best[3]:
            best = (a_bus, a_bank, d0, err)
    a_bus, a_bank, d0, err = best
    return a_bus, a_bank, d0, math.sqrt(err / (2 * len(rows)))


def cross_core(wss: int = 512 * 1024, ways: int = 2) -> dict:
    apart = _core.mc2_io_cross_core(wss, ways, False)
    shared = _core.mc2_io_cross_core(wss, ways, True)
    hits = wss // 32 * HIT_NS
    return {"apart_ns": apart, "shared_ns": shared, "a_cpu": (shared - apart) / max(apart - hits, 1.0)}


def study_constants() -> dict:
    """Every fitted constant with what it was fitted from."""
    ipc = ipc_rows()
    fixed, per_byte = fit_sbp(ipc)
    dma = dma_rows()
    a_bus, a_bank, d0, dma_err = fit_dma(dma)
    cc = cross_core()
    return {"ipc": ipc, "sbp_fixed_ns": fixed, "sbp_ns_per_byte": per_byte, "ratios": ratios(ipc), "dma": dma, "dma_bus": a_bus, "dma_bank": a_bank, "dma_scale_bytes_per_s": d0, "dma_rms": dma_err, "cross_core": cc}
