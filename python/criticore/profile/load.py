"""The memory-load generator (`criticore load`): blin-bandwidth-monitor §3.1's
microbenchmark (Fig. 4), optionally paced to a target bandwidth, with the
bandwidth it achieved per report interval.

The hot loop is Rust (crates/criticore-rt/src/load.rs); this module runs it in
the calling thread and turns its report into arrays and a table. Under
``criticore regulate`` or ``criticore profile`` the generator publishes its
counts to its counter page, the software counter the regulator reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from criticore import _core

#: Share of paced intervals that must lie within this relative error (issue 10: ±2% per 1 ms).
PACING_TOLERANCE = 0.02


@dataclass
class LoadRun:
    """One run of the generator: totals and per-interval line counts."""

    summary: dict
    interval_ns: int
    target_bytes_per_s: float | None
    start_ns: np.ndarray
    reads: np.ndarray
    writes: np.ndarray

    @property
    def line_bytes(self) -> int:
        return int(self.summary["line_bytes"])

    def bandwidth(self) -> float:
        """Bytes per second over the whole run."""
        ns = self.summary["elapsed_ns"]
        return (self.summary["reads"] + self.summary["writes"]) * self.line_bytes * 1e9 / ns if ns else 0.0

    def interval_bandwidth(self) -> np.ndarray:
        """Bytes per second in each whole report interval."""
        return (self.reads + self.writes).astype(np.float64) * self.line_bytes * 1e9 / self.interval_ns

    def pacing_error(self) -> np.ndarray | None:
        """Relative error of each interval's bandwidth against the target (paced runs).

        The first interval is left out: it includes the start-up of the loop."""
        if self.target_bytes_per_s is None:
            return None
        bw = self.interval_bandwidth()[1:]
        return bw / self.target_bytes_per_s - 1.0

    def stats(self) -> dict:
        """Summary numbers: achieved MB/s, per-interval percentiles, pacing error."""
        bw = self.interval_bandwidth() / 1e6
        out = {
            "bandwidth_mb_s": self.bandwidth() / 1e6,
            "intervals": int(len(bw)),
            "interval_mb_s_p1": float(np.percentile(bw, 1)) if len(bw) else 0.0,
            "interval_mb_s_p50": float(np.percentile(bw, 50)) if len(bw) else 0.0,
            "interval_mb_s_p99": float(np.percentile(bw, 99)) if len(bw) else 0.0,
        }
        err = self.pacing_error()
        if err is not None and len(err):
            a = np.abs(err)
            out.update(
                target_mb_s=self.target_bytes_per_s / 1e6,
                error_p50=float(np.percentile(a, 50)),
                error_p99=float(np.percentile(a, 99)),
                error_max=float(a.max()),
                within_tolerance=float(np.mean(a <= PACING_TOLERANCE)),
            )
        return out

    def table(self):
        import pyarrow as pa

        bw = self.interval_bandwidth()
        return pa.table(
            {
                "start_ns": self.start_ns,
                "reads": self.reads,
                "writes": self.writes,
                "bytes_per_s": bw,
            }
        )


def run(
    *,
    reads: int = 0,
    delay: int = 0,
    bandwidth_bytes_per_s: float | None = None,
    duration_ns: int | None = None,
    cpu: int | None = None,
    buffer_bytes: int | None = None,
    line_bytes: int | None = None,
    interval_ns: int = 1_000_000,
    fresh_pages: bool = False,
    on_progress: Callable[[int, int, int], bool] | None = None,
) -> LoadRun:
    """Run the generator in this thread until ``duration_ns`` or SIGINT/SIGTERM.

    ``reads`` of every 10 lines are read, the rest written (§3.1); ``delay``
    delay-loop iterations follow each 10 lines; ``bandwidth_bytes_per_s`` paces
    instead. ``on_progress(elapsed_ns, lines, last_interval_lines)`` is called
    about every 200 ms; returning False stops the run."""
    options = {
        "reads": reads,
        "delay": delay,
        "bandwidth": bandwidth_bytes_per_s,
        "duration_ns": duration_ns,
        "cpu": cpu,
        "buffer_bytes": buffer_bytes,
        "line_bytes": line_bytes,
        "interval_ns": interval_ns,
        "fresh_pages": fresh_pages,
    }
    summary, cols = _core.load_run(options, on_progress)
    return LoadRun(
        summary=summary,
        interval_ns=interval_ns,
        target_bytes_per_s=bandwidth_bytes_per_s,
        start_ns=np.frombuffer(cols["start_ns"], dtype="<u8"),
        reads=np.frombuffer(cols["reads"], dtype="<u8"),
        writes=np.frombuffer(cols["writes"], dtype="<u8"),
    )
