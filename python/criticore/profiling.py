"""Profiling a real-time task for the bandwidth monitor, on the simulator
(blin-bandwidth-monitor §3.1–3.2; method and choices in docs/bandwidth-monitor.md).

The paper profiles the real-time (RT) task on the board: it runs the task alone
(ExecT), then next to a range of constant loads from its load microbenchmark,
measures per phase the observed global bandwidth ObsB = Acc / ExecT and the
overhead Ovd = ExecT_l / ExecT − 1, fits one polynomial per read-write ratio,
takes their maximum with the 5%-beyond-the-largest-observation rule, packs the
result for loads that change within a sample, and stores it as a table indexed
by ``bytes >> shift`` of one sample. :func:`simulated_overhead_table` does the
same with the simulator standing in for the board:

- the microbenchmark is a ``stream`` task over 64 MiB (every reference misses)
  on a best-effort core, ``reads`` of every 10 lines read, the rest written,
  with ``delay`` ns of compute per line (the wait loop, §3.1, Fig. 4);
- per-phase times come from *phase-only variants*: the RT task cut down to one
  phase (its work as PET, its behaviour as the only phase), run next to the
  same load. The fluid model has no warm-up state, so such a run takes exactly
  as long as that phase does inside the whole task (the sum of the phase times
  is checked against the whole task's time, ``Profile.phase_sum_error``);
- Acc is the global traffic (all cores) during that run, from the simulator's
  bandwidth series.

Everything is deterministic: the same inputs give the same file, byte for byte.

    python -m criticore.profiling examples/monitor/rt-with-loads.toml \\
        --rt-task rt --be-cores 1 2 3 -o examples/monitor/overheads.toml
"""

from __future__ import annotations

import argparse
import math
import re
import tempfile
import tomllib
import sys
import warnings
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from criticore import InputError, check, read_input
from criticore.errors import input_error_line
from criticore.outputs import writable
from criticore.simulation import simulate

__all__ = [
    "Curve",
    "Load",
    "Profile",
    "configs_for",
    "curve_groups",
    "fit_curves",
    "choose_degree",
    "replay",
    "sample_phases",
    "microbenchmark_loads",
    "microbenchmark_peak_mb_s",
    "write_variant",
    "fit_polynomials",
    "envelope",
    "pack",
    "build_table",
    "write_table",
    "simulated_overhead_table",
    "dump_toml",
    "evaluate_monitor",
]

#: Bandwidth up to which the table holds the envelope; 0 beyond (§3.2).
MAX_MB_S = 3000.0
#: Polynomials count up to 5% beyond their largest observed bandwidth (§3.2).
BEYOND = 0.05
#: Degrees tried (§3.2: "only degrees between 1 and 5").
DEGREES = (1, 2, 3, 4, 5)
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


def _ns_text(ns: int) -> str:
    for unit, scale in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns and ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


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
    with open(task_file, "rb") as f:
        return tomllib.load(f)


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
        for core, m in zip(be_cores, load.multipliers):
            rate = 1e6 / (bomb_ns_per_line[load.reads] + m * load.delay_ns)
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


@dataclass
class Profile:
    """What :func:`simulated_overhead_table` measured and built."""

    task: str
    exec_ns: int
    phase_exec_ns: list[int]
    line_bytes: int
    sample_ns: int
    shift: int
    #: MB/s of one undelayed microbenchmark instance alone, by reads per 10 lines.
    peak_mb_s: dict[int, float]
    loads: list[Load]
    #: Per phase, per load: ObsB (MB/s) and Ovd.
    obs_mb_s: np.ndarray
    ovd: np.ndarray
    #: Per load: whole-job overhead next to it, and the job's per-sample global bytes.
    job_ovd: np.ndarray
    job_samples: list[np.ndarray]
    #: Per load: loaded phase times (ns).
    phase_loaded_ns: np.ndarray
    #: Largest |Σ phase-only times − whole-job time| / whole-job time.
    phase_sum_error: float
    degree: int = 0
    #: File name of the task system profiled (informative).
    source: str = ""
    #: RSS per degree and read-write ratio (degree → {reads: rss}).
    rss: dict[int, dict[int, float]] = field(default_factory=dict)
    #: Per phase: the table before and after packing.
    unpacked: np.ndarray | None = None
    table: np.ndarray | None = None

    @property
    def step_mb_s(self) -> float:
        return (1 << self.shift) / self.sample_ns * 1e3


def _measure(task_file, rt_task, be_cores, loads, sample_ns, shift, tmp) -> Profile:
    task_file = Path(task_file)
    doc = _load_doc(task_file)
    rt = next((t for t in doc.get("task", []) if t.get("name") == rt_task), None)
    if rt is None:
        raise ValueError(f"{task_file}: no task named {rt_task!r}")
    phases = _phases(rt)
    line = check(task_file)["line_bytes"]
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

    # Isolation: ExecT of the whole task and of every phase (§3.2, first step).
    _, (s, f) = run_rt(None, None, _pet_ns(rt), sample_ns)
    exec_ns = f - s
    phase_exec = []
    for p, ph in enumerate(phases):
        _, (s, f) = run_rt(None, p, ph["work_ns"], 1_000)
        phase_exec.append(f - s)

    # Next to every constant load.
    n_phase = len(phases)
    obs = np.zeros((n_phase, len(loads)))
    ovd = np.zeros((n_phase, len(loads)))
    loaded = np.zeros((len(loads), n_phase), dtype=np.int64)
    job_ovd = np.zeros(len(loads))
    samples: list[np.ndarray] = []
    worst_gap = 0.0
    for i, load in enumerate(loads):
        for p in range(n_phase):
            bin_ns = max(1_000, min(sample_ns, phase_exec[p] // 64))
            run, (s, f) = run_rt(load, p, phase_exec[p], bin_ns)
            loaded[i, p] = f - s
            obs[p, i] = _global_mb_s(run, s, f, line)
            ovd[p, i] = (f - s) / phase_exec[p] - 1
        run, (s, f) = run_rt(load, None, exec_ns, sample_ns)
        job_ovd[i] = (f - s) / exec_ns - 1
        # The monitor's samples: [s + kΔ, s + (k+1)Δ) for every whole sample of the job.
        k0 = s // sample_ns
        assert s == k0 * sample_ns, "profiling runs release the RT job at a sample boundary"
        whole = (f - s) // sample_ns
        samples.append(run.bandwidth[:, k0 : k0 + whole].sum(axis=0) * line)
        worst_gap = max(worst_gap, abs(int(loaded[i].sum()) - (f - s)) / (f - s))
    return Profile(
        task=rt_task, exec_ns=exec_ns, phase_exec_ns=phase_exec, line_bytes=line, sample_ns=sample_ns, shift=shift,
        peak_mb_s=peak, loads=list(loads), obs_mb_s=obs, ovd=ovd, job_ovd=job_ovd, job_samples=samples,
        phase_loaded_ns=loaded, phase_sum_error=worst_gap,
    )


# --------------------------------------------------------------------------- fitting


def curve_groups(loads: Sequence[Load]) -> np.ndarray:
    """One curve per read-write ratio and load configuration, over the delays
    (§3.2 fits "for each of the read-write ratios, with various delays"; the
    configurations of one table have the same number of active cores but
    different delays per core, so each gets its own curve). Group ids in a
    deterministic order."""
    keys = sorted({(ld.reads, ld.multipliers) for ld in loads})
    index = {k: i for i, k in enumerate(keys)}
    return np.array([index[(ld.reads, ld.multipliers)] for ld in loads])


def fit_polynomials(obs_mb_s: np.ndarray, ovd: np.ndarray, groups: np.ndarray, degree: int) -> dict[int, np.ndarray]:
    """Least-squares polynomial of ``degree`` per group (numpy.polyfit,
    bandwidth in GB/s for conditioning); coefficients, highest power first."""
    out = {}
    for g in np.unique(groups):
        sel = groups == g
        x, y = obs_mb_s[sel] / 1e3, ovd[sel]
        deg = min(degree, max(len(np.unique(x)) - 1, 0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.RankWarning)
            out[int(g)] = np.polyfit(x, y, deg)
    return out


@dataclass
class Curve:
    """One group's polynomial with the bandwidths it was fitted on (MB/s)."""

    coef: np.ndarray
    lo: float  # smallest observed bandwidth
    hi: float  # largest observed bandwidth

    def __call__(self, mb_s) -> np.ndarray:
        # Below the smallest observation the curve holds its value there (the paper is silent).
        return np.polyval(self.coef, np.maximum(np.asarray(mb_s, dtype=float), self.lo) / 1e3)


def fit_curves(obs_mb_s: np.ndarray, ovd: np.ndarray, groups: np.ndarray, degree: int, lift: bool = True) -> list[Curve]:
    """Per group, the least-squares polynomial; with ``lift``, raised by its
    largest shortfall so that it sits on or above every point of its group
    (§3.2 wants "a polynomial that ... sits just above all of the points")."""
    curves = []
    for g, coef in fit_polynomials(obs_mb_s, ovd, groups, degree).items():
        sel = groups == g
        c = Curve(coef.copy(), float(obs_mb_s[sel].min()), float(obs_mb_s[sel].max()))
        if lift:
            c.coef[-1] += max(0.0, float(np.max(ovd[sel] - c(obs_mb_s[sel]))))
        curves.append(c)
    return curves


def envelope(curves: Sequence[Curve], mb_s, max_mb_s: float = MAX_MB_S) -> np.ndarray:
    """Maximum of the curves (§3.2): each counts up to 5% beyond its largest
    observed bandwidth; beyond every curve's reach the value at 5% beyond the
    overall largest observation holds up to ``max_mb_s``; 0 above; never negative."""
    mb_s = np.asarray(mb_s, dtype=float)
    top = max(c.hi for c in curves) * (1 + BEYOND)
    x = np.minimum(mb_s, top)
    env = np.zeros_like(mb_s)
    for c in curves:
        reach = x <= c.hi * (1 + BEYOND) * (1 + 1e-12)
        env = np.where(reach, np.maximum(env, c(x)), env)
    env = np.maximum(env, 0.0)
    return np.where(mb_s <= max_mb_s, env, 0.0)


def pack(table: np.ndarray, step_mb_s: float) -> np.ndarray:
    """Packing (§3.2): the worst overhead of a sample whose bandwidth B is the
    time-weighted mean t1·B1 + t2·B2 of two constant bandwidths B1 < B ≤ B2 of
    the table's grid: 1 + Ovd = 1 / (t1 / (1 + Ovd1) + t2 / (1 + Ovd2)) (rates
    mix linearly in time: the paper's Req / (t1·ObtB1 + t2·ObtB2) with
    ObtB = Req / (1 + Ovd), read as 1 + Ovd)."""
    o = np.asarray(table, dtype=float)
    n = len(o)
    b = np.arange(n) * step_mb_s
    rate = 1.0 / (1.0 + o)
    out = o.copy()
    for i in range(1, n - 1):
        b1, b2 = b[:i][:, None], b[i + 1 :][None, :]
        t2 = (b[i] - b1) / (b2 - b1)
        mixed = (1 - t2) * rate[:i][:, None] + t2 * rate[i + 1 :][None, :]
        out[i] = max(out[i], float(np.max(1.0 / mixed - 1.0)))
    return out


def build_table(
    curves: Sequence[Curve], sample_ns: int = 50_000, shift: int = 10, max_mb_s: float = MAX_MB_S, packing: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """One phase's table. Entry i covers samples of [i·step, (i+1)·step) MB/s
    (step = 2^shift bytes per sample: 20.48 MB/s at 50 µs and shift 10) and
    holds the envelope's maximum over that bin; entries run while i·step ≤
    max_mb_s, then one 0 that the monitor uses for every larger index.
    Returns (unpacked, packed)."""
    step = (1 << shift) / sample_ns * 1e3
    n = int(math.floor(max_mb_s / step + 1e-9)) + 1
    sub = 16  # evaluation points per bin
    x = (np.arange(n)[:, None] + np.linspace(0.0, 1.0, sub + 1)[None, :]) * step
    binned = envelope(curves, np.minimum(x, max_mb_s), max_mb_s).max(axis=1)
    packed = pack(binned, step) if packing else binned.copy()
    zero = np.zeros(1)
    return np.concatenate([binned, zero]), np.concatenate([packed, zero])


def replay(table: np.ndarray, sample_bytes: np.ndarray, phase_of: np.ndarray, shift: int, share: float) -> float:
    """The overhead the monitor estimates for one job from its sampled trace
    (§3.2's simulator; the rule of crates/criticore/src/sim/regulate/monitor.rs):
    Σ table[phase][bytes >> shift] × sample / ExecT."""
    idx = np.minimum(sample_bytes.astype(np.int64) >> shift, table.shape[1] - 1)
    return float(table[phase_of, idx].sum() * share)


def sample_phases(loaded_ns: np.ndarray, count: int, sample_ns: int) -> np.ndarray:
    """Phase of each sample at its end, as the monitor sees it."""
    ends = np.cumsum(loaded_ns)
    t = (np.arange(count) + 1) * sample_ns
    return np.minimum(np.searchsorted(ends, t, side="right"), len(loaded_ns) - 1)


def choose_degree(prof: Profile, groups: np.ndarray, lift: bool = True) -> tuple[int, dict[int, dict[int, float]]]:
    """§3.2: for each degree 1–5, each group's curves (one per phase) make an
    overhead table; every profiled job's sampled trace is replayed through the
    table of its own group and the estimate compared with the job's actual
    overhead. Per read-write ratio, the residual sum of squares over its jobs;
    the degree with the lowest RSS for the most ratios wins (ties: lower
    degree). The curves are the ones the table will use (lifted if ``lift``)."""
    share = prof.sample_ns / prof.exec_ns
    reads = np.array([ld.reads for ld in prof.loads])
    n_phase = prof.obs_mb_s.shape[0]
    rss: dict[int, dict[int, float]] = {}
    for d in DEGREES:
        rss[d] = {int(r): 0.0 for r in np.unique(reads)}
        for g in np.unique(groups):
            sel = groups == g
            tables = np.array(
                [
                    build_table(fit_curves(prof.obs_mb_s[p][sel], prof.ovd[p][sel], groups[sel], d, lift), prof.sample_ns, prof.shift, packing=False)[0]
                    for p in range(n_phase)
                ]
            )
            for i in np.flatnonzero(sel):
                samples = prof.job_samples[i]
                phase_of = sample_phases(prof.phase_loaded_ns[i], len(samples), prof.sample_ns)
                rss[d][int(reads[i])] += (replay(tables, samples, phase_of, prof.shift, share) - prof.job_ovd[i]) ** 2
    wins = {d: 0 for d in DEGREES}
    for r in rss[DEGREES[0]]:
        wins[min(DEGREES, key=lambda d: (rss[d][r], d))] += 1
    best = max(DEGREES, key=lambda d: (wins[d], -d))
    return best, rss


def write_table(path: str | Path, prof: Profile, be_cores: int) -> Path:
    """The overhead-table file (crates/criticore/src/model/overhead.rs). Values
    are rounded up to 1e-6, so rounding never lowers an estimate."""
    assert prof.table is not None
    lines = [
        f"# Overhead table of {prof.task!r} for the bandwidth monitor (blin-bandwidth-monitor §3.2),",
        f"# profiled on the simulator from {prof.source or 'its task file'} by criticore.profiling",
        "# (docs/bandwidth-monitor.md: the method, and the command that regenerates this file)",
        f"# ({len(prof.loads)} constant loads; polynomial degree {prof.degree}; ExecT = {prof.exec_ns} ns;",
        f"# phases alone: {', '.join(str(t) for t in prof.phase_exec_ns)} ns). Entry i: samples that moved",
        f"# [i, i+1) × 2^{prof.shift} bytes, i.e. {prof.step_mb_s:.2f} MB/s per entry; the last entry (0) holds beyond {MAX_MB_S:g} MB/s.",
        f'task = "{prof.task}"',
        f'sample = "{_ns_text(prof.sample_ns)}"',
        f"shift = {prof.shift}",
        f"be_cores = {be_cores}",
    ]
    for p, row in enumerate(prof.table):
        vals = np.ceil(np.asarray(row) * 1e6 - 1e-6) / 1e6
        vals = np.maximum(vals, 0.0)
        body = ",\n".join(
            "    " + ", ".join(f"{v:.6f}" for v in vals[k : k + 8]) for k in range(0, len(vals), 8)
        )
        lines += ["", f"[[phase]]  # phase {p + 1}", "overhead = [", body + ",", "]"]
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def simulated_overhead_table(
    task_file: str | Path,
    rt_task: str,
    be_cores: Sequence[int],
    loads: Sequence[Load] | None = None,
    sample_ns: int = 50_000,
    shift: int = 10,
    out_path: str | Path | None = None,
    *,
    degree: int | None = None,
    packing: bool = True,
    lift: bool = True,
) -> Profile:
    """Profile ``rt_task`` of ``task_file`` on the simulator and build its
    overhead table (blin-bandwidth-monitor §3.2), one row per memory phase.

    ``loads``: constant loads on ``be_cores`` (default: 11 read-write ratios ×
    10 delays × :func:`configs_for` the number of best-effort cores).
    ``degree``: force a polynomial degree instead of choosing it (§3.2).
    ``packing``: the §3.2 packing step. ``lift``: raise each curve above its
    points. Writes the table file to ``out_path`` when given; returns the
    :class:`Profile`.
    """
    be_cores = list(be_cores)
    if not be_cores:
        raise ValueError("no best-effort cores to load")
    loads = microbenchmark_loads(configs=configs_for(len(be_cores))) if loads is None else list(loads)
    loads = [ld for ld in loads if len(ld.multipliers) <= len(be_cores)]
    if not loads:
        raise ValueError("no load fits on the best-effort cores")
    with tempfile.TemporaryDirectory(prefix="criticore-profile-") as tmp:
        prof = _measure(task_file, rt_task, be_cores, loads, sample_ns, shift, tmp)
    prof.source = Path(task_file).name
    groups = curve_groups(loads)
    if degree is None:
        prof.degree, prof.rss = choose_degree(prof, groups, lift)
    else:
        prof.degree = degree
    unpacked, packed = [], []
    for p in range(prof.obs_mb_s.shape[0]):
        curves = fit_curves(prof.obs_mb_s[p], prof.ovd[p], groups, prof.degree, lift)
        u, k = build_table(curves, sample_ns, shift, packing=packing)
        unpacked.append(u)
        packed.append(k)
    prof.unpacked, prof.table = np.array(unpacked), np.array(packed)
    if out_path is not None:
        write_table(out_path, prof, len(be_cores))
    return prof


def evaluate_monitor(
    task_file: str | Path, rt_task: str, be_cores: Sequence[int], loads: Sequence[Load], duration_ns: int = 1_000_000_000
) -> list[dict]:
    """§4.3 on the simulator: for every load, run variants of ``task_file``
    (its RT task, ``[regulation]`` and overhead table; the load on ``be_cores``)
    with and without the monitor. Per load: the largest per-job overhead
    (finish − start) / exec − 1 of the RT task both ways, and the monitor's
    parallelism (mean and min over jobs)."""
    task_file = Path(task_file).resolve()
    be_cores = list(be_cores)
    rows = []
    with tempfile.TemporaryDirectory(prefix="criticore-monitor-") as tmp:
        tmp = Path(tmp)
        line = check(task_file)["line_bytes"]
        reads = sorted({ld.reads for ld in loads})
        peak = {r: microbenchmark_peak_mb_s(task_file, be_cores[0], r, tmp) for r in reads}
        per_line = {r: _miss_ns(line, peak, r) for r in reads}
        for load in loads:
            path = write_variant(
                task_file, tmp / "variant.toml", rt_task=rt_task, be_cores=be_cores, load=load,
                bomb_ns_per_line=per_line, keep_regulation=True,
            )
            row = {"load": load}
            for reg in ("none", "monitor"):
                run = simulate(path, duration_ns, regulator=reg, jobs=True)
                j = run.jobs
                rt = j["task"] == 0
                ovd = (j["finish_ns"][rt] - j["start_ns"][rt]) / j["exec_ns"][rt] - 1
                row[f"max_overhead_{reg}"] = float(ovd.max())
                if reg == "monitor":
                    par = np.asarray(run.report["regulation"]["details"]["parallelism"])
                    row["jobs"] = int(rt.sum())
                    row["parallelism_mean"], row["parallelism_min"] = float(par.mean()), float(par.min())
            rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m criticore.profiling", description=__doc__.split("\n\n")[0])
    ap.add_argument("task_file")
    ap.add_argument("--rt-task", required=True)
    ap.add_argument("--be-cores", type=int, nargs="+", required=True)
    ap.add_argument("--sample-us", type=int, default=50)
    ap.add_argument("--shift", type=int, default=10)
    ap.add_argument("--degree", type=int, choices=DEGREES)
    ap.add_argument("--no-packing", action="store_true")
    ap.add_argument("--no-lift", action="store_true")
    ap.add_argument("-o", "--out", help="write the overhead table here")
    ap.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    ap.add_argument(
        "--evaluate", action="store_true",
        help="instead: simulate the file's monitor 1 s next to the profiling grid's loads and print a Markdown table",
    )
    a = ap.parse_args(argv)
    try:
        return _run(ap, a)
    except InputError as e:
        print(input_error_line(e), file=sys.stderr)
        return 2


def _run(ap: argparse.ArgumentParser, a: argparse.Namespace) -> int:
    if a.evaluate:
        loads = microbenchmark_loads(reads=(0, 3, 5, 7, 10), delays_ns=(0, 20, 80, 320, 1280), configs=configs_for(len(a.be_cores)))
        rows = evaluate_monitor(a.task_file, a.rt_task, a.be_cores, loads)
        print("| load | max overhead, no monitor | max overhead, monitor | parallelism mean (min) |")
        print("| --- | ---: | ---: | ---: |")
        for r in rows:
            print(
                f"| {r['load'].label()} | {100 * r['max_overhead_none']:.2f}% | {100 * r['max_overhead_monitor']:.2f}% "
                f"| {r['parallelism_mean']:.2f} ({r['parallelism_min']:.2f}) |"
            )
        worst = max(r["max_overhead_monitor"] for r in rows)
        print(f"\n{len(rows)} loads: largest overhead with the monitor {100 * worst:.2f}%")
        return 0
    if not a.out:
        ap.error("-o/--out is required to build a table")
    read_input(a.task_file)  # a missing file is a one-line error, not a traceback
    names = [t["name"] for t in check(a.task_file)["tasks"]]
    if a.rt_task not in names:
        raise InputError(f"{a.task_file}: --rt-task: no task named {a.rt_task!r}", a.task_file, "--rt-task", f"no task named {a.rt_task!r}")
    writable(Path(a.out), a.force, "--out")
    prof = simulated_overhead_table(
        a.task_file, a.rt_task, a.be_cores, sample_ns=a.sample_us * 1000, shift=a.shift, out_path=a.out,
        degree=a.degree, packing=not a.no_packing, lift=not a.no_lift,
    )
    print(f"{a.out}: {len(prof.loads)} loads, degree {prof.degree}, ExecT {prof.exec_ns} ns, "
          f"phase-sum error {prof.phase_sum_error:.2e}")
    for p in range(prof.ovd.shape[0]):
        print(f"  phase {p + 1}: ObsB {prof.obs_mb_s[p].min():.0f}–{prof.obs_mb_s[p].max():.0f} MB/s, "
              f"Ovd ≤ {prof.ovd[p].max():.4f}, table max {prof.table[p].max():.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
