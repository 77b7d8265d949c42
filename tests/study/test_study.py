"""The schedulability study runner and its reports (issue 5): scenarios, statistics,
resume after a kill, Dask against local, the CLI's error lines, `criticore optimize`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from criticore import _core, study
from criticore.study import report as study_report
from criticore.study.report import Curves

ROOT = Path(__file__).resolve().parents[2]
CRITICORE = Path(sys.executable).parent / "criticore"
SCHEMES = ["R|R", "C|C", "O|C", "C|C+A/B-ALL", "C|C+A/B-LP", "C|C+A/B-SP", "O|C+A/B-ALL", "O|C+A/B-LP", "O|C+A/B-SP"]

# A small study: the scenarios of Fig. 15 (a) and (c), a coarse grid, few systems per point.
FIG15A = {"criticality": "C-Light", "period": "Long", "task_utilization": "Light", "reload": "Quick",
          "ipc_size": "Small", "io_bandwidth": "High", "direct_io": "Many"}  # fmt: skip
FIG15C = {"criticality": "C-Light", "period": "Short", "task_utilization": "Medium", "reload": "Slow",
          "ipc_size": "Large", "io_bandwidth": "High", "direct_io": "Many"}  # fmt: skip
SMALL_GRID = "1:7:1"
SMALL_SYSTEMS = 40
SMALL_BATCH = 20


def small_params(seed: int = 11) -> study.StudyParams:
    return study.StudyParams(
        seed=seed,
        scenario_ids=tuple(sorted([study.scenario_id(FIG15A), study.scenario_id(FIG15C)])),
        points=tuple(study.parse_grid(SMALL_GRID)),
        half_width=0.1,
        batch=SMALL_BATCH,
        max_systems=SMALL_SYSTEMS,
    )


def small_cli_args(out: Path) -> list[str]:
    ids = ",".join(str(s) for s in small_params().scenario_ids)
    return ["study", "run", "-o", str(out), "--scenarios", ids, "--utilization", SMALL_GRID, "--half-width", "0.1",
            "--max-systems", str(SMALL_SYSTEMS), "--batch", str(SMALL_BATCH), "--seed", "11", "--chunk", "1", "--no-report"]  # fmt: skip


def run(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    e.update(env or {})
    return subprocess.run([str(CRITICORE), *map(str, args)], cwd=ROOT, env=e, capture_output=True, text=True, timeout=timeout)


def assert_one_error_line(p: subprocess.CompletedProcess, field: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert field in lines[0], (field, lines[0])
    return lines[0]


def same_content(a, b) -> None:
    """Two sorted result tables hold the same rows (NaN objectives compare equal)."""
    assert a.column_names == b.column_names
    assert a.num_rows == b.num_rows
    for name in a.column_names:
        x = a.column(name).to_numpy(zero_copy_only=False)
        y = b.column(name).to_numpy(zero_copy_only=False)
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), name
        else:
            assert (x == y).all(), name


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The small study, uninterrupted, on the local backend (in process)."""
    out = tmp_path_factory.mktemp("study") / "reference"
    study.run_study(out, small_params(), progress=False, chunk_points=3)
    return out


# --------------------------------------------------------------------------- scenarios


def test_engine_lists_table3_and_the_nine_schemes():
    cats = study.categories()
    assert [c.key for c in cats] == ["criticality", "period", "task_utilization", "reload", "ipc_size", "io_bandwidth", "direct_io"]
    assert [len(c.choices) for c in cats] == [3, 3, 3, 2, 2, 3, 2]
    assert study.schemes() == SCHEMES


def test_cross_product_has_648_scenarios_with_stable_ids():
    all_ = study.all_scenarios()
    assert len(all_) == 648 == study.scenario_count()
    assert len({tuple(s.values()) for s in all_}) == 648
    assert all_[0] == {c.key: c.choices[0] for c in study.categories()}
    # Last category fastest: id 1 differs from id 0 in direct I/O only.
    assert {k for k in all_[0] if all_[0][k] != all_[1][k]} == {"direct_io"}
    assert study.scenario(647) == {c.key: c.choices[-1] for c in study.categories()}
    for sid in (0, 1, 100, 333, 647):
        assert study.scenario_id(study.scenario(sid)) == sid
        assert all_[sid] == study.scenario(sid)
    assert study.scenario_label(study.scenario_id(FIG15A)) == "(C-Light, Long, Light, Quick, Small, High, Many)"


def test_scenario_filter():
    sel = study.select_scenarios(["criticality=C-Light,period=Long"])
    assert len(sel) == 648 // 9
    assert all(study.scenario(s)["criticality"] == "C-Light" and study.scenario(s)["period"] == "Long" for s in sel)
    # A key given twice means either choice; keys and choices are case-insensitive; the dot may be left out.
    assert len(study.select_scenarios(["period=Long,period=short"])) == 432
    assert len(study.select_scenarios(["Criticality=all-mod"])) == 216
    assert len(study.select_scenarios(["task-utilization=Heavy,ipc_size=Large,io_bandwidth=High"])) == 648 // 18
    assert study.select_scenarios(["0,5,10-12"]) == [0, 5, 10, 11, 12]
    # Several values: the union.
    assert study.select_scenarios(["3", "criticality=C-Light,period=Short,task_utilization=Light,reload=Quick,ipc_size=Small,io_bandwidth=Low"]) == [0, 1, 3]
    assert study.select_scenarios(None) == list(range(648))
    assert len(study.quick_scenarios()) == 6
    quick = [study.scenario(s) for s in study.quick_scenarios()]
    for c in study.categories():  # --quick uses every choice of every category
        assert {q[c.key] for q in quick} == set(c.choices)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("criticality=C-Medium", ["criticality", "C-Light, C-Heavy, All-Mod."]),
        ("colour=red", ["unknown category", "criticality"]),
        ("criticality=C-Light,7", ["key=choice"]),
        ("648", ["out of range", "0–647"]),
        ("9-3", ["empty range"]),
        (",", ["empty"]),
    ],
)
def test_scenario_filter_errors(spec, words):
    with pytest.raises(ValueError) as e:
        study.select_scenarios([spec])
    for w in words:
        assert w in str(e.value), str(e.value)


def test_utilization_grid():
    assert study.parse_grid("0.25:16:0.25") == list(range(64)) == list(study.FULL_GRID)
    assert [study.utilization(k) for k in study.parse_grid("0.5:2:0.5")] == [0.5, 1.0, 1.5, 2.0]
    assert study.parse_grid("1,2.5,4") == [3, 9, 15]
    assert study.format_grid(study.parse_grid("0.5:10:0.5")) == "0.5:10:0.5"
    for bad in ("0.3:2:0.25", "1:0.5:0.25", "a:b:c", "0:1:0.25", "2,1", "1:2"):
        with pytest.raises(ValueError):
            study.parse_grid(bad)


# --------------------------------------------------------------------------- statistics


def test_wilson_interval_by_hand():
    # 0 of 50: center = half = (z²/2n)/(1 + z²/n) = 0.038416/1.076832 = 0.0356750.
    lo, hi = study_report.wilson_interval(0, 50)
    assert lo == 0.0 and hi == pytest.approx(0.0713500, abs=1e-6)
    assert study_report.wilson_half_width(0, 50) == pytest.approx(0.0356750, abs=1e-6)
    # 25 of 100: center 0.5, half = 1.96/1.038416 · sqrt(0.0025 + 3.8416/40000) = 0.0961704.
    lo, hi = study_report.wilson_interval(25, 50, z=1.96)
    assert (lo + hi) / 2 == pytest.approx(0.5)
    assert study_report.wilson_half_width(50, 100) == pytest.approx(0.0961704, abs=1e-6)
    # At p = 0.5 the Wilson interval needs 381 systems for ±0.05 (the Wald interval 385).
    assert study_report.wilson_half_width(191, 382) <= 0.05 < study_report.wilson_half_width(190, 380)
    hw = study_report.wilson_half_width(np.array([0, 50]), np.array([50, 100]))
    assert hw == pytest.approx([0.0356750, 0.0961704], abs=1e-6)


def test_trapezoid_area_by_hand():
    # Schedulability 1, 1, 0.5, 0 at U = 0.25, 0.5, 0.75, 1: 0.25·1 + 0.25·0.75 + 0.25·0.25 = 0.5.
    assert study_report.trapezoid_area([0.25, 0.5, 0.75, 1.0], [1, 1, 0.5, 0]) == pytest.approx(0.5)
    assert study_report.trapezoid_area([1.0], [1.0]) == 0.0


def test_sua_and_ratios_by_hand():
    # Two scenarios, two schemes, grid U = 0.5, 1.0, 1.5 (points 1, 3, 5).
    # Scenario 0 stopped after U = 1.0: its U = 1.5 point was not evaluated and counts as 0.
    systems = np.array([[10, 10, 0], [20, 20, 20]])
    schedulable = np.zeros((2, 3, 2), dtype=int)
    schedulable[0, :, 0] = [10, 0, 0]  # A: 1, 0, (0)
    schedulable[0, :, 1] = [10, 5, 0]  # B: 1, 0.5, (0)
    schedulable[1, :, 0] = [20, 10, 0]  # A: 1, 0.5, 0
    schedulable[1, :, 1] = [20, 20, 10]  # B: 1, 1, 0.5
    c = Curves([0, 1], [1, 3, 5], np.array([0.5, 1.0, 1.5]), ["A", "B"], systems, schedulable)
    # Areas: A: 0.25, 0.5; B: 0.5, 0.875 (by the trapezoid rule with step 0.5).
    assert c.areas() == pytest.approx(np.array([[0.25, 0.5], [0.5, 0.875]]))
    assert c.sua() == pytest.approx([0.75, 1.375])
    assert c.sua([1]) == pytest.approx([0.5, 0.875])
    m = study_report.ratio_matrix(c.sua())
    assert study_report.format_ratio(m[1, 0]) == "+83%"
    assert study_report.format_ratio(m[0, 1]) == "-45%"
    assert study_report.format_ratio(1.05) == "+5%"
    assert study_report.format_ratio(1.0004) == "0%"
    assert study_report.format_ratio(1.1234, 1) == "+12.3%"
    assert study_report.format_ratio(float("nan")) == "n/a"


# --------------------------------------------------------------------------- runs


def test_small_study_layout_and_kernel_contract(reference):
    params = small_params()
    meta = json.loads((reference / "study.json").read_text())
    assert meta["parameters"] == params.identity()
    assert meta["schemes"] == SCHEMES
    assert meta["progress"]["complete"] is True
    assert set(meta["scenarios"]) == {str(s) for s in params.scenario_ids}
    assert meta["versions"]["criticore"]
    files = study.result_files(reference)
    assert files and all(f.name.startswith("point-") for f in files)
    assert not list((reference / "results").glob(".tmp-*"))
    t = study.sorted_results(reference)
    assert t.column_names == ["scenario_id", "point", "utilization", "system", "scheme", "schedulable", "objective"]
    schema = pq.read_schema(files[0])
    assert str(schema.field("scheme").type).startswith("dictionary")
    s, k, u = (t.column(c).to_numpy() for c in ("scenario_id", "point", "utilization"))
    sysidx = t.column("system").to_numpy()
    ok = t.column("schedulable").to_numpy(zero_copy_only=False)
    obj = t.column("objective").to_numpy()
    assert np.allclose(u, 0.25 * (k + 1))
    assert np.isnan(obj[~ok]).all() and np.isfinite(obj[ok]).all()
    state = study.read_state(reference, params)
    # The small study exercises both the early stop and the adaptive number of systems.
    assert all(state.stop_point(sid) is not None for sid in params.scenario_ids)
    assert meta["progress"]["points_skipped"] > 0
    assert len(np.unique(sysidx)) > params.batch
    for sid in params.scenario_ids:
        evaluated = sorted(state.done[sid])
        stop = state.stop_point(sid)
        # Swept in increasing U, no gap, nothing after the first point no scheme schedules.
        assert evaluated == [p for p in params.points if stop is None or p <= stop]
        if stop is not None:
            assert meta["progress"]["stopped"][str(sid)]["point"] == stop
        for p in evaluated:
            sel = (s == sid) & (k == p)
            n = len(np.unique(sysidx[sel]))
            # Every system under all nine schemes, systems numbered 0..n-1.
            assert sel.sum() == 9 * n and set(np.unique(sysidx[sel])) == set(range(n))
            succ = np.array([ok[sel & (t.column("scheme").to_numpy(zero_copy_only=False) == name)].sum() for name in SCHEMES])
            # The kernel's stopping rule, checked with our Wilson half-width: the smallest
            # multiple of the batch (or the cap) where every scheme is within ±half_width.
            hw = study_report.wilson_half_width(succ, n, params.z)
            assert n == params.max_systems or (n % params.batch == 0 and (hw <= params.half_width + 1e-12).all()), (sid, p, n, hw)


def test_report(reference):
    path = study_report.write_report(reference)
    text = path.read_text()
    assert "**Complete.**" in text
    assert "C\\|C+A/B-ALL" in text and "SUA" in text
    for sid in small_params().scenario_ids:
        assert (reference / "plots" / f"scenario-{sid:03d}.png").stat().st_size > 1000
    assert (reference / "plots" / "sua.png").exists()
    # SUA recomputed straight from the rows, independently of Curves.
    t = study.sorted_results(reference)
    params = small_params()
    us = np.array([study.utilization(p) for p in params.points])
    want = np.zeros(9)
    scen, pts, sch = (t.column(c).to_numpy(zero_copy_only=False) for c in ("scenario_id", "point", "scheme"))
    ok = t.column("schedulable").to_numpy(zero_copy_only=False)
    for j, name in enumerate(SCHEMES):
        for sid in params.scenario_ids:
            y = []
            for p in params.points:
                sel = (scen == sid) & (pts == p) & (sch == name)
                y.append(ok[sel].mean() if sel.any() else 0.0)
            want[j] += study_report.trapezoid_area(us, y)
    curves = study_report.compute_curves(reference)
    assert curves.sua() == pytest.approx(want, abs=1e-12)
    for j, name in enumerate(SCHEMES):
        assert f"| {name.replace('|', chr(92) + '|')} | {want[j]:.3f} |" in text


def test_killed_study_resumes_to_the_same_content(tmp_path, reference):
    out = tmp_path / "killed"
    p = run(*small_cli_args(out), env={study.KILL_AFTER_ENV: "3"})
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr)
    first = {f.name: f.stat().st_mtime_ns for f in study.result_files(out)}
    assert len(first) == 3
    meta = json.loads((out / "study.json").read_text())
    assert meta["progress"]["complete"] is False
    # The report of an unfinished study says so.
    p = run("study", "report", out, "--no-plots")
    assert p.returncode == 0, p.stderr
    assert "Incomplete: 3 of" in (out / "report.md").read_text()
    # A temporary file as a kill during a write would leave it.
    (out / "results" / ".tmp-point-009-deadbeef.parquet-1").write_bytes(b"partial")
    p = run(*small_cli_args(out))
    assert p.returncode == 0, p.stderr
    # Nothing finished was redone: the first run's files are untouched, no point twice.
    for name, mtime in first.items():
        assert (out / "results" / name).stat().st_mtime_ns == mtime
    assert not list((out / "results").glob(".tmp-*"))
    meta = json.loads((out / "study.json").read_text())
    assert meta["progress"]["complete"] is True
    assert [r["resumed_points"] for r in meta["runs"]] == [0, 3]
    same_content(study.sorted_results(out), study.sorted_results(reference))
    # A third run has nothing left to do.
    p = run(*small_cli_args(out))
    assert p.returncode == 0 and "(0 in this run" in p.stdout, p.stdout


def test_interrupted_by_an_exception_resumes_in_process(tmp_path, reference):
    out = tmp_path / "interrupted"

    def stop(n):
        if n == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        study.run_study(out, small_params(), progress=False, chunk_points=2, on_chunk=stop)
    assert len(study.result_files(out)) == 2
    study.run_study(out, small_params(), progress=False, chunk_points=5)
    same_content(study.sorted_results(out), study.sorted_results(reference))


def test_dask_local_cluster_gives_the_same_results(tmp_path, reference):
    import distributed

    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            summary = study.run_study(out, small_params(), dask=client, progress=False, chunk_points=1)
    assert summary.complete
    same_content(study.sorted_results(out), study.sorted_results(reference))


def test_cli_dask_local_matches_local(tmp_path, reference):
    out = tmp_path / "dask-cli"
    p = run(*small_cli_args(out), "--dask", "local", "--workers", "1")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    meta = json.loads((out / "study.json").read_text())
    assert meta["runs"][0]["backend"].startswith("dask LocalCluster")
    assert "distributed" in meta["versions"]
    same_content(study.sorted_results(out), study.sorted_results(reference))


def test_dask_missing_is_one_line(tmp_path):
    # The CLI in a Python where `distributed` cannot be imported.
    code = "import sys; sys.modules['distributed'] = None; sys.argv[0] = 'criticore'; from criticore.cli import main; main()"
    out = tmp_path / "nodask"
    p = subprocess.run(
        [sys.executable, "-c", code, "study", "run", "-o", str(out), "--scenarios", "0", "--dask", "local"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    line = assert_one_error_line(p, "--dask")
    assert 'pip install "dask[distributed]"' in line
    assert not out.exists()


def test_other_parameters_are_refused_unless_force(tmp_path):
    out = tmp_path / "other"
    params = study.StudyParams(seed=1, scenario_ids=(0,), points=(3,), half_width=0.2, batch=10, max_systems=10)
    study.run_study(out, params, progress=False)
    args = ["study", "run", "-o", out, "--scenarios", "0", "--utilization", "1", "--half-width", "0.2", "--max-systems", "10", "--no-report"]
    line = assert_one_error_line(run(*args, "--seed", "2"), "--output")
    assert line.startswith(f"error: {out}: --output: ") and "seed (1 vs 2)" in line and "--force" in line
    p = run(*args, "--seed", "2", "--force")
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "study.json").read_text())["parameters"]["seed"] == 2
    # A folder that is not a study is not written into without --force.
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert_one_error_line(run("study", "run", "-o", foreign, "--scenarios", "0", "--utilization", "1"), "--output")
    assert sorted(x.name for x in foreign.iterdir()) == ["notes.txt"]


# --------------------------------------------------------------------------- CLI errors


@pytest.mark.parametrize(
    "args, field",
    [
        (["--scenarios", "criticality=C-Medium"], "--scenarios"),
        (["--scenarios", "bogus"], "--scenarios"),
        (["--scenarios", "1000"], "--scenarios"),
        (["--utilization", "0.1:1:0.25"], "--utilization"),
        (["--half-width", "0"], "--half-width"),
        (["--max-systems", "0"], "--max-systems"),
        (["--batch", "0"], "--batch"),
        (["--seed", "-1"], "--seed"),
        (["--workers", "2"], "--workers"),
        (["--dask", "nonsense"], "--dask"),
        (["--dask", "tcp://127.0.0.1:9", "--workers", "2"], "--workers"),
        (["--preset", "zcu102"], "--preset"),
    ],
)
def test_study_run_bad_options(tmp_path, args, field):
    out = tmp_path / "never"
    line = assert_one_error_line(run("study", "run", "-o", out, *args), field)
    assert line.startswith(f"error: {out}: {field}: "), line
    assert not out.exists()


def test_study_report_errors(tmp_path):
    assert_one_error_line(run("study", "report", tmp_path / "missing"), "does not exist")
    assert_one_error_line(run("study", "report", tmp_path), "study.json")


def test_study_run_output_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_one_error_line(run("study", "run", "-o", f, "--scenarios", "0"), "--output")


# --------------------------------------------------------------------------- optimize


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("optimize") / "generated.toml"
    path.write_text(_core.generate_system(json.dumps(FIG15A), 1.5, 7), encoding="utf-8")
    return path


def test_optimize_unknown_scheme(generated):
    line = assert_one_error_line(run("optimize", generated, "--scheme", "X|Y"), "--scheme")
    assert line.startswith(f"error: {generated}: --scheme: ")
    for name in SCHEMES:
        assert name in line


def test_optimize_writes_a_file_that_analyze_accepts(tmp_path, generated):
    out = tmp_path / "allocated.toml"
    p = run("optimize", generated, "-o", out, "--json")
    assert p.returncode == 0, p.stderr
    json.loads(p.stdout)
    assert out.exists()
    a = run("analyze", out, "--json")
    assert a.returncode == 0, a.stderr
    json.loads(a.stdout)
    # Never overwritten without --force.
    before = out.read_bytes()
    assert_one_error_line(run("optimize", generated, "-o", out), "--output")
    assert out.read_bytes() == before
    p = run("optimize", generated, "-o", out, "--force", "--scheme", "r|r")
    assert p.returncode == 0, p.stderr
    # Without -o: a summary table.
    p = run("optimize", generated)
    assert p.returncode == 0 and "O|C+A/B-ALL" in p.stdout, p.stderr


def test_optimize_unschedulable_writes_nothing(tmp_path):
    heavy = tmp_path / "heavy.toml"
    heavy.write_text(_core.generate_system(json.dumps(FIG15C), 9.0, 7), encoding="utf-8")
    out = tmp_path / "never.toml"
    p = run("optimize", heavy, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "not schedulable" in p.stdout and "phase" in p.stdout
    assert not out.exists()
    p = run("optimize", heavy, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["schedulable"] is False


def test_optimize_output_type_must_match(tmp_path, generated):
    assert_one_error_line(run("optimize", generated, "-o", tmp_path / "x.json"), "--output")


def test_calibrated_preset_is_recorded_and_changes_the_costs(tmp_path):
    """`--preset imx6-transaction` runs the same systems with the calibrated cost
    constants (docs/calibration.md): recorded in study.json, and a separate study."""
    import json
    import pyarrow.parquet as pq

    outs = {}
    for preset in ("imx6", "imx6-transaction"):
        out = tmp_path / preset
        # Scenario 647: Heavy I/O, many links; every cost term is present.
        p = run("study", "run", "-o", out, "--scenarios", "647", "--utilization", "3", "--half-width", "0.2", "--max-systems", "20", "--no-report", "--preset", preset)
        assert p.returncode == 0, p.stderr
        meta = json.loads((out / "study.json").read_text())
        assert meta["parameters"].get("preset", "imx6") == preset
        outs[preset] = pq.read_table(out / "results").to_pydict()["objective"]
    assert outs["imx6"] != outs["imx6-transaction"]
