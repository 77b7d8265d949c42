"""Bad input through the library and the CLI is one true line (issue 24):
values a file cannot hold, given from Python, are an InputError naming
their path; arguments that are not a system are too; a preset may be a
parameter file beside the task file; calibrate keeps an existing output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import criticore
from criticore import InputError, TaskSystem, _core

CRITICORE = Path(sys.executable).parent / "criticore"
TASK = {"name": "t", "core": 0, "period": "10ms", "pet": "2ms"}


def refused(**parts) -> InputError:
    """The InputError of TaskSystem({"cores": 2}, ...) with `parts` as its arguments."""
    with pytest.raises(InputError) as info:
        TaskSystem({"cores": 2}, **parts)
    line = str(info.value)
    assert "\n" not in line and "\r" not in line, line
    return info.value


# ---------------------------------------------------------------- Python values

def test_bytes_is_refused_once_naming_its_field():
    e = refused(tasks=[{**TASK, "name": b"x"}])
    assert str(e) == "<python>: task[0].name: bytes is not a file value (decode it to a str): use str, int, float, bool, list or dict"
    assert (e.file, e.field) == ("<python>", "task[0].name")


def test_a_dict_nested_5000_deep_is_refused_beyond_64_levels():
    deep: dict = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    e = refused(tasks=[{**TASK, "memory": deep}])
    # document (1), task list (2), task (3), memory (4): the 61st "a" is level 65.
    assert e.field == "task[0].memory" + ".a" * 61
    assert e.reason == "nested deeper than 64 levels of tables and arrays"


def test_a_dict_holding_itself_is_refused_not_looped_on():
    loop: dict = {"cores": 2}
    loop["llc"] = loop
    with pytest.raises(InputError) as info:
        TaskSystem(loop)
    assert info.value.reason == "nested deeper than 64 levels of tables and arrays"
    assert info.value.field.startswith("platform.llc.llc.")


def test_a_tuple_key_is_refused_naming_the_table():
    e = refused(tasks=[{**TASK, "pet": {("A", "B"): "2ms"}}])
    assert (e.field, e.reason) == ("task[0].pet", "the key \"('A', 'B')\" is a tuple; keys are strings, as in a file")


def test_nan_and_infinity_are_named():
    e = refused(tasks=[{**TASK, "priority": float("nan")}])
    assert (e.field, e.reason) == ("task[0].priority", "got nan, not a finite number")
    e = refused(tasks=[{**TASK, "memory": {"wss": "1KiB", "accesses_per_ms": float("-inf")}}])
    assert (e.field, e.reason) == ("task[0].memory.accesses_per_ms", "got -inf, not a finite number")


def test_an_int_beyond_64_bits_is_refused_naming_its_field():
    e = refused(tasks=[{**TASK, "priority": 2**70}])
    assert (e.field, e.reason) == ("task[0].priority", 'the integer "1180591620717411303424" is out of range (64 bits)')


def test_a_name_with_a_newline_is_one_line():
    e = refused(tasks=[{**TASK, "name": "a\nb"}])
    assert e.field == "task[0].name"
    assert e.reason == 'a name must not hold control characters or line breaks, got "a\\nb"'


def test_a_huge_value_is_cut():
    e = refused(tasks=[{**TASK, "period": "9" * 10_000_000}])
    assert e.field == "task[0].period"
    assert e.reason.endswith(f'got "{"9" * 59}…" (10000000 characters)')
    assert len(str(e)) < 250


def test_paths_and_tuples_are_still_file_values():
    # What the JSON route accepted before stays accepted: tuples are lists, paths are strings.
    s = TaskSystem({"cores": 2}, tasks=[{**TASK, "command": ("sleep", Path("1"))}])
    assert s.to_dict()["task"][0]["command"] == ["sleep", "1"]


def test_budgets_may_be_bandwidths_from_python():
    s = TaskSystem({"cores": 2}, tasks=[TASK], regulation={"kind": "memguard", "budgets": ["200MB/s", "100MB/s"]})
    assert s.regulation.kind == "memguard"


# ---------------------------------------------------------------- arguments

def test_analyze_none_names_the_argument():
    with pytest.raises(InputError) as info:
        criticore.analyze(None)
    assert str(info.value) == "<python>: system: expected a TaskSystem or the path of a task-system file, got NoneType"


def test_the_binding_refuses_a_non_system_as_input_error():
    with pytest.raises(InputError) as info:
        _core.analyze(None, "x.toml")
    assert str(info.value) == "<python>: system: expected a task system or a file's bytes, got NoneType"


def test_an_unknown_task_is_an_input_error_and_a_lookup_error():
    s = TaskSystem({"cores": 2}, tasks=[TASK, {**TASK, "name": "u"}])
    with pytest.raises(LookupError) as info:
        s.task("nope")
    e = info.value
    assert isinstance(e, InputError) and type(e) is _core.UnknownTaskError
    assert str(e) == '<python>: task: no task named "nope" (tasks: "t", "u")'
    assert s.task("u").name == "u"


# ---------------------------------------------------------------- parameter files as presets

MY_BOARD = """\
name = "my-board"
[platform.dram]
banks = 4
read_latency = "80ns"
[platform.bus]
bandwidth = "1000MB/s"
"""


def write_board(tmp_path: Path, preset: str) -> Path:
    boards = tmp_path / "boards"
    boards.mkdir()
    (boards / "my-board.toml").write_text(MY_BOARD)
    task_file = boards / "g.toml"
    task_file.write_text(f'[platform]\npreset = "{preset}"\ncores = 2\n\n[[task]]\nname = "t"\ncore = 0\nperiod = "10ms"\npet = "2ms"\n')
    return task_file


def test_a_preset_path_loads_the_parameter_file_beside_the_task_file(tmp_path, monkeypatch):
    task_file = write_board(tmp_path, "my-board.toml")
    monkeypatch.chdir(tmp_path)  # not the task file's folder: the path is the file's, not ours
    p = TaskSystem.load(Path("boards") / "g.toml").platform
    assert (p.dram_banks, p.bus_bytes_per_s, p.cores) == (4, 1_000_000_000, 2)
    # The imx6 fills what the parameter file leaves out.
    assert (p.llc_ways, p.line_bytes) == (16, 32)
    assert criticore.check(task_file)["cores"] == 2


def test_a_missing_parameter_file_is_one_line_naming_platform_preset(tmp_path):
    task_file = write_board(tmp_path, "nope.toml")
    with pytest.raises(InputError) as info:
        TaskSystem.load(task_file)
    e = info.value
    assert e.field == "platform.preset"
    assert e.reason == f'parameter file "nope.toml": cannot read {task_file.parent / "nope.toml"}: No such file or directory'
    p = subprocess.run([str(CRITICORE), "analyze", str(task_file)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip() == f"error: {task_file}: platform.preset: {e.reason}"


# ---------------------------------------------------------------- calibrate's output

def test_calibrate_writes_name_toml_here_and_keeps_an_existing_one(tmp_path, monkeypatch):
    from criticore.calibrate import fit
    from criticore.cli import app

    def never(*args, **kwargs):
        raise AssertionError("calibrate ran although its output exists")

    monkeypatch.setattr(fit, "transaction_points", never)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-board.toml").write_text("mine\n")
    result = CliRunner().invoke(app, ["calibrate", "--name", "my-board"])
    assert result.exit_code == 2, result.output
    assert "my-board.toml: --output: exists; pass --force to overwrite" in result.output
    assert (tmp_path / "my-board.toml").read_text() == "mine\n"
    assert os.listdir(tmp_path) == ["my-board.toml"]
