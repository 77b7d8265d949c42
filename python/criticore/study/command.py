"""`criticore study run` and `criticore study report`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from criticore.cli_common import MAX_CPU, U32_MAX, bad, fail, int_option
from criticore.units import U64_MAX
from criticore.errors import InputError
from criticore.study.catalogue import parse_grid, scenario_count, select_scenarios
from criticore.study.parameters import StudyParams, quick_params
from criticore.study.report import write_report
from criticore.study.run import run_study


study_app = typer.Typer(help="Schedulability studies (mc2-io-ipc-os-isolation §6): run and report.", no_args_is_help=True)


def _study_fail(out: Path, field: str, reason: str) -> None:
    bad(out, field, reason)


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
    out = output or Path("study-quick" if quick else "study-results")
    for value, option, low, high in ((seed, "--seed", 0, U64_MAX), (max_systems, "--max-systems", 1, U32_MAX), (batch, "--batch", 1, U32_MAX),
                                     (workers, "--workers", 1, MAX_CPU + 1), (chunk, "--chunk", 1, U32_MAX)):
        int_option(value, option, out, low, high)
    base = quick_params(seed) if quick else StudyParams(seed=seed)
    try:
        ids = tuple(select_scenarios(scenarios)) if scenarios else (base.scenario_ids or tuple(range(scenario_count())))
    except ValueError as e:
        _study_fail(out, "--scenarios", str(e))
    try:
        points = tuple(parse_grid(utilization)) if utilization is not None else base.points
    except ValueError as e:
        _study_fail(out, "--utilization", str(e))
    params = StudyParams(
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
        summary = run_study(out, params, force=force, dask=dask, workers=workers, chunk_points=chunk, console=console)
    except InputError as e:
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
            path = write_report(out)
        except InputError as e:
            fail(e)
        print(f"report: {path}")


@study_app.command("report")
def study_report_command(
    folder: Path = typer.Argument(..., help="Study folder written by `criticore study run`."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Only report.md, no PNGs."),
) -> None:
    """Schedulability curves per scenario (PNG), SUA per scheme and the SUA ratio tables (report.md)."""
    if not folder.is_dir():
        _study_fail(folder, "FOLDER", "not a folder" if folder.exists() else "does not exist")
    try:
        path = write_report(folder, plots=not no_plots)
    except InputError as e:
        fail(e)
    print(f"wrote {path}" + ("" if no_plots else f" and {folder / 'plots'}/"))
