"""`criticore plot table`: an overhead table drawn like blin-bandwidth-monitor
Fig. 6 (overhead against global bandwidth, per phase), with the profiled
observations and the fitted curves when the profile dataset is given."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import typer

import criticore._core as _core
from criticore.cli_common import fail
from criticore.errors import InputError
from criticore.monitor import dataset as ds
from criticore.monitor import tables
from criticore.monitor.tables import BEYOND, step_mb_s
from criticore.monitor.tables_command import _degree
from criticore.outputs import IMAGE, writable
from criticore.system import read_input


def _bad(file: Path, field: str, reason: str) -> InputError:
    return InputError(f"{file}: {field}: {reason}", str(file), field, reason)


def read_table_file(path: Path) -> dict:
    """An overhead-table file (docs/format.md): task, sample_ns, shift, rows (phases × entries)."""
    raw = read_input(path)
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise _bad(path, "(file)", f"invalid TOML: {str(e).splitlines()[0]}") from None
    try:
        sample_ns = _core.duration_ns(str(doc.get("sample", "50us")))
    except ValueError as e:
        raise _bad(path, "sample", str(e)) from None
    shift = doc.get("shift", 10)
    if not isinstance(shift, int) or isinstance(shift, bool) or not 0 <= shift < 64 or sample_ns <= 0:
        raise _bad(path, "shift", "expected an integer between 0 and 63")
    phases = doc.get("phase")
    if not isinstance(phases, list) or not phases:
        raise _bad(path, "phase", "expected at least one [[phase]] table")
    rows = []
    for i, p in enumerate(phases):
        row = p.get("overhead") if isinstance(p, dict) else None
        if not isinstance(row, list) or not row or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row):
            raise _bad(path, f"phase[{i}].overhead", "expected a non-empty array of numbers")
        rows.append(np.asarray(row, dtype=float))
    return {"task": str(doc.get("task", "")), "sample_ns": sample_ns, "shift": shift, "rows": rows}


def draw_table(doc: dict, path: Path, tables=None, title: str | None = None) -> None:
    """One panel per phase: the table's entries (a step per 2^shift bytes per
    sample); with ``tables`` (:class:`criticore.monitor.tables.Tables` rebuilt
    from the dataset), the observations (ObsB, Ovd) by read ratio, the fitted
    curves over their domain (to 5% beyond their largest observation) and the
    envelope before packing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    n = len(rows)
    cols = 1 if n == 1 else 2
    fig, axes = plt.subplots((n + cols - 1) // cols, cols, figsize=(5.6 * cols, 3.6 * ((n + cols - 1) // cols)), squeeze=False, layout="constrained")
    step = step_mb_s(doc["sample_ns"], doc["shift"])
    cmap = plt.get_cmap("viridis")
    for p, ax in enumerate(axes.ravel()):
        if p >= n:
            ax.set_visible(False)
            continue
        row = rows[p]
        x = np.arange(len(row) + 1) * step
        ax.stairs(row, x, color="black", linewidth=1.4, label="table" + (" (packed)" if tables is not None and tables.packing else ""))
        if tables is not None and p < tables.profile.n_phases:
            prof = tables.profile
            ax.stairs(tables.unpacked[p], x, color="0.45", linewidth=1.0, linestyle="--", label="envelope before packing")
            reads = prof.reads
            keys = sorted(set(prof.keys))  # group ids index these (tables.curve_groups)
            for c in tables.curves[p]:
                r = keys[c.group][0]
                xs = np.linspace(c.lo, c.hi * (1 + BEYOND), 60)
                ax.plot(xs, c(xs), color=cmap(r / 10), linewidth=0.7, alpha=0.8)
            sc = ax.scatter(prof.obs_mb_s[p], prof.ovd[p], c=reads, cmap=cmap, vmin=0, vmax=10, s=9, edgecolors="none", zorder=3, label="observations (ObsB, Ovd)")
            if p == 0:
                fig.colorbar(sc, ax=axes.ravel().tolist(), label="load reads per 10 lines", shrink=0.6)
        ax.set_xlim(0, len(row) * step)
        ax.set_ylim(bottom=0)
        ax.set_title(f"phase {p + 1}", fontsize=10)
        ax.set_xlabel("global bandwidth (MB/s)")
        ax.set_ylabel("overhead")
        ax.grid(alpha=0.3)
        if p == 0:
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(title or f"Overhead table of {doc['task']!r} (cf. blin-bandwidth-monitor Fig. 6)", fontsize=11)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_table(
    table: Path = typer.Argument(..., help="Overhead-table file (.toml, docs/format.md)."),
    output: Path = typer.Option(..., "--output", "-o", help="Image to write (.png, .svg or .pdf)."),
    dataset: Path = typer.Option(None, "--dataset", help="The profile dataset it was built from: adds the observations and the fitted curves."),
    degree: str = typer.Option("auto", "--degree", help="With --dataset: the degree the table was built with, if it was given (default: chosen again)."),
    no_packing: bool = typer.Option(False, "--no-packing", help="With --dataset: the table was built with --no-packing."),
    no_lift: bool = typer.Option(False, "--no-lift", help="With --dataset: the table was built with --no-lift."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing image."),
) -> None:
    """Draw an overhead table like Fig. 6 of blin-bandwidth-monitor: overhead against bandwidth, per phase."""
    deg = _degree(degree, table)
    try:
        writable(output, force, "--output", IMAGE, inputs=[table, dataset])
        doc = read_table_file(table)
        built = None
        if dataset is not None:
            prof = tables.profile_from_dataset(ds.read(dataset), str(dataset))
            if prof.n_phases != len(doc["rows"]):
                raise _bad(dataset, "phase", f"{prof.n_phases} phases, but {table} has {len(doc['rows'])}")
            built = tables.build(prof, doc["sample_ns"], doc["shift"], deg, packing=not no_packing, lift=not no_lift)
        draw_table(doc, output, built)
    except InputError as e:
        fail(e)
    except OSError as e:
        reason = f"cannot write: {e.strerror or e}"
        fail(_bad(output, "--output", reason))
    print(f"wrote {output}")


def add_table_plot(plot_app: typer.Typer) -> None:
    """Register `criticore plot table` on the CLI's plot group."""
    plot_app.command("table")(plot_table)
