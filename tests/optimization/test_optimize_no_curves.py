"""`criticore optimize` on files whose tasks carry no cost curve (issue 14):
the case-study files. Cores are packed, PETs stay as given whatever the
ways, the file's allocation is kept, and a one-line notice says so
(docs/optimizer.md, "Tasks without cost curves")."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from criticore import _core
from study.test_study import FIG15A, run

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ROOT / "examples" / "mc2-llc-heavy.toml"
NOTICE = "note: no task has a cost curve (task.cost), so the LLC ways change no PET"
UNIT = {"ms": 1_000_000, "us": 1_000, "ns": 1, "s": 1_000_000_000}


def ns(text: str) -> int:
    for suffix in ("ms", "us", "ns", "s"):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * UNIT[suffix])
    raise AssertionError(text)


def worst_fit(tasks: list[dict], cores: int) -> dict[str, int]:
    """Phase 1 by hand (docs/optimizer.md): sizes PET^A/T (Level A) and PET^B/T,
    largest max first (stable), each to the core with the most capacity left
    on which both sums stay ≤ 1, ties to the lower core."""
    items = []
    for t in tasks:
        if t["level"] in ("A", "B"):
            period = ns(t["period"])
            ua = ns(t["pet"]["A"]) / period if t["level"] == "A" else 0.0
            items.append((max(ua, ns(t["pet"]["B"]) / period), ua, ns(t["pet"]["B"]) / period, t["name"]))
    items.sort(key=lambda x: -x[0])
    load = [[0.0, 0.0] for _ in range(cores)]
    placed = {}
    for _, ua, ub, name in items:
        order = sorted(range(cores), key=lambda p: (max(load[p]), p))
        p = next(p for p in order if load[p][0] + ua <= 1 + 1e-12 and load[p][1] + ub <= 1 + 1e-12)
        load[p][0] += ua
        load[p][1] += ub
        placed[name] = p
    return placed


@pytest.fixture(scope="module")
def heavy():
    return tomllib.loads(HEAVY.read_text())


def test_case_study_is_packed_with_a_notice_and_written(tmp_path, heavy):
    out = tmp_path / "packed.toml"
    p = run("optimize", HEAVY, "-o", out)
    assert p.returncode == 0, p.stderr
    assert NOTICE in p.stdout and "schedulable" in p.stdout
    assert "core  LLC ways" not in p.stdout and "Level-C/OS region" not in p.stdout
    # Every level's utilization at Level-C PETs, as the file gives them: the
    # total of configuration (i) in the file's header.
    objective = sum(ns(t["pet"]["C"]) / ns(t["period"]) for t in heavy["task"] if t["level"] in "ABC")
    assert objective == pytest.approx(3.6025, abs=1e-12)
    assert f"total Level-C utilization (minimized): {objective:.4f}" in p.stdout

    written = tomllib.loads(out.read_text())
    want = worst_fit(heavy["task"], heavy["platform"]["cores"])
    assert {t["name"]: t["core"] for t in written["task"] if t["level"] in "AB"} == want
    assert "allocation" not in written  # the input has none; no way split is made up
    strip = lambda t: {k: v for k, v in t.items() if k != "core"}  # noqa: E731
    assert [strip(t) for t in written["task"]] == [strip(t) for t in heavy["task"]]

    a = run("analyze", out, "--json")
    assert a.returncode == 0, a.stderr
    report = json.loads(a.stdout)
    assert report["schedulable"] is True
    for c in report["levels"]["B"]["per_core"]:
        mine = [t for t in heavy["task"] if want.get(t["name"]) == c["core"]]
        assert c["utilization"] == pytest.approx(sum(ns(t["pet"]["B"]) / ns(t["period"]) for t in mine), abs=1e-12)


def test_json_reports_the_tasks_without_curves(heavy):
    p = run("optimize", HEAVY, "--json")
    assert p.returncode == 0
    assert p.stderr.strip() == NOTICE
    r = json.loads(p.stdout)
    assert r["schedulable"] is True and r["cost_curves"] == 0
    assert r["without_cost_curve"] == [t["name"] for t in heavy["task"] if t["level"] in "ABC"]


def test_level_c_over_capacity_says_so(tmp_path):
    # Three Level-C tasks of utilization 0.9 on two cores: U_C = 2.7 > 2.
    f = tmp_path / "c.toml"
    f.write_text('[platform]\ncores = 2\n' + "".join(
        f'\n[[task]]\nname = "c{i}"\nlevel = "C"\nperiod = "10ms"\npet = {{ A = "9ms", B = "9ms", C = "9ms" }}\n' for i in range(3)
    ))
    out = tmp_path / "never.toml"
    p = run("optimize", f, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "not schedulable (Level C fails its test" in p.stdout and NOTICE in p.stdout
    assert not out.exists()


def test_some_tasks_without_a_curve_are_counted(tmp_path):
    text = _core.generate_system(json.dumps(FIG15A), 1.5, 7)
    doc = tomllib.loads(text)
    level_c = [i for i, t in enumerate(doc["task"]) if t["level"] == "C"]
    k = level_c[0]
    # Drop the first Level-C task's curve (its [task.cost] block): its PETs
    # stay constant, the others' set the split.
    blocks = text.split("\n\n")
    costs = [i for i, b in enumerate(blocks) if b.startswith("[task.cost]")]
    task_of = {i: sum(b.startswith("[[task]]") for b in blocks[:i]) - 1 for i in costs}
    out = [b for i, b in enumerate(blocks) if task_of.get(i) != k]
    f = tmp_path / "mixed.toml"
    f.write_text("\n\n".join(out))
    assert "cost" not in tomllib.loads(f.read_text())["task"][k]
    p = run("optimize", f, "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["without_cost_curve"] == [doc["task"][k]["name"]] and r["cost_curves"] == len(doc["task"]) - 1
    assert p.stderr.strip() == "note: 1 Level-A/B/C task(s) have no cost curve (task.cost): the ways change none of their PETs"
