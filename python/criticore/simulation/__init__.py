"""Simulation (docs/simulator.md). ``criticore.simulation.simulate`` runs one
system and keeps its records as numpy columns or streams them to files
(:mod:`~criticore.simulation.run`); :mod:`~criticore.simulation.batch` runs
many; :class:`SimOptions` is the one options object from the CLI and the
library to the engine. The typed library functions ``criticore.simulate``
and ``criticore.simulate_many`` are in :mod:`~criticore.simulation.library`."""

from criticore.simulation import batch  # noqa: F401
from criticore.simulation.options import SimOptions
from criticore.simulation.run import Interrupted, SimRun, job_table, simulate

__all__ = ["Interrupted", "SimOptions", "SimRun", "batch", "job_table", "simulate"]
