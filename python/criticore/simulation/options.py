"""The simulation options, typed once: :class:`SimOptions` goes from the CLI
and the library to the binding (``criticore._core.simulate``), which reads
its fields into the engine's ``SimConfig`` (crates/criticore/src/sim/mod.rs)."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from numbers import Integral, Real

import criticore.units as units
from criticore.errors import input_error


#: The most bins per core a bandwidth series may have: 10,000 s at the default
#: 1 ms, about 0.5 GB of trace per core (a 1 ns bin over 10 s wrote 10.9 GB in
#: 30 s; docs/memory-model.md).
MAX_BINS = 10_000_000


def check_bins(duration_ns: int, bin_ns: int, file, name: str = "bin_ns") -> None:
    """Refuse a bin width that would make more than MAX_BINS points per core,
    before anything runs or is written."""
    bins = -(-duration_ns // bin_ns)
    if bins > MAX_BINS:
        raise input_error(file, name, f"{bins:,} bins per core over the duration; at most {MAX_BINS:,} (a wider bin or a shorter duration)")


@dataclass(frozen=True)
class SimOptions:
    """One simulation's options, in SI units (the engine's ``SimConfig``
    plus the scheduler). Build it from user values with :meth:`of`."""

    #: Simulated time (ns).
    duration_ns: int
    #: mc2, pfp, pedf, gedf, gfp or servers; None: what the system implies.
    scheduler: str | None = None
    #: Seed of sporadic jitter and random execution times.
    seed: int = 0
    #: Jobs run for their PET at this level (A, B, C, D).
    exec_level: str = "C"
    #: Execution times drawn uniformly in [f·PET, PET]; None: the PET.
    best_case_fraction: float | None = None
    #: Each runnable with a ``draw`` takes a time from its distribution
    #: (docs/format.md ``runnables``), the rest their PET.
    drawn: bool = False
    #: none, memguard, mcti, mrs or monitor; None: the system's [regulation].
    regulator: str | None = None
    #: False: CPU-only (memory profiles ignored).
    memory: bool = True
    #: fluid or transaction; None: fluid.
    memory_model: str | None = None
    #: The transaction model's quantum (ns); None: 20 µs.
    quantum_ns: int | None = None
    #: Bin width of the per-core bandwidth series (ns); None: no series.
    bin_ns: int | None = None
    #: Keep job records (and unfinished jobs).
    jobs: bool = False
    #: Keep execution segments of tasks and servers.
    segments: bool = False
    #: Write the Perfetto trace.
    trace: bool = False
    #: Given execution times (ns) by task name, job by job from the first
    #: (a replay of measured jobs); later jobs as the options above say.
    exec_ns: dict[str, list[int]] | None = None

    @classmethod
    def of(
        cls,
        file: str,
        duration: int | str,
        *,
        scheduler: str | None = None,
        seed: int = 0,
        exec_level: str = "C",
        best_case_fraction: float | None = None,
        drawn: bool = False,
        regulator: str | None = None,
        memory: bool = True,
        memory_model: str | None = None,
        quantum_ns: int | str | None = None,
        bin_ns: int | str | None = None,
        jobs: bool = False,
        segments: bool = False,
        trace: bool = False,
        exec_ns: Mapping[str, Sequence[int]] | None = None,
    ) -> SimOptions:
        """Options from the library's arguments: durations as ns or strings with
        a unit ("10ms"), like the file; an InputError naming the argument (in
        ``file``, the system's label) for a value of the wrong kind or range."""
        for name, value in (("scheduler", scheduler), ("exec_level", exec_level), ("regulator", regulator), ("memory_model", memory_model)):
            if value is not None and not isinstance(value, str):
                raise input_error(file, name, f"expected a name (a string), got {type(value).__name__}")
        for name, value in (("memory", memory), ("jobs", jobs), ("segments", segments), ("trace", trace), ("drawn", drawn)):
            if not isinstance(value, bool):
                raise input_error(file, name, f"expected True or False, got {type(value).__name__}")
        if exec_ns is not None:
            exec_ns = _given_exec(file, exec_ns)
        if best_case_fraction is not None and (isinstance(best_case_fraction, bool) or not isinstance(best_case_fraction, Real)):
            raise input_error(file, "best_case_fraction", f"expected a number, got {type(best_case_fraction).__name__}")
        options = cls(
            duration_ns=units.duration_ns(duration, file),
            scheduler=scheduler,
            seed=units.seed(seed, file),
            exec_level=exec_level,
            best_case_fraction=None if best_case_fraction is None else float(best_case_fraction),
            drawn=drawn,
            regulator=regulator,
            memory=memory,
            memory_model=memory_model,
            quantum_ns=None if quantum_ns is None else units.duration_ns(quantum_ns, file, "quantum_ns"),
            bin_ns=None if bin_ns is None else units.duration_ns(bin_ns, file, "bin_ns"),
            jobs=jobs,
            segments=segments,
            trace=trace,
            exec_ns=exec_ns,
        )
        if options.bin_ns is not None:
            check_bins(options.duration_ns, options.bin_ns, file)
        return options


def _given_exec(file: str, exec_ns: Mapping[str, Sequence[int]]) -> dict[str, list[int]]:
    """`exec_ns` checked: task names to lists of non-negative ns that fit in 64 bits."""
    if not isinstance(exec_ns, Mapping):
        raise input_error(file, "exec_ns", f"expected a mapping of task names to lists of ns, got {type(exec_ns).__name__}")
    out = {}
    for name, times in exec_ns.items():
        if not isinstance(name, str):
            raise input_error(file, "exec_ns", f"expected task names (strings) as keys, got {type(name).__name__}")
        values = [int(t) for t in times] if all(isinstance(t, Integral) and not isinstance(t, bool) for t in times) else None
        if values is None or any(not 0 <= t < 2**64 for t in values):
            raise input_error(file, f"exec_ns.{name}", "expected a list of integer ns, each 0 or more")
        out[name] = values
    return out
