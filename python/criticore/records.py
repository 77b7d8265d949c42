"""The engine's streamed job records as a pyarrow table, shared by the
streaming run (:mod:`criticore.simulate.run`) and the typed results
(:mod:`criticore.results`), which must not import the ``simulate`` package
(whose face imports the results)."""

from __future__ import annotations

import numpy as np


def jobs_table(cols: dict[str, np.ndarray], task_names: list[str]):
    """Job records as a pyarrow table with names and derived response/tardiness."""
    import pyarrow as pa

    response = cols["finish_ns"] - cols["release_ns"]
    late = cols["finish_ns"] > cols["deadline_ns"]
    tardiness = np.where(late, cols["finish_ns"] - np.minimum(cols["finish_ns"], cols["deadline_ns"]), 0).astype("u8")
    names = np.asarray(task_names, dtype=object)
    return pa.table(
        {
            "task": pa.array(names[cols["task"].astype(np.int64)], type=pa.string()),
            "job": cols["job"],
            "core": cols["core"],
            "release_ns": cols["release_ns"],
            "start_ns": cols["start_ns"],
            "finish_ns": cols["finish_ns"],
            "deadline_ns": cols["deadline_ns"],
            "exec_ns": cols["exec_ns"],
            "response_ns": response,
            "tardiness_ns": tardiness,
            "preemptions": cols["preemptions"],
            "migrations": cols["migrations"],
            "memory_requests": cols["memory_requests"],
            "memory_stall_ns": cols["memory_stall_ns"],
        }
    )
