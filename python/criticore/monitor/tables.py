"""The overhead-table builder of the bandwidth monitor (blin-bandwidth-monitor
§3.2; method and choices in docs/bandwidth-monitor.md; `criticore tables build`).

Input: a profile dataset (:mod:`criticore.monitor.dataset`, docs/format.md),
measured on the machine (`criticore profile`) or on the simulator
(:mod:`criticore.monitor.simulated`). Per phase p and loaded run l:

- ObsB_{l,p} = bytes_{l,p} / ExecT_{l,p} (global traffic over the phase's time);
- Ovd_{l,p} = ExecT_{l,p} / ExecT_p − 1, ExecT_p the phase's time alone (the
  largest over the isolation runs, §3.2's "maximal observed execution time").

Then one least-squares polynomial per read-write ratio and load configuration
(degree chosen by replaying the profiled jobs' traces, §3.2), lifted above its
points; the maximum of the curves, each up to 5% beyond its largest
observation, flat beyond, 0 past 3000 MB/s; packing for loads that change
within a sample; one entry per 2^shift bytes of one sample, written as the
overhead-table file (docs/format.md). Warm-up runs are discarded (as the
paper drops the first runs of its experiments, §2.2).

Everything is deterministic: the same dataset gives the same file, byte for byte.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from criticore.errors import InputError
from criticore.monitor import dataset as ds

__all__ = [
    "MAX_MB_S",
    "BEYOND",
    "DEGREES",
    "Profile",
    "Tables",
    "Curve",
    "profile_from_dataset",
    "curve_groups",
    "fit_polynomials",
    "fit_curves",
    "envelope",
    "pack",
    "build_table",
    "step_mb_s",
    "entries",
    "replay",
    "sample_phases",
    "reconstruct_samples",
    "job_trace",
    "choose_degree",
    "degree_wins",
    "build",
    "table_text",
    "write_table_file",
    "ns_text",
]

#: Bandwidth up to which the table holds the envelope; 0 beyond (§3.2: the
#: SABRE Lite's 3000 MB/s, 1.5x the 2000 MB/s its jobs never exceeded).
MAX_MB_S = 3000.0
#: The paper's cut-off over its largest observed bandwidth (3000 / 2000).
CUTOFF_OVER_OBSERVED = 1.5


def cutoff_mb_s(prof: "Profile") -> float:
    """The default cut-off: the paper's 3000 MB/s, or 1.5x the largest
    observed ObsB on a machine whose memory goes faster (a cut-off below what
    the jobs reach would read 0 for every sample they take)."""
    return max(MAX_MB_S, CUTOFF_OVER_OBSERVED * float(np.max(prof.obs_mb_s)))
#: Polynomials count up to 5% beyond their largest observed bandwidth (§3.2).
BEYOND = 0.05
#: Degrees tried (§3.2: "only degrees between 1 and 5").
DEGREES = (1, 2, 3, 4, 5)


def ns_text(ns: int) -> str:
    """A duration in ns as the shortest exact duration string ("50us")."""
    for unit, scale in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns and ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


# --------------------------------------------------------------------------- the observations


@dataclass
class Profile:
    """What a profile dataset says, reduced to the builder's inputs (warm-up
    runs discarded). Loaded runs are in ascending run order."""

    task: str
    source: str
    machine: str
    line_bytes: int
    #: Sampling interval of the dataset's ``samples``.
    sample_ns: int
    be_cores: int
    #: ExecT of the whole job alone: the largest over the isolation runs (§3.2).
    exec_ns: int
    #: ExecT_p of every phase alone, likewise.
    phase_exec_ns: list[int]
    alone_runs: int
    #: Per loaded run: its id, load label, reads per 10 lines and (reads, multipliers) key.
    run_ids: np.ndarray
    labels: list[str]
    reads: np.ndarray
    keys: list[tuple[int, tuple[int, ...]]]
    #: Per phase, per loaded run: ObsB (MB/s) and Ovd.
    obs_mb_s: np.ndarray
    ovd: np.ndarray
    #: Per loaded run, per phase: loaded time (ns) and global bytes.
    phase_loaded_ns: np.ndarray
    phase_bytes: np.ndarray
    #: Per loaded run: the whole job's time (its −1 row, else the sum of its phases) and overhead.
    job_ns: np.ndarray
    job_ovd: np.ndarray
    #: Per loaded run: global bytes per sample of the job (``samples``), or None.
    job_samples: list[np.ndarray | None]
    #: Largest |Σ phase times − whole-job time| / whole-job time over the loaded runs with a −1 row.
    phase_sum_error: float
    #: Rows dropped as warm-up.
    warmup_rows: int = 0
    #: The dataset's metadata (every key).
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def n_loads(self) -> int:
        """Distinct constant loads (a load repeated in several runs counts once)."""
        return len(set(self.labels))

    @property
    def n_phases(self) -> int:
        return len(self.phase_exec_ns)


def profile_from_dataset(table, file: str = "(dataset)") -> Profile:
    """The builder's view of a validated dataset (:func:`dataset.read` / :func:`dataset.make`)."""
    m = ds.meta(table, file)
    col = {c: table.column(c).to_numpy(zero_copy_only=False) for c in ("run", "warmup", "phase", "exec_ns", "bytes", "load_reads")}
    labels = table.column("load").to_pylist()
    mults = table.column("load_multipliers").to_pylist()
    samples = table.column(ds.SAMPLES).to_pylist() if ds.SAMPLES in table.column_names else [None] * table.num_rows
    keep = ~col["warmup"].astype(bool)
    n_phase = int(col["phase"].max()) + 1
    runs: dict[int, dict] = {}
    for i in np.flatnonzero(keep):
        r = runs.setdefault(int(col["run"][i]), {"label": labels[i], "mult": mults[i], "reads": col["load_reads"][i], "rows": {}})
        r["rows"][int(col["phase"][i])] = (int(col["exec_ns"][i]), int(col["bytes"][i]), samples[i])

    def job_time(r: dict) -> int:
        whole = r["rows"].get(ds.WHOLE_JOB)
        return whole[0] if whole is not None else sum(r["rows"][p][0] for p in range(n_phase))

    alone = [r for _, r in sorted(runs.items()) if r["label"] == ds.ALONE]
    loaded = [(k, r) for k, r in sorted(runs.items()) if r["label"] != ds.ALONE]
    if not alone or not loaded:  # dataset.validate makes sure of both
        raise InputError(f"{file}: load: needs alone and loaded runs", file, "load", "needs alone and loaded runs")
    exec_ns = max(job_time(r) for r in alone)
    phase_exec = [max(r["rows"][p][0] for r in alone) for p in range(n_phase)]
    n = len(loaded)
    loaded_ns = np.zeros((n, n_phase), dtype=np.int64)
    phase_bytes = np.zeros((n, n_phase), dtype=np.int64)
    job_ns = np.zeros(n, dtype=np.int64)
    job_samples: list[np.ndarray | None] = []
    gap = 0.0
    for i, (_, r) in enumerate(loaded):
        for p in range(n_phase):
            loaded_ns[i, p], phase_bytes[i, p] = r["rows"][p][:2]
        job_ns[i] = job_time(r)
        whole = r["rows"].get(ds.WHOLE_JOB)
        s = whole[2] if whole is not None else None
        job_samples.append(None if s is None else np.asarray(s, dtype=np.int64))
        if whole is not None:
            gap = max(gap, abs(int(loaded_ns[i].sum()) - whole[0]) / whole[0])
    obs = (phase_bytes / loaded_ns * 1e3).T  # bytes/ns = GB/s → MB/s
    ovd = np.array([[loaded_ns[i, p] / phase_exec[p] - 1 for i in range(n)] for p in range(n_phase)])
    return Profile(
        task=m.task, source=m.source, machine=m.machine, line_bytes=m.line_bytes, sample_ns=m.sample_ns, be_cores=m.be_cores,
        exec_ns=exec_ns, phase_exec_ns=phase_exec, alone_runs=len(alone),
        run_ids=np.array([k for k, _ in loaded], dtype=np.int64), labels=[r["label"] for _, r in loaded],
        reads=np.array([int(r["reads"]) for _, r in loaded]),
        keys=[(int(r["reads"]), ds.parse_multipliers(r["mult"]) or ()) for _, r in loaded],
        obs_mb_s=obs, ovd=ovd, phase_loaded_ns=loaded_ns, phase_bytes=phase_bytes,
        job_ns=job_ns, job_ovd=np.array([job_ns[i] / exec_ns - 1 for i in range(n)]), job_samples=job_samples,
        phase_sum_error=gap, warmup_rows=int((~keep).sum()), metadata=dict(m.extra),
    )


# --------------------------------------------------------------------------- fitting


def curve_groups(keys: Sequence[tuple[int, tuple[int, ...]]]) -> np.ndarray:
    """One curve per read-write ratio and load configuration, over the delays
    (§3.2 fits "for each of the read-write ratios, with various delays"; the
    configurations of one table have the same number of active cores but
    different delays per core, so each gets its own curve). ``keys``: per
    run, (reads per 10 lines, delay multipliers). Group ids in a
    deterministic order."""
    order = sorted(set(keys))
    index = {k: i for i, k in enumerate(order)}
    return np.array([index[k] for k in keys])


def fit_polynomials(obs_mb_s: np.ndarray, ovd: np.ndarray, groups: np.ndarray, degree: int) -> dict[int, np.ndarray]:
    """Least-squares polynomial of ``degree`` per group (numpy.polyfit,
    bandwidth in GB/s for conditioning); coefficients, highest power first.
    A group with fewer distinct bandwidths than degree + 1 gets the highest
    degree its points determine."""
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
    group: int = -1

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
        c = Curve(coef.copy(), float(obs_mb_s[sel].min()), float(obs_mb_s[sel].max()), g)
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
    ObtB = Req / (1 + Ovd), read as 1 + Ovd). Never below the constant-load value.

    The worst mix at B is the lowest chord of the points (Bj, 1 / (1 + Ovdj))
    over B: the lower convex hull there, so one monotone-chain pass finds every
    entry's (O(n) rather than O(n³) over all pairs; the test checks both)."""
    o = np.asarray(table, dtype=float)
    n = len(o)
    if n < 3:
        return o.copy()
    b = np.arange(n) * step_mb_s
    rate = 1.0 / (1.0 + o)
    hull: list[int] = []
    for k in range(n):
        # Pop while the last hull point lies on or above the chord to k.
        while len(hull) >= 2:
            i, j = hull[-2], hull[-1]
            if (rate[j] - rate[i]) * (b[k] - b[i]) >= (rate[k] - rate[i]) * (b[j] - b[i]):
                hull.pop()
            else:
                break
        hull.append(k)
    lowest = np.interp(b, b[hull], rate[hull])
    out = np.maximum(o, 1.0 / lowest - 1.0)
    out[0], out[-1] = o[0], o[-1]  # no grid point outside the ends to mix with
    return out


def step_mb_s(sample_ns: int, shift: int) -> float:
    """Bandwidth per table entry: 2^shift bytes per sample (20.48 MB/s at 50 µs, shift 10)."""
    return (1 << shift) / sample_ns * 1e3


def entries(sample_ns: int, shift: int, max_mb_s: float = MAX_MB_S) -> int:
    """Entries holding the envelope: i = 0, 1, … while i·step ≤ max_mb_s (147 at
    50 µs, shift 10); the file adds one 0 after them."""
    return int(math.floor(max_mb_s / step_mb_s(sample_ns, shift) + 1e-9)) + 1


def build_table(
    curves: Sequence[Curve], sample_ns: int = 50_000, shift: int = 10, max_mb_s: float = MAX_MB_S, packing: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """One phase's table. Entry i covers samples of [i·step, (i+1)·step) MB/s
    (:func:`step_mb_s`) and holds the envelope's maximum over that bin; entries
    run while i·step ≤ max_mb_s, then one 0 that the monitor uses for every
    larger index. Returns (unpacked, packed)."""
    step = step_mb_s(sample_ns, shift)
    n = entries(sample_ns, shift, max_mb_s)
    sub = 16  # evaluation points per bin
    x = (np.arange(n)[:, None] + np.linspace(0.0, 1.0, sub + 1)[None, :]) * step
    binned = envelope(curves, np.minimum(x, max_mb_s), max_mb_s).max(axis=1)
    packed = pack(binned, step) if packing else binned.copy()
    zero = np.zeros(1)
    return np.concatenate([binned, zero]), np.concatenate([packed, zero])


# --------------------------------------------------------------------------- degree choice (§3.2)


def replay(table: np.ndarray, sample_bytes: np.ndarray, phase_of: np.ndarray, shift: int, share: float) -> float:
    """The overhead the monitor estimates for one job from its sampled trace
    (§3.2's simulator; the rule of crates/criticore/src/sim/regulate/monitor.rs):
    Σ table[phase][bytes >> shift] × sample / ExecT."""
    idx = np.minimum(sample_bytes.astype(np.int64) >> shift, table.shape[1] - 1)
    return float(table[phase_of, idx].sum() * share)


def sample_phases(loaded_ns: np.ndarray, count: int, sample_ns: int) -> np.ndarray:
    """Phase of each sample at its end, as the monitor sees it (phases back to
    back from the release, with their loaded times)."""
    ends = np.cumsum(loaded_ns)
    t = (np.arange(count) + 1) * sample_ns
    return np.minimum(np.searchsorted(ends, t, side="right"), len(loaded_ns) - 1)


def reconstruct_samples(loaded_ns: np.ndarray, phase_bytes: np.ndarray, sample_ns: int) -> np.ndarray:
    """A job's trace when the dataset has none: the phases back to back, each
    moving its bytes at a constant rate (§3.2's assumption within a phase);
    global bytes per whole sample, rounded to the byte."""
    ends = np.concatenate([[0], np.cumsum(loaded_ns)]).astype(float)
    moved = np.concatenate([[0], np.cumsum(phase_bytes)]).astype(float)
    count = int(ends[-1]) // sample_ns
    edges = np.arange(count + 1, dtype=float) * sample_ns
    return np.rint(np.diff(np.interp(edges, ends, moved))).astype(np.int64)


def job_trace(prof: Profile, i: int, sample_ns: int) -> tuple[np.ndarray, str]:
    """Loaded run i's trace at ``sample_ns``: its ``samples`` if taken at that
    interval ("stored"), summed k by k if the interval is k times theirs
    ("aggregated"), else rebuilt from its phases ("reconstructed")."""
    s = prof.job_samples[i]
    if s is not None:
        if sample_ns == prof.sample_ns:
            return s, "stored"
        if sample_ns % prof.sample_ns == 0:
            k = sample_ns // prof.sample_ns
            whole = len(s) // k
            return s[: whole * k].reshape(whole, k).sum(axis=1), "aggregated"
    return reconstruct_samples(prof.phase_loaded_ns[i], prof.phase_bytes[i], sample_ns), "reconstructed"


def choose_degree(
    prof: Profile, groups: np.ndarray, traces: Sequence[np.ndarray], sample_ns: int, shift: int, lift: bool = True,
    max_mb_s: float = MAX_MB_S,
) -> tuple[int, dict[int, dict[int, float]]]:
    """§3.2: for each degree 1–5, each group's curves (one per phase) make an
    overhead table; every profiled job's sampled trace is replayed through the
    table of its own group and the estimate compared with the job's actual
    overhead. Per read-write ratio, the residual sum of squares over its jobs;
    the degree with the lowest RSS (:func:`degree_wins`) for the most ratios
    wins (ties: lower degree). The curves are the ones the table will use (lifted if ``lift``)."""
    share = sample_ns / prof.exec_ns
    reads = prof.reads
    rss: dict[int, dict[int, float]] = {}
    for d in DEGREES:
        rss[d] = {int(r): 0.0 for r in np.unique(reads)}
        for g in np.unique(groups):
            sel = groups == g
            tables = np.array(
                [
                    build_table(fit_curves(prof.obs_mb_s[p][sel], prof.ovd[p][sel], groups[sel], d, lift), sample_ns, shift, max_mb_s, packing=False)[0]
                    for p in range(prof.n_phases)
                ]
            )
            for i in np.flatnonzero(sel):
                phase_of = sample_phases(prof.phase_loaded_ns[i], len(traces[i]), sample_ns)
                rss[d][int(reads[i])] += (replay(tables, traces[i], phase_of, shift, share) - prof.job_ovd[i]) ** 2
    wins = degree_wins(rss)
    best = max(DEGREES, key=lambda d: (wins[d], -d))
    return best, rss


#: RSS that differ by less than this (relative, or absolute: far below the
#: file's 1e-6 resolution squared) are ties, won by the lower degree: data that a
#: degree fits exactly are fitted "exactly" by every higher degree too, up to
#: rounding noise that must not pick the degree.
RSS_TIE_REL, RSS_TIE_ABS = 1e-9, 1e-15


def degree_wins(rss: dict[int, dict[int, float]]) -> dict[int, int]:
    """Per degree, the read-write ratios for which it has the lowest RSS (ties,
    within :data:`RSS_TIE_REL` / :data:`RSS_TIE_ABS`: the lowest such degree)."""
    wins = {d: 0 for d in DEGREES}
    for r in rss[DEGREES[0]]:
        best = min(rss[d][r] for d in DEGREES)
        wins[min(d for d in DEGREES if rss[d][r] <= best * (1 + RSS_TIE_REL) + RSS_TIE_ABS)] += 1
    return wins


# --------------------------------------------------------------------------- the tables


@dataclass
class Tables:
    """What :func:`build` made from a :class:`Profile`."""

    profile: Profile
    sample_ns: int
    shift: int
    degree: int
    #: Whether the degree was chosen (§3.2) or given.
    degree_chosen: bool
    #: RSS per degree and read-write ratio (degree → {reads: rss}); empty if the degree was given.
    rss: dict[int, dict[int, float]]
    #: How the jobs' traces for the degree choice were obtained: {"stored"|"aggregated"|"reconstructed": runs}.
    traces: dict[str, int]
    packing: bool
    lift: bool
    #: Per phase: the curves, and the table before and after packing (the file's rows).
    curves: list[list[Curve]]
    unpacked: np.ndarray
    table: np.ndarray
    #: The cut-off: entries hold the envelope up to here, 0 beyond.
    max_mb_s: float = MAX_MB_S

    @property
    def step_mb_s(self) -> float:
        return step_mb_s(self.sample_ns, self.shift)

    @property
    def cutoff_index(self) -> int:
        """First index whose entry is 0 by the cut-off (every larger index too)."""
        return self.table.shape[1] - 1


def build(
    prof: Profile,
    sample_ns: int | None = None,
    shift: int = 10,
    degree: int | None = None,
    packing: bool = True,
    lift: bool = True,
    max_mb_s: float | None = None,
) -> Tables:
    """The overhead tables of ``prof``, one row per phase, for a monitor that
    samples every ``sample_ns`` (default: the dataset's interval) and indexes by
    ``bytes >> shift``. ``degree``: None to choose it (§3.2), else 1–5.
    ``packing``: the §3.2 packing step. ``lift``: raise each curve above its points.
    ``max_mb_s``: the cut-off (default :func:`cutoff_mb_s`)."""
    sample_ns = prof.sample_ns if sample_ns is None else sample_ns
    max_mb_s = cutoff_mb_s(prof) if max_mb_s is None else float(max_mb_s)
    if not max_mb_s > 0:
        raise ValueError("the cut-off must be positive")
    if sample_ns <= 0 or not 0 <= shift < 64:
        raise ValueError("sample must be positive and shift in 0…63")
    if degree is not None and degree not in DEGREES:
        raise ValueError(f"degree must be one of {DEGREES}")
    groups = curve_groups(prof.keys)
    kinds: dict[str, int] = {}
    rss: dict[int, dict[int, float]] = {}
    if degree is None:
        traces = []
        for i in range(len(prof.run_ids)):
            trace, kind = job_trace(prof, i, sample_ns)
            traces.append(trace)
            kinds[kind] = kinds.get(kind, 0) + 1
        degree, rss = choose_degree(prof, groups, traces, sample_ns, shift, lift, max_mb_s)
        chosen = True
    else:
        chosen = False
    curves, unpacked, packed = [], [], []
    for p in range(prof.n_phases):
        c = fit_curves(prof.obs_mb_s[p], prof.ovd[p], groups, degree, lift)
        u, k = build_table(c, sample_ns, shift, max_mb_s, packing=packing)
        curves.append(c)
        unpacked.append(u)
        packed.append(k)
    return Tables(
        profile=prof, sample_ns=sample_ns, shift=shift, degree=degree, degree_chosen=chosen, rss=rss, traces=kinds,
        packing=packing, lift=lift, curves=curves, unpacked=np.array(unpacked), table=np.array(packed), max_mb_s=max_mb_s,
    )


def _origin(prof: Profile) -> str:
    if prof.source == "simulated":
        return f"profiled on the simulator ({prof.machine})"
    return f"profiled on {prof.machine or 'an unnamed machine'}"


def table_text(t: Tables) -> str:
    """The overhead-table file (docs/format.md; crates/criticore/src/model/overhead.rs).
    Values are rounded up to 1e-6, so rounding never lowers an estimate."""
    prof = t.profile
    loads = f"{prof.n_loads} constant loads"
    if len(prof.run_ids) != prof.n_loads:
        loads += f" in {len(prof.run_ids)} runs"
    how = f"polynomial degree {t.degree}" + ("" if t.degree_chosen else " (given)")
    if not t.packing:
        how += ", no packing"
    if not t.lift:
        how += ", no lift"
    lines = [
        f"# Overhead table of {prof.task!r} for the bandwidth monitor (blin-bandwidth-monitor §3.2),",
        f"# {_origin(prof)}, built by criticore tables build",
        "# (docs/bandwidth-monitor.md: the method, and the command that regenerates this file)",
        f"# ({loads}; {how}; ExecT = {prof.exec_ns} ns;",
        f"# phases alone: {', '.join(str(x) for x in prof.phase_exec_ns)} ns). Entry i: samples that moved",
        f"# [i, i+1) × 2^{t.shift} bytes, i.e. {t.step_mb_s:.2f} MB/s per entry; the last entry (0) holds beyond {t.max_mb_s:g} MB/s.",
        f"task = {json.dumps(prof.task, ensure_ascii=False)}",
        f'sample = "{ns_text(t.sample_ns)}"',
        f"shift = {t.shift}",
        f"be_cores = {prof.be_cores}",
    ]
    for p, row in enumerate(t.table):
        vals = np.ceil(np.asarray(row) * 1e6 - 1e-6) / 1e6
        vals = np.maximum(vals, 0.0)
        body = ",\n".join("    " + ", ".join(f"{v:.6f}" for v in vals[k : k + 8]) for k in range(0, len(vals), 8))
        lines += ["", f"[[phase]]  # phase {p + 1}", "overhead = [", body + ",", "]"]
    return "\n".join(lines) + "\n"


def write_table_file(path: str | Path, t: Tables, option: str = "--output") -> Path:
    """Write :func:`table_text` to ``path``."""
    path = Path(path)
    try:
        path.write_text(table_text(t), encoding="utf-8")
    except OSError as e:
        reason = f"cannot write: {e.strerror or e}"
        raise InputError(f"{path}: {option}: {reason}", str(path), option, reason) from None
    return path
