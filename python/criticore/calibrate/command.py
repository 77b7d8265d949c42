"""`criticore calibrate`: fit the fluid memory model's DRAM constants to the
transaction model and write them as a named parameter set (the built-in one
is crates/criticore/src/model/params/imx6-transaction.toml, used by
``[platform] preset = "imx6-transaction"``)."""

from __future__ import annotations

import contextlib
import math
import sys
import time
from pathlib import Path

import typer
from rich.console import Console

from criticore._core import __version__
from criticore.calibrate import fit as F
from criticore.calibrate import fit_study as FS
from criticore.cli_common import U32_MAX, bad, fail, int_option
from criticore.units import U64_MAX
from criticore.outputs import TOML, distinct, writable, write_text
from criticore.errors import InputError

#: Obs. 1's ranges of CE and CL times as shares of SBP.
PAPER_RANGE = {"ce_send": "9.2–12.9%", "ce_receive": "29.2–40.5%", "cl_send": "2.7–5.4%", "cl_receive": "10.6–15.9%"}

#: The fluid model's assumed constants before calibration (docs/calibration.md A1, A2).
ASSUMED = (120.0, 30.0)


def _rms(errs: list[float]) -> float:
    return math.sqrt(sum(math.log1p(e) ** 2 for e in errs) / len(errs))


def parameter_set(name: str, iterations: int, runs: int, points, before, after, fitted, study: dict) -> str:
    l, r, _ = fitted
    within = lambda errs, tol: sum(abs(e) <= tol for e in errs)
    lines = [
        f"# Written by `criticore calibrate --iterations {iterations} --runs {runs}` (criticore {__version__}).",
        "# The fluid model's DRAM read latency L and row-conflict penalty R, fitted so that its",
        "# µB execution times match the transaction model's on the grid of mc2-hardware-management",
        "# §4.1 (µB 256 KiB beside three 1 MiB stress tasks; 2/4/8/16 colours × 2/8/16 ways ×",
        "# cache+bank, cache, unmanaged). The transaction model itself reproduces the paper's",
        "# 20 ms (App. B), 306 ms (Fig. 5b) and 1,159 ms (Fig. 5f) (docs/transaction-model.md).",
        f'name = "{name}"',
        "",
        "[platform.dram]",
        f'read_latency = "{l:.0f}ns"  # assumed before: {ASSUMED[0]:.0f} ns (calibration.md A1)',
        f'row_conflict = "{r:.0f}ns"  # assumed before: {ASSUMED[1]:.0f} ns (calibration.md A2)',
        "",
        "[fit]",
        f"points = {len(points)}",
        f"rms_log_error_before = {_rms(before):.4f}",
        f"rms_log_error_after = {_rms(after):.4f}",
        f"within_10_percent_before = {within(before, 0.10)}",
        f"within_10_percent_after = {within(after, 0.10)}",
        f"within_20_percent_after = {within(after, 0.20)}",
        f"max_abs_error_after = {max(abs(e) for e in after):.4f}",
        "",
        "# The study cost model's constants (docs/study-model.md), fitted to the transaction",
        "# model's versions of mc2-io-ipc-os-isolation §5 (criticore/calibrate/fit_study.py).",
        "[study]",
        f"sbp_fixed_ns = {study['sbp_fixed_ns']:.1f}  # SBP message time, Fig. 8 (assumed before: 1000)",
        f"sbp_ns_per_byte = {study['sbp_ns_per_byte']:.3f}  # (assumed before: 4)",
        f"dma_bus = {study['dma_bus']:.4f}  # Figs. 13-14, DMA elsewhere (assumed before: 0.15)",
        f"dma_bank = {study['dma_bank']:.4f}  # DMA into the task's bank (assumed before: 0.30)",
        f"dma_scale_bytes_per_s = {study['dma_scale_bytes_per_s']:.0f}  # D0 (assumed before: 1e8)",
        f"cpu_sourced_bank = {study['cross_core']['a_cpu']:.4f}  # Obs. 3, per miss (paper's 6% MOET used before)",
        "",
        "# What the model gives beside the paper's numbers (not used by the cost model, which keeps Obs. 1's midpoints).",
        "[study.check]",
        *[f"{k} = {v:.4f}  # paper {PAPER_RANGE[k]}" for k, v in study["ratios"].items()],
        f"dma_rms = {study['dma_rms']:.4f}",
    ]
    for p, b, a in zip(points, before, after):
        lines += [
            "",
            "[[fit.point]]",
            f'colours = {p.colours}\nways = {p.ways}\nisolation = "{p.isolation}"',
            f"transaction_ms = {p.loaded_ns / 1e6:.3f}",
            f"fluid_before_ms = {p.loaded_ns * (1 + b) / 1e6:.3f}",
            f"fluid_after_ms = {p.loaded_ns * (1 + a) / 1e6:.3f}",
        ]
    return "\n".join(lines) + "\n"


def plot(points, before, after, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 6))
    tx = [p.loaded_ns / 1e6 for p in points]
    for errs, label, m in ((before, "fluid, assumed L, R", "x"), (after, "fluid, calibrated", "o")):
        ax.scatter(tx, [t * (1 + e) for t, e in zip(tx, errs)], marker=m, label=label, alpha=0.8)
    top = max(tx) * 1.8
    ax.plot([0, top], [0, top], color="grey", lw=0.8)
    ax.set_xlabel("transaction model: µB time (ms, 500 iterations)")
    ax.set_ylabel("fluid model: µB time (ms)")
    ax.set_title("Fluid vs transaction on the µB grid (mc2-hw §4.1)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def command(
    output: Path = typer.Option(None, "--output", "-o", help="The parameter set to write (default: NAME.toml in the current directory; kept if it exists, unless --force). A task file loads it with preset = \"PATH\"."),
    name: str = typer.Option("imx6-transaction", "--name", help="Name recorded in the parameter set."),
    iterations: int = typer.Option(20, "--iterations", help="µB iterations per transaction-model run (at least 2)."),
    runs: int = typer.Option(1, "--runs", help="Runs per point (at least 1)."),
    plot_file: Path = typer.Option(None, "--plot", help="Also draw fluid against transaction, before and after (PNG)."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
) -> None:
    """Fit the fluid model's DRAM read latency and row-conflict penalty to the transaction model on the µB grid of mc2-hardware-management §4.1, and write them as a named parameter set."""
    started = time.perf_counter()
    output = output or Path(f"{name}.toml")
    int_option(iterations, "--iterations", output, 2, U64_MAX)
    int_option(runs, "--runs", output, 1, U32_MAX)
    try:
        writable(output, force, "--output", TOML)
        if plot_file is not None:
            writable(plot_file, force, "--plot", (".png",))
            distinct([(output, "--output"), (plot_file, "--plot")])
    except InputError as e:
        fail(e)
    err = Console(stderr=True)
    try:
        with err.status("transaction model: µB grid", spinner="dots") if err.is_terminal else contextlib.nullcontext():
            points = F.transaction_points(iterations=iterations, runs=runs)
        with err.status("fitting the fluid model", spinner="dots") if err.is_terminal else contextlib.nullcontext():
            fitted = F.fit(points)
            before = F.errors(points, *ASSUMED)
            after = F.errors(points, fitted[0], fitted[1])
        with err.status("transaction model: IPC, DMA and cross-core runs (mc2-io §5)", spinner="dots") if err.is_terminal else contextlib.nullcontext():
            study = FS.study_constants()
    except KeyboardInterrupt:
        print("interrupted; nothing written", file=sys.stderr)
        raise SystemExit(130)
    except InputError as e:
        fail(e)
    try:
        write_text(output, parameter_set(name, iterations, runs, points, before, after, fitted, study), "--output")
        if plot_file is not None:
            plot(points, before, after, plot_file)
    except InputError as e:
        fail(e)
    except OSError as e:
        bad(plot_file or output, "--plot", f"cannot write: {e.strerror or e}")
    render(Console(), points, before, after, fitted, time.perf_counter() - started, output, study)


def render(console: Console, points, before, after, fitted, seconds: float, output: Path, study: dict) -> None:
    from rich import box
    from rich.table import Table

    l, r, _ = fitted
    console.print(f"[bold]calibrate[/bold]: fluid model fitted to the transaction model on {len(points)} µB points in {seconds:.1f} s")
    t = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("", "L", "R", "rms log error", "within ±10%", "worst"):
        t.add_column(col, justify="right" if col else "left", no_wrap=True)
    for label, (ll, rr), errs in (("assumed", ASSUMED, before), ("calibrated", (l, r), after)):
        worst = max(errs, key=abs)
        t.add_row(label, f"{ll:.0f} ns", f"{rr:.0f} ns", f"{_rms(errs):.3f}", f"{sum(abs(e) <= 0.1 for e in errs)}/{len(errs)}", f"{100 * worst:+.0f}%")
    console.print(t)
    worst = max(zip(points, after), key=lambda x: abs(x[1]))
    console.print("  L: DRAM read latency, R: row-conflict penalty (docs/memory-model.md); errors: fluid / transaction − 1")
    console.print(f"  worst point after: {worst[0].colours} colours × {worst[0].ways} ways, {worst[0].isolation} ({100 * worst[1]:+.0f}%)")
    s = study
    console.print(
        f"  study constants: SBP {s['sbp_fixed_ns']:.0f} ns + {s['sbp_ns_per_byte']:.2f} ns/B (was 1000 + 4), DMA a_bus {s['dma_bus']:.2f} "
        f"a_bank {s['dma_bank']:.2f} D0 {s['dma_scale_bytes_per_s'] / 1e6:.0f} MB/s (was 0.15, 0.30, 100), cross-core {100 * s['cross_core']['a_cpu']:.1f}% (was 6%)"
    )
    console.print(f"  parameter set: {output}")
