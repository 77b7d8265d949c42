"""The installed ``criticore`` console script, run as a subprocess."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from oracles import mc2_reference as ref

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
HEAVY = EXAMPLES / "mc2-llc-heavy.toml"
LIGHT = EXAMPLES / "mc2-llc-light.toml"
CRITICORE = Path(sys.executable).parent / "criticore"
CONFIG_KEYS = ("mc2_isolated", "mc2_unmanaged", "isolated_only", "neither")
TOL = 1e-9


def run(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [str(CRITICORE), *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def analyze_json(path: Path) -> dict:
    p = run("analyze", path, "--json")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def heavy() -> dict:
    return analyze_json(HEAVY)


@pytest.fixture(scope="module")
def light() -> dict:
    return analyze_json(LIGHT)


def test_console_script_is_installed():
    assert CRITICORE.is_file(), CRITICORE
    p = run("version")
    assert p.returncode == 0 and p.stdout.strip(), p.stderr


# --------------------------------------------------------------------------- case studies


def totals(report: dict) -> list[float]:
    return [report["configurations"][k]["total_utilization"] for k in CONFIG_KEYS]


def test_json_has_the_documented_keys(heavy):
    assert isinstance(heavy["schedulable"], bool)
    for level in "ABC":
        assert isinstance(heavy["levels"][level]["schedulable"], bool)
    for key in CONFIG_KEYS:
        cfg = heavy["configurations"][key]
        assert isinstance(cfg["total_utilization"], float)
        assert isinstance(cfg["schedulable"], bool)
        assert set(cfg["levels"]) == {"A", "B", "C"}


def test_llc_heavy_case_study(heavy):
    # mc2-hardware-management Table 1, worked out by hand from the PETs (see the example's header).
    assert totals(heavy) == pytest.approx([3.6025, 4.7575, 5.4675, 8.665], abs=TOL)
    assert heavy["schedulable"] is True
    assert all(heavy["levels"][lv]["schedulable"] for lv in "ABC")
    cfg = heavy["configurations"]
    assert cfg["mc2_isolated"]["schedulable"] is True
    for key in ("mc2_unmanaged", "isolated_only", "neither"):
        assert cfg[key]["schedulable"] is False, key
        assert cfg[key]["total_utilization"] > 4, key


def test_llc_heavy_level_a_tables(heavy):
    tables = heavy["level_a_tables"]
    assert [t["core"] for t in tables] == [0, 1, 2, 3]
    for t in tables:
        assert t["slots"], t
        for s in t["slots"]:
            assert isinstance(s["task"], str)
            assert isinstance(s["start_ns"], int) and isinstance(s["length_ns"], int)
            assert s["length_ns"] > 0 and s["start_ns"] + s["length_ns"] <= t["hyperperiod_ns"]
    ms = 1_000_000
    # Core 0: T0 (4 ms) and T1 (15 ms), both every 100 ms, back to back from 0.
    core0 = [(s["task"], s["start_ns"], s["length_ns"]) for s in tables[0]["slots"]]
    assert tables[0]["hyperperiod_ns"] == 100 * ms
    assert core0 == [("T0@cpu0", 0, 4 * ms), ("T1@cpu0", 4 * ms, 15 * ms)]
    core1 = [(s["task"], s["start_ns"], s["length_ns"]) for s in tables[1]["slots"]]
    assert core1 == [("T2@cpu1", 0, 24 * ms)]


def test_llc_light_case_study(light):
    assert totals(light) == pytest.approx([3.08625, 3.14875, 4.20375, 4.38625], abs=TOL)
    cfg = light["configurations"]
    assert cfg["mc2_isolated"]["schedulable"] is True
    assert cfg["mc2_unmanaged"]["schedulable"] is True
    assert light["schedulable"] is True


@pytest.mark.parametrize("path", [HEAVY, LIGHT], ids=["heavy", "light"])
def test_case_studies_match_the_reference(path, heavy, light):
    """The exact-arithmetic reference (tests/mc2_reference.py) on the example files."""
    report = heavy if path == HEAVY else light
    want = ref.analyze(ref.from_document(tomllib.loads(path.read_text(encoding="utf-8"))))
    for key in CONFIG_KEYS:
        assert report["configurations"][key]["total_utilization"] == pytest.approx(float(want["configurations"][key]["total_utilization"]), abs=TOL)
        assert report["configurations"][key]["schedulable"] == want["configurations"][key]["schedulable"]
        assert report["configurations"][key]["levels"] == want["configurations"][key]["levels"]
    c, wc = report["levels"]["C"], want["levels"]["C"]
    assert c["x_ns"] == pytest.approx(float(wc["x_ns"]), rel=1e-12)
    assert [b["bound_ns"] for b in c["tardiness_bounds"]] == pytest.approx([b["bound_ns"] for b in wc["tardiness_bounds"]], abs=1)


def test_human_output_mentions_each_configuration():
    p = run("analyze", HEAVY)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    out = p.stdout
    for label in ("(i) ", "(ii) ", "(iii) ", "(iv) "):
        assert label in out, label
    for total in ("3.6025", "4.7575", "5.4675", "8.6650"):
        assert total in out, total
    for level in ("Level A", "Level B", "Level C"):
        assert level in out
    assert "Traceback" not in out


def test_check_subcommand():
    p = run("check", HEAVY)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert p.stdout.strip() == f"{HEAVY}: ok (27 tasks, 0 servers, 4 cores)"
    p = run("check", LIGHT)
    assert p.returncode == 0 and p.stdout.strip() == f"{LIGHT}: ok (24 tasks, 0 servers, 4 cores)"


# --------------------------------------------------------------------------- valid files


def test_json_file_gives_the_same_analysis_as_toml(tmp_path, heavy):
    doc = tomllib.loads(HEAVY.read_text(encoding="utf-8"))
    path = tmp_path / "heavy.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert analyze_json(path) == heavy
    p = run("check", path)
    assert p.returncode == 0 and "ok (27 tasks, 0 servers, 4 cores)" in p.stdout


@pytest.mark.parametrize("seed", [3, 17])
def test_random_system_json_equals_toml(tmp_path, seed):
    system = ref.random_system(random.Random(seed))
    (tmp_path / "s.toml").write_text(ref.to_toml(system), encoding="utf-8")
    (tmp_path / "s.json").write_text(ref.to_json(system), encoding="utf-8")
    assert analyze_json(tmp_path / "s.json") == analyze_json(tmp_path / "s.toml")


UNSCHEDULABLE = """\
[platform]
cores = 1

[[task]]
name = "hog"
level = "A"
core = 0
period = "100ms"
pet = { A = "80ms", B = "60ms", C = "50ms" }

[[task]]
name = "b"
level = "B"
core = 0
period = "200ms"
pet = { B = "90ms", C = "70ms" }

[[task]]
name = "c"
level = "C"
period = "50ms"
pet = { C = "40ms" }
"""


def test_unschedulable_but_valid_system_exits_0(tmp_path):
    path = tmp_path / "overloaded.toml"
    path.write_text(UNSCHEDULABLE, encoding="utf-8")
    p = run("analyze", path, "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["schedulable"] is False
    # Level B: 60/100 + 90/200 = 1.05 > 1; Level C: û = 1 − 0.5 − 0.35 = 0.15 < 0.8.
    assert r["levels"]["A"]["schedulable"] is True
    assert r["levels"]["B"]["schedulable"] is False
    assert r["levels"]["C"]["schedulable"] is False
    assert r["configurations"]["mc2_unmanaged"]["available"] is False
    p = run("analyze", path)
    assert p.returncode == 0, p.stderr
    assert "NOT schedulable" in p.stdout
    assert "Traceback" not in p.stdout + p.stderr
    p = run("check", path)
    assert p.returncode == 0, p.stderr


# --------------------------------------------------------------------------- bad inputs

TASK = """
[[task]]
name = "{name}"
level = "{level}"
core = 0
period = "{period}"
pet = {{ A = "1ms", B = "1ms", C = "1ms" }}
"""
PLATFORM = "[platform]\ncores = 1\n"

BAD_INPUTS = {
    # id: (file name, contents (bytes/str) or None for no file or "DIR", expected field)
    "nonexistent": ("missing.toml", None, "(file)"),
    "directory": ("a-directory.toml", "DIR", "(file)"),
    "non-utf8": ("latin1.toml", PLATFORM.encode() + b'# caf\xe9 \xff\xfe\n', "(file)"),
    "malformed-toml": ("broken.toml", "[platform\ncores = 1\n", "line 1 column"),
    "negative-period": ("negative.toml", PLATFORM + TASK.format(name="t", level="A", period="-5ms"), "task[0].period"),
    "unknown-level": ("level.toml", PLATFORM + TASK.format(name="t", level="E", period="100ms"), "task[0].level"),
    "newline-in-level": ("nl.toml", PLATFORM + TASK.format(name="t", level="E\\nF", period="100ms"), "task[0].level"),
    "non-harmonic-level-a": (
        "harmonic.toml",
        PLATFORM + TASK.format(name="t0", level="A", period="30ms") + TASK.format(name="t1", level="A", period="100ms"),
        "task[1].period",
    ),
    "unknown-field": ("field.toml", PLATFORM + TASK.format(name="t", level="A", period="100ms") + 'colour = "red"\n', "task[0].colour"),
    "malformed-json": ("broken.json", '{"platform": {"cores": 1}, "task": [', "line 1 column"),
    "toml-in-json-file": ("system.json", PLATFORM, "line 1 column"),
    "json-bad-field": (
        "field.json",
        json.dumps({"platform": {"cores": 1}, "task": [{"name": "t", "level": "A", "core": 0, "period": 100, "pet": {"A": "1ms", "B": "1ms", "C": "1ms"}}]}),
        "task[0].period",
    ),
}


@pytest.mark.parametrize("command", ["analyze", "check"])
@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_gives_one_error_line_and_exit_2(tmp_path, case, command):
    name, contents, field = BAD_INPUTS[case]
    path = tmp_path / name
    if contents == "DIR":
        path.mkdir()
    elif isinstance(contents, bytes):
        path.write_bytes(contents)
    elif contents is not None:
        path.write_text(contents, encoding="utf-8")
    args = [command, path] + (["--json"] if command == "analyze" else [])
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    assert "Traceback" not in p.stderr + p.stdout
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and p.stderr.endswith("\n"), p.stderr
    line = lines[0]
    prefix = f"error: {path}: {field}"
    assert line.startswith(prefix), (line, prefix)
    reason = line[len(f"error: {path}: "):].split(": ", 1)
    assert len(reason) == 2 and reason[1].strip(), line  # FIELD: REASON, reason non-empty


def test_bad_input_in_human_mode_also_exits_2(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[platform\n", encoding="utf-8")
    p = run("analyze", path)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"error: {path}: ")


def test_json_root_not_an_object_names_a_field(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[]", encoding="utf-8")
    p = run("analyze", path)
    assert p.returncode == 2 and p.stdout == ""
    line = p.stderr.strip()
    assert line.startswith(f"error: {path}: ")
    field = line[len(f"error: {path}: "):].split(": ", 1)[0]
    assert field.strip(), line


def test_unavailable_reason_names_an_analyzed_task(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text(
        '[platform]\ncores = 1\n\n[[task]]\nname = "bg"\nlevel = "D"\nperiod = "100ms"\npet = { D = "5ms" }\n\n'
        '[[task]]\nname = "c"\nlevel = "C"\nperiod = "100ms"\npet = { C = "10ms" }\n',
        encoding="utf-8",
    )
    r = analyze_json(path)
    cfg = r["configurations"]["mc2_unmanaged"]
    assert cfg["available"] is False
    assert '"c"' in cfg["reason"], cfg["reason"]
