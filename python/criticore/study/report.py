"""Reports of a schedulability study (mc2-io-ipc-os-isolation §6.2).

From the rows in ``DIR/results`` this computes, per (scenario, point, scheme),
the fraction of generated task systems that were schedulable; draws one plot
per scenario like Fig. 15 (schedulability against system utilization, a line
per scheme); and the schedulable-utilization area (SUA) of each scheme: the sum
over scenarios of the area under its curve, by the trapezoid rule over the
study's utilization grid, where points not evaluated (after a scenario stopped
early) count as 0. Two schemes are compared by the ratio of their SUAs.

``write_report(DIR)`` writes ``DIR/report.md`` and ``DIR/plots/*.png``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from criticore.study import catalogue, parameters, run, store

#: The comparisons §6.2 quotes: (row scheme, column scheme, subset, paper's SUA ratio in %).
PAPER_RATIOS = (
    ("C|C", "R|R", "all", 5, "Obs. 7"),
    ("O|C", "C|C", "all", 11, "Obs. 8"),
    ("O|C", "C|C", "Large IPC", 13, "Obs. 8"),
    ("C|C+A/B-ALL", "C|C", "all", 3, "Obs. 9"),
    ("C|C+A/B-ALL", "C|C", "High bandwidth", 4, "Obs. 9 (around 4%)"),
    ("C|C+A/B-ALL", "C|C+A/B-LP", "all", 3, "Obs. 10 (roughly 3%)"),
    ("C|C+A/B-ALL", "C|C+A/B-SP", "all", 3, "Obs. 10 (roughly 3%)"),
    ("O|C+A/B-ALL", "O|C+A/B-LP", "all", 3, "Obs. 10"),
    ("O|C+A/B-ALL", "O|C+A/B-SP", "all", 2, "Obs. 10"),
    ("O|C+A/B-ALL", "C|C", "all", 14, "Obs. 11"),
    ("O|C+A/B-ALL", "R|R", "all", 20, "Obs. 11"),
)

#: Subsets of scenarios the paper restricts SUA ratios to: name → (category key, choice).
SUBSETS = {
    "Large IPC": ("ipc_size", "Large"),
    "High bandwidth": ("io_bandwidth", "High"),
}


# --------------------------------------------------------------------------- statistics


def wilson_interval(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (successes out of n) at normal quantile z."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


def wilson_half_width(successes, n, z: float = 1.96):
    """Half-width of the Wilson score interval (works elementwise on numpy arrays)."""
    successes = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes / n
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    half = np.where(n > 0, half, 0.5)
    return float(half) if half.ndim == 0 else half


def trapezoid_area(u, y) -> float:
    """Area under the piecewise-linear curve through (u[i], y[i]) (the trapezoid rule)."""
    u = np.asarray(u, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(u) < 2:
        return 0.0
    return float(np.sum((y[1:] + y[:-1]) * np.diff(u)) / 2)


# --------------------------------------------------------------------------- curves


@dataclass
class Curves:
    """Schedulability per (scenario, point, scheme) of one study."""

    scenario_ids: list[int]
    points: list[int]
    utilizations: np.ndarray  # (P,)
    schemes: list[str]
    systems: np.ndarray  # (S, P) systems evaluated; 0 where the point was not evaluated
    schedulable: np.ndarray  # (S, P, K) schedulable systems

    @property
    def evaluated(self) -> np.ndarray:
        return self.systems > 0

    @property
    def fraction(self) -> np.ndarray:
        """Schedulable fraction; 0 where a point was not evaluated."""
        with np.errstate(divide="ignore", invalid="ignore"):
            f = self.schedulable / self.systems[:, :, None]
        return np.where(self.evaluated[:, :, None], f, 0.0)

    def areas(self) -> np.ndarray:
        """(S, K): area under each scenario's curve of each scheme."""
        f = self.fraction
        du = np.diff(self.utilizations)
        if len(du) == 0:
            return np.zeros((len(self.scenario_ids), len(self.schemes)))
        return np.einsum("spk,p->sk", (f[:, 1:, :] + f[:, :-1, :]) / 2, du)

    def sua(self, rows: list[int] | np.ndarray | None = None) -> np.ndarray:
        """SUA per scheme, over all scenarios or the given rows (scenario positions)."""
        a = self.areas()
        return a.sum(axis=0) if rows is None else a[np.asarray(rows, dtype=int)].sum(axis=0)


def _scheme_codes(column, names: list[str]) -> np.ndarray:
    """Scheme positions (into ``names``) of a Parquet ``scheme`` column (dictionary, string or integer)."""
    import pyarrow as pa

    codes = []
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            lookup = np.array([names.index(s) for s in chunk.dictionary.to_pylist()], dtype=np.int64)
            codes.append(lookup[chunk.indices.to_numpy(zero_copy_only=False).astype(np.int64)])
        elif pa.types.is_integer(chunk.type):
            codes.append(chunk.to_numpy(zero_copy_only=False).astype(np.int64))
        else:
            pos = {s: i for i, s in enumerate(names)}
            codes.append(np.array([pos[s] for s in chunk.to_pylist()], dtype=np.int64))
    return np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)


def compute_curves(out: str | Path, meta: dict | None = None) -> Curves:
    """Count systems and schedulable systems per (scenario, point, scheme), file by file."""
    import pyarrow.parquet as pq

    meta = meta or store.load_study(out)
    params = store.params_of(meta)
    names = list(meta["schemes"])
    sids, pts = list(params.scenario_ids), list(params.points)
    s_pos = np.full(max(sids) + 1, -1, dtype=np.int64)
    s_pos[sids] = np.arange(len(sids))
    p_pos = np.full(max(pts) + 1, -1, dtype=np.int64)
    p_pos[pts] = np.arange(len(pts))
    S, P, K = len(sids), len(pts), len(names)
    rows = np.zeros(S * P * K, dtype=np.int64)
    ok = np.zeros(S * P * K, dtype=np.int64)
    for path in store.result_files(out):
        t = pq.read_table(path, columns=["scenario_id", "point", "scheme", "schedulable"])
        s = t.column("scenario_id").to_numpy().astype(np.int64)
        k = t.column("point").to_numpy().astype(np.int64)
        if len(s) and (s.max() >= len(s_pos) or k.max() >= len(p_pos) or (s_pos[s] < 0).any() or (p_pos[k] < 0).any()):
            raise parameters._input_error(Path(out), f"{store.RESULTS_DIR}/{path.name}", "holds points that are not in this study")
        flat = (s_pos[s] * P + p_pos[k]) * K + _scheme_codes(t.column("scheme"), names)
        rows += np.bincount(flat, minlength=S * P * K)
        sched = t.column("schedulable").to_numpy(zero_copy_only=False).astype(np.int64)
        ok += np.bincount(flat, weights=sched, minlength=S * P * K).astype(np.int64)
    rows = rows.reshape(S, P, K)
    return Curves(
        scenario_ids=sids,
        points=pts,
        utilizations=np.array([catalogue.utilization(k) for k in pts]),
        schemes=names,
        systems=rows.max(axis=2),
        schedulable=ok.reshape(S, P, K),
    )


def format_ratio(r: float, digits: int = 0) -> str:
    """An SUA ratio as a signed percentage: 1.05 → "+5%"."""
    if not math.isfinite(r):
        return "n/a"
    pct = round((r - 1) * 100, digits)
    if pct == 0:
        return "0%"
    return f"{pct:+.{digits}f}%"


def ratio_matrix(sua: np.ndarray) -> np.ndarray:
    """SUA[row] / SUA[column]; NaN where the column's SUA is 0."""
    sua = np.asarray(sua, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = sua[:, None] / sua[None, :]
    return np.where(sua[None, :] > 0, m, np.nan)


def subset_rows(curves: Curves, key: str, choice: str) -> list[int]:
    return [i for i, sid in enumerate(curves.scenario_ids) if catalogue.scenario(sid)[key] == choice]


# --------------------------------------------------------------------------- plots

_STYLE = {
    "R|R": dict(color="0.45", marker="x", linestyle="--"),
    "C|C": dict(color="tab:blue", marker="o"),
    "O|C": dict(color="tab:orange", marker="s"),
    "C|C+A/B-ALL": dict(color="tab:green", marker="^"),
    "C|C+A/B-LP": dict(color="tab:olive", marker="<", linestyle=":"),
    "C|C+A/B-SP": dict(color="tab:cyan", marker=">", linestyle=":"),
    "O|C+A/B-ALL": dict(color="tab:red", marker="D", linewidth=2.0),
    "O|C+A/B-LP": dict(color="tab:purple", marker="v", linestyle="-."),
    "O|C+A/B-SP": dict(color="tab:brown", marker="P", linestyle="-."),
}


def _scenario_axes(curves: Curves):
    """One figure, one (empty) line per scheme, and its title."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    lines = []
    for name in curves.schemes:
        style = dict(linewidth=1.3, markersize=4)
        style.update(_STYLE.get(name, {}))
        lines.append(ax.plot([], [], label=name, **style)[0])
    ax.set_xlim(0, max(curves.utilizations[-1], 1) + 0.1)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("system utilization")
    ax.set_ylabel("schedulability")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3, loc="lower left")
    title = ax.set_title(f"scenario 000: {catalogue.scenario_label(curves.scenario_ids[0])}", fontsize=9)
    fig.tight_layout()  # with a title in place, so that it keeps its room
    return fig, lines, title


def _draw_scenario(curves: Curves, lines, title, i: int, stop: int | None) -> None:
    """Scenario at row ``i`` into the lines: evaluated points, plus the skipped
    tail after an early stop (0 by definition)."""
    sid = curves.scenario_ids[i]
    shown = curves.evaluated[i] | ((np.array(curves.points) > stop) if stop is not None else False)
    for k, line in enumerate(lines):
        line.set_data(curves.utilizations[shown], curves.fraction[i, shown, k])
    title.set_text(f"scenario {sid}: {catalogue.scenario_label(sid)}")


def scenario_figure(curves: Curves, scenario_id: int, stop: int | None = None):
    """Schedulability against utilization of one scenario, one line per scheme."""
    fig, lines, title = _scenario_axes(curves)
    _draw_scenario(curves, lines, title, curves.scenario_ids.index(scenario_id), stop)
    return fig


def _plot_scenarios(curves: Curves, stops: dict[int, int | None], plots: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")  # files only: no window
    import matplotlib.pyplot as plt

    paths = []
    # One figure, updated per scenario (much faster than redrawing).
    fig, lines, title = _scenario_axes(curves)
    for i, sid in enumerate(curves.scenario_ids):
        _draw_scenario(curves, lines, title, i, stops.get(sid))
        path = plots / f"scenario-{sid:03d}.png"
        fig.savefig(path, dpi=100)
        paths.append(path)
    plt.close(fig)
    return paths


def sua_figure(curves: Curves, sua: np.ndarray):
    """SUA per scheme, a bar chart."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    colors = [_STYLE.get(n, {}).get("color", "tab:gray") for n in curves.schemes]
    ax.bar(range(len(sua)), sua, color=colors)
    ax.set_xticks(range(len(sua)))
    ax.set_xticklabels(curves.schemes, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("SUA")
    ax.set_title(f"schedulable-utilization area, {len(curves.scenario_ids)} scenarios", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def _plot_sua(curves: Curves, sua: np.ndarray, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no window
    import matplotlib.pyplot as plt

    fig = sua_figure(curves, sua)
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --------------------------------------------------------------------------- markdown


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # scheme names hold pipes


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(map(_cell, header)) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(map(_cell, r)) + " |" for r in rows]
    return "\n".join(lines)


def _ratio_section(curves: Curves, rows, title: str) -> str:
    sua = curves.sua(rows)
    m = ratio_matrix(sua)
    body = [[f"**{a}**"] + [("" if i == j else format_ratio(m[i, j])) for j in range(len(sua))] for i, a in enumerate(curves.schemes)]
    n = len(curves.scenario_ids) if rows is None else len(rows)
    return f"### {title} ({n} scenarios)\n\nRow scheme's SUA relative to the column scheme's (SUA_row / SUA_col − 1).\n\n" + _table(
        ["vs"] + curves.schemes, body
    )


def build_report(out: str | Path, plots: bool = True) -> tuple[str, Curves]:
    """The report's markdown (and the PNGs under DIR/plots when ``plots``)."""
    out = Path(out)
    meta = store.load_study(out)
    params = store.params_of(meta)
    curves = compute_curves(out, meta)
    state = store.read_state(out, params, len(curves.schemes))
    stops = {sid: state.stop_point(sid) for sid in curves.scenario_ids}
    expected = run._expected_total(params, state)
    done = state.points_done()
    complete = done >= expected
    sua = curves.sua()
    areas = curves.areas()

    if plots:
        plot_dir = out / "plots"
        plot_dir.mkdir(exist_ok=True)
        _plot_scenarios(curves, stops, plot_dir)
        _plot_sua(curves, sua, plot_dir / "sua.png")

    md: list[str] = []
    md.append("# Schedulability study\n")
    md.append(
        "Overhead-aware schedulability study of mc2-io-ipc-os-isolation §6, written by "
        "`criticore study run` (see docs/study.md). "
        + (
            "**Complete.**"
            if complete
            else f"**Incomplete: {done} of (at most) {expected} points evaluated** — rerun `criticore study run` "
            "with the same options to resume; points not yet evaluated count as 0 below."
        )
        + "\n"
    )
    skipped = sum(sum(1 for k in params.points if stops[sid] is not None and k > stops[sid]) for sid in curves.scenario_ids)
    hw = wilson_half_width(curves.schedulable, curves.systems[:, :, None], params.z)
    ev = curves.evaluated
    worst = float(np.max(hw[ev])) if ev.any() else float("nan")
    capped = int(np.sum(ev & (curves.systems >= params.max_systems) & (hw.max(axis=2) > params.half_width + 1e-12)))
    versions = meta.get("versions", {})
    md.append(
        _table(
            ["parameter", "value"],
            [
                ["scenarios", f"{len(curves.scenario_ids)} of {catalogue.scenario_count()}"],
                ["system utilization grid", f"{catalogue.format_grid(params.points)} ({len(params.points)} points)"],
                ["seed", str(params.seed)],
                ["target precision", f"±{params.half_width:g} (Wilson score interval, z = {params.z:g})"],
                ["systems per point", f"batches of {params.batch}, at most {params.max_systems}"],
                ["points evaluated", f"{done:,}"],
                ["points skipped after an early stop", f"{skipped:,} (counted as 0)"],
                ["task systems evaluated", f"{int(curves.systems.sum()):,} (each under all {len(curves.schemes)} schemes)"],
                ["largest half-width reached", f"±{worst:.3f}" if math.isfinite(worst) else "n/a"],
                ["points that hit the system cap above the target", str(capped)],
                ["engine", f"criticore {versions.get('criticore', '?')}"],
            ],
        )
        + "\n"
    )

    md.append("## Schedulable-utilization area per scheme\n")
    md.append(
        "SUA: the sum over scenarios of the area under the scheme's schedulability curve "
        "(trapezoid rule over the utilization grid; points skipped after an early stop count as 0). "
        "The mean schedulability is SUA divided by the grid's width and the number of scenarios.\n"
    )
    width = float(curves.utilizations[-1] - curves.utilizations[0]) if len(curves.utilizations) > 1 else 0.0
    ref = curves.schemes.index("R|R") if "R|R" in curves.schemes else None
    rows = []
    for k, name in enumerate(curves.schemes):
        mean = sua[k] / (width * len(curves.scenario_ids)) if width > 0 else float("nan")
        vs = format_ratio(sua[k] / sua[ref], 1) if ref is not None and sua[ref] > 0 else "n/a"
        rows.append([name, f"{sua[k]:.3f}", f"{mean:.3f}", vs])
    md.append(_table(["scheme", "SUA", "mean schedulability", "vs R|R"], rows) + "\n")
    if plots:
        md.append("![SUA per scheme](plots/sua.png)\n")

    md.append("## SUA ratios\n")
    md.append(_ratio_section(curves, None, "All scenarios") + "\n")
    subset_of: dict[str, list[int] | None] = {"all": None}
    for title, (key, choice) in SUBSETS.items():
        sel = subset_rows(curves, key, choice)
        subset_of[title] = sel
        if sel:
            md.append(_ratio_section(curves, sel, f"Only {title} ({key} = {choice})") + "\n")
        else:
            md.append(f"### Only {title}\n\nNo scenario of this study has {key} = {choice}.\n")

    md.append("## Next to the paper's numbers (§6.2)\n")
    prow = []
    for a, b, subset, paper, where in PAPER_RATIOS:
        sel = subset_of.get(subset)
        if (sel is not None and not sel) or a not in curves.schemes or b not in curves.schemes:
            ours = "n/a"
        else:
            s = curves.sua(sel)
            ia, ib = curves.schemes.index(a), curves.schemes.index(b)
            ours = format_ratio(s[ia] / s[ib], 1) if s[ib] > 0 else "n/a"
        prow.append([f"{a} vs {b}", subset, ours, f"+{paper}%", where])
    md.append(_table(["comparison", "scenarios", "this study", "paper", "source"], prow) + "\n")

    md.append("## Scenarios\n")
    md.append(
        "Scenario ids index the cross product of Table 3 (criticality varying slowest); "
        "the columns per scheme are the areas under its curve. Plots: `plots/scenario-NNN.png`.\n"
    )
    srows = []
    for i, sid in enumerate(curves.scenario_ids):
        stop = stops[sid]
        stop_txt = f"U = {catalogue.utilization(stop):g}" if stop is not None else "—"
        link = f"[{sid}](plots/scenario-{sid:03d}.png)" if plots else str(sid)
        srows.append([link, catalogue.scenario_label(sid), str(int(ev[i].sum())), stop_txt] + [f"{areas[i, k]:.2f}" for k in range(len(curves.schemes))])
    md.append(_table(["id", "scenario", "points", "all 0 at"] + curves.schemes, srows) + "\n")
    return "\n".join(md), curves


def write_report(out: str | Path, plots: bool = True) -> Path:
    """Write DIR/report.md (and DIR/plots/*.png); returns the report's path."""
    out = Path(out)
    path = out / "report.md"
    try:
        text, _ = build_report(out, plots=plots)
        store._write_atomic(path, lambda f: f.write(text.encode("utf-8")))
    except OSError as e:
        where = Path(e.filename).name if getattr(e, "filename", None) else "report.md"
        raise parameters._input_error(out, where, f"cannot write: {e.strerror or e}") from None
    return path
