"""PETs once (issue 25, Build 3): a task with a cost curve runs one PET in
`analyze`, in `simulate` and in the runtime's periodic worker (`criticore
load --file F --task T`, what `criticore regulate` launches): the engine's
conditioned PET under the file's allocation (crates/criticore/src/policy/pet.rs),
worked out here by hand from docs/study-model.md's cost model."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import criticore

SYSTEM = """[platform]
preset = "imx6"
cores = 1

[[task]]
name = "c0"
level = "C"
period = "10ms"
pet = { C = "1ms" }
cost = { llc_slowdown = 2.95, wss_ways = 8, reload = 0.05 }

[allocation]
llc_ways = { levelC = 4 }
"""


def conditioned_pet_ns() -> int:
    # docs/study-model.md: C(w) = PET · g(w) · (1 + ρ), no DMA, no buffers, no
    # interrupts; g(w) = 1 + (s − 1)·e^(−r·w), r = ln((s − 1)/ε)/wss, ε = 1e-6;
    # rounded up to whole ns. s = 2.95, wss = 8, w = 4 Level-C ways, ρ = 0.05.
    r = math.log((2.95 - 1) / 1e-6) / 8
    g = 1 + (2.95 - 1) * math.exp(-r * 4)
    return math.ceil(1_000_000 * g * 1.05)  # 1,051,467 ns


def test_a_cost_curve_task_runs_one_pet_in_analyze_simulate_and_the_worker(tmp_path: Path):
    f = tmp_path / "pet.toml"
    f.write_text(SYSTEM)
    expected = conditioned_pet_ns()
    assert expected != 1_000_000  # the idle-system PET is not what runs

    # analyze: the task's Level-C utilization is its PET over its 10 ms period.
    level_c = criticore.analyze(str(f)).json["levels"]["C"]
    assert round(level_c["total_utilization"] * 10_000_000) == expected

    # simulate: alone on its core with no memory profile, a job runs exactly its PET.
    sim = criticore.simulate(str(f), "50ms", jobs=True)
    assert set(sim.jobs.column("exec_ns").to_pylist()) == {expected}

    # The runtime's periodic worker plans each job at the same PET.
    out = subprocess.run(
        [sys.executable, "-m", "criticore", "load", "--file", str(f), "--task", "c0", "--jobs", "1", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert round(json.loads(out.stdout)["pet_ms"] * 1e6) == expected


def test_a_cost_curve_without_an_allocation_is_one_line_for_the_worker_too(tmp_path: Path):
    f = tmp_path / "pet.toml"
    f.write_text(SYSTEM.replace("[allocation]\nllc_ways = { levelC = 4 }\n", ""))
    out = subprocess.run(
        [sys.executable, "-m", "criticore", "load", "--file", str(f), "--task", "c0", "--jobs", "1"],
        capture_output=True, text=True, timeout=120,
    )
    lines = [l for l in out.stderr.splitlines() if l.strip()]
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert "allocation.llc_ways" in lines[0] and "criticore optimize" in lines[0]
