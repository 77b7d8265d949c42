"""`criticore report`: one self-contained HTML page of a task system."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from criticore.cli_common import SCHEDULER_HELP, duration_option, fail, seed_option
from criticore.errors import InputError
from criticore.outputs import PAGE, system_inputs, writable, write_text
from criticore.progress import ProgressBar
from criticore.report.library import DEFAULT_DURATION, bin_ns_of, check_run, gather, window_of
from criticore.simulation.options import SimOptions
from criticore.simulation.run import Interrupted
from criticore.system import as_system
from criticore.units import duration_text


def report(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    output: Path = typer.Option(..., "--output", "-o", help="The page to write (.html): one file, no server or network needed to view it."),
    duration: str = typer.Option(DEFAULT_DURATION, "--duration", "-d", help="Simulated time (and, with --run, how long the commands run), e.g. 10s."),
    window: str = typer.Option(None, "--window", help="Time the Gantt chart shows from 0 (default: two of the longest period, at most 1s)."),
    run: bool = typer.Option(False, "--run", help="Also run the file's commands under its \\[regulation] (as `criticore regulate`) and set the measured response times beside the simulated ones."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed for sporadic jitter and random execution times."),
    exec_level: str = typer.Option("C", "--exec-level", help="Jobs run for their PET at this level (A, B, C, D)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing page (never an input)."),
) -> None:
    """Write one self-contained HTML page: the system's outline, the analysis' bounds, simulated (and with --run measured) response times, a Gantt chart with the regulator's stalls and the deadlines, bandwidth and regulation states over time."""
    duration_ns = duration_option(duration, "--duration", file)
    seed_option(seed, file)
    try:
        # Checked before anything runs: an .html page, never over an input.
        writable(output, force, "--output", PAGE, inputs=system_inputs(file))
        system = as_system(file)
        window_ns = window_of(system, duration_ns, window, "--window")
        if run:
            check_run(system, "--run")
        options = SimOptions(duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level, bin_ns=bin_ns_of(duration_ns),
                             jobs=True, segments=True)
        if run:
            print(f"running {file.name}'s commands for {duration_text(duration_ns)} after the simulation", file=sys.stderr)
        with ProgressBar(duration_ns, f"simulating {file.name}", scale=1e9, unit=" s") as bar:
            page = gather(system, options, window_ns, run, progress=bar.update)
        write_text(output, page.html, "--output")
    except InputError as e:
        fail(e)
    except Interrupted:
        print("stopped by Ctrl-C: no page written", file=sys.stderr)
        raise typer.Exit(130) from None
    rep = page.simulation.report
    ok = None if page.analysis is None else page.analysis["schedulable"]
    verdict = "no analysis" if page.analysis is None else "not decided" if ok is None else "schedulable" if ok else "NOT schedulable"
    print(f"wrote {output}: {duration_text(rep['duration_ns'])} simulated under {rep['scheduler']}, "
          f"{rep['deadline_misses']:,} deadline misses of {rep['released']:,} jobs; analysis: {verdict}")
