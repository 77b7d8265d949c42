"""Profiling a real-time task for the bandwidth monitor on the simulator
(blin-bandwidth-monitor §3.1–3.2): the simulated source of a profile dataset
(docs/format.md, "Profile dataset"), which :mod:`criticore.monitor.tables`
turns into an overhead table like a dataset measured on the machine
(`criticore tables simulate`, then `criticore tables build`; method and
choices in docs/bandwidth-monitor.md).

The paper profiles the real-time (RT) task on the board: it runs the task alone
(ExecT), then next to a range of constant loads from its load microbenchmark,
and records per phase the execution time and the global memory traffic.
:func:`simulated_dataset` does the same with the simulator standing in for the
board:

- the microbenchmark is a ``stream`` task over 64 MiB (every reference misses)
  on a best-effort core, ``reads`` of every 10 lines read, the rest written,
  with ``delay`` ns of compute per line (the wait loop, §3.1, Fig. 4);
- per-phase times come from *phase-only variants*: the RT task cut down to one
  phase (its work as PET, its behaviour as the only phase), run next to the
  same load. The fluid model has no warm-up state, so such a run takes exactly
  as long as that phase does inside the whole task (the builder checks the sum
  of the phase times against the whole job's, ``Profile.phase_sum_error``).
  One dataset run per load holds these phase-only runs (phases 0…n−1) and the
  whole-job run (phase −1, with its per-sample trace);
- bytes are the global traffic (all cores) during that run, from the
  simulator's bandwidth series: the mean rate over the whole bins inside the
  run (every rate is constant there) times the run's time, rounded to the byte.

The simulator is deterministic, so there is one repetition and no warm-up.
Everything is deterministic: the same inputs give the same dataset.

    criticore tables simulate examples/monitor/rt-with-loads.toml \\
        --rt-task rt --be-cores 1,2,3 -o rt-profile.parquet
"""

from __future__ import annotations

import json
import math
import re
import tempfile
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from criticore.system import check
from criticore.monitor import dataset as ds
from criticore.monitor.tables import ns_text as _ns_text
from criticore.simulation.run import simulate

__all__ = [
    "Load",
    "configs_for",
    "microbenchmark_loads",
    "load_rates",
    "microbenchmark_peak_mb_s",
    "write_variant",
    "dump_toml",
    "simulated_dataset",
    "evaluate_monitor",
]

#: Load configurations of §3.1: delay multipliers of the loaded best-effort cores.
CONFIGS = ((1,), (1, 1), (1, 2), (1, 1, 1), (1, 2, 3))
#: The wait loop x, as ns of compute per line (0: the bus-saturating bomb).
DELAYS_NS = (0, 10, 20, 40, 80, 160, 320, 640, 1280, 2560)
#: Working set of a microbenchmark instance: far larger than the LLC, so every line misses.
BOMB_WSS = "64MiB"
_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


# --------------------------------------------------------------------------- loads


@dataclass(frozen=True)
class Load:
    """A constant load (§3.1): on the i-th loaded best-effort core, an instance of
    the microbenchmark with ``reads`` reads per ``10 − reads`` writes and
    ``multipliers[i] × delay_ns`` ns of compute per line."""

    reads: int
    delay_ns: float
    multipliers: tuple[int, ...] = (1, 1, 1)

    @property
    def read_fraction(self) -> float:
        return self.reads / 10

    def label(self) -> str:
        return f"{self.reads}r{10 - self.reads}w x={self.delay_ns:g}ns [{','.join(f'{m}x' for m in self.multipliers)}]"


def microbenchmark_loads(
    reads: Iterable[int] = range(11), delays_ns: Iterable[float] = DELAYS_NS, configs: Iterable[tuple[int, ...]] = CONFIGS
) -> list[Load]:
    """The grid of §3.1: every read-write ratio × delay × load configuration."""
    return [Load(r, float(d), tuple(c)) for r in reads for c in configs for d in delays_ns]


def configs_for(cores: int) -> tuple[tuple[int, ...], ...]:
    """The §3.1 configurations with every one of ``cores`` best-effort cores
    loaded, symmetric (1x, 1x, …) and asymmetric (1x, 2x, …): the paper builds
    one table per number of active best-effort cores; the engine's monitor
    takes one, the one for all of them."""
    return ((1,) * cores, tuple(range(1, cores + 1))) if cores > 1 else ((1,),)


def _miss_ns(line_bytes: int, peak: dict[int, float], reads: int) -> float:
    """Isolated time per line of the microbenchmark with no delay, from its peak bandwidth."""
    return line_bytes / (peak[reads] / 1e3)  # MB/s → bytes/ns


def load_rates(load: Load, ns_per_line: dict[int, float]) -> list[float]:
    """Lines per ms each instance of ``load`` issues alone (§3.1's wait loop):
    1e6 / (t₀ + multiplier × delay), t₀ = ``ns_per_line[reads]``, the
    undelayed microbenchmark's time per line."""
    return [1e6 / (ns_per_line[load.reads] + m * load.delay_ns) for m in load.multipliers]


def _bomb(name: str, core: int, reads: int, accesses_per_ms: float, period: str) -> dict:
    return {
        "name": name,
        "core": core,
        "period": period,
        "pet": period,
        "memory": {"wss": BOMB_WSS, "pattern": "stream", "read_fraction": reads / 10, "accesses_per_ms": round(accesses_per_ms, 3)},
    }


# --------------------------------------------------------------------------- TOML in and out


def _duration_ns(text: str) -> int:
    """A duration string of a task file ("1200us", "1.5ms") in ns, exactly."""
    t = text.strip()
    digits = ""
    for ch in t:
        if ch.isdigit() or ch == ".":
            digits += ch
        else:
            break
    unit = t[len(digits) :].strip()
    if not digits or unit not in _NS:
        raise ValueError(f"not a duration: {text!r}")
    value = Decimal(digits) * _NS[unit]
    if value != value.to_integral_value():
        raise ValueError(f"{text!r} is not a whole number of nanoseconds")
    return int(value)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("TOML variant: non-finite number")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_value(k)


def dump_toml(doc: dict) -> str:
    """The subset of TOML task-system files use: top-level tables of scalars and
    inline tables, and arrays of tables (``[[task]]``)."""
    out: list[str] = []
    for key, value in doc.items():
        if isinstance(value, dict):
            out.append(f"[{key}]")
            out += [f"{_key(k)} = {_toml_value(v)}" for k, v in value.items()]
            out.append("")
        elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            for item in value:
                out.append(f"[[{key}]]")
                out += [f"{_key(k)} = {_toml_value(v)}" for k, v in item.items()]
                out.append("")
        else:
            out.insert(0, f"{_key(key)} = {_toml_value(value)}")
    return "\n".join(out)


def _load_doc(task_file: str | Path) -> dict:
    """A task-system file as a dict: JSON for .json (the same schema), TOML otherwise."""
    with open(task_file, "rb") as f:
        return json.load(f) if Path(task_file).suffix.lower() == ".json" else tomllib.load(f)


def _pet_ns(task: dict) -> int:
    """ExecT as the engine's monitor takes it: the PET at the default level C
    (for a task without levels: its one PET, or the most critical one given)."""
    pet = task["pet"]
    if isinstance(pet, str):
        return _duration_ns(pet)
    for level in ("C", "A", "B", "D"):
        if level in pet:
            return _duration_ns(pet[level])
    raise ValueError("the RT task has no PET")


def _phases(task: dict) -> list[dict]:
    """The RT task's memory phases, each with its own work (ns), rate and read fraction."""
    mem = task.get("memory")
    if mem is None:
        raise ValueError(f"task {task['name']!r} has no memory profile: nothing to profile")
    base_rf = mem.get("read_fraction", 1.0)
    items = mem.get("phases") or [{"accesses_per_ms": mem["accesses_per_ms"]}]
    pet = _pet_ns(task)
    phases, done = [], 0
    for i, p in enumerate(items):
        work = _duration_ns(p["work"]) if "work" in p else None
        if work is None or i == len(items) - 1:
            # The last phase lasts to the end of the job (the engine ignores a last `work`).
            work = pet - done
        work = min(work, pet - done)
        if work <= 0:
            break  # the PET ends before this phase
        phases.append(
            {
                "work_ns": work,
                "accesses_per_ms": p.get("accesses_per_ms", mem.get("accesses_per_ms")),
                "read_fraction": p.get("read_fraction", base_rf),
            }
        )
        done += work
    return phases


def write_variant(
    task_file: str | Path,
    out_path: str | Path,
    *,
    rt_task: str,
    be_cores: Sequence[int],
    load: Load | None = None,
    bomb_ns_per_line: dict[int, float] | None = None,
    phase: int | None = None,
    keep_regulation: bool = False,
    keep_other_tasks: bool = False,
    overhead_table: str | Path | None = None,
    rt_period: str | None = None,
) -> Path:
    """Write a variant of a task-system file (TOML).

    The RT task is kept (cut down to memory phase ``phase`` if given, with that
    phase's work as its PET); tasks on other cores are dropped unless
    ``keep_other_tasks``; ``load`` puts microbenchmark instances on the
    best-effort cores (``bomb_ns_per_line[reads]``: isolated time per line of
    the undelayed microbenchmark). ``[regulation]`` is dropped unless
    ``keep_regulation``; then its ``overhead_table`` points to
    ``overhead_table`` (or to the original table) by absolute path.
    """
    src = Path(task_file).resolve()
    doc = _load_doc(src)
    tasks = doc.get("task", [])
    rt = next((dict(t) for t in tasks if t.get("name") == rt_task), None)
    if rt is None:
        raise ValueError(f"{task_file}: no task named {rt_task!r}")
    if phase is not None:
        ph = _phases(rt)[phase]
        mem = {k: v for k, v in rt["memory"].items() if k not in ("phases", "accesses_per_ms", "read_fraction")}
        mem.update(accesses_per_ms=ph["accesses_per_ms"], read_fraction=ph["read_fraction"])
        rt["memory"] = mem
        rt["pet"] = _ns_text(ph["work_ns"])
        rt.pop("pet_unmanaged", None)
    if rt_period is not None:
        rt["period"] = rt_period
        rt.pop("deadline", None)
        rt.pop("offset", None)
    out_tasks = [rt]
    if keep_other_tasks:
        out_tasks += [dict(t) for t in tasks if t.get("name") != rt_task and t.get("core") not in be_cores]
    if load is not None:
        if bomb_ns_per_line is None:
            raise ValueError("a load needs the microbenchmark's time per line (bomb_ns_per_line)")
        if len(load.multipliers) > len(be_cores):
            raise ValueError(f"load {load.label()} needs {len(load.multipliers)} best-effort cores")
        for core, rate in zip(be_cores, load_rates(load, bomb_ns_per_line)):
            out_tasks.append(_bomb(f"load{core}", core, load.reads, rate, "10s"))
    out = {k: v for k, v in doc.items() if k not in ("task", "regulation")}
    out["task"] = out_tasks
    if keep_regulation and "regulation" in doc:
        reg = dict(doc["regulation"])
        if "overhead_table" in reg:
            table = Path(overhead_table) if overhead_table is not None else src.parent / reg["overhead_table"]
            reg["overhead_table"] = str(Path(table).resolve())
        out["regulation"] = reg
    out_path = Path(out_path)
    out_path.write_text(dump_toml(out))
    return out_path


# --------------------------------------------------------------------------- measuring


def _first_job(run, task: int = 0) -> tuple[int, int]:
    j = run.jobs
    assert j is not None
    idx = np.flatnonzero(j["task"] == task)
    if idx.size == 0:
        raise RuntimeError("the RT job did not complete within the profiling run")
    k = idx[np.argmin(j["release_ns"][idx])]
    return int(j["start_ns"][k]), int(j["finish_ns"][k])


def _global_mb_s(run, start: int, finish: int, line_bytes: int) -> float:
    """Mean global bandwidth over [start, finish), from the bins fully inside it
    (every rate is constant in between: one phase, one constant load)."""
    b = run.bin_ns
    first, last = -(-start // b), finish // b
    if last <= first:
        raise RuntimeError("profiling run shorter than one bandwidth bin")
    requests = run.bandwidth[:, first:last].sum()
    return float(requests * line_bytes / ((last - first) * b) * 1e3)


def microbenchmark_peak_mb_s(task_file: str | Path, core: int, reads: int, tmp: str | Path) -> float:
    """Bandwidth of one undelayed microbenchmark instance alone (Fig. 5's x = 0 column)."""
    doc = _load_doc(task_file)
    out = {k: v for k, v in doc.items() if k not in ("task", "regulation")}
    # Far more references than the core can issue: it runs at the memory system's pace.
    out["task"] = [_bomb("bomb", core, reads, 1e9, "1s")]
    path = Path(tmp) / f"peak-{reads}.toml"
    path.write_text(dump_toml(out))
    run = simulate(path, 1_000_000, regulator="none", bin_ns=10_000)
    line = check(path)["line_bytes"]
    return _global_mb_s(run, 0, 1_000_000, line)


def _global_bytes(run, start: int, finish: int, line_bytes: int) -> int:
    """Global traffic (all cores) during [start, finish), in bytes: the mean
    rate over the whole bins inside it (every rate is constant in between: one
    phase, one constant load) times its length, rounded to the byte. A run
    shorter than a bin takes the rate of the bin it starts in."""
    b = run.bin_ns
    first, last = -(-start // b), finish // b
    if last <= first:
        first, last = start // b, start // b + 1
    requests = float(run.bandwidth[:, first:last].sum())
    return int(round(requests * line_bytes / ((last - first) * b) * (finish - start)))


def _samples(run, start: int, finish: int, sample_ns: int, line_bytes: int) -> list[int]:
    """The monitor's samples of a job: global bytes in [start + kΔ, start + (k+1)Δ)
    for every whole sample of it (``run`` kept bins of Δ)."""
    k0 = start // sample_ns
    assert start == k0 * sample_ns, "profiling runs release the RT job at a sample boundary"
    whole = (finish - start) // sample_ns
    return (run.bandwidth[:, k0 : k0 + whole].sum(axis=0) * line_bytes).astype(np.int64).tolist()


def simulated_dataset(
    task_file: str | Path,
    rt_task: str,
    be_cores: Sequence[int],
    loads: Sequence[Load] | None = None,
    sample_ns: int = 50_000,
):
    """Profile ``rt_task`` of ``task_file`` on the simulator: the profile dataset
    (docs/format.md) of its isolation run (run 0) and of one run per constant
    load on ``be_cores`` (default: 11 read-write ratios × 10 delays ×
    :func:`configs_for` the number of best-effort cores), sampled every
    ``sample_ns``. Returns a validated ``pyarrow.Table`` (write it with
    :func:`criticore.monitor.dataset.write`)."""
    be_cores = list(be_cores)
    if not be_cores:
        raise ValueError("no best-effort cores to load")
    loads = microbenchmark_loads(configs=configs_for(len(be_cores))) if loads is None else list(loads)
    loads = [ld for ld in loads if len(ld.multipliers) <= len(be_cores)]
    if not loads:
        raise ValueError("no load fits on the best-effort cores")
    task_file = Path(task_file)
    doc = _load_doc(task_file)
    rt = next((t for t in doc.get("task", []) if t.get("name") == rt_task), None)
    if rt is None:
        raise ValueError(f"{task_file}: no task named {rt_task!r}")
    phases = _phases(rt)
    line = check(task_file)["line_bytes"]
    rows: dict[str, list] = {name: [] for name in [*ds.COLUMNS, ds.SAMPLES]}

    def add(run_id: int, load: Load | None, phase: int, exec_ns: int, nbytes: int, samples: list[int] | None = None) -> None:
        values = {
            "run": run_id, "repetition": 0, "warmup": False, "phase": phase, "exec_ns": exec_ns, "bytes": nbytes, ds.SAMPLES: samples,
            "load": ds.ALONE if load is None else load.label(),
            "load_reads": None if load is None else load.reads,
            "load_delay": None if load is None else float(load.delay_ns),
            "load_cores": 0 if load is None else len(load.multipliers),
            "load_multipliers": "" if load is None else ",".join(str(m) for m in load.multipliers),
        }
        for k, v in values.items():
            rows[k].append(v)

    with tempfile.TemporaryDirectory(prefix="criticore-profile-") as tmp:
        tmp = Path(tmp)
        reads_used = sorted({ld.reads for ld in loads})
        peak = {r: microbenchmark_peak_mb_s(task_file, be_cores[0], r, tmp) for r in reads_used}
        ns_per_line = {r: _miss_ns(line, peak, r) for r in reads_used}
        one_job = "100s"  # one RT job per profiling run

        def run_rt(load: Load | None, phase: int | None, expect_ns: int, bin_ns: int):
            path = write_variant(
                task_file, tmp / "variant.toml", rt_task=rt_task, be_cores=be_cores, load=load,
                bomb_ns_per_line=ns_per_line, phase=phase, rt_period=one_job,
            )
            duration = 2 * expect_ns + 2 * bin_ns
            for _ in range(6):
                run = simulate(path, duration, regulator="none", jobs=True, bin_ns=bin_ns)
                try:
                    return run, _first_job(run)
                except RuntimeError:
                    duration *= 4
            raise RuntimeError(f"RT job unfinished next to load {load.label() if load else 'none'}")

        # Isolation (run 0): the whole task and every phase (§3.2, first step).
        run, (s, f) = run_rt(None, None, _pet_ns(rt), sample_ns)
        exec_ns = f - s
        add(0, None, ds.WHOLE_JOB, exec_ns, _global_bytes(run, s, f, line), _samples(run, s, f, sample_ns, line))
        phase_exec = []
        for p, ph in enumerate(phases):
            run, (s, f) = run_rt(None, p, ph["work_ns"], 1_000)
            phase_exec.append(f - s)
            add(0, None, p, f - s, _global_bytes(run, s, f, line))

        # Next to every constant load (run i + 1).
        for i, load in enumerate(loads):
            for p in range(len(phases)):
                bin_ns = max(1_000, min(sample_ns, phase_exec[p] // 64))
                run, (s, f) = run_rt(load, p, phase_exec[p], bin_ns)
                add(i + 1, load, p, f - s, _global_bytes(run, s, f, line))
            run, (s, f) = run_rt(load, None, exec_ns, sample_ns)
            add(i + 1, load, ds.WHOLE_JOB, f - s, _global_bytes(run, s, f, line), _samples(run, s, f, sample_ns, line))

    preset = (doc.get("platform") or {}).get("preset") or "custom platform"
    metadata = {
        "task": rt_task, "line_bytes": line, "sample_ns": sample_ns, "source": "simulated",
        "machine": f"{preset}, {task_file.name}", "be_cores": len(be_cores),
        # Optional keys (docs/format.md): which cores, and Fig. 5's x = 0 column.
        "be_core_ids": ",".join(str(c) for c in be_cores),
        "load_peak_mb_s": json.dumps({str(r): v for r, v in peak.items()}),
    }
    return ds.make(rows, metadata, file=str(task_file))


def evaluate_monitor(
    task_file: str | Path,
    rt_task: str,
    be_cores: Sequence[int],
    loads: Sequence[Load],
    duration_ns: int = 1_000_000_000,
    on_load: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """§4.3 on the simulator: for every load, run variants of ``task_file``
    (its RT task, ``[regulation]`` and overhead table; the load on ``be_cores``)
    with and without the monitor. Per load (one dict, in the order of
    ``loads``):

    - ``load``, and ``load_mb_s``: the load's demand, the sum of its instances'
      bandwidths alone (MB/s);
    - ``overheads_none``, ``overheads_monitor``: per completed RT job,
      (finish − start) / exec − 1, and their maxima ``max_overhead_none``,
      ``max_overhead_monitor``;
    - ``parallelism``: the monitor's per-job parallelism (the share of the
      job's time before the best-effort cores were suspended), ``jobs`` its
      length, ``parallelism_mean`` and ``parallelism_min``.

    ``on_load(done, total)`` is called after each load. Raises ValueError when
    no RT job completes within ``duration_ns``."""
    task_file = Path(task_file).resolve()
    be_cores = list(be_cores)
    rows = []
    with tempfile.TemporaryDirectory(prefix="criticore-monitor-") as tmp:
        tmp = Path(tmp)
        line = check(task_file)["line_bytes"]
        reads = sorted({ld.reads for ld in loads})
        peak = {r: microbenchmark_peak_mb_s(task_file, be_cores[0], r, tmp) for r in reads}
        per_line = {r: _miss_ns(line, peak, r) for r in reads}
        for i, load in enumerate(loads):
            path = write_variant(
                task_file, tmp / "variant.toml", rt_task=rt_task, be_cores=be_cores, load=load,
                bomb_ns_per_line=per_line, keep_regulation=True,
            )
            row = {"load": load, "load_mb_s": sum(load_rates(load, per_line)) * line / 1e3}
            for reg in ("none", "monitor"):
                run = simulate(path, duration_ns, regulator=reg, jobs=True)
                j = run.jobs
                rt = j["task"] == 0
                if not rt.any():
                    raise ValueError(f"no job of {rt_task!r} completed within {_ns_text(duration_ns)} (load {load.label()})")
                ovd = (j["finish_ns"][rt] - j["start_ns"][rt]) / j["exec_ns"][rt] - 1
                row[f"overheads_{reg}"] = ovd
                row[f"max_overhead_{reg}"] = float(ovd.max())
                if reg == "monitor":
                    par = np.asarray(run.report["regulation"]["details"]["parallelism"], dtype=float)
                    row["parallelism"] = par
                    row["jobs"] = int(rt.sum())
                    row["parallelism_mean"], row["parallelism_min"] = float(par.mean()), float(par.min())
            rows.append(row)
            if on_load is not None:
                on_load(i + 1, len(loads))
    return rows
