"""The schedulability study of mc2-io-ipc-os-isolation §6 (issue 5): orchestration only.

The hot loops (generating task systems, optimizing them under the nine schemes,
the adaptive number of systems per point) are in the Rust kernel
``criticore._core.study_points``. This module decides *what* to evaluate and
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
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import logging
import math
import os
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

import criticore
from criticore import InputError, _core

#: Step of the utilization grid: point index k is U = GRID_STEP · (k + 1).
GRID_STEP = 0.25
#: The full grid: k = 0 … 63, U = 0.25 … 16.0 (C-Heavy scenarios stay schedulable beyond 10).
FULL_GRID = tuple(range(64))
#: Largest utilization accepted by ``--utilization`` (the platform has 4 cores).
MAX_UTILIZATION = 64.0

STUDY_FILE = "study.json"
RESULTS_DIR = "results"
LOCK_FILE = ".lock"
FORMAT_VERSION = 1

#: Kernel columns and their little-endian dtypes (the ``study_points`` contract).
KERNEL_COLUMNS = {
    "scenario_id": "<u4",
    "point": "<u4",
    "utilization": "<f8",
    "system": "<u4",
    "scheme": "u1",
    "schedulable": "u1",
    "objective": "<f8",
}

#: Environment variable for tests: kill the process (SIGKILL) after this many chunk files.
KILL_AFTER_ENV = "CRITICORE_STUDY_KILL_AFTER_CHUNKS"


def utilization(point: int) -> float:
    """System utilization of grid point ``point``."""
    return GRID_STEP * (point + 1)


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Category:
    key: str
    choices: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _categories() -> tuple[Category, ...]:
    return tuple(Category(c["key"], tuple(c["choices"])) for c in json.loads(_core.study_categories()))


def categories() -> list[Category]:
    """The seven Table 3 categories, in Table 3 order (from the engine)."""
    return list(_categories())


def schemes() -> list[str]:
    """The nine schemes, in the engine's order (the kernel's ``scheme`` column indexes this list)."""
    return list(_core.study_schemes())


def scenario_count() -> int:
    return math.prod(len(c.choices) for c in categories())


def scenario(sid: int) -> dict[str, str]:
    """The choices of scenario ``sid`` (mixed-radix digits, criticality most significant)."""
    cats = categories()
    total = math.prod(len(c.choices) for c in cats)
    if not 0 <= sid < total:
        raise ValueError(f"scenario {sid} out of range (0–{total - 1})")
    out: dict[str, str] = {}
    for c in reversed(cats):
        sid, digit = divmod(sid, len(c.choices))
        out[c.key] = c.choices[digit]
    return {c.key: out[c.key] for c in cats}


def scenario_id(choices: dict[str, str]) -> int:
    """Inverse of :func:`scenario`."""
    sid = 0
    for c in categories():
        sid = sid * len(c.choices) + c.choices.index(choices[c.key])
    return sid


def all_scenarios() -> list[dict[str, str]]:
    """Every scenario, indexed by id (the cross product in Table 3 order)."""
    cats = categories()
    return [dict(zip([c.key for c in cats], combo)) for combo in itertools.product(*[c.choices for c in cats])]


def scenario_label(sid: int) -> str:
    """The paper's tuple notation, e.g. ``(C-Light, Long, Light, Quick, Small, High, Many)``."""
    return "(" + ", ".join(scenario(sid).values()) + ")"


def _norm(text: str) -> str:
    return text.strip().lower().replace("_", "-").rstrip(".")


_ID_TOKEN = re.compile(r"^\d+(-\d+)?$")


def select_scenarios(specs: list[str] | None) -> list[int]:
    """Scenario ids selected by ``--scenarios`` values (union over values; all when none).

    A value is either a filter, ``key=choice`` terms joined by commas (terms on
    different keys must all hold; several terms on one key mean any of them),
    e.g. ``criticality=C-Light,period=Long,period=Short``, or a list of ids and
    ranges, e.g. ``0,5,10-19``. Keys and choices are case-insensitive, ``-`` and
    ``_`` are interchangeable and a trailing dot may be left out (``All-Mod``).
    Raises ValueError with a one-line reason.
    """
    cats = categories()
    total = math.prod(len(c.choices) for c in cats)
    if not specs:
        return list(range(total))
    selected: set[int] = set()
    for spec in specs:
        tokens = [t.strip() for t in spec.split(",") if t.strip()]
        if not tokens:
            raise ValueError(f"{spec!r}: empty selection")
        if all(_ID_TOKEN.match(t) for t in tokens):
            for t in tokens:
                lo, _, hi = t.partition("-")
                a, b = int(lo), int(hi or lo)
                if a > b:
                    raise ValueError(f"{t}: empty range")
                if b >= total:
                    raise ValueError(f"scenario {b} out of range (0–{total - 1})")
                selected.update(range(a, b + 1))
            continue
        if not all("=" in t for t in tokens):
            bad = next(t for t in tokens if "=" not in t)
            raise ValueError(
                f"{bad!r}: expected key=choice (keys: {', '.join(c.key for c in cats)}) or scenario ids like 0,5,10-19"
            )
        allowed: dict[str, set[str]] = {}
        for t in tokens:
            key, _, value = t.partition("=")
            cat = next((c for c in cats if _norm(c.key) == _norm(key)), None)
            if cat is None:
                raise ValueError(f"unknown category {key.strip()!r} (expected {', '.join(c.key for c in cats)})")
            choice = next((ch for ch in cat.choices if _norm(ch) == _norm(value)), None)
            if choice is None:
                raise ValueError(f"{cat.key}: unknown choice {value.strip()!r} (expected {', '.join(cat.choices)})")
            allowed.setdefault(cat.key, set()).add(choice)
        for sid, sc in enumerate(all_scenarios()):
            if all(sc[k] in v for k, v in allowed.items()):
                selected.add(sid)
    return sorted(selected)


#: ``--quick``: six scenarios that together use every choice of every category,
#: including the three of Fig. 15 (a), (b), (c).
QUICK_SCENARIOS = (
    ("C-Light", "Long", "Light", "Quick", "Small", "High", "Many"),  # Fig. 15(a)
    ("C-Light", "Long", "Light", "Quick", "Large", "High", "Many"),  # Fig. 15(b)
    ("C-Light", "Short", "Medium", "Slow", "Large", "High", "Many"),  # Fig. 15(c)
    ("C-Heavy", "Moderate", "Medium", "Quick", "Small", "Low", "Few"),
    ("All-Mod.", "Short", "Heavy", "Slow", "Large", "Medium", "Few"),
    ("C-Heavy", "Long", "Heavy", "Slow", "Small", "Medium", "Many"),
)


def quick_scenarios() -> list[int]:
    keys = [c.key for c in categories()]
    return sorted(scenario_id(dict(zip(keys, combo))) for combo in QUICK_SCENARIOS)


def parse_grid(text: str) -> list[int]:
    """``--utilization``: ``START:STOP:STEP`` (inclusive) or a comma list; every U a multiple of 0.25.

    Returns point indices (U = 0.25·(k + 1)). Raises ValueError with a one-line reason.
    """
    text = text.strip()

    def number(t: str) -> float:
        try:
            v = float(t)
        except ValueError:
            raise ValueError(f"{t.strip()!r} is not a number") from None
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"{t.strip()!r}: utilizations must be positive")
        return v

    def index(u: float) -> int:
        k = round(u / GRID_STEP) - 1
        if k < 0 or abs(utilization(k) - u) > 1e-9:
            raise ValueError(f"{u:g} is not a multiple of {GRID_STEP}")
        if u > MAX_UTILIZATION:
            raise ValueError(f"{u:g} is above {MAX_UTILIZATION:g}")
        return k

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ValueError(f"{text!r}: expected START:STOP:STEP, e.g. 0.25:10:0.25")
        start, stop, step = (index(number(p)) for p in parts)
        stride = step + 1
        if stop < start:
            raise ValueError(f"{text!r}: STOP is below START")
        return list(range(start, stop + 1, stride))
    points = [index(number(t)) for t in text.split(",") if t.strip()]
    if not points:
        raise ValueError("no utilization given")
    if any(b <= a for a, b in zip(points, points[1:])):
        raise ValueError(f"{text!r}: utilizations must be increasing")
    return points


def format_grid(points: list[int] | tuple[int, ...]) -> str:
    us = [utilization(k) for k in points]
    if len(us) >= 3 and len({b - a for a, b in zip(points, points[1:])}) == 1:
        return f"{us[0]:g}:{us[-1]:g}:{us[1] - us[0]:g}"
    return ",".join(f"{u:g}" for u in us)


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class StudyParams:
    """Everything that determines a study's results (compared on resume)."""

    seed: int = 0
    scenario_ids: tuple[int, ...] = ()
    points: tuple[int, ...] = FULL_GRID
    half_width: float = 0.05
    z: float = 1.96
    batch: int = 50
    max_systems: int = 400
    #: Platform preset of the generated systems: `imx6` (assumed cost constants)
    #: or `imx6-transaction` (calibrated by `criticore calibrate`).
    preset: str = "imx6"

    def identity(self) -> dict:
        out = {
            "seed": self.seed,
            "scenario_ids": list(self.scenario_ids),
            "points": list(self.points),
            "half_width": self.half_width,
            "z": self.z,
            "batch": self.batch,
            "max_systems": self.max_systems,
        }
        # Only a non-default preset is recorded, so folders from before it existed still resume.
        if self.preset != "imx6":
            out["preset"] = self.preset
        return out

    def check(self) -> None:
        """Raise ValueError(field, reason) for an invalid parameter."""
        if not 0 <= self.seed < 2**64:
            raise _ParamError("--seed", "must be between 0 and 2^64 − 1")
        if not self.scenario_ids:
            raise _ParamError("--scenarios", "selects no scenario")
        if not self.points:
            raise _ParamError("--utilization", "no point")
        if not (0 < self.half_width < 0.5):
            raise _ParamError("--half-width", "must be in (0, 0.5)")
        if not (0 < self.z < 10):
            raise _ParamError("--z", "must be in (0, 10)")
        if self.batch < 1:
            raise _ParamError("--batch", "must be at least 1")
        if self.max_systems < 1:
            raise _ParamError("--max-systems", "must be at least 1")
        if self.preset not in PRESETS:
            raise _ParamError("--preset", f"unknown preset {self.preset!r} (one of: {', '.join(PRESETS)})")


#: Platforms a study can run on (`[platform] preset` names with study cost constants).
PRESETS = ("imx6", "imx6-transaction")


#: ``--quick``: six scenarios, U = 0.5, 1.0, …, 16.0, the paper's precision (±0.05 at 95%,
#: at most 400 systems). With the same seed its rows are a subset of the full study's:
#: a system's seed and the stopping rule do not depend on which other points run.
QUICK_POINTS = tuple(range(1, 64, 2))
QUICK_HALF_WIDTH = 0.05
QUICK_MAX_SYSTEMS = 400
QUICK_BATCH = 50


def quick_params(seed: int = 0) -> StudyParams:
    return StudyParams(
        seed=seed,
        scenario_ids=tuple(quick_scenarios()),
        points=QUICK_POINTS,
        half_width=QUICK_HALF_WIDTH,
        batch=QUICK_BATCH,
        max_systems=QUICK_MAX_SYSTEMS,
    )


class _ParamError(ValueError):
    def __init__(self, field: str, reason: str):
        super().__init__(field, reason)
        self.field = field
        self.reason = reason


def _input_error(out: Path, field: str, reason: str) -> InputError:
    return InputError(f"{out}: {field}: {reason}", str(out), field, reason)


# --------------------------------------------------------------------------- kernel and results


def evaluate_chunk(points_json: str, seed: int, half_width: float, z: float, batch: int, max_systems: int, preset: str = "imx6"):
    """One chunk through the kernel; what a Dask task runs. Returns (criticore version, columns)."""
    from criticore import _core as core
    from criticore import __version__

    return __version__, core.study_points(points_json, seed, half_width, z, batch, max_systems, preset)


def columns_to_table(raw: dict[str, bytes], scheme_names: list[str]):
    """The kernel's columns as a pyarrow table: the kernel's columns and types, except
    ``scheme`` is dictionary-encoded (its names) and ``schedulable`` is boolean."""
    import pyarrow as pa

    cols = {k: np.frombuffer(raw[k], dtype=dt) for k, dt in KERNEL_COLUMNS.items()}
    n = len(cols["scenario_id"])
    if any(len(v) != n for v in cols.values()):
        raise RuntimeError("study kernel returned columns of different lengths")
    scheme = pa.DictionaryArray.from_arrays(pa.array(cols["scheme"].astype(np.int8)), pa.array(scheme_names))
    return pa.table(
        {
            "scenario_id": pa.array(cols["scenario_id"], pa.uint32()),
            "point": pa.array(cols["point"], pa.uint32()),
            "utilization": pa.array(cols["utilization"], pa.float64()),
            "system": pa.array(cols["system"], pa.uint32()),
            "scheme": scheme,
            "schedulable": pa.array(cols["schedulable"].astype(bool)),
            "objective": pa.array(cols["objective"], pa.float64()),
        }
    )


def _write_atomic(path: Path, write: Callable[[object], None]) -> None:
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _write_json(path: Path, obj: dict) -> None:
    _write_atomic(path, lambda f: f.write((json.dumps(obj, indent=2) + "\n").encode()))


def chunk_name(wave: int, pairs: list[tuple[int, int]]) -> str:
    digest = hashlib.sha1(json.dumps(pairs).encode()).hexdigest()[:12]
    return f"point-{wave:03d}-{digest}.parquet"


def result_files(out: str | Path) -> list[Path]:
    """The finished chunk files of a study folder (temporary files excluded)."""
    d = Path(out) / RESULTS_DIR
    return sorted(p for p in d.glob("*.parquet") if not p.name.startswith((".", "_"))) if d.is_dir() else []


@dataclass
class StudyState:
    """What a study folder holds: the evaluated (scenario, point) pairs, and for each
    scenario the first evaluated point that no scheme schedules (its early stop).

    A point's rows always come together (one chunk, one file), so whether some
    scheme schedules a system at a point is known when the point is added."""

    done: dict[int, set[int]] = field(default_factory=dict)
    stops: dict[int, int] = field(default_factory=dict)
    systems: int = 0

    def add(self, scenario_ids: np.ndarray, points: np.ndarray, schedulable: np.ndarray, schemes: int) -> None:
        if len(scenario_ids) == 0:
            return
        s = scenario_ids.astype(np.int64)
        k = points.astype(np.int64)
        pairs = np.unique(np.stack([s, k], axis=1), axis=0)
        alive = {(int(a), int(b)) for a, b in np.unique(np.stack([s[schedulable], k[schedulable]], axis=1), axis=0)}
        for a, b in pairs:
            sid, point = int(a), int(b)
            self.done.setdefault(sid, set()).add(point)
            if (sid, point) not in alive and point < self.stops.get(sid, point + 1):
                self.stops[sid] = point
        self.systems += len(scenario_ids) // max(schemes, 1)

    def stop_point(self, sid: int) -> int | None:
        """The first evaluated point of ``sid`` that no scheme schedules (its later points are skipped)."""
        return self.stops.get(sid)

    def points_done(self) -> int:
        return sum(len(v) for v in self.done.values())


def read_state(out: str | Path, params: StudyParams | None = None, n_schemes: int = 9) -> StudyState:
    """Read the finished (scenario, point) pairs back from ``DIR/results``."""
    import pyarrow.parquet as pq

    state = StudyState()
    sids = set(params.scenario_ids) if params else None
    pts = set(params.points) if params else None
    for path in result_files(out):
        try:
            t = pq.read_table(path, columns=["scenario_id", "point", "schedulable"])
        except Exception as e:  # noqa: BLE001  (a damaged file: name it, one line)
            raise _input_error(Path(out), f"{RESULTS_DIR}/{path.name}", f"cannot read: {str(e).splitlines()[0]}") from None
        s = t.column("scenario_id").to_numpy()
        k = t.column("point").to_numpy()
        if sids is not None and (bad := set(np.unique(s).tolist()) - sids):
            raise _input_error(Path(out), f"{RESULTS_DIR}/{path.name}", f"holds scenario {min(bad)}, which is not in this study")
        if pts is not None and (bad := set(np.unique(k).tolist()) - pts):
            raise _input_error(Path(out), f"{RESULTS_DIR}/{path.name}", f"holds point {min(bad)}, which is not in this study")
        state.add(s, k, t.column("schedulable").to_numpy(zero_copy_only=False).astype(bool), n_schemes)
    return state


def load_study(out: str | Path) -> dict:
    """``DIR/study.json``; raises InputError when it is missing or damaged."""
    out = Path(out)
    path = out / STUDY_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _input_error(out, STUDY_FILE, "not found; is this a folder written by `criticore study run`?") from None
    except (OSError, ValueError) as e:
        raise _input_error(out, STUDY_FILE, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION or "parameters" not in meta:
        raise _input_error(out, STUDY_FILE, "not a criticore study description (format 1)")
    return meta


def params_of(meta: dict) -> StudyParams:
    p = meta["parameters"]
    return StudyParams(
        seed=int(p["seed"]),
        scenario_ids=tuple(p["scenario_ids"]),
        points=tuple(p["points"]),
        half_width=float(p["half_width"]),
        z=float(p["z"]),
        batch=int(p["batch"]),
        max_systems=int(p["max_systems"]),
        preset=str(p.get("preset", "imx6")),
    )


def _versions(extra: dict | None = None) -> dict:
    import pyarrow

    v = {
        "criticore": criticore.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
    }
    v.update(extra or {})
    return v


# --------------------------------------------------------------------------- backends


class _LocalBackend:
    """Chunks through the kernel in this process; rayon runs each chunk's points on every core.

    Two chunks are in flight at a time (the kernel releases the GIL), so the cores stay
    busy while one chunk waits for its slowest point; the rayon pool is shared."""

    name = "local"
    in_flight = 2

    def __init__(self) -> None:
        self.threads = os.cpu_count() or 1

    def chunk_size(self, n: int) -> int:
        return max(1, min(4 * self.threads, math.ceil(n / self.in_flight)))

    def run(self, chunks: list[str], params: StudyParams) -> Iterator[tuple[int, dict]]:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        args = (params.seed, params.half_width, params.z, params.batch, params.max_systems, params.preset)

        def result(get):
            try:
                return get()[1]
            except ValueError as e:  # the kernel refused its input: a bug here, reported in one line
                raise RuntimeError(f"study kernel: {str(e).splitlines()[0]}") from None

        if len(chunks) == 1:
            yield 0, result(lambda: evaluate_chunk(chunks[0], *args))
            return
        pool = ThreadPoolExecutor(max_workers=self.in_flight, thread_name_prefix="criticore-study")
        try:
            futures = {pool.submit(evaluate_chunk, c, *args): i for i, c in enumerate(chunks)}
            for f in as_completed(futures):
                yield futures[f], result(f.result)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def versions(self) -> dict:
        return {}

    def close(self) -> None:
        pass


DASK_MISSING = 'Dask is not installed; pip install "dask[distributed]"'


class _DaskBackend:
    """Chunks as Dask tasks; each task runs the same kernel (rayon inside, on the worker's cores)."""

    def __init__(self, target, workers: int | None, out: Path):
        try:
            import distributed
        except ImportError:
            raise _input_error(out, "--dask", DASK_MISSING) from None
        self._cluster = None
        self._own_client = True
        if isinstance(target, distributed.Client):
            self.client = target
            self._own_client = False
            self.name = "dask (given client)"
        elif target == "local":
            n = workers or (os.cpu_count() or 1)
            rayon = max(1, (os.cpu_count() or 1) // n)
            try:
                self._cluster = distributed.LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # Task failures reach us through the futures (one error line); keep the
                    # scheduler's and workers' shutdown chatter off the terminal.
                    silence_logs=logging.CRITICAL,
                    env={"RAYON_NUM_THREADS": str(rayon)},
                )
                self.client = distributed.Client(self._cluster)
            except Exception as e:  # noqa: BLE001
                self.close()
                raise _input_error(out, "--dask", f"cannot start a local cluster: {str(e).splitlines()[0]}") from None
            self.name = f"dask LocalCluster ({n} workers)"
        else:
            try:
                self.client = distributed.Client(target, timeout="20s")
            except Exception as e:  # noqa: BLE001
                raise _input_error(out, "--dask", f"cannot connect to {target}: {str(e).splitlines()[0] or type(e).__name__}") from None
            self.name = f"dask {target}"
        self._distributed = distributed

    def threads(self) -> int:
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001
            return 1

    def chunk_size(self, n: int) -> int:
        # About three tasks per worker thread and wave, at most 32 points per task.
        return max(1, min(32, math.ceil(n / (3 * self.threads()))))

    def run(self, chunks: list[str], params: StudyParams) -> Iterator[tuple[int, dict]]:
        futures = {}
        for i, c in enumerate(chunks):
            f = self.client.submit(
                evaluate_chunk, c, params.seed, params.half_width, params.z, params.batch, params.max_systems, params.preset, pure=False
            )
            futures[f] = i
        try:
            for f in self._distributed.as_completed(list(futures)):
                try:
                    version, cols = f.result()
                except Exception as e:  # noqa: BLE001  (a worker's failure, reported in one line)
                    first = str(e).splitlines()[0] if str(e) else ""
                    raise RuntimeError(f"a Dask task failed: {type(e).__name__}: {first}") from None
                if version != criticore.__version__:
                    raise RuntimeError(
                        f"a worker runs criticore {version}, this process {criticore.__version__}; install the same version everywhere"
                    )
                yield futures[f], cols
                f.release()
        finally:
            for f in futures:
                f.cancel()

    def versions(self) -> dict:
        import dask

        return {"dask": dask.__version__, "distributed": self._distributed.__version__}

    def close(self) -> None:
        if self._own_client and getattr(self, "client", None) is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()


def _backend(dask, workers: int | None, out: Path):
    if dask is None:
        if workers is not None:
            raise _input_error(out, "--workers", "only with --dask local")
        return _LocalBackend()
    if isinstance(dask, str):
        if dask != "local" and not re.match(r"^[a-z][a-z0-9+.-]*://\S+$", dask):
            raise _input_error(out, "--dask", f"{dask!r}: expected local or a scheduler address like tcp://host:8786")
        if workers is not None and dask != "local":
            raise _input_error(out, "--workers", "only with --dask local (a remote cluster has its own workers)")
        if workers is not None and workers < 1:
            raise _input_error(out, "--workers", "must be at least 1")
    return _DaskBackend(dask, workers, out)


# --------------------------------------------------------------------------- the study folder


@contextlib.contextmanager
def _locked(out: Path):
    """One run per study folder at a time (advisory lock, released when the process dies)."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no lock
        yield
        return
    f = open(out / LOCK_FILE, "w")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise _input_error(out, "--output", "another `criticore study run` is writing this folder") from None
        yield
    finally:
        f.close()


def _differences(old: dict, new: dict) -> str:
    diffs = []
    for k in new:
        if old.get(k) != new[k]:
            if k == "scenario_ids":
                diffs.append(f"scenarios ({len(old.get(k) or [])} vs {len(new[k])} selected)")
            elif k == "points":
                o = old.get(k) or []
                diffs.append(f"utilization grid ({format_grid(o) if o else 'none'} vs {format_grid(new[k])})")
            else:
                diffs.append(f"{k} ({old.get(k)} vs {new[k]})")
    return ", ".join(diffs)


def _clear(out: Path) -> None:
    """Remove what a previous study wrote (only our own files)."""
    for p in result_files(out):
        p.unlink()
    if (out / RESULTS_DIR).is_dir():
        for p in (out / RESULTS_DIR).glob(".tmp-*"):
            p.unlink()
    for name in (STUDY_FILE, "report.md"):
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()
    plots = out / "plots"
    if plots.is_dir():
        for p in plots.glob("*.png"):
            p.unlink()


def _inspect(out: Path, params: StudyParams, force: bool) -> tuple[dict | None, bool]:
    """Check the output folder without changing it: (study.json to resume from, whether to clear first)."""
    if out.exists() and not out.is_dir():
        raise _input_error(out, "--output", "is a file, not a folder")
    if not out.exists():
        if not out.parent.exists():
            raise _input_error(out, "--output", f"folder {out.parent} does not exist")
        return None, False
    if (out / STUDY_FILE).exists():
        try:
            old = load_study(out)
        except InputError:
            if not force:
                raise _input_error(out, "--output", f"holds a damaged {STUDY_FILE}; pass --force to start over") from None
            return None, True
        diffs = _differences(old["parameters"], params.identity())
        if not diffs:
            return old, False
        if not force:
            raise _input_error(
                out, "--output", f"holds a study with other parameters: {diffs}; pass --force to replace it, or choose another folder"
            )
        return None, True
    ours = {LOCK_FILE, RESULTS_DIR}
    if any(p.name not in ours for p in out.iterdir()) or result_files(out):
        if not force:
            raise _input_error(out, "--output", "exists and is not a criticore study; pass --force to write into it, or choose another folder")
        return None, True
    return None, False


@dataclass
class StudySummary:
    out: Path
    complete: bool
    scenarios: int
    points_done: int
    points_evaluated_now: int
    points_skipped: int
    systems: int
    stopped: dict[int, float]
    seconds: float
    backend: str


def _metadata(params: StudyParams, state: StudyState, runs: list, complete: bool, versions: dict) -> dict:
    stopped = {}
    for sid in params.scenario_ids:
        k = state.stop_point(sid)
        if k is not None:
            stopped[str(sid)] = {"point": k, "utilization": utilization(k)}
    skipped = sum(sum(1 for k in params.points if k > int(v["point"])) for v in stopped.values())
    return {
        "format": FORMAT_VERSION,
        "kind": "criticore schedulability study (mc2-io-ipc-os-isolation §6)",
        "parameters": params.identity(),
        "grid": {
            "step": GRID_STEP,
            "rule": "point k is system utilization 0.25*(k+1)",
            "utilizations": [utilization(k) for k in params.points],
        },
        "schemes": schemes(),
        "categories": [{"key": c.key, "choices": list(c.choices)} for c in categories()],
        "scenario_id_rule": "index in the cross product of the categories in this order, first category slowest",
        "scenarios": {str(sid): scenario(sid) for sid in params.scenario_ids},
        "results": {
            "layout": "results/*.parquet, one file per finished chunk of (scenario, point) pairs",
            "columns": {
                "scenario_id": "uint32",
                "point": "uint32",
                "utilization": "float64",
                "system": "uint32",
                "scheme": "dictionary<int8, string> (scheme name)",
                "schedulable": "bool",
                "objective": "float64 (optimized total Level-C utilization; NaN when unschedulable)",
            },
        },
        "versions": versions,
        "progress": {
            "complete": complete,
            "points_done": state.points_done(),
            "systems": state.systems,
            "early_stop_rule": "a scenario's later points are not evaluated once a point is unschedulable under every scheme; they count as 0",
            "points_skipped": skipped,
            "stopped": stopped,
        },
        "runs": runs,
    }


def run_study(
    out: str | Path,
    params: StudyParams,
    *,
    force: bool = False,
    dask=None,
    workers: int | None = None,
    chunk_points: int | None = None,
    console=None,
    progress: bool = True,
    on_chunk: Callable[[int], None] | None = None,
) -> StudySummary:
    """Run (or resume) a study into folder ``out``.

    ``dask``: None (local backend), ``"local"`` (a LocalCluster of ``workers``
    processes), a scheduler address (``tcp://host:8786``) or a
    ``distributed.Client``. ``chunk_points`` overrides the number of points per
    chunk. ``on_chunk(n)`` is called after the n-th chunk file of this run is
    written (a test hook; an exception stops the run like a kill would).
    Raises InputError (one line: folder, option, reason) for bad input.
    """
    out = Path(out)
    try:
        params.check()
    except _ParamError as e:
        raise _input_error(out, e.field, e.reason) from None
    if chunk_points is not None and chunk_points < 1:
        raise _input_error(out, "--chunk", "must be at least 1")
    scheme_names = schemes()
    old, clear = _inspect(out, params, force)
    backend = _backend(dask, workers, out)
    kill_after = int(os.environ.get(KILL_AFTER_ENV, "0") or 0)
    started = time.time()
    try:
        out.mkdir(exist_ok=True)
        with _locked(out):
            if clear:
                _clear(out)
            (out / RESULTS_DIR).mkdir(exist_ok=True)
            for p in (out / RESULTS_DIR).glob(".tmp-*"):  # left by a killed run
                p.unlink()
            state = read_state(out, params, len(scheme_names))
            versions = _versions(backend.versions())
            runs = list(old.get("runs", [])) if old else []
            runs.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "backend": backend.name, "resumed_points": state.points_done()})

            def save(complete: bool = False) -> None:
                _write_json(out / STUDY_FILE, _metadata(params, state, runs, complete, versions))

            save()
            summary = _sweep(out, params, state, backend, scheme_names, chunk_points, console, progress, on_chunk, kill_after, save)
            runs[-1]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            runs[-1]["seconds"] = round(time.time() - started, 3)
            runs[-1]["points_evaluated"] = summary.points_evaluated_now
            save(complete=True)
    finally:
        backend.close()
    summary.seconds = time.time() - started
    summary.backend = backend.name
    return summary


def _expected_total(params: StudyParams, state: StudyState) -> int:
    """Points a finished study will have evaluated, as far as known now (shrinks as scenarios stop)."""
    import bisect

    n = len(params.points)
    return sum(n if (stop := state.stops.get(sid)) is None else bisect.bisect_right(params.points, stop) for sid in params.scenario_ids)


def _sweep(out, params, state, backend, scheme_names, chunk_points, console, progress, on_chunk, kill_after, save) -> StudySummary:
    import pyarrow.parquet as pq

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    console = console or Console(stderr=True)
    total = _expected_total(params, state)
    evaluated_now = 0
    written = 0
    columns = [
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/≤{task.total} points"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[note]}"),
    ]
    with Progress(*columns, console=console, disable=not progress, transient=False) as bar:
        task = bar.add_task("study", total=total, completed=state.points_done(), note="")
        for wave in params.points:
            todo = [
                sid
                for sid in params.scenario_ids
                if wave not in state.done.get(sid, ())
                and (state.stop_point(sid) is None or state.stop_point(sid) > wave)
            ]
            if not todo:
                continue
            size = chunk_points or backend.chunk_size(len(todo))
            groups = [todo[i : i + size] for i in range(0, len(todo), size)]
            payloads = [
                json.dumps(
                    [{"scenario_id": sid, "scenario": scenario(sid), "point": wave, "utilization": utilization(wave)} for sid in g]
                )
                for g in groups
            ]
            bar.update(task, description=f"U = {utilization(wave):5.2f}")
            for i, raw in backend.run(payloads, params):
                table = columns_to_table(raw, scheme_names)
                pairs = [(sid, wave) for sid in groups[i]]
                got = set(zip(table.column("scenario_id").to_numpy().tolist(), table.column("point").to_numpy().tolist()))
                if got != set(pairs):
                    raise RuntimeError(f"study kernel returned rows for {sorted(got ^ set(pairs))[:3]} instead of the chunk's points")
                name = chunk_name(wave, pairs)
                try:
                    _write_atomic(out / RESULTS_DIR / name, lambda f: pq.write_table(table, f, compression="zstd"))
                except OSError as e:
                    raise _input_error(out, "--output", f"cannot write {RESULTS_DIR}/{name}: {e.strerror or e}") from None
                state.add(
                    table.column("scenario_id").to_numpy(),
                    table.column("point").to_numpy(),
                    table.column("schedulable").to_numpy(zero_copy_only=False),
                    len(scheme_names),
                )
                evaluated_now += len(pairs)
                written += 1
                stopped = len(state.stops)
                bar.update(
                    task,
                    completed=state.points_done(),
                    total=_expected_total(params, state),
                    note=f"{state.systems:,} systems, {stopped}/{len(params.scenario_ids)} scenarios stopped early",
                )
                if on_chunk is not None:
                    on_chunk(written)
                if kill_after and written >= kill_after:
                    import signal

                    os.kill(os.getpid(), signal.SIGKILL)
            save()  # progress and early stops after every wave
    stopped = {sid: utilization(k) for sid in params.scenario_ids if (k := state.stop_point(sid)) is not None}
    skipped = sum(sum(1 for k in params.points if k > state.stop_point(sid)) for sid in stopped)
    return StudySummary(
        out=out,
        complete=True,
        scenarios=len(params.scenario_ids),
        points_done=state.points_done(),
        points_evaluated_now=evaluated_now,
        points_skipped=skipped,
        systems=state.systems,
        stopped=stopped,
        seconds=0.0,
        backend="",
    )


def _arrow_types() -> dict:
    import pyarrow as pa

    return {
        "scenario_id": pa.uint32(),
        "point": pa.uint32(),
        "utilization": pa.float64(),
        "system": pa.uint32(),
        "scheme": pa.string(),
        "schedulable": pa.bool_(),
        "objective": pa.float64(),
    }


def load_results(out: str | Path, columns: list[str] | None = None):
    """All rows of a study folder as one pyarrow table (``scheme`` decoded to strings)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = list(KERNEL_COLUMNS) if columns is None else list(columns)
    types = _arrow_types()
    tables = []
    for p in result_files(out):
        t = pq.read_table(p, columns=names)
        if "scheme" in names:
            t = t.set_column(names.index("scheme"), "scheme", t.column("scheme").cast(pa.string()))
        tables.append(t)
    if not tables:
        return pa.table({k: pa.array([], types[k]) for k in names})
    return pa.concat_tables(tables)


def sorted_results(out: str | Path):
    """All rows sorted by (scenario, point, system, scheme in engine order): the study's
    content, whatever the chunking, backend or interruptions. ``objective`` is NaN for
    unschedulable rows, so compare floats with NaN = NaN."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = load_results(out)
    order = pc.index_in(t.column("scheme"), value_set=pa.array(schemes()))
    t = t.append_column("_scheme_order", order)
    t = t.sort_by([("scenario_id", "ascending"), ("point", "ascending"), ("system", "ascending"), ("_scheme_order", "ascending")])
    return t.drop_columns(["_scheme_order"])


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use `criticore study run`")
