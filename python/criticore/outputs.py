"""Writing output files without losing what the user had."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from criticore.errors import InputError


def _refuse(path: Path, option: str, reason: str) -> InputError:
    return InputError(f"{path}: {option}: {reason}", str(path), option, reason)


def writable(path: Path, force: bool, option: str, suffixes: tuple[str, ...] | None = None) -> Path:
    """Refuse to overwrite an existing file unless --force, or the user agrees at a prompt."""
    if path.is_dir():
        raise _refuse(path, option, "is a folder, not a file")
    if suffixes and path.suffix.lower() not in suffixes:
        raise _refuse(path, option, f"unsupported file type (expected {', '.join(suffixes)})")
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


def distinct(paths: list[tuple[Path | None, str]]) -> None:
    """Two options must not name the same output file."""
    seen: dict[Path, str] = {}
    for path, option in paths:
        if path is None:
            continue
        key = path.resolve()
        if key in seen:
            raise _refuse(path, option, f"is also the {seen[key]} output")
        seen[key] = option


def write_text(path: Path, text: str, option: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise _refuse(path, option, f"cannot write: {e.strerror or e}") from None


def write_table(table, path: Path, option: str = "--jobs") -> None:
    """Parquet for .parquet, CSV otherwise."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, path)
        else:
            import pyarrow.csv as pcsv

            pcsv.write_csv(table, path)
    except OSError as e:
        raise _refuse(path, option, f"cannot write: {e.strerror or e}") from None
