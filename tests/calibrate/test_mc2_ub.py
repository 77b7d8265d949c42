"""`criticore experiment mc2-ub`: the µB experiments of mc2-hardware-management
§4 on the transaction model (the magnitudes are asserted in Rust, beside the
model: crates/criticore/src/sim/memory/transaction/mc2_ub.rs)."""

import subprocess
import sys

import pyarrow.parquet as pq

from criticore import _core
from criticore.calibrate import mc2_ub


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "criticore", *args], capture_output=True, text=True, **kw)


def test_small_sweep_writes_table_figure_and_compares_with_the_paper(tmp_path):
    out = tmp_path / "ub"
    r = cli("experiment", "mc2-ub", "--wss", "256KiB", "--colours", "2,4,16", "--ways", "2,16", "--iterations", "4", "--runs", "1", "-o", str(out))
    assert r.returncode == 0, r.stderr
    t = pq.read_table(out / "mc2-ub.parquet").to_pylist()
    assert len(t) == 3 * 2 * 4  # colours × ways × configurations
    assert (out / "fig5-256KiB.png").stat().st_size > 10_000
    os_rows = pq.read_table(out / "os-isolation.parquet").to_pylist()
    assert [r["os_isolation"] for r in os_rows] == [False, True]
    # The paper's text numbers the grid covers are printed beside the model's.
    assert "(f) cache isolation, 16 × 2, ACET" in r.stdout and "1,159 ms" in r.stdout
    assert "Obs. 1" in r.stdout and "OS isolation: victim" in r.stdout
    # Same seed, same rows.
    again = _core.mc2_ub([(256 * 1024, 2, 16, "cache")], iterations=4, runs=1)
    row = next(x for x in t if (x["colours"], x["ways"], x["isolation"]) == (2, 16, "cache"))
    assert again[0]["wcet_ns"] == row["wcet_ns"]


def test_existing_outputs_are_kept_without_force(tmp_path):
    out = tmp_path / "ub"
    out.mkdir()
    (out / "mc2-ub.parquet").write_text("mine")
    r = cli("experiment", "mc2-ub", "--wss", "32KiB", "--colours", "1", "--ways", "1", "--iterations", "2", "--runs", "1", "--no-os", "-o", str(out), stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert "--force" in r.stderr and (out / "mc2-ub.parquet").read_text() == "mine"


def test_bad_options_are_one_line_errors():
    for args, field in ((("--colours", "0-3"), "--colours"), (("--isolation", "cache,nope"), "--isolation"), (("--wss", "lots"), "--wss"), (("--replacement", "fifo", "--colours", "1", "--ways", "1"), "--replacement")):
        r = cli("experiment", "mc2-ub", *args, "--no-os", "-o", "/tmp/never-written-mc2ub")
        assert r.returncode == 2, (args, r.stderr)
        assert field in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_observation_rows_follow_the_grid():
    rows = [
        {"wss_bytes": 262144, "isolation": "cache", "colours": 4, "ways": 16, "wcet_ns": 300e6, "acet_ns": 290e6},
        {"wss_bytes": 262144, "isolation": "unmanaged", "colours": 4, "ways": 16, "wcet_ns": 1500e6, "acet_ns": 1400e6},
    ]
    obs = mc2_ub.observations(rows)
    assert obs == [("Obs. 1: WCET (g) / (e) at 4 × 16", "≈ 5 (a 400% reduction)", "5.0")]
