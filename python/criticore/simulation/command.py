"""`criticore simulate` (one system, or many in parallel) and `criticore plot gantt`."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import typer
from rich.console import Console

from criticore.cli_common import MAX_CPU, SCHEDULER_HELP, bad, duration_option, fail, int_option, seed_option
from criticore.errors import InputError
from criticore.outputs import IMAGE, TABLE, TRACE, distinct, system_inputs, writable, write_table
from criticore.progress import ProgressBar
from criticore.render import render_batch, render_simulation
from criticore.simulation import batch
from criticore.simulation import run as simulate_run
from criticore.simulation.options import SimOptions, check_bins
from criticore.simulation.run import Interrupted
from criticore.system import as_system
from criticore.units import duration_text


def simulate(
    files: list[Path] = typer.Argument(..., help="Task-system file (TOML or JSON); or a folder, a glob (quoted) or several files: one summary row per system, simulated in parallel.", metavar="FILE..."),
    duration: str = typer.Option("10s", "--duration", "-d", help="Simulated time, e.g. 10s, 500ms."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed for sporadic jitter and random execution times."),
    exec_level: str = typer.Option("C", "--exec-level", help="Jobs run for their PET at this level (A, B, C, D)."),
    best_case: float = typer.Option(None, "--best-case", help="Draw execution times uniformly in [f·PET, PET] (0 ≤ f ≤ 1)."),
    drawn: bool = typer.Option(False, "--drawn", help="Draw each runnable with a `draw` (min/mean/PET, uniform or Weibull) from its distribution; the rest run their PET."),
    regulator: str = typer.Option(None, "--regulator", "-r", help="none, memguard, mcti, mrs or monitor; default: the file's [regulation]."),
    no_memory: bool = typer.Option(False, "--no-memory", help="Ignore memory profiles (CPU-only simulation)."),
    memory_model: str = typer.Option("fluid", "--memory", help="Memory model: fluid (rates solved per event, fast) or transaction (every request through LLC, bus and DRAM banks; docs/memory-model.md)."),
    quantum: str = typer.Option(None, "--quantum", help="--memory transaction: simulated time per quantum (default 20us)."),
    trace: Path = typer.Option(None, "--trace", help="Write a Perfetto/Chrome trace (JSON), streamed as the run goes."),
    jobs: Path = typer.Option(None, "--jobs", help="Write job records (.parquet or .csv), streamed as the run goes."),
    bandwidth: Path = typer.Option(None, "--bandwidth", help="Write the per-core bandwidth series (.parquet or .csv, MB/s)."),
    bin_width: str = typer.Option("1ms", "--bin", help="Bin width of the bandwidth series and trace counters."),
    table: Path = typer.Option(None, "--table", help="Several systems: write one summary row per system (.parquet or .csv)."),
    threads: int = typer.Option(None, "--threads", help="Several systems: worker threads (default: one per core)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
) -> None:
    """Simulate a task system over time: deadline misses, response times, tardiness, memory stalls, regulation. Ctrl-C stops a run and prints what was simulated so far (exit 130)."""
    first = files[0]
    duration_ns = duration_option(duration, "--duration", first)
    if memory_model not in ("fluid", "transaction"):
        reason = f"unknown memory model {memory_model!r} (expected fluid or transaction)"
        fail(InputError(f"{first}: --memory: {reason}", str(first), "--memory", reason))
    quantum_ns = duration_option(quantum, "--quantum", first) if quantum is not None else None
    seed_option(seed, first)
    options = SimOptions(duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level, best_case_fraction=best_case, drawn=drawn,
                         regulator=regulator, memory=not no_memory, memory_model=memory_model, quantum_ns=quantum_ns)
    try:
        several = batch.expand(files)
    except InputError as e:
        fail(e)
    if several is not None:
        _simulate_many(several, options, table=table, threads=threads, as_json=as_json, force=force,
                       refused=[(trace, "--trace"), (jobs, "--jobs"), (bandwidth, "--bandwidth")])
        return
    file = first
    for option, given in (("--table", table), ("--threads", threads)):
        if given is not None:
            fail(InputError(f"{file}: {option}: only for several systems", str(file), option, "only for several systems"))
    bin_ns = duration_option(bin_width, "--bin", file) if (bandwidth is not None or trace is not None) else None
    interrupted = False
    try:
        outputs = [(trace, "--trace", TRACE), (jobs, "--jobs", TABLE), (bandwidth, "--bandwidth", TABLE)]
        inputs = system_inputs(file)
        for path, option, suffixes in outputs:
            if path is not None:
                writable(path, force, option, suffixes, inputs=inputs)
        distinct([(path, option) for path, option, _ in outputs])
        if bin_ns is not None:
            check_bins(duration_ns, bin_ns, file, "--bin")
        with ProgressBar(duration_ns, f"simulating {file.name}", scale=1e9, unit=" s") as bar:
            try:
                run = simulate_run.run(as_system(file), replace(options, bin_ns=bin_ns), jobs_file=jobs, trace_file=trace,
                                       bandwidth_file=bandwidth, progress=bar.update)
            except Interrupted as stop:
                run, interrupted = stop.partial, True
    except InputError as e:
        fail(e)
    except OSError as e:
        reason = f"cannot write: {e.strerror or e}"
        where = e.filename or file
        fail(InputError(f"{where}: (output): {reason}", str(where), "(output)", reason))
    if as_json:
        print(json.dumps(run.report, indent=2))
    else:
        console = Console()
        render_simulation(console, str(file), run.report)
        if interrupted:
            console.print(f"[bold yellow]partial[/]: stopped by Ctrl-C after {duration_text(run.report['duration_ns'])} of {duration_text(duration_ns)} simulated")
        for label, path in (("trace", trace), ("job records", jobs), ("bandwidth series", bandwidth)):
            if path is not None:
                console.print(f"  {label}: {path}")
    if interrupted:
        raise typer.Exit(130)


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
    from criticore.plots import gantt  # matplotlib: loaded for this command only

    duration_ns = duration_option(duration, "--duration", file)
    seed_option(seed, file)
    try:
        writable(output, force, "--output", IMAGE, inputs=system_inputs(file))
        options = SimOptions(duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level, jobs=True, segments=True)
        run = simulate_run.run(as_system(file), options)
    except InputError as e:
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
        fail(InputError(f"{output}: --output: {reason}", str(output), "--output", reason))
    print(f"wrote {output}")


def _simulate_many(paths: list[Path], options: SimOptions, *, table: Path | None, threads: int | None, as_json: bool, force: bool,
                   refused: list[tuple[Path | None, str]]) -> None:
    """`criticore simulate` on several systems."""
    first = paths[0]
    for given, option in refused:
        if given is not None:
            bad(first, option, "one file per system is not written for several systems; use --table for their summaries")
    int_option(threads, "--threads", first, 1, MAX_CPU + 1)
    interrupted = False
    try:
        if table is not None:
            writable(table, force, "--table", TABLE, inputs=paths)
        started = time.monotonic()
        with ProgressBar(len(paths), f"simulating {len(paths):,} systems") as bar:
            try:
                rows = batch.run_many(paths, options, threads=threads, progress=bar.update)
            except Interrupted as stop:
                rows, interrupted = stop.partial, True
        wall_s = time.monotonic() - started
        if table is not None:
            write_table(rows, table, "--table")
    except InputError as e:
        fail(e)
    if as_json:
        print(json.dumps(rows.to_pylist(), indent=2))
    else:
        render_batch(Console(), rows.to_pylist(), len(paths), options.duration_ns, wall_s, table, interrupted)
    if interrupted:
        raise typer.Exit(130)

