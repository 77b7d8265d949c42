"""Task systems as Python objects.

A :class:`TaskSystem` wraps the engine's model (``criticore._core.System``):
it is built from the file's own fields (docs/format.md), so a system written
in Python and the same system in a file are validated by the same code and
fail with the same one-line :class:`~criticore.InputError`. Its views
(:class:`Platform`, :class:`Task`, :class:`Server`, …) are read from the
engine's parsed model, in SI units (``period_ns``, ``size_bytes``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Union

import criticore._core as _core
from criticore.errors import InputError, input_error

def read_input(path: str | os.PathLike[str]) -> bytes:
    """Read a task-system file, turning OS errors into an InputError."""
    if not isinstance(path, (str, os.PathLike)):
        raise input_error(PYTHON, "path", f"expected the path of a task-system file, got {type(path).__name__}")
    path = Path(path)
    try:
        return path.read_bytes()
    except OSError as e:
        reason = e.strerror or str(e)
        raise InputError(f"{path}: (file): cannot read: {reason}", str(path), "(file)", f"cannot read: {reason}") from None


def check(path: str | os.PathLike[str]) -> dict:
    """Parse and validate a task-system file; returns its outline (cores, tasks, servers)."""
    return json.loads(_core.check(read_input(path), str(path)))


#: The label errors give for a system built in Python (pass ``name=`` to choose one).
PYTHON = "<python>"


@dataclass(frozen=True)
class Platform:
    """The platform as the engine reads it (presets filled in)."""

    cores: int
    llc_size_bytes: int
    llc_ways: int
    llc_colors: int
    line_bytes: int
    dram_banks: int
    bank_size_bytes: int
    arbiter: str
    bus_bytes_per_s: int
    #: The cores' clock (``platform.clock``), if given.
    clock_hz: int | None = None
    #: Instructions per cycle (``platform.instructions_per_cycle``), exactly, if given.
    instructions_per_cycle: Fraction | None = None
    #: A scratchpad platform's memories by name (``[[platform.memory]]``); empty: LLC and DRAM.
    memories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "memories", tuple(self.memories))
        if self.instructions_per_cycle is not None and not isinstance(self.instructions_per_cycle, Fraction):
            object.__setattr__(self, "instructions_per_cycle", Fraction(*self.instructions_per_cycle))


@dataclass(frozen=True)
class Task:
    """One task as the engine reads it. ``pet_ns`` maps level (A–D) to its
    provisioned execution time; levels not given are filled as the file rules
    say (docs/format.md)."""

    name: str
    level: str | None
    criticality: int
    core: int | None
    server: str | None
    period_ns: int
    deadline_ns: int
    offset_ns: int
    priority: int | None
    pet_ns: Mapping[str, int]
    pet_unmanaged_ns: Mapping[str, int] | None
    wss_bytes: int | None
    has_cost_curve: bool
    #: A load with no jobs (``arrival = "background"``): its period and PETs are the stand-in.
    background: bool = False
    #: Named steps of every job in order, as (name, PET ns); empty for a job of one piece.
    runnables: tuple[tuple[str, int], ...] = ()
    #: Its runnables' label reads and writes per run (a scratchpad platform's ``reads``, ``writes``), in runnable order.
    label_accesses: tuple[LabelAccess, ...] = ()
    #: Where a job may be preempted: "preemptive", "cooperative" (between runnables) or "non-preemptive".
    preemption: str = "preemptive"
    #: OSEK's multiple-activation limit: a release finding this many jobs active is lost (None: no limit).
    activation_limit: int | None = None
    #: When its jobs read and write: "implicit" (copies at start and finish), "explicit" (where each runnable accesses) or "let" (release, period end).
    communication: str = "implicit"
    #: Implicit communication's copies, part of the PET: non-preemptive work at a job's start and end
    #: (on a scratchpad platform, derived from the labels an implicit or LET task reads and writes).
    copy_in_ns: int = 0
    copy_out_ns: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "runnables", tuple(tuple(r) for r in self.runnables))
        object.__setattr__(self, "label_accesses", tuple(a if isinstance(a, LabelAccess) else LabelAccess(**a) for a in self.label_accesses))

    def utilization(self, level: str = "C") -> float:
        """PET at ``level`` over the period."""
        return self.pet_ns[level] / self.period_ns


@dataclass(frozen=True)
class Label:
    """A label (``[[label]]``) of a scratchpad platform and the memory it is placed in."""

    name: str
    size_bytes: int
    memory: str


@dataclass(frozen=True)
class LabelAccess:
    """A runnable's reads and writes of one label per run."""

    runnable: str
    label: str
    reads: int
    writes: int


@dataclass(frozen=True)
class Chain:
    """A cause-effect chain: each task reads what the one before it wrote."""

    name: str
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class Server:
    """One server (MRS periodic or CBS) as the engine reads it."""

    name: str
    core: int
    kind: str
    period_ns: int
    budget_ns: int
    priority: int
    memory_budget: int | None


@dataclass(frozen=True)
class Allocation:
    """LLC ways, page colours and DRAM banks per partition (``core0``, ``levelC``, ``os``…)."""

    llc_ways: Mapping[str, int]
    llc_colors: Mapping[str, list[int]]
    banks: Mapping[str, list[int]]
    os_isolation: bool


@dataclass(frozen=True)
class Regulation:
    """The memory regulator the file asks for and its replenishment period."""

    kind: str
    period_ns: int


class TaskSystem:
    """A task system: platform, tasks, servers, allocation, regulation, devices.

    Fields are the file's (docs/format.md), given as dicts and lists:
    durations as strings with a unit (``"10ms"``), sizes as ``"256KiB"``. The
    file's arrays of tables ``[[task]]``, ``[[server]]`` and ``[[device]]``
    are the arguments ``tasks``, ``servers`` and ``devices``, and errors name
    them as the file does (``task[3].period``), so one message means one fix
    in both. ``name`` is what errors give as the file.

    >>> TaskSystem({"cores": 2}, tasks=[{"name": "t", "core": 0, "period": "10ms", "pet": "2ms"}])
    <TaskSystem <python>: 2 cores, 1 task, 0 servers>
    """

    def __init__(
        self,
        platform: Mapping[str, Any],
        tasks: Sequence[Mapping[str, Any]] = (),
        servers: Sequence[Mapping[str, Any]] = (),
        allocation: Mapping[str, Any] | None = None,
        regulation: Mapping[str, Any] | None = None,
        devices: Sequence[Mapping[str, Any]] = (),
        *,
        name: str = PYTHON,
    ) -> None:
        document: dict[str, Any] = {"platform": platform}
        for key, value in (("server", servers), ("task", tasks), ("device", devices)):
            if value:
                document[key] = list(value) if isinstance(value, (list, tuple)) else value
        if allocation is not None:
            document["allocation"] = allocation
        if regulation is not None:
            document["regulation"] = regulation
        self._init(_core.System.from_dict(document, name), None)

    def _init(self, core: _core.System, path: Path | None) -> None:
        self._core = core
        #: The file it was loaded from (None when built in Python).
        self.path = path

    @classmethod
    def _wrap(cls, core: _core.System, path: Path | None = None) -> TaskSystem:
        system = cls.__new__(cls)
        system._init(core, path)
        return system

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TaskSystem:
        """Read and validate a task-system file (TOML, or JSON by suffix)."""
        path = Path(path)
        return cls._wrap(_core.System.parse(read_input(path), str(path)), path)

    @classmethod
    def from_dict(cls, document: Mapping[str, Any], name: str = PYTHON) -> TaskSystem:
        """A system from a whole document: the file's keys (``platform``, ``task``, …)."""
        if not isinstance(document, Mapping):
            raise input_error(name, "(top level)", f"expected a dict, got {type(document).__name__}")
        return cls._wrap(_core.System.from_dict(document, name))

    def to_dict(self) -> dict[str, Any]:
        """The document, fields as written (a fresh copy: editing it changes nothing here)."""
        return json.loads(self._core.document())

    def replace(self, **fields: Any) -> TaskSystem:
        """A new system with top-level fields replaced: ``platform``, ``tasks``,
        ``servers``, ``allocation``, ``regulation``, ``devices`` (None drops one)."""
        keys = {"platform": "platform", "tasks": "task", "servers": "server", "allocation": "allocation", "regulation": "regulation", "devices": "device"}
        document = self.to_dict()
        for arg, value in fields.items():
            if arg not in keys:
                raise TypeError(f"replace() got an unexpected field {arg!r} (expected one of: {', '.join(keys)})")
            if value is None:
                document.pop(keys[arg], None)
            else:
                document[keys[arg]] = value
        system = TaskSystem.from_dict(document, self.name)
        system.path = self.path
        return system

    def text(self, format: str = "toml") -> str:
        """The system as file text, ``"toml"`` or ``"json"`` (comments of a loaded file are not kept)."""
        return self._core.text(format)

    def write(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the system to ``path`` (TOML, or JSON for ``.json``). An existing
        file is kept unless ``overwrite=True``."""
        path = Path(path)
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
        text = self.text("json" if path.suffix.lower() == ".json" else "toml")
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        return path

    @property
    def name(self) -> str:
        """What errors give as the file: its path, or ``name=`` (default ``<python>``)."""
        return self._core.file

    @cached_property
    def _view(self) -> dict[str, Any]:
        return json.loads(self._core.view())

    @cached_property
    def platform(self) -> Platform:
        return Platform(**self._view["platform"])

    @cached_property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(Task(**t) for t in self._view["tasks"])

    @cached_property
    def servers(self) -> tuple[Server, ...]:
        return tuple(Server(**s) for s in self._view["servers"])

    @cached_property
    def labels(self) -> tuple[Label, ...]:
        """A scratchpad platform's labels (``[[label]]``), each with its size and memory."""
        return tuple(Label(**x) for x in self._view["labels"])

    @cached_property
    def chains(self) -> tuple[Chain, ...]:
        """The cause-effect chains (``[[chain]]``), each its tasks by name, cause to effect."""
        return tuple(Chain(c["name"], tuple(c["tasks"])) for c in self._view["chains"])

    @cached_property
    def allocation(self) -> Allocation | None:
        a = self._view["allocation"]
        return None if a is None else Allocation(**a)

    @cached_property
    def regulation(self) -> Regulation | None:
        r = self._view["regulation"]
        return None if r is None else Regulation(**r)

    @property
    def implied_scheduler(self) -> str:
        """The scheduler the system implies (servers, MC² levels, cores): simulate's default."""
        return self._view["implied_scheduler"]

    def task(self, name: str) -> Task:
        """The task called ``name`` (``UnknownTaskError`` if none: an InputError and a LookupError)."""
        return self.tasks[self._core.task_index(name)]

    def outline(self) -> dict[str, Any]:
        """What :func:`criticore.check` returns for a file."""
        return json.loads(self._core.outline())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskSystem) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        n, s = len(self.tasks), len(self.servers)
        return f"<TaskSystem {self.name}: {self.platform.cores} cores, {n} task{'s' * (n != 1)}, {s} server{'s' * (s != 1)}>"


def as_system(system: TaskSystem | str | os.PathLike[str]) -> TaskSystem:
    """A TaskSystem as given, or loaded from a path."""
    if isinstance(system, TaskSystem):
        return system
    if not isinstance(system, (str, os.PathLike)):
        raise input_error(PYTHON, "system", f"expected a TaskSystem or the path of a task-system file, got {type(system).__name__}")
    return TaskSystem.load(system)


#: A TaskSystem, or the path of a task-system file.
SystemLike = Union[TaskSystem, str, "os.PathLike[str]"]
