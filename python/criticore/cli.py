"""The ``criticore`` command line (Typer + Rich)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer
from rich.console import Console

import criticore
from criticore import _core
from criticore.errors import fail
from criticore.outputs import distinct, writable, write_table, write_text
from criticore.render import render_analysis, render_simulation

app = typer.Typer(
    help="criticore: analyze, optimize, simulate, study, profile and regulate mixed-criticality multicore systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def analyze(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """MC² schedulability analysis: Levels A, B, C, the four configurations and the Level-A tables."""
    try:
        report = criticore.analyze(file)
    except criticore.InputError as e:
        fail(e)
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        render_analysis(Console(), str(file), report)


@app.command()
def check(file: Path = typer.Argument(..., help="Task-system file (TOML or JSON).")) -> None:
    """Validate a task-system file without analyzing it."""
    try:
        summary = criticore.check(file)
    except criticore.InputError as e:
        fail(e)
    print(f"{file}: ok ({len(summary['tasks'])} tasks, {len(summary['servers'])} servers, {summary['cores']} cores)")


plot_app = typer.Typer(help="Plots (PNG or SVG, by the file extension).", no_args_is_help=True)
app.add_typer(plot_app, name="plot")


def _duration(text: str, option: str, file: Path) -> int:
    try:
        ns = _core.duration_ns(text)
    except ValueError as e:
        fail(criticore.InputError(f"{file}: {option}: {e}", str(file), option, str(e)))
    if ns == 0:
        fail(criticore.InputError(f"{file}: {option}: must be positive", str(file), option, "must be positive"))
    return ns


# A bandwidth series keeps one f64 per core and bin: keep it below ~80 MB per core.
MAX_BINS = 10_000_000

SCHEDULER_HELP = "mc2, pfp, pedf, gedf, gfp or servers; default: what the file implies (servers, MC² levels, cores)."


@app.command()
def simulate(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    duration: str = typer.Option("10s", "--duration", "-d", help="Simulated time, e.g. 10s, 500ms."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed for sporadic jitter and random execution times."),
    exec_level: str = typer.Option("C", "--exec-level", help="Jobs run for their PET at this level (A, B, C, D)."),
    best_case: float = typer.Option(None, "--best-case", help="Draw execution times uniformly in [f·PET, PET] (0 ≤ f ≤ 1)."),
    regulator: str = typer.Option(None, "--regulator", "-r", help="none, memguard, mcti, mrs or monitor; default: the file's [regulation]."),
    no_memory: bool = typer.Option(False, "--no-memory", help="Ignore memory profiles (CPU-only simulation)."),
    trace: Path = typer.Option(None, "--trace", help="Write a Perfetto/Chrome trace (JSON)."),
    jobs: Path = typer.Option(None, "--jobs", help="Write job records (.parquet or .csv)."),
    bandwidth: Path = typer.Option(None, "--bandwidth", help="Write the per-core bandwidth series (.parquet or .csv, MB/s)."),
    bin_width: str = typer.Option("1ms", "--bin", help="Bin width of the bandwidth series and trace counters."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
) -> None:
    """Simulate a task system over time: deadline misses, response times, tardiness, memory stalls, regulation."""
    duration_ns = _duration(duration, "--duration", file)
    bin_ns = _duration(bin_width, "--bin", file) if (bandwidth is not None or trace is not None) else None
    if seed < 0:
        fail(criticore.InputError(f"{file}: --seed: must not be negative", str(file), "--seed", "must not be negative"))
    if bin_ns is not None and duration_ns // bin_ns > MAX_BINS:
        reason = f"{duration_ns // bin_ns:,} bins per core; use a bin of at least {duration_ns // MAX_BINS} ns"
        fail(criticore.InputError(f"{file}: --bin: {reason}", str(file), "--bin", reason))
    try:
        outputs = [(trace, "--trace"), (jobs, "--jobs"), (bandwidth, "--bandwidth")]
        distinct(outputs)
        for path, option in outputs:
            if path is not None:
                writable(path, force, option)
        run = criticore.simulation.simulate(
            file,
            duration_ns,
            scheduler=scheduler,
            seed=seed,
            exec_level=exec_level,
            best_case_fraction=best_case,
            jobs=jobs is not None,
            trace=trace is not None,
            regulator=regulator,
            memory=not no_memory,
            bin_ns=bin_ns,
        )
        if trace is not None:
            write_text(trace, run.trace, "--trace")
        outline = run.outline
        if jobs is not None:
            write_table(criticore.simulation.job_table(run, [t["name"] for t in outline["tasks"]]), jobs, "--jobs")
        if bandwidth is not None:
            import pyarrow as pa

            mb_s = run.bandwidth_mb_s(outline["line_bytes"])
            cols = {"start_ns": np.arange(mb_s.shape[1], dtype="u8") * bin_ns}
            cols.update({f"core{c}_mb_s": mb_s[c] for c in range(mb_s.shape[0])})
            write_table(pa.table(cols), bandwidth, "--bandwidth")
    except criticore.InputError as e:
        fail(e)
    if as_json:
        print(json.dumps(run.report, indent=2))
    else:
        console = Console()
        render_simulation(console, str(file), run.report)
        for label, path in (("trace", trace), ("job records", jobs), ("bandwidth series", bandwidth)):
            if path is not None:
                console.print(f"  {label}: {path}")


@plot_app.command("gantt")
def plot_gantt(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    output: Path = typer.Option(..., "--output", "-o", help="Image to write (.png or .svg)."),
    duration: str = typer.Option("200ms", "--duration", "-d", help="Simulated time to draw."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    seed: int = typer.Option(0, "--seed"),
    exec_level: str = typer.Option("C", "--exec-level"),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing image."),
) -> None:
    """Simulate and draw a Gantt chart: a row per server and per task, releases as arrows, misses as red crosses."""
    from criticore.plots import gantt

    duration_ns = _duration(duration, "--duration", file)
    if seed < 0:
        fail(criticore.InputError(f"{file}: --seed: must not be negative", str(file), "--seed", "must not be negative"))
    try:
        writable(output, force, "--output", suffixes=(".png", ".svg", ".pdf"))
        run = criticore.simulation.simulate(
            file, duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level, jobs=True, segments=True
        )
    except criticore.InputError as e:
        fail(e)
    outline = run.outline
    try:
        gantt(
            run,
            [t["name"] for t in outline["tasks"]],
            [s["name"] for s in outline["servers"]],
            outline["cores"],
            output,
            f"{file.name} — {run.report['scheduler']}, {duration}",
        )
    except OSError as e:
        reason = f"cannot write: {e.strerror or e}"
        fail(criticore.InputError(f"{output}: --output: {reason}", str(output), "--output", reason))
    print(f"wrote {output}")


@app.command()
def version() -> None:
    """Print the criticore version."""
    print(criticore.__version__)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
