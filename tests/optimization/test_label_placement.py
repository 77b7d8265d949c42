"""`criticore optimize` on a scratchpad platform: label placement (issue 27,
Build 7; docs/optimizer.md "Label placement"). Worked by hand at 1 GHz (a
cycle is 1 ns): a reads g 100 times per 1 µs job, explicitly; g in GRAM
(10 cycles) costs 1,000 + 1,000 + 1 ns (1 ns per phase with accesses,
docs/analysis.md), in LRAM0 (1 cycle from core 0) 1,000 + 100 + 1."""

from __future__ import annotations

import json
import tomllib

import pytest

from cli_run import one_line_error, run
from criticore import TaskSystem, analyze
from criticore.errors import InputError
from criticore.optimization import optimize, place_labels

FILE = """[platform]
cores = 2
clock = "1GHz"

[[platform.memory]]
name = "GRAM"
size = "1KiB"
latency_cycles = 10

[[platform.memory]]
name = "LRAM0"
core = 0
size = "1KiB"
latency_cycles = [1, 9]

[[label]]
name = "g"
size = "4B"
memory = "GRAM"

[[task]]
name = "a"
core = 0
period = "10us"
communication = "explicit"
runnables = [{ name = "A", pet = "1us", reads = { g = 100 } }]
"""


def test_optimize_moves_the_label_next_to_its_reader_and_writes_the_file(tmp_path):
    f, out = tmp_path / "p.toml", tmp_path / "placed.toml"
    f.write_text(FILE)
    p = run("optimize", f, "-o", out, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert (report["before"]["worst"], report["after"]["worst"]) == (2_001 / 10_000, 1_101 / 10_000)
    assert report["moves"] == [{"label": "g", "from": "GRAM", "to": "LRAM0"}]
    assert tomllib.loads(out.read_text())["label"][0]["memory"] == "LRAM0"
    assert f.read_text() == FILE
    # The written file analyzes to the hand bound.
    assert analyze(TaskSystem.load(out)).bound("a").bound_ns == 1_101
    # The summary a user reads.
    p = run("optimize", f)
    assert p.returncode == 0, p.stderr
    assert "worst bound / deadline 0.2001 → 0.1101" in p.stdout and "g: GRAM → LRAM0" in p.stdout


def test_bad_options_are_one_line_errors_and_nothing_is_overwritten(tmp_path):
    f, out = tmp_path / "p.toml", tmp_path / "placed.toml"
    f.write_text(FILE)
    one_line_error(run("optimize", f, "--budget", "0"), "--budget", "positive")
    one_line_error(run("optimize", f, "--budget", "-3"), "--budget", "positive")
    one_line_error(run("optimize", f, "--objective", "fast"), "--objective", "unknown objective")
    one_line_error(run("optimize", f, "--objective", "chain"), "chain", "no [[chain]]")
    out.write_text("mine\n")
    one_line_error(run("optimize", f, "-o", out), "--output")
    assert out.read_text() == "mine\n"


def test_the_python_api_returns_the_placed_system():
    placed, report = place_labels(TaskSystem.from_dict(tomllib.loads(FILE), "p.toml"), budget=5)
    assert report["moves"] == [{"label": "g", "from": "GRAM", "to": "LRAM0"}]
    assert analyze(placed).bound("a").bound_ns == 1_101


def test_label_options_on_an_llc_platform_are_refused():
    one_line_error(run("optimize", "examples/mc2-llc-heavy.toml", "--objective", "chain"), "--objective", "scratchpad platforms")
    one_line_error(run("optimize", "examples/mc2-llc-heavy.toml", "--budget", "5"), "--budget", "scratchpad platforms")


def test_the_python_api_names_the_optimization_each_platform_has():
    with pytest.raises(InputError, match="platform.memory: label placement needs a scratchpad platform"):
        place_labels(TaskSystem.load("examples/mc2-llc-heavy.toml"))
    with pytest.raises(InputError, match="platform.memory: a scratchpad platform: its optimization is label placement"):
        optimize(TaskSystem.from_dict(tomllib.loads(FILE), "p.toml"))
