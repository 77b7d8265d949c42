"""`criticore experiment mc2-ub`: the µB experiments of
mc2-hardware-management §4 on the transaction memory model.

§4.1 (Figs. 5 and 10): the µB task's WCET and ACET for 1–16 colours ×
{1, 2, 4, 8, 16} ways, WSS 256 KiB and 32 KiB, in the four isolation
configurations; §4.2 / Appendix A (Figs. 6–7): caller and victim with and
without OS isolation. Outputs, in OUT_DIR: ``mc2-ub.parquet`` (one row per
point), ``fig5-256KiB.png`` / ``fig10-32KiB.png`` (one per WSS, the paper's
eight insets) and ``os-isolation.parquet``. The summary sets the model beside
every number the paper's text gives.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer
from rich.console import Console

import criticore._core as _core
from criticore.cli_common import U32_MAX, bad, fail, int_option
from criticore.units import U64_MAX
from criticore.outputs import writable, write_table
from criticore.errors import InputError

#: Inset order of Fig. 5: (configuration, paper's WCET inset, ACET inset).
CONFIGS = (("idle", "a", "b"), ("cache+bank", "c", "d"), ("cache", "e", "f"), ("unmanaged", "g", "h"))
TITLES = {"idle": "Idle", "cache+bank": "Loaded, cache isolation, bank isolation", "cache": "Loaded, cache isolation, unmanaged banks", "unmanaged": "Loaded, unmanaged cache and banks"}
WAYS = (1, 2, 4, 8, 16)
KIB = 1024


def _ints(text: str, option: str, low: int, high: int) -> list[int]:
    """"1-16" or "1,2,4" → sorted distinct ints in [low, high]."""
    out: set[int] = set()
    try:
        for part in text.split(","):
            a, _, b = part.strip().partition("-")
            lo, hi = int(a), int(b or a)
            out.update(range(lo, hi + 1))
    except ValueError:
        bad(Path("mc2-ub"), option, f"expected numbers like 1-16 or 1,2,4, got {text!r}")
    if not out or min(out) < low or max(out) > high:
        bad(Path("mc2-ub"), option, f"values must be {low}–{high}, got {text!r}")
    return sorted(out)


def _sizes(text: str) -> list[int]:
    try:
        return [int(_core.size_bytes(s.strip())) for s in text.split(",")]
    except ValueError as e:
        bad(Path("mc2-ub"), "--wss", str(e).split(": ")[-1])


def points(wss: list[int], colours: list[int], ways: list[int], configs: list[str]) -> list[tuple[int, int, int, str]]:
    return [(w, c, k, iso) for w in wss for iso in configs for k in ways for c in colours]


def run(pts, iterations: int, runs: int, seed: int, replacement: str, on_chunk=None, chunk: int = 8) -> list[dict]:
    """The sweep in chunks (progress, Ctrl-C between chunks)."""
    rows: list[dict] = []
    for i in range(0, len(pts), chunk):
        rows += _core.mc2_ub(pts[i : i + chunk], iterations=iterations, runs=runs, seed=seed, replacement=replacement)
        if on_chunk:
            on_chunk(len(rows))
    return rows


def _table(rows: list[dict]):
    import pyarrow as pa

    cols = ("wss_bytes", "isolation", "colours", "ways", "wcet_ns", "acet_ns", "llc_miss_ratio", "requests", "references")
    return pa.table({c: [r[c] for r in rows] for c in cols})


def _lookup(rows: list[dict]) -> dict:
    return {(r["wss_bytes"], r["isolation"], r["colours"], r["ways"]): r for r in rows}


def observations(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(what, paper, model) for every number of §4.1's text the grid covers."""
    at = _lookup(rows)
    k = 256 * KIB
    out = []

    def ms(iso, c, w, key="wcet_ns"):
        r = at.get((k, iso, c, w))
        return None if r is None else r[key] / 1e6

    def add(what, paper, value):
        if value is not None:
            out.append((what, paper, value))

    b = ms("idle", 8, 8, "acet_ns")
    add("(b) idle, 8 colours × 8 ways, ACET", "306 ms", b and f"{b:.0f} ms")
    f = ms("cache", 16, 2, "acet_ns")
    add("(f) cache isolation, 16 × 2, ACET", "1,159 ms", f and f"{f:.0f} ms")
    h = ms("unmanaged", 16, 8, "acet_ns")
    add("(h) unmanaged, 16 × 8, ACET", "952 ms", h and f"{h:.0f} ms")
    e, g = ms("cache", 4, 16), ms("unmanaged", 4, 16)
    add("Obs. 1: WCET (g) / (e) at 4 × 16", "≈ 5 (a 400% reduction)", e and g and f"{g / e:.1f}")
    e2, e16 = ms("cache", 2, 16), ms("cache", 16, 16)
    add("Obs. 2: (e) 2 → 4 colours × 16 ways / 4 → 16", "large / none", e and e2 and e16 and f"{e2 / e:.1f}× / {e16 / e:.2f}×")
    w16, c16 = ms("cache", 2, 16), ms("cache", 16, 2)
    add("Obs. 3: (e) 16 colours × 2 ways / 2 × 16", "> 1 (somewhat)", w16 and c16 and f"{c16 / w16:.3f}")
    c_small, e_small = ms("cache+bank", 2, 2), ms("cache", 2, 2)
    add("Obs. 4: (e) / (c) at 2 × 2 and at 4 × 16", "large / ≈ 1", c_small and e_small and ms("cache+bank", 4, 16) and e and f"{e_small / c_small:.2f} / {e / ms('cache+bank', 4, 16):.2f}")
    return out


def plot(rows: list[dict], wss: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    at = _lookup(rows)
    colours = sorted({r["colours"] for r in rows if r["wss_bytes"] == wss})
    ways = sorted({r["ways"] for r in rows if r["wss_bytes"] == wss})
    fig, axes = plt.subplots(4, 2, figsize=(10, 12), sharex=True)
    markers = dict(zip(WAYS, "*os^D"))
    for row, (iso, wi, ai) in enumerate(CONFIGS):
        for col, (key, inset, label) in enumerate((("wcet_ns", wi, "WCET"), ("acet_ns", ai, "ACET"))):
            ax = axes[row][col]
            for w in ways:
                ys = [at[(wss, iso, c, w)][key] / 1e6 if (wss, iso, c, w) in at else float("nan") for c in colours]
                ax.plot(colours, ys, marker=markers.get(w, "."), label=f"Way={w}")
            ax.set_title(f"({inset}) {TITLES[iso]}, {label}", fontsize=9)
            ax.set_ylabel("ms")
            ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("colours")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"µB task, WSS {wss // KIB} KiB (transaction model, mc2-hardware-management Fig. {5 if wss >= 256 * KIB else 10})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def command(
    wss: str = typer.Option("256KiB,32KiB", "--wss", help="Working-set sizes, comma-separated (Figs. 5 and 10: 256KiB,32KiB)."),
    colours: str = typer.Option("1-16", "--colours", help="LLC colours of the µB task: a range or list, 1–16."),
    ways: str = typer.Option("1,2,4,8,16", "--ways", help="LLC ways of the µB task: a range or list, 1–16."),
    isolation: str = typer.Option("idle,cache+bank,cache,unmanaged", "--isolation", help="Configurations: idle, cache+bank, cache, unmanaged."),
    iterations: int = typer.Option(20, "--iterations", help="µB iterations simulated per run (at least 2); times are reported for the paper's 500."),
    runs: int = typer.Option(3, "--runs", help="Runs per point, at least 1 (WCET = the largest, ACET = the mean)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the random line orders and replacement."),
    replacement: str = typer.Option("pseudo-random", "--replacement", help="LLC replacement: pseudo-random (the PL310's default) or lru."),
    os: bool = typer.Option(True, "--os/--no-os", help="Also run §4.2 / Appendix A (OS isolation)."),
    output: Path = typer.Option(Path("mc2-ub"), "--output", "-o", help="Folder for mc2-ub.parquet, the figures and os-isolation.parquet."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
) -> None:
    """mc2-hardware-management §4 on the transaction model: µB WCET/ACET over colours × ways in the four isolation configurations (Figs. 5, 10), OS isolation (Figs. 6–7), and the paper's numbers beside the model's."""
    started = time.perf_counter()
    int_option(seed, "--seed", Path("mc2-ub"), 0, U64_MAX)
    int_option(iterations, "--iterations", Path("mc2-ub"), 2, U64_MAX)
    int_option(runs, "--runs", Path("mc2-ub"), 1, U32_MAX)
    sizes = _sizes(wss)
    configs = [c.strip() for c in isolation.split(",")]
    for c in configs:
        if c not in TITLES:
            bad(Path("mc2-ub"), "--isolation", f"unknown configuration {c!r} (idle, cache+bank, cache, unmanaged)")
    pts = points(sizes, _ints(colours, "--colours", 1, 16), _ints(ways, "--ways", 1, 16), configs)
    if output.exists() and not output.is_dir():
        bad(output, "--output", "is a file, not a folder")
    figures = {w: output / (f"fig5-{w // KIB}KiB.png" if w >= 256 * KIB else f"fig10-{w // KIB}KiB.png") for w in sizes}
    paths = [output / "mc2-ub.parquet", *figures.values()] + ([output / "os-isolation.parquet"] if os else [])
    try:
        if output.is_dir():
            for p in paths:
                writable(p, force, "--output")
    except InputError as e:
        fail(e)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    err = Console(stderr=True)
    done = 0
    try:
        with Progress(TextColumn("µB points"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
            task = bar.add_task("points", total=len(pts))

            def on_chunk(n: int) -> None:
                nonlocal done
                done = n
                bar.update(task, completed=n)

            rows = run(pts, iterations, runs, seed, replacement, on_chunk)
            os_rows = _core.mc2_os(iterations=iterations, runs=runs, seed=seed) if os else []
    except KeyboardInterrupt:
        print(f"interrupted after {done} of {len(pts)} points; nothing written", file=sys.stderr)
        raise SystemExit(130)
    except InputError as e:
        fail(e)
    try:
        output.mkdir(parents=True, exist_ok=True)
        write_table(_table(rows), paths[0], "--output")
        for w, p in figures.items():
            plot(rows, w, p)
        if os:
            import pyarrow as pa

            write_table(pa.Table.from_pylist(os_rows), output / "os-isolation.parquet", "--output")
    except InputError as e:
        fail(e)
    except OSError as e:
        bad(output, "--output", f"cannot write: {e.strerror or e}")
    render(Console(), rows, os_rows, iterations, runs, time.perf_counter() - started, paths)


def render(console: Console, rows: list[dict], os_rows: list[dict], iterations: int, runs: int, seconds: float, paths: list[Path]) -> None:
    from rich import box
    from rich.table import Table

    refs = sum(r["references"] for r in rows)
    console.print(
        f"[bold]µB experiments[/bold] (mc2-hardware-management §4, transaction model): {len(rows)} points × {runs} run(s) × "
        f"{iterations} iterations, {refs / 1e6:.0f} M references in {seconds:.1f} s"
    )
    t = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("what", overflow="fold")
    t.add_column("paper", overflow="fold")
    t.add_column("model", justify="right", no_wrap=True)
    for what, paper, model in observations(rows):
        t.add_row(what, paper, model)
    if os_rows:
        off, on = (next(r for r in os_rows if r["os_isolation"] == v) for v in (False, True))
        for who in ("caller", "victim"):
            cut = 1 - on[f"{who}_wcet_ns"] / off[f"{who}_wcet_ns"]
            t.add_row(f"OS isolation: {who}'s WCET cut", "≈ 20%", f"{100 * cut:.0f}%")
    if t.row_count:
        console.print(t)
    console.print("  times for the paper's 500 iterations; WCET = largest, ACET = mean over the runs")
    console.print(f"  data and figures: {', '.join(map(str, paths))}")
