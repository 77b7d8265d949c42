"""The ``criticore`` command line (Typer + Rich)."""

from __future__ import annotations

import re

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import typer
from rich.console import Console

import criticore
from criticore import _core
from criticore.errors import duration_option, fail
from criticore.outputs import distinct, writable, write_table, write_text
from criticore.profile.cli import tables_app
from criticore.profile.command import profile_command
from criticore.profile.experiment import experiment_app
from criticore.calibrate import command as _calibrate
from criticore.calibrate import mc2_ub as _mc2_ub
from criticore.profile.plot import add_table_plot
from criticore.render import render_analysis, render_simulation, render_task_bounds

#: The top-level help; `main` appends the registered commands, so it names exactly what exists.
SUMMARY = "criticore: mixed-criticality real-time systems on multicore hardware."

app = typer.Typer(
    help=SUMMARY,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


SCHEDULER_HELP = "mc2, pfp, pedf, gedf, gfp or servers; default: what the file implies (servers, MC² levels, cores)."


@app.command()
def analyze(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    check_sim: bool = typer.Option(False, "--check-sim", help="Also simulate the file under the same scheduler and print each bound beside the simulated maximum response (exit 1 if one is exceeded)."),
    duration: str = typer.Option("10s", "--duration", "-d", help="--check-sim: simulated time."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Schedulability analysis: MC² (Levels A, B, C, the four configurations, the Level-A tables) or, for other schedulers, per-task response-time bounds."""
    from criticore import check_sim as cs
    from criticore.simulation import simulate as run_simulation

    duration_ns = _duration(duration, "--duration", file) if check_sim else None
    try:
        report = criticore.analyze(file, scheduler).json
        if check_sim and report["scheduler"] == "mc2":
            reason = "the MC² analysis gives no per-task response bounds to check; use --scheduler with another test"
            raise criticore.InputError(f"{file}: --check-sim: {reason}", str(file), "--check-sim", reason)
        if check_sim:
            run = run_simulation(file, duration_ns, scheduler=report["scheduler"])
            report["check_sim"] = cs.rows(report, run.report)
            report["check_sim_duration_ns"] = duration_ns
    except criticore.InputError as e:
        fail(e)
    if as_json:
        print(json.dumps(report, indent=2))
    elif report["scheduler"] == "mc2":
        render_analysis(Console(), str(file), report)
    else:
        render_task_bounds(Console(), str(file), report)
    if check_sim and cs.violated(report["check_sim"]):
        raise typer.Exit(1)


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
add_table_plot(plot_app)
app.add_typer(tables_app, name="tables")
experiment_app.command("mc2-ub")(_mc2_ub.command)
app.command("calibrate")(_calibrate.command)
app.add_typer(experiment_app, name="experiment")


_duration = duration_option





@app.command()
def simulate(
    files: list[Path] = typer.Argument(..., help="Task-system file (TOML or JSON); or a folder, a glob (quoted) or several files: one summary row per system, simulated in parallel.", metavar="FILE..."),
    duration: str = typer.Option("10s", "--duration", "-d", help="Simulated time, e.g. 10s, 500ms."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed for sporadic jitter and random execution times."),
    exec_level: str = typer.Option("C", "--exec-level", help="Jobs run for their PET at this level (A, B, C, D)."),
    best_case: float = typer.Option(None, "--best-case", help="Draw execution times uniformly in [f·PET, PET] (0 ≤ f ≤ 1)."),
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
    from criticore.progress import ProgressBar
    from criticore.simulation import Interrupted

    first = files[0]
    duration_ns = _duration(duration, "--duration", first)
    if memory_model not in ("fluid", "transaction"):
        reason = f"unknown memory model {memory_model!r} (expected fluid or transaction)"
        fail(criticore.InputError(f"{first}: --memory: {reason}", str(first), "--memory", reason))
    quantum_ns = _duration(quantum, "--quantum", first) if quantum is not None else None
    if seed < 0:
        fail(criticore.InputError(f"{first}: --seed: must not be negative", str(first), "--seed", "must not be negative"))
    try:
        batch = criticore.batch.expand(files)
    except criticore.InputError as e:
        fail(e)
    if batch is not None:
        criticore.batch.command(batch, duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level, best_case_fraction=best_case,
                                regulator=regulator, memory=not no_memory, memory_model=memory_model, quantum_ns=quantum_ns,
                                table=table, threads=threads, as_json=as_json, force=force,
                                refused=[(trace, "--trace"), (jobs, "--jobs"), (bandwidth, "--bandwidth")])
        return
    file = first
    for option, given in (("--table", table), ("--threads", threads)):
        if given is not None:
            fail(criticore.InputError(f"{file}: {option}: only for several systems", str(file), option, "only for several systems"))
    bin_ns = _duration(bin_width, "--bin", file) if (bandwidth is not None or trace is not None) else None
    interrupted = False
    try:
        outputs = [(trace, "--trace"), (jobs, "--jobs"), (bandwidth, "--bandwidth")]
        distinct(outputs)
        for path, option in outputs:
            if path is not None:
                writable(path, force, option)
        with ProgressBar(duration_ns, f"simulating {file.name}", scale=1e9, unit=" s") as bar:
            try:
                run = criticore.simulation.simulate(
                    file,
                    duration_ns,
                    scheduler=scheduler,
                    seed=seed,
                    exec_level=exec_level,
                    best_case_fraction=best_case,
                    regulator=regulator,
                    memory=not no_memory,
                    bin_ns=bin_ns,
                    memory_model=memory_model,
                    quantum_ns=quantum_ns,
                    jobs_file=jobs,
                    trace_file=trace,
                    bandwidth_file=bandwidth,
                    progress=bar.update,
                )
            except Interrupted as stop:
                run, interrupted = stop.partial, True
    except criticore.InputError as e:
        fail(e)
    except OSError as e:
        reason = f"cannot write: {e.strerror or e}"
        where = e.filename or file
        fail(criticore.InputError(f"{where}: (output): {reason}", str(where), "(output)", reason))
    if as_json:
        print(json.dumps(run.report, indent=2))
    else:
        console = Console()
        render_simulation(console, str(file), run.report)
        if interrupted:
            console.print(f"[bold yellow]partial[/]: stopped by Ctrl-C after {run.report['duration_ns'] / 1e9:g} s of {duration_ns / 1e9:g} s simulated")
        for label, path in (("trace", trace), ("job records", jobs), ("bandwidth series", bandwidth)):
            if path is not None:
                console.print(f"  {label}: {path}")
    if interrupted:
        raise typer.Exit(130)


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


# --------------------------------------------------------------------------- optimize and study

OPTIMIZE_DEFAULT_SCHEME = "O|C+A/B-ALL"


def _scheme_name(scheme: str, file: Path) -> str:
    """The canonical name of a scheme given on the command line (case-insensitive)."""
    try:
        return criticore.api.scheme_name(scheme, str(file), "--scheme")
    except criticore.InputError as e:
        fail(e)
        raise  # not reached: fail exits


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
    from collections import Counter

    from rich.markup import escape

    from criticore.render import table as new_table

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


@app.command()
def optimize(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    scheme: str = typer.Option(OPTIMIZE_DEFAULT_SCHEME, "--scheme", help="One of the nine schemes of mc2-io-ipc-os-isolation §6.1."),
    output: Path = typer.Option(None, "--output", "-o", help="Write the file with the allocation, cores and buffer placements (same format as FILE)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random bank choices of R|R."),
    as_json: bool = typer.Option(False, "--json", help="Print the optimizer's report as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output file."),
) -> None:
    """Three-phase optimizer (§6.1): pack Level-A/B tasks, place buffers by scheme, split the LLC ways.

    With -o, writes FILE with the cores, buffer placements and LLC ways filled in (nothing is
    written when the system is not schedulable under the scheme; the exit code is 0 either way)."""
    name = _scheme_name(scheme, file)
    if not 0 <= seed < 2**64:
        fail(criticore.InputError(f"{file}: --seed: must be between 0 and 2^64 − 1", str(file), "--seed", "must be between 0 and 2^64 − 1"))
    try:
        if output is not None:
            suffix = file.suffix.lower()
            writable(output, force, "--output", suffixes=(suffix,) if suffix in (".toml", ".json") else None)
            distinct([(file, "FILE"), (output, "--output")])
        text, report_json = _core.optimize(criticore.read_input(file), str(file), None, name, seed)
        report = json.loads(report_json)
        if output is not None and report.get("schedulable"):
            write_text(output, text, "--output")
    except criticore.InputError as e:
        fail(e)
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


study_app = typer.Typer(help="Schedulability studies (mc2-io-ipc-os-isolation §6): run and report.", no_args_is_help=True)
app.add_typer(study_app, name="study")


def _study_fail(out: Path, field: str, reason: str) -> None:
    fail(criticore.InputError(f"{out}: {field}: {reason}", str(out), field, reason))


@study_app.command("run")
def study_run(
    scenarios: list[str] = typer.Option(
        None, "--scenarios", help="Filter like criticality=C-Light,period=Long (repeat a key for 'any of') or ids like 0,5,10-19; repeatable (union). Default: all 648."
    ),
    quick: bool = typer.Option(False, "--quick", help="Six diverse scenarios (every Table 3 choice, Fig. 15's three), U = 0.5…16 in steps of 0.5; under a minute; writes the report."),
    output: Path = typer.Option(None, "--output", "-o", help="Study folder (default: study-results, or study-quick with --quick). Rerun to resume."),
    seed: int = typer.Option(0, "--seed", help="Seed of the whole study; the same seed gives the same results on any backend."),
    utilization: str = typer.Option(None, "--utilization", help="System-utilization grid START:STOP:STEP or a list, multiples of 0.25 (default 0.25:10:0.25)."),
    half_width: float = typer.Option(None, "--half-width", help="Target half-width of each schedulability estimate (default 0.05)."),
    max_systems: int = typer.Option(None, "--max-systems", help="Most task systems per point (default 400)."),
    batch: int = typer.Option(None, "--batch", help="Task systems generated between two precision checks (default 50)."),
    dask: str = typer.Option(None, "--dask", help="Run on Dask: 'local' (a LocalCluster) or a scheduler address such as tcp://host:8786."),
    workers: int = typer.Option(None, "--workers", help="Worker processes of --dask local (default: one per core)."),
    chunk: int = typer.Option(None, "--chunk", help="Points per chunk (kernel call or Dask task); does not change results."),
    no_report: bool = typer.Option(False, "--no-report", help="Do not write report.md and the plots at the end."),
    preset: str = typer.Option("imx6", "--preset", help="Platform of the generated systems: imx6 (the study's assumed cost constants) or imx6-transaction (fitted by `criticore calibrate`)."),
    force: bool = typer.Option(False, "--force", help="Replace a study with other parameters (or other files) in the output folder."),
) -> None:
    """Run or resume a schedulability study: scenarios × utilization sweep × nine schemes, to Parquet."""
    from criticore import study, study_report

    out = output or Path("study-quick" if quick else "study-results")
    base = study.quick_params(seed) if quick else study.StudyParams(seed=seed)
    try:
        ids = tuple(study.select_scenarios(scenarios)) if scenarios else (base.scenario_ids or tuple(range(study.scenario_count())))
    except ValueError as e:
        _study_fail(out, "--scenarios", str(e))
    try:
        points = tuple(study.parse_grid(utilization)) if utilization is not None else base.points
    except ValueError as e:
        _study_fail(out, "--utilization", str(e))
    params = study.StudyParams(
        seed=seed,
        scenario_ids=ids,
        points=points,
        half_width=base.half_width if half_width is None else half_width,
        z=base.z,
        batch=base.batch if batch is None else batch,
        max_systems=base.max_systems if max_systems is None else max_systems,
        preset=preset,
    )
    console = Console(stderr=True)
    try:
        summary = study.run_study(out, params, force=force, dask=dask, workers=workers, chunk_points=chunk, console=console)
    except criticore.InputError as e:
        fail(e)
    except KeyboardInterrupt:
        print(f"interrupted; finished chunks are kept in {out}/results — rerun the same command to resume", file=sys.stderr)
        raise SystemExit(130)
    except RuntimeError as e:  # a Dask worker or the kernel failed: keep what is done
        _study_fail(out, "--dask" if dask else "(study)", f"{str(e).splitlines()[0] if str(e) else type(e).__name__}; finished chunks are kept, rerun to resume")
    stopped = len(summary.stopped)
    print(
        f"{out}: {summary.scenarios} scenarios, {summary.points_done} points "
        f"({summary.points_evaluated_now} in this run, {summary.points_skipped} skipped after {stopped} early stops), "
        f"{summary.systems:,} task systems, {summary.seconds:.1f} s on {summary.backend}"
    )
    if not no_report:
        try:
            path = study_report.write_report(out)
        except criticore.InputError as e:
            fail(e)
        print(f"report: {path}")


@study_app.command("report")
def study_report_command(
    folder: Path = typer.Argument(..., help="Study folder written by `criticore study run`."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Only report.md, no PNGs."),
) -> None:
    """Schedulability curves per scenario (PNG), SUA per scheme and the SUA ratio tables (report.md)."""
    from criticore import study_report

    if not folder.is_dir():
        _study_fail(folder, "FOLDER", "not a folder" if folder.exists() else "does not exist")
    try:
        path = study_report.write_report(folder, plots=not no_plots)
    except criticore.InputError as e:
        fail(e)
    print(f"wrote {path}" + ("" if no_plots else f" and {folder / 'plots'}/"))


@app.command()
def load(
    reads: int = typer.Option(0, "--reads", "-r", help="Lines read of every 10 (the rest are written), blin-bandwidth-monitor §3.1."),
    delay: int = typer.Option(0, "--delay", help="Delay-loop iterations after every 10 lines (Fig. 4)."),
    bandwidth: str = typer.Option(None, "--bandwidth", "-b", help="Pace to this bandwidth, e.g. 500MB/s (instead of the delay)."),
    duration: str = typer.Option(None, "--duration", "-d", help="Run this long, e.g. 10s (default: until Ctrl-C or SIGTERM)."),
    cpu: int = typer.Option(None, "--cpu", "-c", help="Pin to this CPU."),
    buffer: str = typer.Option(None, "--buffer", help="Buffer size, e.g. 128MiB (default: 4x the LLC, at least 64MiB)."),
    interval: str = typer.Option("1ms", "--interval", help="Report interval for the achieved bandwidth."),
    fresh_pages: bool = typer.Option(False, "--fresh-pages", help="Drop the buffer's pages at every pass, so each page faults again (a kernel-counted memory event)."),
    pattern: str = typer.Option("stream", "--pattern", help="Walk the buffer in address order (stream) or in a fixed random order, each line once per pass (random)."),
    count: str = typer.Option("auto", "--count", help="Also count a perf event over the run: auto (LLC misses, reads and write-backs, where there is a PMU), none, or an event such as raw:0x17,0x18 or sw:page-faults."),
    log: Path = typer.Option(None, "--log", help="Write the per-interval bandwidth (.parquet or .csv)."),
    sweep: bool = typer.Option(False, "--sweep", help="Instead: bandwidth over the reads x delay grid (Fig. 5) and loaded latency against 0-3 loads."),
    plot: Path = typer.Option(None, "--plot", "-o", help="--sweep: draw the grid and the latency curve (.png or .svg)."),
    data: Path = typer.Option(None, "--data", help="--sweep: write the grid (.parquet or .csv) and the latency curve beside it (NAME.latency.EXT)."),
    point: str = typer.Option("100ms", "--point", help="--sweep: length of each grid point's run."),
    file: Path = typer.Option(None, "--file", help="Periodic mode, like rt-app: run --task of this task-system file, a job of its work every period."),
    task: str = typer.Option(None, "--task", help="Periodic mode: the task to run."),
    jobs: int = typer.Option(None, "--jobs", help="Periodic mode: stop after this many jobs."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
) -> None:
    """Generate memory load: the microbenchmark of blin-bandwidth-monitor §3.1, optionally paced."""
    from criticore.profile import load as gen
    from criticore.profile.load_render import render_load

    where = Path("criticore load")

    def parse(fn, value, option):
        try:
            return fn(value)
        except ValueError as e:
            fail(criticore.InputError(f"{where}: {option}: {e}", str(where), option, str(e)))

    if sweep:
        _load_sweep(where, cpu, plot, data, _duration(point, "--point", where), buffer, as_json, force, parse)
        return
    if file is not None or task is not None:
        _load_periodic(file, task, jobs, _duration(duration, "--duration", where) if duration else None, cpu, log, as_json, force)
        return
    try:
        if log is not None:
            writable(log, force, "--log")
        console = Console(stderr=as_json)
        status = None
        if not as_json and console.is_terminal:
            status = console.status("loading…")
            status.start()

        def progress(elapsed_ns: int, lines: int, last: int) -> bool:
            if status is not None:
                status.update(f"{elapsed_ns / 1e9:.1f} s, {lines:,} lines, last interval {last:,} lines")
            return True

        try:
            run = gen.run(
                reads=reads,
                delay=delay,
                bandwidth_bytes_per_s=parse(_core.bandwidth_bytes_per_s, bandwidth, "--bandwidth") if bandwidth else None,
                duration_ns=_duration(duration, "--duration", where) if duration else None,
                cpu=cpu,
                buffer_bytes=parse(_core.size_bytes, buffer, "--buffer") if buffer else None,
                interval_ns=_duration(interval, "--interval", where),
                fresh_pages=fresh_pages,
                pattern=pattern,
                count=count,
                on_progress=progress,
            )
        finally:
            if status is not None:
                status.stop()
        if log is not None:
            write_table(run.table(), log, "--log")
    except criticore.InputError as e:
        fail(e)
    if as_json:
        print(json.dumps({**run.summary, **run.stats()}, indent=2))
    else:
        render_load(console, run, cpu)
        if log is not None:
            console.print(f"  per-interval log: {log}")


def _load_periodic(file: Path | None, task: str | None, jobs: int | None, duration_ns: int | None, cpu: int | None, log: Path | None, as_json: bool, force: bool) -> None:
    from criticore.profile import load as gen

    if file is None or task is None:
        missing = "--file" if file is None else "--task"
        fail(criticore.InputError(f"criticore load: {missing}: the periodic mode needs both --file and --task", "criticore load", missing, "the periodic mode needs both --file and --task"))
    log, force = gen.job_log(log, force)
    try:
        if log is not None:
            writable(log, force, "--log")
        criticore.check(file)
        run = gen.run_periodic(str(file), task, jobs=jobs, duration_ns=duration_ns, cpu=cpu)
        if log is not None:
            write_table(run.table(), log, "--log")
    except criticore.InputError as e:
        fail(e)
    st = run.stats()
    if as_json:
        print(json.dumps(st, indent=2))
        return
    console = Console()
    console.print(
        f"[bold]{file}[/bold] task {task}: {st['jobs']} jobs, {st['deadline_misses']} deadline misses; response p50 {st['response_ms_p50']:.3f} ms, "
        f"max {st['response_ms_max']:.3f} ms; CPU per job {st['exec_ms_mean']:.3f} ms"
    )
    for n in st["notes"]:
        console.print(f"  note: {n}")
    if log is not None:
        console.print(f"  job records: {log}")


def sweep_table(grid: dict, victim: int):
    """The bandwidth grid of `criticore load --sweep`: a row per read ratio, a column per delay."""
    from criticore.render import table

    t = table(f"Bandwidth alone on cpu {victim} (GB/s): reads:writes of 10 lines x delay-loop iterations")
    t.add_column("r:w")
    delays = sorted(set(grid["delay"].tolist()))
    for d in delays:
        t.add_column(str(d), justify="right")
    for r in sorted(set(grid["reads"].tolist())):
        m = grid["reads"] == r
        by = dict(zip(grid["delay"][m].tolist(), grid["bytes_per_s"][m].tolist()))
        t.add_row(f"{r}:{10 - r}", *(f"{by[d] / 1e9:.2f}" for d in delays))
    return t


def _load_sweep(where: Path, cpu: int | None, plot: Path | None, data: Path | None, point_ns: int, buffer: str | None, as_json: bool, force: bool, parse) -> None:
    from rich.progress import Progress

    from criticore.profile import sweep as sw

    victim = 0 if cpu is None else cpu
    latency_data = None if data is None else data.with_name(f"{data.stem}.latency{data.suffix}")
    try:
        outputs = [(plot, "--plot"), (data, "--data"), (latency_data, "--data")]
        distinct(outputs)
        for path, option in outputs:
            if path is not None:
                writable(path, force, option)
        buffer_bytes = parse(_core.size_bytes, buffer, "--buffer") if buffer else None
        console = Console(stderr=as_json)
        load_cpus = sw.load_cpus_for(victim)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("bandwidth grid", total=len(sw.READS) * len(sw.DELAYS))
            grid = sw.bandwidth_grid(victim, point_ns=point_ns, buffer_bytes=buffer_bytes, on_point=lambda i, n: progress.update(task, completed=i))
            task2 = progress.add_task("loaded latency", total=1 + 5 * len(load_cpus))
            curve = sw.latency_curve(victim, load_cpus, point_ns=2 * point_ns, on_point=lambda i, n: progress.update(task2, completed=i, total=n))
        import pyarrow as pa

        if data is not None:
            write_table(pa.table(grid), data, "--data")
            write_table(pa.table(curve), latency_data, "--data")
        if plot is not None:
            sw.plot(grid, curve, plot)
    except criticore.InputError as e:
        fail(e)
    bad = sw.non_monotone(grid)
    if as_json:
        print(json.dumps({"grid": {k: v.tolist() for k, v in grid.items()}, "latency": {k: v.tolist() for k, v in curve.items()}, "non_monotone": bad}, indent=2))
        return
    console.print(sweep_table(grid, victim))
    peak = float(grid["bytes_per_s"].max()) / 1e6
    console.print(f"  peak {peak:,.0f} MB/s; " + ("bandwidth falls monotonically with the delay for every ratio" if not bad else f"[yellow]rises with the delay at[/yellow] {bad} (noise above 5%?)"))
    alone = curve["latency_ns"][curve["loads"] == 0]
    console.print(f"  victim latency alone {float(alone[0]):.1f} ns per access; with loads on cpus {load_cpus}: " + ", ".join(
        f"{lat:.1f} ns at {bw / 1e6:,.0f} MB/s" for n, lat, bw in zip(curve["loads"], curve["latency_ns"], curve["load_bytes_per_s"]) if n > 0
    ))
    if len(load_cpus) < 3:
        console.print(f"  (this machine has {os.cpu_count()} CPUs: {len(load_cpus)} load core(s) besides the victim, not 3)")
    for label, path in (("plot", plot), ("grid", data), ("latency curve", latency_data)):
        if path is not None:
            console.print(f"  {label}: {path}")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
def regulate(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Task-system file: tasks with `command`s and a \\[regulation] table."),
    mode: str = typer.Option(None, "--mode", "-m", help="memguard, mcti, mrs or monitor; default: the file's \\[regulation] kind."),
    duration: str = typer.Option(None, "--duration", "-d", help="Stop after this long, e.g. 10s (default: when every process ended)."),
    period: str = typer.Option(None, "--period", help="Regulation period, e.g. 1ms (default: the file's)."),
    poll: str = typer.Option(None, "--poll", help="Also read every counter this often (default: on overflow signals and period starts)."),
    counter: str = typer.Option("auto", "--counter", help="auto, shm, llc-misses, raw:0x17,0x18 or sw:page-faults (docs/runtime.md)."),
    throttle: str = typer.Option("signal", "--throttle", help="signal (pidfd SIGSTOP/SIGCONT) or freezer (cgroup)."),
    attach: list[str] = typer.Option(None, "--attach", help="PID=TASK: regulate a running process as that task (repeatable)."),
    task: str = typer.Option(None, "--task", help="The task that the command after -- runs."),
    log: Path = typer.Option(None, "--log", help="Write the per-period log (.parquet or .csv)."),
    trace: Path = typer.Option(None, "--trace", help="Write a Perfetto trace (JSON), the simulator's layout."),
    output: Path = typer.Option(None, "--output", help="Append the commands' output to this file (default: discarded)."),
    fifo: int = typer.Option(None, "--fifo", help="SCHED_FIFO priority of the regulator (1-99; default 90 as root, so what it regulates cannot delay it; 0 = leave as is)."),
    no_lead: bool = typer.Option(False, "--no-lead", help="Stop a group when its count reaches the budget, not earlier by the learnt stop lag (docs/runtime.md)."),
    regulator_cpu: int = typer.Option(None, "--regulator-cpu", help="Pin the regulator to this CPU, best a best-effort one (default: wherever it wakes)."),
    compare_sim: bool = typer.Option(False, "--compare-sim", help="Then simulate the file as long, under the same regulation, and print measured vs simulated: per periodic `criticore load --file F --task T` task its jobs, misses and response times, per group its use of the budget and time stopped; at the file's \\[regulation] period, so not with --period (docs/runtime.md)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
) -> None:
    """Regulate real processes in user space: MemGuard, MCTI, MRS or the bandwidth monitor on the file's tasks."""
    from rich.live import Live

    from criticore import regulate as reg
    from criticore.regulate.compare import RunClock, check_simulable, compare_with_simulation
    from criticore.regulate.render import live_table, render_compare, render_run

    durations = {}
    for value, option in ((duration, "--duration"), (period, "--period"), (poll, "--poll")):
        durations[option] = _duration(value, option, file) if value is not None else None
    pairs = []
    for item in attach or []:
        pid, _, name = item.partition("=")
        if not pid.isdigit() or not name:
            fail(criticore.InputError(f"{file}: --attach: expected PID=TASK, got {item!r}", str(file), "--attach", f"expected PID=TASK, got {item!r}"))
        pairs.append((int(pid), name))
    command = None
    if ctx.args:
        if not task:
            fail(criticore.InputError(f"{file}: --task: name the task the command after -- runs", str(file), "--task", "name the task the command after -- runs"))
        command = (task, list(ctx.args))
    try:
        outputs = [(log, "--log"), (trace, "--trace")]
        distinct(outputs)
        for path, option in outputs:
            if path is not None:
                writable(path, force, option)
        outline = criticore.check(file)
        if compare_sim:
            check_simulable(file, mode, durations["--period"])
        console = Console()
        live = None if as_json or not console.is_terminal else Live(console=console, auto_refresh=False)

        clock = RunClock() if compare_sim else None

        def show(snapshot: dict) -> bool:
            if clock is not None:
                clock.seen(snapshot)
            if live is not None:
                live.update(live_table(snapshot, 0, outline["line_bytes"]), refresh=True)
            return True

        if live is not None:
            live.start()
        job_dir = tempfile.TemporaryDirectory(prefix="criticore-jobs-") if compare_sim else None
        try:
            run = reg.run(
                file,
                mode=mode,
                duration_ns=durations["--duration"],
                period_ns=durations["--period"],
                poll_ns=durations["--poll"],
                counter=counter,
                throttle=throttle,
                attach=pairs,
                command=command,
                output=str(output) if output else None,
                fifo_priority=(90 if os.geteuid() == 0 else None) if fifo is None else (fifo or None),
                on_snapshot=show,
                lead=not no_lead,
                job_log_dir=job_dir.name if job_dir else None,
                regulator_cpu=regulator_cpu,
            )
        finally:
            if live is not None:
                live.stop()
        if log is not None:
            write_table(run.table(), log, "--log")
        if trace is not None:
            write_text(trace, run.trace_json(), "--trace")
        compared = None
        if job_dir is not None:
            with job_dir:
                compared = compare_with_simulation(file, run, Path(job_dir.name), clock)
    except criticore.InputError as e:
        fail(e)
    if as_json:
        extra = {} if compared is None else {"compare_sim": compared}
        print(json.dumps({**run.summary, "per_group": run.per_group(), "monitor": run.monitor_summary(), **extra}, indent=2))
    else:
        render_run(console, str(file), run, outline["line_bytes"])
        if compared is not None:
            render_compare(console, compared)
        for label, path in (("per-period log", log), ("trace", trace)):
            if path is not None:
                console.print(f"  {label}: {path}")


app.command("profile", context_settings={"allow_extra_args": True, "ignore_unknown_options": False})(profile_command)


@app.command()
def version() -> None:
    """Print the criticore version."""
    print(criticore.__version__)


#: An unescaped "[" that Rich would read as a markup tag (a letter, #, / or @ after it).
_TAG = re.compile(r"(?<!\\)\[(?=[A-Za-z#/@])")


def escape_help(command) -> None:
    """Escape Rich markup in every help text of the command tree, so that
    "[regulation]" or "[f·PET, PET]" print as written (Typer renders help as
    Rich markup)."""
    if command.help:
        command.help = _TAG.sub(r"\\[", command.help)
    for p in command.params:
        if getattr(p, "help", None):
            p.help = _TAG.sub(r"\\[", p.help)
    for sub in getattr(command, "commands", {}).values():
        escape_help(sub)


def summarize(command) -> None:
    """The top-level help: the summary and every registered command, in order."""
    command.help = f"{SUMMARY} Commands: {', '.join(command.commands)}."


def main() -> None:
    command = typer.main.get_command(app)
    summarize(command)
    escape_help(command)
    command()


if __name__ == "__main__":
    main()
