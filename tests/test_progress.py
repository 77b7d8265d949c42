"""The progress bar of long runs (criticore.progress): nothing for the first
second or off a terminal, then done/total and jobs."""

from __future__ import annotations

import io

from rich.console import Console

from criticore.progress import ProgressBar


def test_the_bar_waits_a_second_then_shows_time_and_jobs():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with ProgressBar(10_000_000_000, "simulating x", scale=1e9, unit=" s", console=console) as bar:
        bar.update(1_000_000_000, 5)
        assert bar.progress is None  # under a second: nothing shown
        bar.started -= 2
        bar.update(2_500_000_000, 1234)
        assert bar.progress is not None
        bar.progress.refresh()
    text = out.getvalue()
    assert "simulating x" in text and "2.5 s of 10 s" in text and "1,234 jobs" in text


def test_systems_are_counted_in_whole_numbers():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with ProgressBar(10_000, "simulating 10,000 systems", console=console) as bar:
        bar.started -= 2
        bar.update(2_500, 99)
        bar.progress.refresh()
    assert "2,500 of 10,000" in out.getvalue()


def test_nothing_off_a_terminal():
    out = io.StringIO()
    with ProgressBar(10, "x", console=Console(file=out, force_terminal=False)) as bar:
        bar.started -= 2
        bar.update(5, 1)
        assert bar.progress is None
    assert out.getvalue() == ""
