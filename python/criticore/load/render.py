"""Rich output of `criticore load`."""

from __future__ import annotations

from rich.console import Console

from criticore.load.generator import PACING_TOLERANCE, LoadRun
from criticore.render import table
from criticore.units import bandwidth_text, duration_text, size_text


def render_load(console: Console, run: LoadRun, cpu: int | None) -> None:
    s = run.summary
    st = run.stats()
    where = f"cpu {cpu}" if cpu is not None else "unpinned"
    how = f"paced to {bandwidth_text(st['target_mb_s'] * 1e6)}" if "target_mb_s" in st else "unpaced"
    console.print(
        f"[bold]criticore load[/bold]: {s['reads']:,} lines read, {s['writes']:,} written in "
        f"{duration_text(s['elapsed_ns'])} ({where}, {how}, {size_text(s['buffer_bytes'])} buffer, {s['line_bytes']} B lines)"
        + (" — stopped by a signal" if s["stopped"] else "")
    )
    t = table()
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("bandwidth", bandwidth_text(st["bandwidth_mb_s"] * 1e6))
    t.add_row(f"per {duration_text(run.interval_ns)} interval p1 / p50 / p99",
              " / ".join(bandwidth_text(st[f"interval_mb_s_{p}"] * 1e6) for p in ("p1", "p50", "p99")))
    if "target_mb_s" in st:
        t.add_row("pacing error p50 / p99 / max", f"{st['error_p50']:.2%} / {st['error_p99']:.2%} / {st['error_max']:.2%}")
        t.add_row(f"intervals within ±{PACING_TOLERANCE:.0%}", f"{st['within_tolerance']:.1%}")
    if s["counter_page"]:
        t.add_row("counter page", s["counter_page"])
    c = s.get("counted")
    if c is not None:
        t.add_row("counted", f"{c['reads']:,} reads, {c['writes']:,} writes ({c['event']})")
    else:
        t.add_row("counted", "no hardware counts: no PMU here (--count EVENT for a software event)")
    console.print(t)
