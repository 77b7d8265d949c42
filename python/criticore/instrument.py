"""Count a program's own memory accesses and mark its jobs and phases.

For programs run under ``criticore regulate`` or ``criticore profile`` on
machines without a hardware PMU: the runtime gives each program a
shared-memory counter page (environment variable ``CRITICORE_COUNTER``); these
functions write to it. Without a page they do nothing, so an instrumented
program runs unchanged anywhere; a page that is named but cannot be attached
(missing file, wrong layout) raises OSError at the first call, as the C
header's ``criticore_attach`` returns -1. The page layout is in
``crates/criticore-rt/src/os/counter_page.rs``.

    from criticore import instrument
    for job in range(n):
        instrument.job_begin(job)
        work()                      # touches about 4,000 cache lines
        instrument.count(reads=3000, writes=1000)
        instrument.job_end(job)

To take part in the run's common start (time 0 of every program, as the
periodic `criticore load` does), say so before setting up, then wait:

    instrument.will_wait()          # the run waits for this program's set-up
    set_up()
    t0 = instrument.wait_start()    # CLOCK_MONOTONIC ns; job j at t0 + offset + j·period
"""

from __future__ import annotations

import criticore._core as _core


def will_wait() -> None:
    """Take part in the run's common start: call before setting up; the
    runtime launches no other program and starts no regulation until this
    one calls :func:`wait_start` (``criticore_attach_waiting`` in C)."""
    _core.instrument_will_wait()


def wait_start() -> int:
    """Set up: wait for the common start and return time 0 (CLOCK_MONOTONIC
    ns, as ``time.monotonic_ns()``); now, at once, when no start is held."""
    return _core.instrument_wait_start()


def attached() -> bool:
    """Whether this process has a counter page (runs under the runtime)."""
    return _core.instrument_attached()


def count(reads: int, writes: int = 0) -> None:
    """Add cache lines read and written since the last call."""
    _core.instrument_count(reads, writes)


def job_begin(job: int) -> None:
    """A job (one activation of the real-time task) starts now."""
    _core.instrument_mark("job_begin", job)


def job_end(job: int) -> None:
    """The job ends now (the monitor mode resumes best-effort work here)."""
    _core.instrument_mark("job_end", job)


def phase(index: int) -> None:
    """The program enters memory phase ``index`` (profiling per phase)."""
    _core.instrument_mark("phase", index)
