"""`criticore import amalthea`: an Amalthea model as a task-system file."""

from __future__ import annotations

from pathlib import Path

import typer

from criticore.cli_common import fail
from criticore.errors import InputError
from criticore.imports.library import import_amalthea
from criticore.outputs import TOML, writable, write_text

import_app = typer.Typer(help="Import other tools' models as task-system files (docs/amalthea.md).", no_args_is_help=True)


@import_app.command("amalthea")
def amalthea(
    file: Path = typer.Argument(..., help="Amalthea model (.amxmi, or gzip-compressed .amxmi.gz): 0.7.x or 1.x/2.x."),
    output: Path = typer.Option(..., "--output", "-o", help="The task-system file to write (.toml); kept if it exists, unless --force."),
    scale: str = typer.Option(None, "--scale", help="Multiply execution needs by this factor (e.g. 0.7), exactly, before rounding up to whole ns."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output file (never the model)."),
) -> None:
    """Import an Amalthea (APP4MC) model: tasks, periods, deadlines, cores, priorities and PETs; prints what is not represented yet."""
    try:
        writable(output, force, "--output", TOML, inputs=[file])
        imported = import_amalthea(file, scale)
        write_text(output, imported.toml, "--output")
    except InputError as e:
        fail(e)
    print(imported.summary["line"])
    print(f"wrote {output}")
