"""`criticore calibrate`: the fluid model fitted to the transaction model on
the µB grid of mc2-hardware-management §4.1, and the built-in parameter set
it wrote (``preset = "imx6-transaction"``)."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from criticore import _core
from criticore.calibrate import fit as F
from criticore.simulation import SimOptions

BUILT_IN = Path(__file__).resolve().parents[2] / "crates/criticore/src/model/params/imx6-transaction.toml"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "criticore", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)


def test_fit_reproduces_the_built_in_set_and_beats_the_assumed_constants(tmp_path):
    out = tmp_path / "p.toml"
    r = cli("calibrate", "-o", str(out), "--plot", str(tmp_path / "p.png"))
    assert r.returncode == 0, r.stderr
    new, built_in = tomllib.loads(out.read_text()), tomllib.loads(BUILT_IN.read_text())
    # Deterministic: the committed set is what the fit gives today.
    assert new["platform"]["dram"] == built_in["platform"]["dram"]
    assert new["study"] == built_in["study"]
    fit = new["fit"]
    assert fit["points"] == 36
    # The stated tolerance (docs/calibration.md): after calibration 33 of 36 points within ±10%
    # and 35 within ±20%; before, half of them are off by more than 10%.
    assert fit["within_10_percent_after"] >= 33 and fit["within_20_percent_after"] >= 35
    assert fit["within_10_percent_before"] <= 20
    assert fit["rms_log_error_after"] < fit["rms_log_error_before"] / 3
    assert (tmp_path / "p.png").stat().st_size > 10_000
    # Each point's numbers are recomputable from the model: the fluid time at the fitted constants.
    p0 = new["fit"]["point"][0]
    pts = F.transaction_points(grid=((p0["colours"], p0["ways"], p0["isolation"]),))
    assert abs(pts[0].loaded_ns / 1e6 - p0["transaction_ms"]) < 1e-3


def test_the_named_set_is_a_platform_preset():
    dram = tomllib.loads(BUILT_IN.read_text())["platform"]["dram"]
    base = '[platform]\npreset = "{}"\ncores = 4\n[[task]]\nname = "t"\ncore = 0\nperiod = "10ms"\npet = "1ms"\nmemory = {{ wss = "2MiB", pattern = "random", read_fraction = 1.0, accesses_per_ms = 3000 }}\n'
    explicit = base.format("imx6").replace("cores = 4\n", f'cores = 4\ndram = {{ read_latency = "{dram["read_latency"]}", row_conflict = "{dram["row_conflict"]}" }}\n')
    run = lambda text: json.loads(_core.simulate(text.encode(), "t.toml", SimOptions(50_000_000))[0])["per_task"][0]["memory_stall_ns"]
    assert run(base.format("imx6-transaction")) == run(explicit)
    assert run(base.format("imx6-transaction")) != run(base.format("imx6"))


def test_outputs_are_kept_and_bad_paths_are_one_line_errors(tmp_path):
    out = tmp_path / "p.toml"
    out.write_text("mine")
    r = cli("calibrate", "-o", str(out))
    assert r.returncode == 2 and "--force" in r.stderr and out.read_text() == "mine"
    r = cli("calibrate", "-o", str(tmp_path / "p.json"))
    assert r.returncode == 2 and "--output" in r.stderr and len(r.stderr.strip().splitlines()) == 1
