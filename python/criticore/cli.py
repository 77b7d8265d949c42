"""The ``criticore`` command line (Typer + Rich)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

import criticore
from criticore.errors import fail
from criticore.render import render_analysis

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
    print(f"{file}: ok ({summary['tasks']} tasks on {summary['cores']} cores)")


@app.command()
def version() -> None:
    """Print the criticore version."""
    print(criticore.__version__)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
