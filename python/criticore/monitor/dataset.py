"""The profile dataset: what profiling measured, the input of the overhead-table
builder (blin-bandwidth-monitor §3.1–3.2; `criticore tables build`).

One Parquet file, one row per (run, phase); the schema is in docs/format.md
("Profile dataset"). Real runs (`criticore profile`) and simulated ones
(:mod:`criticore.monitor.simulated`) write the same columns, so the builder
(:mod:`criticore.monitor.tables`) does not know where the numbers came from.

:func:`read` and :func:`validate` turn every defect into an
:class:`~criticore.InputError` naming the file, the column (or metadata key)
and the reason, which the CLI prints as one line with exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from criticore.errors import InputError

#: Label of the isolation runs.
ALONE = "alone"
#: Phase number of the rows that cover the whole job.
WHOLE_JOB = -1
SOURCES = ("real", "simulated")

#: Column → (type, nullable). Integer columns may come in any integer width,
#: ``load_delay`` as any integer or float type; they are cast on reading.
COLUMNS: dict[str, tuple[pa.DataType, bool]] = {
    "run": (pa.int64(), False),
    "repetition": (pa.int64(), False),
    "warmup": (pa.bool_(), False),
    "load": (pa.string(), False),
    "load_reads": (pa.int64(), True),
    "load_delay": (pa.float64(), True),
    "load_cores": (pa.int64(), False),
    "load_multipliers": (pa.string(), False),
    "phase": (pa.int64(), False),
    "exec_ns": (pa.int64(), False),
    "bytes": (pa.int64(), False),
}
#: Optional column: global bytes per sampling interval of the job, on phase −1 rows.
SAMPLES = "samples"
SAMPLES_TYPE = pa.list_(pa.int64())
#: Required schema metadata keys.
METADATA = ("task", "line_bytes", "sample_ns", "source", "machine", "be_cores")

SCHEMA = pa.schema([pa.field(k, t, nullable=n) for k, (t, n) in COLUMNS.items()] + [pa.field(SAMPLES, SAMPLES_TYPE)])


@dataclass(frozen=True)
class Meta:
    """The dataset's schema metadata, parsed."""

    task: str
    line_bytes: int
    sample_ns: int
    source: str
    machine: str
    be_cores: int
    #: Every key/value, the optional ones included (e.g. ``system``, ``load_peak_mb_s``).
    extra: dict[str, str]


def _error(file: str, field: str, reason: str) -> InputError:
    return InputError(f"{file}: {field}: {reason}", file, field, reason)


def make(columns: dict[str, Any], metadata: dict[str, Any], file: str = "(dataset)") -> pa.Table:
    """A validated dataset from column arrays (``samples`` optional) and metadata
    values (turned into strings)."""
    fields = [f for f in SCHEMA if f.name in columns]
    arrays = [pa.array(columns[f.name], type=f.type) for f in fields]
    meta = {str(k): str(v) for k, v in metadata.items()}
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))
    return validate(table, file)


def write(table: pa.Table, path: str | Path, option: str = "--output") -> Path:
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        pq.write_table(table, path)
    except OSError as e:
        raise _error(str(path), option, f"cannot write: {e.strerror or e}") from None
    return path


def read(path: str | Path) -> pa.Table:
    """Read and validate a profile dataset."""
    import pyarrow.parquet as pq

    file = str(path)
    if not Path(path).is_file():
        raise _error(file, "(file)", "cannot read: " + ("is a folder" if Path(path).is_dir() else "no such file"))
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise _error(file, "(file)", f"not a readable Parquet file ({reason})") from None
    return validate(table, file)


def meta(table: pa.Table, file: str = "(dataset)") -> Meta:
    """The schema metadata, checked: every required key, with a value of the right kind."""
    raw = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in (table.schema.metadata or {}).items()}
    for key in METADATA:
        if key not in raw:
            raise _error(file, f"metadata.{key}", "missing (schema metadata key)")

    def positive(key: str) -> int:
        text = raw[key].strip()
        if not text.isdigit() or int(text) <= 0:
            raise _error(file, f"metadata.{key}", f"expected a positive integer, got {raw[key]!r}")
        return int(text)

    if raw["source"] not in SOURCES:
        raise _error(file, "metadata.source", f"expected one of {', '.join(SOURCES)}, got {raw['source']!r}")
    if not raw["task"].strip():
        raise _error(file, "metadata.task", "empty")
    return Meta(
        task=raw["task"], line_bytes=positive("line_bytes"), sample_ns=positive("sample_ns"), source=raw["source"],
        machine=raw["machine"], be_cores=positive("be_cores"), extra=raw,
    )


def _cast_column(table: pa.Table, name: str, file: str) -> pa.Array:
    want, nullable = COLUMNS[name]
    col = table.column(name)
    t = col.type
    ok = (
        t == want
        or (pa.types.is_integer(want) and pa.types.is_integer(t))
        or (pa.types.is_floating(want) and (pa.types.is_floating(t) or pa.types.is_integer(t)))
        or (pa.types.is_string(want) and pa.types.is_large_string(t))
        or pa.types.is_null(t) and nullable
    )
    if not ok:
        raise _error(file, name, f"wrong type {t} (expected {want})")
    try:
        col = col.cast(want)
    except pa.ArrowInvalid as e:
        raise _error(file, name, f"cannot be read as {want}: {str(e).splitlines()[0]}") from None
    if not nullable and col.null_count:
        raise _error(file, name, f"{col.null_count} null value(s) (every row needs one)")
    return col


def validate(table: pa.Table, file: str = "(dataset)") -> pa.Table:
    """Check a dataset against the schema and its rules; return it with the
    standard column types (integers as int64, ``load_delay`` as float64).

    Rules beyond the types: metadata (:func:`meta`); at most one row per
    (run, phase); the rows of a run agree on its load, repetition and warm-up
    flag; phases are 0…n−1 (every run has all of them) plus an optional −1 row
    for the whole job; ``exec_ns`` > 0, ``bytes`` ≥ 0; an ``alone`` run has
    ``load_cores`` 0, ``load_multipliers`` "" and null reads and delay; a loaded
    run has reads in 0…10, a delay ≥ 0, 1 ≤ ``load_cores`` ≤ ``be_cores`` and
    that many positive multipliers; ``samples`` only on −1 rows, each ≥ 0; at
    least one non-warm-up alone run and one non-warm-up loaded run.
    """
    m = meta(table, file)
    names = set(table.column_names)
    for name in COLUMNS:
        if name not in names:
            raise _error(file, name, "missing column")
    cols = {name: _cast_column(table, name, file) for name in COLUMNS}
    fields = [pa.field(k, t, nullable=n) for k, (t, n) in COLUMNS.items()]
    if SAMPLES in names:
        t = table.column(SAMPLES).type
        if not ((pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_integer(t.value_type)) and not pa.types.is_null(t):
            raise _error(file, SAMPLES, f"wrong type {t} (expected {SAMPLES_TYPE})")
        cols[SAMPLES] = table.column(SAMPLES).cast(SAMPLES_TYPE)
        fields.append(pa.field(SAMPLES, SAMPLES_TYPE))
    out = pa.Table.from_arrays([cols[f.name] for f in fields], schema=pa.schema(fields, metadata=table.schema.metadata))
    if out.num_rows == 0:
        raise _error(file, "(rows)", "no rows")
    _check_rows(out, m, file)
    return out


def _where(run: int, phase: int | None = None) -> str:
    return f"run {run}" + ("" if phase is None else f", phase {phase}")


def _check_rows(t: pa.Table, m: Meta, file: str) -> None:
    run = t.column("run").to_numpy()
    phase = t.column("phase").to_numpy()
    exec_ns = t.column("exec_ns").to_numpy()
    nbytes = t.column("bytes").to_numpy()
    for name, values, bad, reason in (
        ("phase", phase, phase < WHOLE_JOB, "must be −1 (whole job) or a phase number 0…n−1"),
        ("exec_ns", exec_ns, exec_ns <= 0, "must be positive"),
        ("bytes", nbytes, nbytes < 0, "must not be negative"),
        ("repetition", t.column("repetition").to_numpy(), t.column("repetition").to_numpy() < 0, "must not be negative"),
    ):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _error(file, name, f"{_where(int(run[i]), int(phase[i]))}: {values[i]} {reason}")
    order = np.lexsort((phase, run))
    r, p = run[order], phase[order]
    dup = (r[1:] == r[:-1]) & (p[1:] == p[:-1])
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise _error(file, "phase", f"{_where(int(r[i]), int(p[i]))}: more than one row")
    n_phase = int(phase.max()) + 1
    if n_phase == 0:
        raise _error(file, "phase", "no phase rows (only −1 rows): phases are numbered 0…n−1")
    keys = ("load", "load_reads", "load_delay", "load_cores", "load_multipliers", "repetition", "warmup")
    rows = {k: t.column(k).to_pylist() for k in keys}
    samples = t.column(SAMPLES).to_pylist() if SAMPLES in t.column_names else None
    seen: dict[int, tuple] = {}
    phases_of: dict[int, set[int]] = {}
    for i in range(t.num_rows):
        ri, pi = int(run[i]), int(phase[i])
        key = tuple(rows[k][i] for k in keys)
        if ri in seen and seen[ri] != key:
            col = next(k for k, a, b in zip(keys, seen[ri], key) if a != b)
            raise _error(file, col, f"{_where(ri)}: rows of one run disagree ({seen[ri][keys.index(col)]!r} and {key[keys.index(col)]!r})")
        if ri not in seen:
            _check_load(key, ri, m, file)
        seen[ri] = key
        phases_of.setdefault(ri, set()).add(pi)
        if samples is not None and samples[i] is not None:
            if pi != WHOLE_JOB:
                raise _error(file, SAMPLES, f"{_where(ri, pi)}: samples belong on the whole-job (phase −1) row")
            if any(v is None or v < 0 for v in samples[i]):
                raise _error(file, SAMPLES, f"{_where(ri, pi)}: null or negative sample")
    want = set(range(n_phase))
    for ri, ps in phases_of.items():
        missing = sorted(want - ps)
        if missing:
            raise _error(file, "phase", f"{_where(ri)}: no row for phase {missing[0]} (the dataset has phases 0…{n_phase - 1})")
    kept = [k for k in seen.values() if not k[keys.index("warmup")]]
    if not any(k[0] == ALONE for k in kept):
        raise _error(file, "load", f"no {ALONE!r} rows outside warm-up (ExecT comes from the isolation runs)")
    if not any(k[0] != ALONE for k in kept):
        raise _error(file, "load", "no loaded rows outside warm-up (nothing to fit)")


def _check_load(key: tuple, run: int, m: Meta, file: str) -> None:
    label, reads, delay, cores, mult = key[:5]
    where = _where(run)
    if label == ALONE:
        for name, value, want in (("load_reads", reads, None), ("load_delay", delay, None), ("load_cores", cores, 0), ("load_multipliers", mult, "")):
            if value != want:
                raise _error(file, name, f"{where}: {value!r} on an {ALONE!r} run (expected {want!r})")
        return
    if not label.strip():
        raise _error(file, "load", f"{where}: empty label")
    if reads is None or not 0 <= reads <= 10:
        raise _error(file, "load_reads", f"{where}: {reads!r}: expected lines read per 10, 0…10")
    if delay is None or not np.isfinite(delay) or delay < 0:
        raise _error(file, "load_delay", f"{where}: {delay!r}: expected a finite delay ≥ 0")
    if not 1 <= cores <= m.be_cores:
        raise _error(file, "load_cores", f"{where}: {cores}: expected 1…{m.be_cores} (metadata be_cores)")
    parsed = parse_multipliers(mult)
    if parsed is None or len(parsed) != cores:
        raise _error(file, "load_multipliers", f"{where}: {mult!r}: expected {cores} positive integers separated by commas")


def parse_multipliers(text: str) -> tuple[int, ...] | None:
    """``"1,2,3"`` → (1, 2, 3); None if malformed."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        return None
    return tuple(int(p) for p in parts)
