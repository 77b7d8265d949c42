"""The schedulability study of mc2-io-ipc-os-isolation §6 (issue 5): orchestration only.

The hot loops (generating task systems, optimizing them under the nine schemes,
the adaptive number of systems per point) are in the Rust kernel
``criticore._core.study_points``. This package decides *what* to evaluate and
keeps the results:

- **Scenarios** are the cross product of the Table 3 categories (648). A
  scenario's id is its index in that cross product, taken in Table 3 order with
  the first category (criticality) varying slowest and the last (direct I/O)
  fastest, each category's choices in Table 3 order: id 0 is (C-Light, Short,
  Light, Quick, Small, Low, Few), id 1 the same with Many direct-I/O tasks.
- **Points**: point index k is system utilization U = 0.25·(k + 1); the full
  grid is k = 0…63 (U = 0.25…16). Each scenario is swept in increasing U; once
  a point is unschedulable under every scheme, the scenario's later points are
  not evaluated (they count as schedulability 0).
- **Waves**: wave k evaluates point k of every scenario still active, split into
  chunks; a chunk is one kernel call (local backend) or one Dask task.
- **Output**: ``DIR/study.json`` (parameters, progress) and
  ``DIR/results/*.parquet``, one file per finished chunk, written atomically.
  The (scenario, point) pairs a folder holds are read back from the files, so a
  rerun resumes where an interrupted run stopped.

Every system's seed is derived by the kernel from (seed, scenario, point, system
index), so results depend neither on the chunking nor on the backend.

The files: the scenario catalogue and grid (catalogue), the parameters
(parameters), the study folder (store), the backends (backends), the run
(run), the report (report) and the CLI (command). This face re-exports their
public names (``criticore.study.run_study`` runs into a folder and returns a
:class:`StudySummary`; ``criticore.run_study`` is the library function
returning the typed :class:`~criticore.Study`, in :mod:`criticore.study.library`).
"""

from criticore.study.catalogue import (  # noqa: F401
    FULL_GRID, GRID_STEP, MAX_UTILIZATION, QUICK_SCENARIOS, Category, all_scenarios, categories, format_grid, parse_grid,
    quick_scenarios, scenario, scenario_count, scenario_id, scenario_label, schemes, select_scenarios, utilization,
)
from criticore.study.parameters import PRESETS, QUICK_POINTS, StudyParams, quick_params  # noqa: F401
from criticore.study.store import (  # noqa: F401
    FORMAT_VERSION, KERNEL_COLUMNS, KILL_AFTER_ENV, LOCK_FILE, RESULTS_DIR, STUDY_FILE, StudyState, columns_to_table,
    evaluate_chunk, load_results, load_study, params_of, read_state, result_files, sorted_results,
)
from criticore.study.backends import DASK_MISSING  # noqa: F401
from criticore.study.run import StudySummary, run_study  # noqa: F401
