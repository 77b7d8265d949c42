"""The study folder: ``DIR/study.json`` and the chunk files of ``DIR/results``,
written atomically and read back (what a rerun resumes from); the kernel call
of one chunk and its columns as a table."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

import criticore._core as _core
from criticore._core import __version__
from criticore.study.catalogue import schemes
from criticore.study.parameters import StudyParams, _input_error

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


# --------------------------------------------------------------------------- kernel and results


def evaluate_chunk(points_json: str, seed: int, half_width: float, z: float, batch: int, max_systems: int, preset: str = "imx6"):
    """One chunk through the kernel; what a Dask task runs. Returns (criticore version, columns)."""
    return __version__, _core.study_points(points_json, seed, half_width, z, batch, max_systems, preset)


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
        "criticore": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
    }
    v.update(extra or {})
    return v


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
