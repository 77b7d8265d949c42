"""The library's simulation functions: ``criticore.simulate`` and
``criticore.simulate_many`` return typed results (:mod:`criticore.results`),
built on the streaming run (:mod:`criticore.simulation.run`) and the batch
(:mod:`criticore.simulation.batch`) with one :class:`SimOptions`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from criticore.errors import input_error
from criticore.results import Simulation
from criticore.simulation import batch, run
from criticore.simulation.options import SimOptions
from criticore.simulation.run import Interrupted
from criticore.system import SystemLike, TaskSystem, as_system

if TYPE_CHECKING:
    import pyarrow as pa

def simulate(
    system: SystemLike,
    duration: int | str,
    *,
    progress: Callable[[int, int], None] | None = None,
    **options,
) -> Simulation:
    """Simulate ``duration`` (ns, or a string such as ``"10s"``). ``options``
    are the fields of :class:`SimOptions` (durations and sizes as ns or
    strings with a unit, like the file): ``scheduler``, ``seed``,
    ``exec_level``, ``best_case_fraction``, ``drawn``, ``regulator``, ``memory``,
    ``memory_model``, ``quantum_ns``, ``bin_ns``, ``jobs``, ``segments``,
    ``trace``.

    ``jobs``/``segments`` keep the job records and execution segments as
    pyarrow tables, ``bin_ns`` a per-core bandwidth series, ``trace`` the
    Perfetto trace text. ``regulator`` overrides the system's
    [regulation] ("none" switches it off); ``memory=False`` runs CPU-only;
    ``memory_model`` is "fluid" (default) or "transaction". To stream long
    runs to files, see :func:`criticore.simulation.simulate`. Ctrl-C raises
    :class:`~criticore.simulation.Interrupted` whose ``partial`` is the
    :class:`Simulation` so far."""
    s = as_system(system)
    opts = SimOptions.of(s.name, duration, **options)
    # Segments are drawn against the job records: keep both.
    opts = replace(opts, jobs=opts.jobs or opts.segments)
    try:
        result = run.run(s, opts, progress=progress)
    except Interrupted as stop:
        raise Interrupted(Simulation.from_run(s, stop.partial)) from None
    return Simulation.from_run(s, result)


def simulate_many(
    systems: Sequence[SystemLike],
    duration: int | str,
    *,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options,
) -> pa.Table:
    """Simulate many systems (objects or files) in parallel over all cores (or
    ``threads``), summary only: a pyarrow table, one row per system in the
    order given (columns: :data:`criticore.batch.ROW_FIELDS`). ``options``
    as for :func:`simulate`, but the records."""
    head = systems[0] if systems else None
    first = head.name if isinstance(head, TaskSystem) else str(head) if head is not None else "(no systems)"
    opts = SimOptions.of(first, duration, **options)
    for name in ("jobs", "segments", "trace", "bin_ns"):
        if getattr(opts, name) not in (False, None):
            raise input_error(first, name, "a batch keeps one summary row per system; simulate one system for its records")
    return batch.run_many(list(systems), opts, threads=threads, progress=progress)
