"""Writing output files without losing what the user had: no output is ever
written over one of the command's inputs (--force or not), an existing file
only with --force, and every output only in a format it is written in."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

import typer

from criticore.errors import InputError

#: One list of suffixes per kind of output: what the writers below produce.
#: Tables are Parquet or CSV (write_table picks by suffix); anything else
#: would be CSV under a misleading name.
TABLE = (".parquet", ".csv")
#: Traces are Perfetto/Chrome JSON only.
TRACE = (".json",)
#: Images: matplotlib writes the format the suffix names.
IMAGE = (".png", ".svg", ".pdf")
#: Task-system, parameter-set and overhead-table files.
TOML = (".toml",)
#: Profile datasets (docs/format.md).
DATASET = (".parquet",)
#: Report pages (`criticore report`): one self-contained HTML file.
PAGE = (".html",)


def _refuse(path: Path, option: str, reason: str) -> InputError:
    return InputError(f"{path}: {option}: {reason}", str(path), option, reason)


def _same(a: Path, b: Path) -> bool:
    """The same file: one inode (hard or symbolic links), or one resolved path."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def not_input(path: Path, option: str, inputs: Iterable[Path | None] = ()) -> None:
    """Refuse an output that is one of the command's inputs (even with --force)."""
    for given in inputs:
        if given is not None and _same(Path(path), Path(given)):
            raise _refuse(path, option, f"is the input {given}; never written over, --force or not: choose another file")


def writable(
    path: Path, force: bool, option: str, suffixes: tuple[str, ...] | None = None, inputs: Iterable[Path | None] = ()
) -> Path:
    """Check an output before anything runs: not one of ``inputs``, not a
    folder, one of ``suffixes``, and not an existing file unless --force (or
    the user agrees at a prompt)."""
    not_input(path, option, inputs)
    if path.is_dir():
        raise _refuse(path, option, "is a folder, not a file")
    if suffixes and path.suffix.lower() not in suffixes:
        shown = path.suffix or "no suffix"
        raise _refuse(path, option, f"unsupported file type {shown} (expected {' or '.join(suffixes)})")
    if path.exists() and not force:
        if sys.stdin.isatty() and typer.confirm(f"{path} exists. Overwrite?", default=False):
            return path
        raise _refuse(path, option, "exists; pass --force to overwrite")
    if path.parent and not path.parent.exists():
        raise _refuse(path, option, f"folder {path.parent} does not exist")
    return path


def is_param_path(preset: str) -> bool:
    """A platform.preset naming a parameter file, not a built-in set (ends in
    .toml or holds a /; docs/format.md)."""
    return preset.lower().endswith(".toml") or "/" in preset or "\\" in preset


def named_files(doc: dict) -> list[tuple[str, str]]:
    """The files a task system's document names, relative to its folder:
    (field, path) for a parameter file as platform.preset and for
    regulation.overhead_table."""
    found = []
    platform, regulation = doc.get("platform"), doc.get("regulation")
    if isinstance(platform, dict) and isinstance(platform.get("preset"), str) and is_param_path(platform["preset"]):
        found.append(("preset", platform["preset"]))
    if isinstance(regulation, dict) and isinstance(regulation.get("overhead_table"), str):
        found.append(("overhead_table", regulation["overhead_table"]))
    return found


def system_inputs(file: Path | None) -> list[Path]:
    """A task-system file and the files it names (``platform.preset`` as a
    path, ``regulation.overhead_table``), relative to its folder: what a
    command reading it must not write over. A file that does not parse names
    none (its own error comes later, from the engine)."""
    if file is None:
        return []
    file = Path(file)
    found = [file]
    try:
        text = file.read_text(encoding="utf-8")
        doc = json.loads(text) if file.suffix.lower() == ".json" else tomllib.loads(text)
    except (OSError, ValueError, UnicodeDecodeError):
        return found
    if not isinstance(doc, dict):
        return found
    return found + [file.parent / name for _, name in named_files(doc)]


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
    """Parquet for .parquet, CSV for .csv (writable has refused any other suffix)."""
    suffix = path.suffix.lower()
    if suffix not in TABLE:
        raise _refuse(path, option, f"unsupported file type {suffix or 'no suffix'} (expected {' or '.join(TABLE)})")
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, path)
        else:
            import pyarrow.csv as pcsv

            pcsv.write_csv(table, path)
    except OSError as e:
        raise _refuse(path, option, f"cannot write: {e.strerror or e}") from None
