"""Amalthea (APP4MC) models as criticore task systems: the engine reads the
model, maps it and writes the file; here it becomes a :class:`TaskSystem`
beside the summary and the intermediate model (docs/amalthea.md)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import criticore._core as _core
from criticore.system import TaskSystem, read_input


@dataclass(frozen=True)
class Imported:
    """An imported model: ``system`` (what ``toml`` holds, parsed),
    ``summary`` (``tasks``, ``cores``, ``not_represented``: [kind, count]
    pairs, ``line``: the one line the CLI prints) and ``model`` (the
    intermediate model as read: tasks with stimuli, runnables with execution
    needs and label accesses, labels, cores with clocks, memories, event
    chains; indices point into its own lists)."""

    system: TaskSystem
    toml: str
    summary: dict[str, Any]
    model: dict[str, Any]


def import_amalthea(path: str | os.PathLike[str], scale: float | str | None = None) -> Imported:
    """Import an Amalthea model (``.amxmi`` or ``.amxmi.gz``), execution
    needs multiplied by ``scale`` (e.g. 0.7, as the published WATERS 2017
    analyses do). Raises :class:`~criticore.InputError` naming the file, the
    field and the reason."""
    path = Path(path)
    text, summary, model = _core.import_amalthea(read_input(path), str(path), None if scale is None else str(scale))
    system = TaskSystem._wrap(_core.System.parse(text.encode("utf-8"), f"{path}.toml"))
    return Imported(system, text, json.loads(summary), json.loads(model))
