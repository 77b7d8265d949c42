"""A progress bar for long runs (Rich, on stderr). The engine reports through
a callback every 50 ms; the bar appears only once a run has taken a second,
and only on a terminal, so short runs and pipes print nothing extra."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

SHOW_AFTER_S = 1.0


class ProgressBar:
    """``with ProgressBar(total, what) as bar: engine(progress=bar.update)``.

    ``update(done, jobs)``: ``done`` out of ``total`` (simulated ns, or
    systems), ``jobs`` finished so far."""

    def __init__(self, total: int, what: str, scale: float = 1.0, unit: str = "", console: Console | None = None):
        self.total, self.what, self.scale, self.unit = total, what, scale, unit
        self.console = console or Console(stderr=True)
        self.started = time.monotonic()
        self.progress: Progress | None = None
        self.task = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def update(self, done: int, jobs: int) -> None:
        if self.progress is None:
            if not self.console.is_terminal or time.monotonic() - self.started < SHOW_AFTER_S:
                return
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[done]} of {task.fields[of]}"),
                TextColumn("{task.fields[jobs]:,} jobs"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.task = self.progress.add_task(self.what, total=self.total, done="", of=self._shown(self.total), jobs=0)
            self.progress.start()
        self.progress.update(self.task, completed=done, done=self._shown(done), jobs=jobs)

    def _shown(self, value: int) -> str:
        if self.scale == 1:
            return f"{value:,}{self.unit}"
        return f"{value / self.scale:,.4g}{self.unit}"
