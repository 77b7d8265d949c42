"""`criticore analyze` and `criticore check`."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from criticore.analysis import analyze as analyze_system
from criticore.analysis import check_sim as cs
from criticore.analysis import explain as ex
from criticore.cli_common import SCHEDULER_HELP, duration_option, fail
from criticore.errors import InputError
from criticore.render import render_analysis, render_check_sim, render_task_bounds
from criticore.simulation import run
from criticore.system import check as check_file


def analyze(
    file: Path = typer.Argument(..., help="Task-system file (TOML or JSON)."),
    scheduler: str = typer.Option(None, "--scheduler", "-s", help=SCHEDULER_HELP),
    check_sim: bool = typer.Option(False, "--check-sim", help="Also simulate the file under the same scheduler and print each bound beside the simulated maximum response (exit 1 if one is exceeded)."),
    duration: str = typer.Option("10s", "--duration", "-d", help="--check-sim: simulated time."),
    explain: str = typer.Option(None, "--explain", help="Split TASK's bound into its terms: its PETs, memory interference, cold starts, higher-priority demand, reloads, regulation stalls, blocking."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Schedulability analysis: MC² (Levels A, B, C, the four configurations, the Level-A tables) or, for other schedulers, per-task response-time bounds."""
    duration_ns = duration_option(duration, "--duration", file) if check_sim else None
    try:
        report = analyze_system(file, scheduler).json
        explained = None if explain is None else ex.explanation(str(file), report, explain)
        if check_sim:
            simulated = run.simulate(file, duration_ns, scheduler=report["scheduler"])
            report["check_sim"] = cs.rows(report, simulated.report)
            report["check_sim_chains"] = cs.chain_rows(report, simulated.report)
            report["check_sim_duration_ns"] = duration_ns
    except InputError as e:
        fail(e)
    if as_json:
        if explained is not None:
            report["explain"] = explained
        print(json.dumps(report, indent=2))
    elif explained is not None:
        ex.render_explain(Console(), str(file), report, explained)
    elif report["scheduler"] == "mc2":
        render_analysis(Console(), str(file), report)
        if check_sim:
            render_check_sim(Console(), report)
    else:
        render_task_bounds(Console(), str(file), report)
    if check_sim and cs.violated(report["check_sim"], report["check_sim_chains"]):
        raise typer.Exit(1)


def check(file: Path = typer.Argument(..., help="Task-system file (TOML or JSON).")) -> None:
    """Validate a task-system file without analyzing it."""
    try:
        summary = check_file(file)
    except InputError as e:
        fail(e)
    print(f"{file}: ok ({len(summary['tasks'])} tasks, {len(summary['servers'])} servers, {summary['cores']} cores)")
