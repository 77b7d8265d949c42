"""Type stubs for ``criticore._core``, the Rust extension (crates/criticore-py;
the module ``criticore._core._native``, re-exported by this package).

Python bindings: thin: parse, run the engine, hand back JSON text; input
problems raise ``InputError(message, file, field, reason)``.

Units follow the names: ``*_ns`` is nanoseconds, ``*_bytes`` is bytes,
``*_bytes_per_s`` is bytes per second. "Columns" are ``bytes`` of
little-endian values (u32, u64, f64 or u8 as noted) for ``numpy.frombuffer``.

Kept in step with the bindings by tests/test_stubs.py: every public name of
the module has a stub here, with the same parameters in the same order.
"""

from collections.abc import Callable, Sequence
from typing import Any

from criticore.simulation.options import SimOptions

__version__: str
__all__ = [
    "simulate",
    "simulate_many",
    "duration_ns",
    "size_bytes",
    "bandwidth_bytes_per_s",
    "InputError",
    "UnknownTaskError",
    "check",
    "System",
    "analyze",
    "solve_llc_ways",
    "import_amalthea",
    "mc2_ub",
    "mc2_os",
    "dram_replay",
    "mc2_io_ipc",
    "mc2_io_dma",
    "mc2_io_cross_core",
    "study_categories",
    "study_schemes",
    "study_points",
    "generate_system",
    "optimize",
    "study_way_problem",
    "regulate",
    "regulate_clean",
    "instrument_attached",
    "instrument_count",
    "instrument_mark",
    "instrument_wait_start",
    "instrument_will_wait",
    "load_periodic",
    "load_run",
    "load_stopped_by_ctrl_c",
    "loaded_latency",
    "machine_line_bytes",
    "pmu_present",
    "profile_point",
    "__version__",
]

class InputError(ValueError):
    """A task-system file is malformed: (message, file, field, reason).

    Raised with four string arguments: ``args == (message, file, field,
    reason)``; ``message`` reads ``"{file}: {field}: {reason}"``. The
    ``criticore`` package adds ``file``, ``field`` and ``reason`` as
    attributes.
    """

    file: str | None
    field: str | None
    reason: str | None

class UnknownTaskError(InputError, LookupError):
    """No task of that name (TaskSystem.task): an InputError and a LookupError."""

# --- task systems held for Python (system.rs) ------------------------------

class System:
    """A task system: the document as written and the engine's parsed,
    validated model (``criticore.TaskSystem`` wraps it). The engine
    functions below take a ``System`` wherever they take a file's bytes."""

    @staticmethod
    def parse(data: bytes, file: str, format: str | None = None) -> System:
        """Parse a file's bytes (TOML or JSON by ``format`` or the suffix).
        Raises InputError."""
    @staticmethod
    def from_json(text: str, file: str) -> System:
        """Parse a document given as JSON text; ``file`` names it in errors.
        Raises InputError."""
    @staticmethod
    def from_dict(document: Any, file: str) -> System:
        """Parse a document given as Python values (dicts with str keys,
        lists, str, int, float, bool); ``file`` names it in errors. Raises
        InputError naming the path of a value a file cannot hold."""
    def task_index(self, name: str) -> int:
        """The index of the task called ``name``. Raises UnknownTaskError."""
    @property
    def file(self) -> str:
        """The name errors give for this system (its path, or a label)."""
    def document(self) -> str:
        """The document as JSON text, fields as written."""
    def text(self, format: str) -> str:
        """The document as file text: ``"toml"`` or ``"json"``."""
    def view(self) -> str:
        """The engine's model in SI units as JSON text: ``platform``,
        ``tasks`` (``period_ns``, ``pet_ns`` per level, …), ``servers``,
        ``allocation``, ``regulation``, ``implied_scheduler``."""
    def outline(self) -> str:
        """What ``check`` returns, as JSON text."""

# --- task-system files (lib.rs) -------------------------------------------

def check(data: bytes, file: str, format: str | None = None) -> str:
    """Parse and validate a task-system file's bytes; returns its outline
    (cores, tasks, servers) as JSON.

    ``data`` is the file's bytes, ``file`` its name (for messages and, when
    ``format`` is None, the format: "toml" or "json"). The outline also
    carries ``line_bytes`` (LLC line size in bytes), ``implied_scheduler``
    and ``regulation``. Raises InputError if the file is malformed.
    """

def import_amalthea(data: bytes, file: str, scale: str | None = None) -> tuple[str, str, str]:
    """Import an Amalthea model's bytes (``.amxmi``, gzip-compressed or not),
    execution needs times ``scale`` (decimal text, exact; None: 1): the
    task-system file text, the summary (JSON: ``tasks``, ``cores``,
    ``not_represented`` as [kind, count] pairs, ``line``) and the intermediate
    model (JSON). Raises InputError naming the file, the field and the reason.
    docs/amalthea.md.
    """

def analyze(data: System | bytes, file: str, format: str | None = None, scheduler: str | None = None) -> str:
    """Analyze a task system (a ``System`` or a file's bytes) under ``scheduler`` (simulate's names;
    default: what the file implies); returns the report as JSON text: the MC²
    report for mc2, else the classic test's per-task bounds
    (``analysis::classic``). Either carries ``scheduler``.

    Times in the report are in ns. Raises InputError for a malformed file or
    an unknown scheduler.
    """

def duration_ns(text: str) -> int:
    """Parse a duration string ("10s") into nanoseconds.

    Raises ValueError if ``text`` is not a duration.
    """

def size_bytes(text: str) -> int:
    """Parse a size string ("128MiB") into bytes.

    Raises ValueError if ``text`` is not a size.
    """

def bandwidth_bytes_per_s(text: str) -> int:
    """Parse a bandwidth string ("500MB/s") into bytes per second.

    Raises ValueError if ``text`` is not a bandwidth.
    """

def solve_llc_ways(problem: str | dict[str, Any]) -> str | None:
    """Phase 3 of the optimizer (LLC ways, docs/optimizer.md): solve a
    ``WayProblem`` exactly. ``problem`` is its JSON text (parsed by Python's
    json, which rounds floats correctly) or the equivalent dict. Returns the
    ``WayAllocation`` as JSON, or None if no allocation passes every level.
    Malformed input raises ValueError naming the field.

    The problem's keys: ``ways`` (LLC ways, an int), ``cores`` (per core
    ``u_a_a``, ``u_ab_b``, ``u_ab_c``: utilizations indexed by ways) and
    ``level_c`` (``u_c``, ``u_max``, ``u_l``: grids of utilizations).
    """

# --- simulation (simulate.rs) ---------------------------------------------

def simulate(
    data: System | bytes,
    file: str,
    options: SimOptions,
    format: str | None = None,
    overhead_table: str | None = None,
    overhead_file: str | None = None,
    on_batch: Callable[[str, dict[str, bytes | list[str]] | tuple[int, bytes] | str], object] | None = None,
    on_progress: Callable[[int, int], object] | None = None,
) -> tuple[str, bool]:
    """Simulate a task-system file under ``options`` (a
    :class:`~criticore.simulation.SimOptions`, read by attribute: the engine's
    ``SimConfig`` and the scheduler), streaming what is asked for to
    ``on_batch(kind, payload)`` as it is produced: "jobs", "unfinished",
    "segments", "server_segments" (dicts of little-endian columns),
    "intervals" (with the segments: the regulator's stalled, overload,
    suspended and depleted spans; ``interval_state`` a list of those names,
    the rest columns), "bandwidth" ((first bin, f64 bytes of bins × cores)) and "trace" (text
    chunks of the Perfetto JSON, in order). ``on_progress(simulated_ns, jobs)``
    is called every 50 ms. Returns (report JSON, interrupted): Ctrl-C stops
    the run and the report covers the time reached (``partial``).

    The options' names and units are SimOptions' (durations in ns; ``bin_ns``
    keeps a bandwidth series, ``quantum_ns`` only with
    ``memory_model="transaction"``). ``overhead_table`` is the bandwidth
    monitor's table text, named ``overhead_file`` in messages. Column names
    end in ``_ns`` for ns (u64); ids and counts are u32, ``memory_requests``
    u64. The "bandwidth" payload holds memory requests per bin per core
    (f64). Raises InputError for bad input.
    """

def simulate_many(
    files: Sequence[tuple[System | bytes, str]],
    options: SimOptions,
    threads: int | None = None,
    on_progress: Callable[[int, int], object] | None = None,
) -> tuple[list[str], bool]:
    """Simulate many task-system files in parallel over all cores (or ``threads``),
    summary only: one row per system, as JSON text, in the order given. Every
    file is parsed first, so a bad one is an InputError before anything runs.
    ``on_progress(systems_done, jobs)`` every 50 ms; Ctrl-C stops every run
    where it is (rows of systems not started are left out). Returns (rows, interrupted).

    ``files`` is a list of (``System`` or file bytes, file name); ``options``
    as for ``simulate`` (records are not kept: one summary row per system).
    """

# --- transaction memory model experiments (transaction.rs) ----------------

def mc2_ub(
    points: list[tuple[int, int, int, str]],
    iterations: int = 20,
    runs: int = 3,
    seed: int = 1,
    replacement: str = "pseudo-random",
) -> list[dict[str, Any]]:
    """Run µB points ``(wss_bytes, colours, ways, isolation)`` on the i.MX6 model.
    Returns one dict per point: wss_bytes, colours, ways, isolation, wcet_ns,
    acet_ns (for the paper's 500 iterations), llc_miss_ratio, requests, references.

    ``wss_bytes`` is 4 KiB–64 MiB in whole lines (bytes); colours and ways are
    1–16. ``replacement`` is "pseudo-random" or "lru". Times in ns.
    """

def mc2_os(iterations: int = 20, runs: int = 3, seed: int = 1) -> list[dict[str, Any]]:
    """§4.2 / Appendix A: caller and victim execution times with and without OS isolation.

    One dict per configuration: os_isolation (bool), caller_wcet_ns,
    caller_acet_ns, victim_wcet_ns, victim_acet_ns (ns).
    """

def dram_replay(
    trace_path: str,
    timing: str = "ddr3-1600",
    scheduler: str = "frfcfs",
    queue: int = 32,
    mapping_name: str = "robaraco",
    banks: int = 8,
    refresh: bool = True,
) -> dict[str, float]:
    """Replay a trace (``R 0x…`` / ``W 0x…`` per line) into the DRAM controller,
    closed loop with ``queue`` requests waiting (benches/dram_peers.py).

    ``scheduler`` is "frfcfs" or "fcfs"; ``banks`` a power of two. Returns
    requests, reads, row_hits, row_misses, row_conflicts (counts),
    mean_read_latency_ns and simulated_ns (ns) and wall_s (wall-clock
    seconds).
    """

def mc2_io_ipc(bytes: int, placement: str, messages: int = 20, seed: int = 1) -> tuple[float, float]:
    """mc2-io §5.1 (Fig. 8): mean ns of one send (``load_msg``) and one receive
    (``do_msg_fill``) of ``bytes`` with the message buffer placed by ``placement``
    (sbp, ce, cl), on the i.MX6 model with a Level-C background load.

    ``bytes`` is the message size in bytes (1 B–64 KiB). Returns (send ns,
    receive ns).
    """

def mc2_io_dma(
    colours: int,
    ways: int,
    bytes_per_s: float,
    level_ab: bool,
    iterations: int = 4,
    seed: int = 1,
) -> float:
    """mc2-io §5.3 (Figs. 13–14): Synthetic's ns per pass over 256 KiB with an
    LLC region of ``colours`` × ``ways``, beside DMA of ``bytes_per_s`` in total into
    buffers in its own bank (``level_ab``) or the Level-C banks.

    ``bytes_per_s`` is the DMA bandwidth in bytes per second (≥ 0). Returns ns.
    """

def mc2_io_cross_core(
    wss: int,
    ways: int,
    shared: bool,
    copy: bool = True,
    iterations: int = 4,
    seed: int = 1,
) -> float:
    """mc2-io §5.2 (Obs. 3): a Level-C task's ns per pass (random reads over
    ``wss``, ``ways`` of Level C) beside a frame copy whose buffer shares its bank
    (``shared``) or not; ``copy = False`` runs it alone.

    ``wss`` is the working-set size in bytes. Returns ns.
    """

# --- optimizer and schedulability study (study.rs) ------------------------

def study_categories() -> str:
    """Table 3's categories and choices as JSON: ``[{"key", "choices"}, …]``."""

def study_schemes() -> list[str]:
    """The nine schemes of §6.1, in the paper's order."""

def study_points(
    points_json: str,
    seed: int,
    half_width: float = 0.05,
    z: float = 1.96,
    batch: int = 50,
    max_systems: int = 400,
    preset: str = "imx6",
) -> dict[str, bytes]:
    """Evaluate utilization points of the study (rayon over points). ``points_json``:
    ``[{"scenario_id", "scenario": {key: choice}, "point", "utilization"}, …]``.
    Returns little-endian columns, one row per system × scheme.

    Columns: scenario_id, point, system (u32); utilization, objective (f64);
    scheme, schedulable (u8). ``half_width`` and ``z`` set the confidence
    interval that stops sampling, drawn ``batch`` systems at a time up to
    ``max_systems``; ``preset`` is "imx6" or "imx6-transaction".
    """

def generate_system(scenario_json: str, utilization: float, seed: int) -> str:
    """One generated system (TOML text) of a scenario at a utilization.

    ``scenario_json`` is ``{category: choice}``; ``utilization`` is positive.
    """

def optimize(
    data: System | bytes,
    file: str,
    format: str | None = None,
    scheme: str = "O|C+A/B-ALL",
    seed: int = 0,
    objective: str | None = None,
    budget: int | None = None,
    on_progress: Callable[[int, int], Any] | None = None,
) -> tuple[str, str]:
    """Optimize a task system (a ``System`` or a file's bytes), parsed once.

    On a scratchpad platform: label placement, labels moved between its
    memories within their sizes to lower ``objective`` ("response", the
    default: the worst bound over deadline under pfp; "chain": the worst
    chain's reaction time bound), judging at most ``budget`` placements
    (default 100); ``on_progress(done, budget)`` between analyses; Ctrl-C
    raises KeyboardInterrupt. Otherwise the three-phase optimizer under
    ``scheme`` (``objective`` or ``budget`` given is an error). Returns (the
    text with what was placed written in, JSON report whose ``kind`` is
    "labels" or "mc2"): JSON text for a ``System``, else in the file's format.
    The text is the input's when the system is not schedulable.
    """

def study_way_problem(scenario_json: str, utilization: float, seed: int, scheme: str) -> str | None:
    """The phase-3 way problem (JSON, the ``solve_llc_ways`` format) of one
    generated system under ``scheme`` after phases 1–2 (ungrouped packing, no
    buffer locked), or None if phase 1 fails: real study instances for
    checking the exact solver against the MILP.
    """

# --- Linux runtime (runtime.rs) -------------------------------------------

def regulate(
    data: bytes,
    file: str,
    options: dict[str, Any],
    on_snapshot: Callable[[dict[str, Any]], bool] | None = None,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Regulate real processes as the file says. ``options`` is a dict:
    mode, duration_ns, period_ns, poll_ns, counter ("auto"|"shm"|event),
    throttle ("signal"|"freezer"), attach [(pid, task)], command (task, argv),
    watchdog argv (empty: the native criticore-watchdog in the package's
    _bin/ or $CRITICORE_WATCHDOG), criticore argv, output path, fifo_priority, snapshot_ns.
    ``on_snapshot(dict) -> bool`` is called from time to time (False stops).
    Returns (summary dict, period columns dict).

    Every ``*_ns`` option is ns (``snapshot_ns`` defaults to 200 ms); also
    lead (bool), regulator_cpu, job_log_dir, overhead_table (text) and
    overhead_file. The snapshot dict has elapsed_ns, periods and groups (name,
    budget, used_last_period, throttled_ns, events_per_s, stopped). Period
    columns (u64 unless noted): period, group (u32), start_ns, lateness_ns,
    budget, used, overshoot, exhausted_ns, reaction_ns, reaction_e2e_ns, throttled_ns, lead, overload.
    """

def regulate_clean() -> list[str]:
    """Undo what dead runs left (``criticore regulate --clean``): their
    launched tasks ended, real-time policies back to SCHED_OTHER, frozen
    cgroups thawed and removed, counter pages removed; one line per thing undone."""

def instrument_attached() -> bool:
    """Whether this process was started with a counter page (under ``criticore regulate`` or ``profile``).

    Raises OSError if ``CRITICORE_COUNTER`` names a page that cannot be attached.
    """

def instrument_count(reads: int, writes: int = 0) -> None:
    """Count cache lines this program read and wrote (no-op without a page).

    ``reads`` and ``writes`` are in cache lines, not bytes.
    """

def instrument_mark(kind: str, arg: int) -> None:
    """Mark a job boundary or a phase: kind "job_begin", "job_end" or "phase"."""

def instrument_will_wait() -> None:
    """Take part in the run's common start (before setting up)."""

def instrument_wait_start() -> int:
    """Set up: wait for the common start; time 0 (CLOCK_MONOTONIC ns), or now when none is held."""

# --- load generator (load.rs) ---------------------------------------------

def load_run(
    options: dict[str, Any],
    on_progress: Callable[[int, int, int], bool] | None = None,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Run the microbenchmark of blin-bandwidth-monitor §3.1 in this thread.
    ``options``: reads (0-10), delay, bandwidth (bytes/s, paced), duration_ns,
    buffer_bytes, line_bytes, interval_ns, fresh_pages, pattern (stream or
    random), cpu, count (a perf
    event counted on this thread over the run: "auto" = LLC misses, reads and
    write-backs, where there is a PMU, else nothing; "none"; or an event).
    ``on_progress(elapsed_ns, lines, last_interval_lines) -> bool`` about every
    200 ms (False stops). SIGINT/SIGTERM end the run cleanly.
    Returns (summary dict, interval columns dict).

    ``delay`` is iterations of the delay loop (not time). Interval columns
    (u64): start_ns (ns), reads, writes (cache lines).
    """

def loaded_latency(
    victim_cpu: int,
    load_cpus: list[int],
    reads: int,
    delay: int,
    duration_ns: int,
    buffer_bytes: int | None = None,
) -> tuple[float, float]:
    """Loaded latency (``criticore load --sweep``): a pointer-chasing victim on
    ``victim_cpu`` against one load per CPU in ``load_cpus`` (reads of 10, delay).
    Returns (ns per access, bytes/s of all loads together).

    ``delay`` is delay-loop iterations; ``duration_ns`` is ns;
    ``buffer_bytes`` is bytes.
    """

def load_stopped_by_ctrl_c() -> bool:
    """Whether the last load run (either mode) was stopped by a Ctrl-C (SIGINT; SIGTERM is not)."""

def load_periodic(
    data: bytes,
    file: str,
    task: str,
    options: dict[str, Any],
    on_job: Callable[[int, int, bool], bool] | None = None,
) -> tuple[list[str], dict[str, bytes], int | None]:
    """Periodic mode: run task ``task`` of the file as a real periodic process in
    this thread (``criticore_rt::periodic``). ``options``: jobs, duration_ns, cpu.
    ``on_job(job, response_ns, deadline_missed) -> bool`` per job (False stops).
    Returns (notes list, job columns dict in the simulator's job-record names,
    the PET each job runs: the engine's, as the simulator runs it, ns; None
    for a background task, which has no jobs).

    Job columns: job (u32); release_ns, start_ns, finish_ns, deadline_ns,
    exec_ns (u64 ns); memory_requests (u64).
    """

# --- profiling (profile.rs) -----------------------------------------------

def machine_line_bytes() -> int:
    """This machine's cache-line size, as the load generator counts in it.

    In bytes (64 if it cannot be read).
    """

def pmu_present() -> bool:
    """Whether the machine has a hardware PMU (a ``cpu``-like perf event source)."""

def profile_point(
    argv: list[str],
    cpu: int,
    loads: list[tuple[int, int, int]],
    tick_ns: int,
    options: dict[str, Any],
    on_job: Callable[[int], bool] | None = None,
) -> dict[str, Any]:
    """Run the program ``argv`` pinned to ``cpu`` against ``loads`` (a list of
    ``(cpu, reads, delay)``), recording counts every ``tick_ns``.
    ``options``: jobs, limit_ns, fifo (SCHED_FIFO priority), buffer_bytes,
    line_bytes, event (hardware event spec, e.g. "llc-misses"), quiet (the
    program's output to /dev/null). ``on_job(jobs_ended) -> bool`` per job end
    (False stops). SIGINT/SIGTERM end the point cleanly ("interrupted").
    Returns a dict of columns (little-endian bytes) and values.

    ``tick_ns`` and ``limit_ns`` (default 60 s) are ns. Columns (u64 unless
    noted): tick_ns, lines, program_lines, hardware_lines (or None),
    event_t_ns, event_kind (u32), event_arg (u32); counts of lines are cache
    lines. Values: lost_events, program_start_ns, program_exit_ns,
    exit_code, end ("jobs", "exited", "limit" or "interrupted"),
    load_lines, notices.
    """
