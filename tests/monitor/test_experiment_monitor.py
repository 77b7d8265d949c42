"""`criticore experiment monitor` (criticore.monitor.experiment): the
evaluation of blin-bandwidth-monitor §4.3 on the simulator — Fig. 8
(overheads against the threshold), Fig. 9 (parallelism kept), a Parquet of
the (application, load) rows and a summary. Method: docs/bandwidth-monitor.md,
"Experiment". The Typer sub-app is called directly (no `criticore` entry point
needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from criticore.monitor import experiment
from criticore.monitor import simulated as sim
from criticore.monitor.experiment import experiment_app
from criticore.simulation import simulate
from test_tables import one_line_error

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "monitor" / "rt-with-loads.toml"
TABLE = EXAMPLE.parent / "overheads.toml"
DURATION_NS = 100_000_000  # 10 rt jobs per run (period 10 ms)
#: The quick grid: 5 ratios × 5 delays × the five §3.1 configurations on 3 cores.
QUICK_LOADS = 5 * 5 * 5
#: The load the example file itself holds (3 reads per 7 writes, x = 20 ns, [1x,2x,3x]).
EXAMPLE_LOAD = "3r7w x=20ns [1x,2x,3x]"


def invoke(*args: str | Path) -> subprocess.CompletedProcess:
    """`criticore experiment monitor ARGS`, as a finished process (exit code, stdout, stderr)."""
    argv = ["monitor", *map(str, args)]
    r = CliRunner().invoke(experiment_app, argv)
    return subprocess.CompletedProcess(argv, r.exit_code, r.stdout, r.stderr)


def copy_example(folder: Path, name: str, old: str = "", new: str = "") -> Path:
    """The example (with its table beside it) under another name, ``old`` replaced by ``new``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TABLE, folder / TABLE.name)
    path = folder / name
    text = EXAMPLE.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """Two applications: the example (threshold 5%) and a copy with a 3% threshold."""
    tmp = tmp_path_factory.mktemp("experiment")
    strict = copy_example(tmp / "apps", "strict.toml", "threshold = 0.05", "threshold = 0.03")
    out = tmp / "out"
    r = invoke(EXAMPLE, strict, "--rt-task", "rt", "--be-cores", "1,2,3", "--duration", "100ms", "-o", out)
    assert r.returncode == 0, (r.stdout, r.stderr)
    return {"result": r, "out": out, "strict": strict, "table": pq.read_table(out / "monitor.parquet")}


def rows(done, application: str) -> dict[str, list]:
    d = done["table"].to_pydict()
    keep = [i for i, a in enumerate(d["application"]) if a == application]
    return {k: [v[i] for i in keep] for k, v in d.items()}


# --------------------------------------------------------------------------- outputs


def test_outputs_one_row_per_application_and_load(done):
    out = done["out"]
    for name in ("fig8-overhead.png", "fig9-parallelism.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    t = done["table"]
    assert t.num_rows == 2 * QUICK_LOADS
    d = t.to_pydict()
    assert set(d["application"]) == {"rt-with-loads", "strict"}
    assert len(set(zip(d["application"], d["load"]))) == t.num_rows
    assert sorted(set(d["load_multipliers"])) == ["1", "1,1", "1,1,1", "1,2", "1,2,3"]
    assert t.schema.metadata[b"grid"] == b"quick" and t.schema.metadata[b"duration_ns"] == str(DURATION_NS).encode()
    # 10 jobs of 5 ms in 100 ms (period 10 ms), each way.
    assert all(len(x) == 10 for x in d["overheads_none"] + d["overheads_monitor"] + d["parallelism"])


def test_monitor_keeps_every_job_under_the_threshold(done):
    for app, threshold in (("rt-with-loads", 0.05), ("strict", 0.03)):
        r = rows(done, app)
        assert set(r["threshold"]) == {threshold}
        ovd = np.concatenate([np.asarray(x) for x in r["overheads_monitor"]])
        # §3.3: suspension once the estimate passes threshold − one sample's share
        # (Δ/ExecT = 50 µs / 5 ms); the table overestimates, so the job stays under.
        share = 50_000 / 5_000_000
        assert set(r["sample_ns"]) == {50_000} and set(r["exec_ns"]) == {5_000_000}
        assert ovd.max() <= threshold < threshold + share
        # The monitor never makes a job slower (up to the engine's 1 ns per event, docs).
        none = np.asarray(r["max_overhead_none"])
        assert (np.asarray(r["max_overhead_monitor"]) <= none + 1e-4).all()
        # Without it, some loads break the threshold (else the experiment shows nothing).
        assert (none > threshold).any()


def test_example_load_equals_simulating_the_example_file(done):
    """The example file *is* the variant of its own load: simulating it directly
    gives the experiment's row, both ways, job for job."""
    r = rows(done, "rt-with-loads")
    i = r["load"].index(EXAMPLE_LOAD)
    for reg in ("none", "monitor"):
        run = simulate(EXAMPLE, DURATION_NS, regulator=reg, jobs=True)
        j = run.jobs
        rt = j["task"] == 0
        expected = (j["finish_ns"][rt] - j["start_ns"][rt]) / j["exec_ns"][rt] - 1
        assert np.array_equal(np.asarray(r[f"overheads_{reg}"][i]), expected)
        assert r[f"max_overhead_{reg}"][i] == expected.max()
    assert r["parallelism"][i] == run.report["regulation"]["details"]["parallelism"]
    # docs/bandwidth-monitor.md, Results: 5.37% → 1.77%, parallelism 0.28.
    assert round(100 * r["max_overhead_none"][i], 2) == 5.37 and round(100 * r["max_overhead_monitor"][i], 2) == 1.77
    # The load's demand: its instances' rates in the file (lines/ms) × 32-byte lines.
    doc = tomllib.loads(EXAMPLE.read_text())
    demand = sum(t["memory"]["accesses_per_ms"] for t in doc["task"] if t["name"].startswith("load")) * 32 / 1e3
    assert r["load_mb_s"][i] == pytest.approx(demand, rel=1e-6)


def test_parallelism_is_the_share_before_suspension(done):
    for app in ("rt-with-loads", "strict"):
        r = rows(done, app)
        for par, pmin, pmean, mon, none in zip(r["parallelism"], r["parallelism_min"], r["parallelism_mean"], r["overheads_monitor"], r["overheads_none"]):
            par = np.asarray(par)
            assert ((0 <= par) & (par <= 1)).all()
            assert pmin == par.min() and pmean == pytest.approx(par.mean())
            if pmin == 1.0:  # never suspended: the same jobs as without the monitor
                assert np.allclose(mon, none, atol=1e-4)
    # The stricter threshold suspends earlier: it never keeps more parallelism.
    loose, strict = rows(done, "rt-with-loads"), rows(done, "strict")
    assert loose["load"] == strict["load"]
    assert (np.asarray(strict["parallelism_min"]) <= np.asarray(loose["parallelism_min"]) + 1e-12).all()


def test_summary_worked_from_the_rows(done):
    text = " ".join(done["result"].stdout.split())
    for app in ("rt-with-loads", "strict"):
        r = rows(done, app)
        none, mon = np.asarray(r["max_overhead_none"]), np.asarray(r["max_overhead_monitor"])
        thr = r["threshold"][0]
        above = f"{100 * (none > thr).mean():.0f}% → {100 * (mon > thr).mean():.0f}%"
        cells = f"{app} {100 * thr:g}% {QUICK_LOADS} {100 * none.max():.2f}% → {100 * mon.max():.2f}% {above}"
        assert cells in text, (cells, text)
        par = f"{np.mean(r['parallelism_mean']):.2f} ({min(r['parallelism_min']):.2f})"
        assert f"{above} {par}" in text
    # The bombs' documented worst cases (docs/bandwidth-monitor.md): 16.14% → 3.63%.
    assert "rt-with-loads 5% 125 16.14% → 3.63%" in text


# --------------------------------------------------------------------------- outputs kept, reruns


def test_refuses_to_overwrite_without_force_and_is_deterministic(done):
    out = done["out"]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    r = invoke(EXAMPLE, "--duration", "100ms", "-o", out)
    one_line_error(r, "monitor.parquet", "--output", "--force")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # --force: the same inputs give the same rows.
    r = invoke(EXAMPLE, done["strict"], "--duration", "100ms", "-o", out, "--force")
    assert r.returncode == 0, r.stderr
    assert pq.read_table(out / "monitor.parquet").equals(done["table"])


def test_ctrl_c_stops_cleanly_and_writes_nothing(tmp_path, monkeypatch):
    real = sim.evaluate_monitor

    def interrupted(*args, on_load=None, **kw):
        def tick(i, n):
            on_load(i, n)
            if i == 3:
                raise KeyboardInterrupt

        return real(*args, on_load=tick, **kw)

    monkeypatch.setattr(experiment.sim, "evaluate_monitor", interrupted)
    r = invoke(EXAMPLE, "--duration", "100ms", "-o", tmp_path / "out")
    assert r.returncode == 130
    assert r.stderr.strip() == f"interrupted after 3 of {QUICK_LOADS} loads; nothing written"
    assert not (tmp_path / "out").exists()


def test_json_file_reads_like_its_toml(tmp_path):
    """The variants read JSON task files too (the same schema)."""
    shutil.copy(TABLE, tmp_path / TABLE.name)
    as_json = tmp_path / "rt.json"
    as_json.write_text(json.dumps(tomllib.loads(EXAMPLE.read_text())))
    load = [sim.Load(3, 20.0, (1, 2, 3))]
    a, b = (sim.evaluate_monitor(f, "rt", [1, 2, 3], load, 20_000_000)[0] for f in (EXAMPLE, as_json))
    assert np.array_equal(a["overheads_monitor"], b["overheads_monitor"]) and np.array_equal(a["parallelism"], b["parallelism"])


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_one_line(tmp_path):
    ex = str(EXAMPLE.relative_to(ROOT))
    one_line_error(invoke(tmp_path / "missing.toml"), "missing.toml", "(file)", "cannot read")
    one_line_error(invoke(ROOT / "examples" / "memguard-bombs.toml"), "memguard-bombs.toml", "regulation.kind", '"monitor"', "memguard")
    doc = tomllib.loads(EXAMPLE.read_text())
    del doc["regulation"]
    no_reg = tmp_path / "plain.toml"
    no_reg.write_text(sim.dump_toml(doc))
    one_line_error(invoke(no_reg), "plain.toml", "regulation.kind", "no [regulation]")
    one_line_error(invoke(EXAMPLE, "--rt-task", "nope"), "rt-with-loads.toml", "--rt-task", "no task named 'nope'")
    one_line_error(invoke(EXAMPLE, "--rt-task", "load1"), "--rt-task", "watches 'rt'")
    one_line_error(invoke(EXAMPLE, "--rt-task", "rt", "--rt-task", "rt"), "--rt-task", "once per FILE")
    one_line_error(invoke(EXAMPLE, "--be-cores", "1,x"), "rt-with-loads.toml", "--be-cores", "'1,x'")
    one_line_error(invoke(EXAMPLE, "--be-cores", "4"), "--be-cores", "core 4 does not exist")
    one_line_error(invoke(EXAMPLE, "--be-cores", "0,1"), "--be-cores", "core 0 runs the real-time task")
    two = copy_example(tmp_path, "two.toml", "be_cores = [1, 2, 3]", "be_cores = [1, 2]")
    one_line_error(invoke(two, "--be-cores", "1,2,3"), "two.toml", "--be-cores", "core 3 is not among the monitor's best-effort cores")
    (tmp_path / "lost").mkdir()
    lost = tmp_path / "lost" / "rt.toml"
    lost.write_text(EXAMPLE.read_text())
    one_line_error(invoke(lost), "rt.toml", "regulation.overhead_table", "no such file")
    one_line_error(invoke(EXAMPLE, "--loads", "huge"), "--loads", "quick or full")
    one_line_error(invoke(EXAMPLE, "--duration", "soon"), "--duration")
    one_line_error(invoke(EXAMPLE, "--duration", "1ms", "-o", tmp_path / "short"), ex, "--duration", "no job of 'rt' completed")
    one_line_error(invoke(EXAMPLE, EXAMPLE), "FILE", "given twice")
    (tmp_path / "file-out").write_text("")
    one_line_error(invoke(EXAMPLE, "-o", tmp_path / "file-out"), "--output", "not a folder")
    assert not (tmp_path / "short").exists()
