"""The report's data: one simulation (jobs, segments, regulator intervals and a
bandwidth series kept), the analysis under the simulation's scheduler (or
why there is none) and, asked for, a real `regulate` run of the file's
commands with the job records its periodic tasks write. :func:`make_report`
gathers them; :attr:`Report.html` is the page (:mod:`criticore.report.page`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import criticore.regulate as regulate
from criticore.analysis import analyze
from criticore.errors import InputError, input_error
from criticore.regulate.compare import RunClock, read_jobs
from criticore.simulation import run as simulation
from criticore.simulation.options import SimOptions
from criticore.system import SystemLike, TaskSystem, as_system
from criticore.units import duration_ns as parse_duration
from criticore.units import duration_text

#: As `criticore simulate`'s --duration.
DEFAULT_DURATION = "10s"
#: The Gantt chart's window by default: two of the longest period (with its
#: offset), within the duration and at most this long.
MAX_WINDOW_NS = 1_000_000_000
#: At most this many bins in the bandwidth and regulation-state series.
MAX_BINS = 500
#: The page's suffix.
SUFFIX = ".html"


@dataclass(frozen=True)
class Measured:
    """A real run of the file's commands (`criticore regulate`)."""

    #: The run's summary (mode, counter, elapsed_ns, groups, notices …).
    summary: dict
    #: Per regulated group: budget, periods, use, time stopped (`regulate.Run.per_group`).
    per_group: list[dict]
    #: Per task that wrote job records (a periodic `criticore load --file F --task T`):
    #: release_ns, finish_ns, deadline_ns and finish_clock_ns.
    jobs: dict[str, dict[str, np.ndarray]]
    #: When the run ended on the machine's clock: jobs that finished later do not count.
    end_clock_ns: int | None


@dataclass(frozen=True)
class Report:
    """What a report page shows; :attr:`html` is the page."""

    system: TaskSystem = field(repr=False)
    options: SimOptions
    #: The Gantt chart shows [0, window_ns].
    window_ns: int
    simulation: simulation.SimRun = field(repr=False)
    #: `criticore analyze --json` under the simulation's scheduler, or None.
    analysis: dict | None = field(repr=False)
    #: Why there is no analysis (the one-line error without "error: ").
    analysis_error: str | None
    measured: Measured | None = field(repr=False)

    @property
    def html(self) -> str:
        from criticore.report.page import render  # the page's code: loaded when a page is made, not with criticore

        return render(self)

    def write(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the page to ``path`` (.html): never over the task-system file
        or one it names, and over an existing file only with ``overwrite``."""
        path = Path(path)
        check_output(path, self.system, "path")
        if path.exists() and not overwrite:
            raise input_error(path, "path", "exists; pass overwrite=True to replace it")
        text = self.html
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            raise input_error(path, "path", f"cannot write: {e.strerror or e}") from None
        return path


def check_output(path: Path, system: TaskSystem, option: str) -> None:
    """The page's path: an .html file, not one of the inputs (--force or not)."""
    from criticore.outputs import not_input, system_inputs  # outputs loads typer: not with criticore

    not_input(path, option, system_inputs(system.path) if system.path is not None else [])
    if path.suffix.lower() != SUFFIX:
        raise input_error(path, option, f"a report is an HTML page: the name must end in {SUFFIX} (got {path.suffix or 'no suffix'})")


def default_window_ns(system: TaskSystem, duration_ns: int) -> int:
    """Two of the longest period with its offset, within the duration, at most MAX_WINDOW_NS."""
    longest = max((t.period_ns + t.offset_ns for t in system.tasks), default=duration_ns)
    return max(1, min(duration_ns, 2 * longest, MAX_WINDOW_NS))


def window_of(system: TaskSystem, duration_ns: int, window: int | str | None, option: str = "window") -> int:
    """The Gantt chart's window in ns: as given (no longer than the duration) or the default."""
    if window is None:
        return default_window_ns(system, duration_ns)
    ns = parse_duration(window, system.name, option)
    if ns > duration_ns:
        raise input_error(system.name, option, f"{duration_text(ns)} is longer than the simulated duration, {duration_text(duration_ns)}")
    return ns


def bin_ns_of(duration_ns: int) -> int:
    """The series' bin: the least 1, 2 or 5 × 10^k ns giving at most MAX_BINS bins."""
    k = 0
    while True:
        for m in (1, 2, 5):
            b = m * 10**k
            if -(-duration_ns // b) <= MAX_BINS:
                return b
        k += 1


def commands(system: TaskSystem) -> list[str]:
    """The tasks with a `command` (what `regulate` launches)."""
    return [t["name"] for t in system.to_dict().get("task", []) if t.get("command")]


def check_run(system: TaskSystem, option: str = "run") -> None:
    """A real run needs a file (the regulator reads it) with commands."""
    if system.path is None:
        raise input_error(system.name, option, "a real run reads a task-system file: load the system from one")
    if not commands(system):
        raise input_error(system.name, option, "no task has a `command` to run (docs/runtime.md)")


def make_report(
    system: SystemLike,
    *,
    duration: int | str = DEFAULT_DURATION,
    window: int | str | None = None,
    run: bool = False,
    scheduler: str | None = None,
    seed: int = 0,
    exec_level: str = "C",
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Simulate ``duration`` (ns or "10s"), analyze under the same scheduler
    and, with ``run``, regulate the file's commands for as long: a
    :class:`Report` whose :attr:`~Report.html` is the page. ``window`` is the
    Gantt chart's (default: two of the longest period, at most 1 s). Bad
    input raises :class:`~criticore.InputError`; a file the analysis refuses
    is no error: the page says why."""
    s = as_system(system)
    duration_ns = parse_duration(duration, s.name, "duration")
    window_ns = window_of(s, duration_ns, window)
    if not isinstance(run, bool):
        raise input_error(s.name, "run", f"expected True or False, got {type(run).__name__}")
    if run:
        check_run(s)
    options = SimOptions.of(s.name, duration_ns, scheduler=scheduler, seed=seed, exec_level=exec_level,
                            bin_ns=bin_ns_of(duration_ns), jobs=True, segments=True)
    return gather(s, options, window_ns, run, progress)


def gather(system: TaskSystem, options: SimOptions, window_ns: int, run: bool, progress=None) -> Report:
    """:func:`make_report` with its options checked (the CLI's path)."""
    sim = simulation.run(system, options, progress=progress)
    analysis = error = None
    try:
        analysis = analyze(system, sim.report["scheduler"]).json
    except InputError as e:
        error = f"{e.field}: {e.reason}" if e.field else str(e)
    measured = measure(system, options.duration_ns) if run else None
    return Report(system, options, window_ns, sim, analysis, error, measured)


def measure(system: TaskSystem, duration_ns: int) -> Measured:
    """Regulate the file's commands for ``duration_ns`` under its
    [regulation], as `criticore regulate --compare-sim` does: the job records
    of its periodic tasks go to a folder of their own, read back here."""
    import tempfile

    clock = RunClock()

    def seen(snapshot: dict) -> bool:
        clock.seen(snapshot)
        return True

    with tempfile.TemporaryDirectory(prefix="criticore-jobs-") as folder:
        done = regulate.run(system.path, duration_ns=duration_ns, fifo_priority=90 if os.geteuid() == 0 else None,
                            on_snapshot=seen, job_log_dir=folder)
        jobs = {t.name: j for t in system.tasks if (j := read_jobs(Path(folder) / f"{t.name}.csv")) is not None}
    end = clock.end_ns(int(done.summary["elapsed_ns"]))
    return Measured(done.summary, done.per_group(), jobs, end)
