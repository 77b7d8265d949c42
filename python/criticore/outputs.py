"""Writing output files without losing what the user had."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from criticore import InputError


def writable(path: Path, force: bool, option: str) -> Path:
    """Refuse to overwrite an existing file unless --force, or the user agrees at a prompt."""
    if path.exists() and not force:
        if sys.stdin.isatty() and typer.confirm(f"{path} exists. Overwrite?", default=False):
            return path
        raise InputError(
            f"{path}: {option}: exists; pass --force to overwrite", str(path), option, "exists; pass --force to overwrite"
        )
    if path.parent and not path.parent.exists():
        raise InputError(
            f"{path}: {option}: folder {path.parent} does not exist", str(path), option, f"folder {path.parent} does not exist"
        )
    return path


def write_table(table, path: Path) -> None:
    """Parquet for .parquet, CSV otherwise."""
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, path)
