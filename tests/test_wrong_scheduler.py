"""Requests that would ignore every task, or some of them silently, are refused.

``analyze --scheduler mc2`` and ``optimize`` on a file whose tasks have no MC²
level used to say "schedulable" (utilization 0) having analyzed nothing;
``optimize`` called an overloaded partitioned fixed-priority file schedulable.
Each case must now end in one line on stderr naming the field and the reason,
exit 2, no traceback (issue 24, "Wrong answers").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CRITICORE = Path(sys.executable).parent / "criticore"

PLATFORM = '[platform]\ncores = 2\n'
# Two tasks on core 0 asking 8 ms + 8 ms every 10 ms: overloaded under pfp, no MC² level.
OVERLOADED_PFP = PLATFORM + (
    '[[task]]\nname = "a"\ncore = 0\nperiod = "10ms"\npet = "8ms"\n'
    '[[task]]\nname = "b"\ncore = 0\nperiod = "10ms"\npet = "8ms"\n'
)
# "x" has no level beside a Level-C task (the file implies mc2).
MIXED = PLATFORM + (
    '[[task]]\nname = "lc"\nlevel = "C"\nperiod = "10ms"\npet = { C = "1ms" }\n'
    '[[task]]\nname = "x"\ncore = 1\nperiod = "10ms"\npet = "9ms"\n'
)
BEST_EFFORT_ONLY = PLATFORM + '[[task]]\nname = "d"\nlevel = "D"\nperiod = "10ms"\npet = { D = "20ms" }\n'


def run(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "my.toml"
    path.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [str(CRITICORE), *args[:1], str(path), *args[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def refused(p: subprocess.CompletedProcess, field: str, *reason: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert f"my.toml: {field}: " in lines[0], lines[0]
    for words in reason:
        assert words in lines[0], lines[0]
    assert "schedulable" not in p.stdout


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_analyze_mc2_without_levels_names_the_scheduler_the_file_implies(tmp_path, fmt):
    p = run(tmp_path, OVERLOADED_PFP, "analyze", "--scheduler", "mc2", *fmt)
    refused(p, "--scheduler", "no task has an MC² level", "the file implies pfp")


def test_analyze_mc2_with_a_task_without_level_names_that_task(tmp_path):
    refused(run(tmp_path, MIXED, "analyze"), "task[1].level", '"x" has no MC² level')


def test_analyze_best_effort_only_is_refused(tmp_path):
    refused(run(tmp_path, BEST_EFFORT_ONLY, "analyze"), "task.level", "every task is Level D")


def test_optimize_overloaded_pfp_is_refused_not_called_schedulable(tmp_path):
    p = run(tmp_path, OVERLOADED_PFP, "optimize")
    refused(p, "task.level", "no task has an MC² level", "the file implies pfp", "criticore analyze")


def test_optimize_with_a_task_without_level_names_that_task(tmp_path):
    refused(run(tmp_path, MIXED, "optimize"), "task[1].level", '"x" has no MC² level', "the optimizer would leave it out")


def test_optimize_best_effort_only_is_refused(tmp_path):
    refused(run(tmp_path, BEST_EFFORT_ONLY, "optimize"), "task.level", "every task is Level D")


def test_the_overloaded_pfp_file_still_gets_its_real_verdict_from_analyze(tmp_path):
    # 8 + 8 ms of work every 10 ms on one core: b's response time has no fixed point within 10 ms.
    p = run(tmp_path, OVERLOADED_PFP, "analyze", "--json")
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["scheduler"] == "pfp"
    assert a["schedulable"] is False
