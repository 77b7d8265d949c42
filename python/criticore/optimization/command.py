"""`criticore optimize`: the optimizer's verdict, the LLC split, cores and buffer placements."""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

import criticore._core as _core
import criticore.units as units
from criticore.cli_common import fail, seed_option
from criticore.errors import InputError, input_error
from criticore.optimization import DEFAULT_SCHEME
from criticore.outputs import is_param_path, named_files, system_inputs, writable, write_text
from criticore.render import table as new_table
from criticore.system import TaskSystem, read_input


def _scheme_name(scheme: str, file: Path) -> str:
    """The canonical name of a scheme given on the command line (case-insensitive)."""
    try:
        return units.scheme_name(scheme, str(file), "--scheme")
    except InputError as e:
        fail(e)


def rebase_paths(text: str, file: Path, output: Path) -> str:
    """The written file's relative paths (a parameter file as platform.preset,
    an overhead table) rewritten relative to ``output``'s folder, so that they
    name the same files as in ``file`` wherever -o writes it."""
    try:
        doc = json.loads(text) if file.suffix.lower() == ".json" else tomllib.loads(text)
    except ValueError:
        return text
    for key, value in named_files(doc) if isinstance(doc, dict) else []:
        if os.path.isabs(value):
            continue
        new = Path(os.path.relpath(file.parent.absolute() / value, output.parent.absolute())).as_posix()
        if not is_param_path(new):
            new = f"./{new}"  # still a path, not the name of a built-in preset
        if new == value:
            continue
        # The value as written (TOML basic or literal string, or JSON), in place: the rest of the text stays as it is.
        quoted = rf"(?:\"{re.escape(json.dumps(value)[1:-1])}\"|'{re.escape(value)}')"
        text = re.sub(rf'("?\b{key}"?\s*[=:]\s*){quoted}', lambda m: m.group(1) + json.dumps(new), text)
    return text


def _curve_notice(report: dict) -> str | None:
    """One line on tasks without a cost curve, whose PETs no way split changes (docs/optimizer.md)."""
    missing = report.get("without_cost_curve") or []
    if not missing:
        return None
    if not report.get("cost_curves"):
        return "no task has a cost curve (task.cost), so the LLC ways change no PET"
    return f"{len(missing)} Level-A/B/C task(s) have no cost curve (task.cost): the ways change none of their PETs"


def _render_optimize(console: Console, file: str, report: dict) -> None:
    """Summary of `criticore optimize`: verdict, the LLC split, cores, buffer placements."""
    scheme = report.get("scheme", "?")
    tasks = report.get("tasks") or []
    curves = report.get("cost_curves", 1)
    notice = _curve_notice(report)
    if not report.get("schedulable"):
        console.print(f"{escape(file)} — {scheme}: [bold red]not schedulable[/] ({report.get('reason') or 'no reason given'})")
        if notice:
            console.print(f"  note: {notice}", markup=False)
        return
    sol = report.get("solution") or {}
    console.print(f"{escape(file)} — {scheme}: [bold green]schedulable[/]")
    console.print(f"  total Level-C utilization (minimized): {sol.get('objective', float('nan')):.4f}")
    if notice:
        console.print(f"  note: {notice}", markup=False)
    ways = sol.get("per_core_ways") or []
    table = new_table("cores")
    # Without cost curves no way split is written: no ways column.
    cols = ("core", "LLC ways", "Level A", "Level B", "tasks") if curves else ("core", "Level A", "Level B", "tasks")
    for col in cols:
        table.add_column(col, justify="right" if col != "tasks" else "left")
    for p, w in enumerate(ways):
        mine = [t for t in tasks if t.get("core") == p]
        a = sum(1 for t in mine if t.get("level") == "A")
        b = sum(1 for t in mine if t.get("level") == "B")
        table.add_row(str(p), *([str(w)] if curves else []), str(a), str(b), ", ".join(t["name"] for t in mine))
    console.print(table)
    if curves:
        console.print(
            f"  Level-C/OS region: {sol.get('level_c_ways', 0)} ways; lock region: {sol.get('lock_ways', 0)} ways "
            f"({sol.get('locked_buffers', 0)} CL buffers locked)"
        )
    ipc = Counter(t["ipc"] for t in tasks if t.get("ipc"))
    io = Counter(t["io"] for t in tasks if t.get("io"))
    if ipc:
        console.print("  IPC buffers: " + ", ".join(f"{k} {n}" for k, n in sorted(ipc.items())))
    if io:
        console.print("  I/O buffers: " + ", ".join(f"{k} {n}" for k, n in sorted(io.items())))


def _render_labels(console: Console, file: str, report: dict) -> None:
    """Summary of the label placement: the objective before and after, the moves."""
    what = "worst bound / deadline" if report["objective"] == "response" else "worst chain reaction time bound"
    unit = (lambda v: f"{v:.4f}") if report["objective"] == "response" else units.duration_text

    def show(score: dict) -> str:
        text = unit(score["worst"])
        return text + (f" ({score['unbounded']} unbounded)" if score["unbounded"] else "")

    console.print(f"{escape(file)} — label placement (pfp): {what} {show(report['before'])} → {show(report['after'])}", markup=True)
    moves = report["moves"]
    console.print(f"  {len(moves)} label(s) moved, {report['analyses']} placement(s) analyzed (budget {report['budget']})", markup=False)
    for m in moves[:20]:
        console.print(f"  {m['label']}: {m['from']} → {m['to']}", markup=False)
    if len(moves) > 20:
        console.print(f"  … and {len(moves) - 20} more (--json lists all)", markup=False)


def optimize(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    scheme: str = typer.Option(DEFAULT_SCHEME, "--scheme", help=f"One of the nine schemes of mc2-io-ipc-os-isolation §6.1 (any case): {', '.join(units.scheme_names())}."),
    output: Path = typer.Option(None, "--output", "-o", help="Write the file with the allocation, cores and buffer placements (same format as FILE)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random bank choices of R|R."),
    as_json: bool = typer.Option(False, "--json", help="Print the optimizer's report as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output file."),
    objective: str = typer.Option(None, "--objective", help="Scratchpad platforms: what label placement minimizes, response (worst bound / deadline; the default) or chain (worst chain reaction time)."),
    budget: int = typer.Option(None, "--budget", help="Scratchpad platforms: placements the analysis judges at most (default 100)."),
) -> None:
    """Three-phase optimizer (mc2-io-ipc-os-isolation §6.1): pack Level-A/B tasks, place buffers by scheme, split the LLC ways.
    On a scratchpad platform ([[platform.memory]]): label placement instead, labels moved between memories within their sizes.

    With -o, writes FILE with the cores, buffer placements and LLC ways filled in (nothing is written when the system is not schedulable under the scheme; the exit code is 0 either way); on a scratchpad platform, with each label's memory."""
    name = _scheme_name(scheme, file)
    seed_option(seed, file)
    err = Console(stderr=True)
    try:
        if output is not None:
            suffix = file.suffix.lower()
            writable(output, force, "--output", suffixes=(suffix,) if suffix in (".toml", ".json") else None, inputs=system_inputs(file))
        # Label placement on a scratchpad platform can take a while: progress, Ctrl-C.
        with err.status("optimizing", spinner="dots") as status:

            def progress(done: int, total: int) -> None:
                status.update(f"placing labels: {done} of at most {total} placements analyzed")

            text, report_json = _core.optimize(read_input(file), str(file), None, name, seed, objective, budget, progress)
        report = json.loads(report_json)
        placed = report["kind"] == "labels" or report.get("schedulable")
        if output is not None and placed:
            write_text(output, rebase_paths(text, file, output), "--output")
    except InputError as e:
        fail(e)
    except KeyboardInterrupt:
        err.print("interrupted: nothing written")
        raise SystemExit(130) from None
    if report["kind"] == "labels":
        if as_json:
            print(json.dumps(report, indent=2))
        else:
            _render_labels(Console(), str(file), report)
        if output is not None:
            print(f"  wrote {output}", file=sys.stderr if as_json else sys.stdout)
        return
    if as_json:
        print(json.dumps(report, indent=2))
        notice = _curve_notice(report)
        if notice:
            print(f"note: {notice}", file=sys.stderr)
    else:
        _render_optimize(Console(), str(file), report)
    if output is not None:
        note = f"wrote {output}" if report.get("schedulable") else f"{output} not written: not schedulable under {name}"
        print(f"  {note}", file=sys.stderr if as_json else sys.stdout)
