"""A first hour with criticore, as a new user tries it (issue 24, "What was found"):
data lost, output in the wrong format, bad options. What the user reads (help,
numbers, notes, docs) is tests/test_what_users_read.py.

Each test is one trap a user fell into: data lost, output written in the wrong
format, help that misleads, an error that is not one line. The CLI runs as a
subprocess, as a user runs it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_run import EXAMPLES, ROOT, one_line_error, run, system  # noqa: F401  (system: a fixture)


# --------------------------------------------------------------------------- data loss


@pytest.mark.parametrize("option", ["--jobs", "--trace", "--bandwidth"])
def test_simulate_never_writes_over_its_input_even_with_force(system: Path, option: str):
    before = system.read_bytes()
    p = run("simulate", system, "--duration", "10ms", option, system, "--force")
    one_line_error(p, option, "input")
    assert system.read_bytes() == before


def test_simulate_table_never_writes_over_one_of_its_inputs(system: Path, tmp_path: Path):
    other = tmp_path / "h.toml"
    shutil.copy(EXAMPLES / "mrs-synthetic.toml", other)
    before = other.read_bytes()
    # The table's name equals an input's, reached by another spelling of the path.
    p = run("simulate", system, other, "--duration", "10ms", "--table", tmp_path / "." / "h.toml", "--force")
    one_line_error(p, "--table", "input")
    assert other.read_bytes() == before


def test_optimize_never_writes_over_its_input(tmp_path: Path):
    file = tmp_path / "s.toml"
    shutil.copy(EXAMPLES / "study-fig15a.toml", file)
    before = file.read_bytes()
    one_line_error(run("optimize", file, "-o", file, "--force"), "--output", "input")
    assert file.read_bytes() == before


def test_load_never_writes_its_log_over_the_task_file(system: Path):
    before = system.read_bytes()
    p = run("load", "--file", system, "--task", "Task1", "--jobs", "1", "--log", system, "--force")
    one_line_error(p, "--log", "input")
    assert system.read_bytes() == before


@pytest.mark.parametrize("option", ["--log", "--trace", "--output"])
def test_regulate_never_writes_over_its_input_and_launches_nothing(tmp_path: Path, option: str):
    file = tmp_path / "r.toml"
    shutil.copy(EXAMPLES / "regulate" / "four-loads.toml", file)
    before = file.read_bytes()
    p = run("regulate", file, "--duration", "200ms", option, file, "--force", timeout=60)
    one_line_error(p, option, "input")
    assert file.read_bytes() == before


def test_tables_build_never_writes_over_its_dataset(tmp_path: Path):
    data = tmp_path / "d.parquet"
    data.write_bytes(b"PAR1 not read: the output is refused first")
    p = run("tables", "build", data, "-o", data, "--force")
    one_line_error(p, "--output", "input")
    assert data.read_bytes() == b"PAR1 not read: the output is refused first"


def test_plot_table_never_draws_over_its_table(tmp_path: Path):
    table = tmp_path / "t.toml"
    shutil.copy(EXAMPLES / "monitor" / "overheads.toml", table)
    before = table.read_bytes()
    # The same file by a symbolic link: samefile, not the spelling, decides.
    link = tmp_path / "t.svg"
    link.symlink_to(table)
    one_line_error(run("plot", "table", table, "-o", link, "--force"), "--output", "input")
    assert table.read_bytes() == before


def test_profile_never_writes_over_its_program(system: Path, tmp_path: Path):
    program = tmp_path / "prog.parquet"
    program.write_bytes(b"#!/bin/sh\n")
    p = run("profile", system, "-o", program, "--force", "--", program)
    one_line_error(p, "--output", "input")
    assert program.read_bytes() == b"#!/bin/sh\n"


def test_an_output_over_a_file_the_task_file_names_is_refused(tmp_path: Path):
    # rt-with-loads.toml names its overhead table; a --jobs there would destroy it.
    for name in ("rt-with-loads.toml", "overheads.toml"):
        shutil.copy(EXAMPLES / "monitor" / name, tmp_path / name)
    before = (tmp_path / "overheads.toml").read_bytes()
    p = run("plot", "gantt", tmp_path / "rt-with-loads.toml", "-o", tmp_path / "overheads.toml", "--force")
    one_line_error(p, "--output", "input")
    assert (tmp_path / "overheads.toml").read_bytes() == before


def test_optimize_output_elsewhere_keeps_naming_the_parameter_file(tmp_path: Path):
    (tmp_path / "boards").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "boards" / "b.toml").write_text('name = "b"\n[platform]\ndram = { read_latency = "50ns" }\n')
    text = (EXAMPLES / "study-fig15a.toml").read_text()
    assert 'preset = "imx6"' in text
    (tmp_path / "s.toml").write_text(text.replace('preset = "imx6"', 'preset = "boards/b.toml"'))
    p = run("optimize", "s.toml", "-o", "out/o.toml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    import tomllib

    written = tomllib.loads((tmp_path / "out" / "o.toml").read_text())
    # From out/, the parameter file is ../boards/b.toml.
    assert written["platform"]["preset"] == "../boards/b.toml"
    assert run("check", "out/o.toml", cwd=tmp_path).returncode == 0


def test_the_library_names_an_argument_that_is_none():
    import criticore

    with pytest.raises(criticore.InputError) as e:
        criticore.check(None)
    assert e.value.field == "path" and "NoneType" in e.value.reason
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate_many([EXAMPLES / "mrs-synthetic.toml", None], "10ms")
    assert e.value.field == "paths[1]" and "NoneType" in e.value.reason


# --------------------------------------------------------------------------- silent wrong output


@pytest.mark.parametrize(("option", "name"), [("--jobs", "out.xlsx"), ("--bandwidth", "bw.txt"), ("--trace", "t.csv")])
def test_simulate_refuses_an_output_type_it_cannot_write(system: Path, tmp_path: Path, option: str, name: str):
    out = tmp_path / name
    one_line_error(run("simulate", system, "--duration", "10ms", option, out), option, "unsupported file type")
    assert not out.exists()


def test_simulate_table_refuses_an_output_type_it_cannot_write(system: Path, tmp_path: Path):
    out = tmp_path / "rows.xlsx"
    one_line_error(run("simulate", system, system, "--duration", "10ms", "--table", out), "--table", "unsupported file type")
    assert not out.exists()


@pytest.mark.parametrize(
    "args, option",
    [
        (["load", "--duration", "10ms", "--log", "{out}.txt"], "--log"),
        (["load", "--sweep", "--data", "{out}.xlsx"], "--data"),
        (["regulate", "{file}", "--duration", "10ms", "--trace", "{out}.csv"], "--trace"),
        (["regulate", "{file}", "--duration", "10ms", "--log", "{out}.json"], "--log"),
    ],
)
def test_runtime_outputs_refuse_a_type_they_cannot_write(system: Path, tmp_path: Path, args: list[str], option: str):
    out = tmp_path / "o"
    one_line_error(run(*[a.format(file=system, out=out) for a in args], timeout=60), option, "unsupported file type")
    assert list(tmp_path.iterdir()) == [system]


# --------------------------------------------------------------------------- bad options are one line


@pytest.mark.parametrize(
    "args, needle",
    [
        (["load", "--cpu", "-1", "--duration", "10ms"], "--cpu"),
        (["load", "--reads", "-1", "--duration", "10ms"], "--reads"),
        (["load", "--delay", "-1", "--duration", "10ms"], "--delay"),
        (["load", "--file", "{file}", "--task", "Task1", "--jobs", "-1"], "--jobs"),
        (["load", "--interval", "1ns", "--duration", "1s"], "--interval"),
        (["regulate", "{file}", "--regulator-cpu", "-1", "--duration", "10ms"], "--regulator-cpu"),
        (["regulate", "{file}", "--fifo", "-1", "--duration", "10ms"], "--fifo"),
        (["regulate", "{file}", "--fifo", "100", "--duration", "10ms"], "--fifo"),
        (["regulate", "{file}", "--attach", "4294967296=Task1", "--duration", "10ms"], "--attach"),
        (["calibrate", "--runs", "4294967296"], "--runs"),
        (["experiment", "mc2-ub", "--iterations", "1"], "--iterations"),
    ],
)
def test_out_of_range_options_are_one_line_errors(system: Path, args: list[str], needle: str):
    p = run(*[a.format(file=system) for a in args], timeout=60)
    one_line_error(p, needle)


@pytest.mark.parametrize(
    "args, first, bound",
    [
        (["simulate", "{file}", "--no-such-option"], "error: No such option: --no-such-option", "criticore simulate --help"),
        (["simulate", "{file}", "--threads", "many"], "error: --threads: ", "integer"),
        (["load", "--cpu", "1.5"], "error: --cpu: ", "integer"),
        (["frobnicate"], "error: No such command 'frobnicate'", "criticore --help"),
        (["plot", "gantt"], "error: Missing argument", "criticore plot gantt --help"),
    ],
)
def test_click_usage_errors_are_one_line(system: Path, args: list[str], first: str, bound: str):
    # Click's own errors (not the commands' checks): one line, the hint in it, not Rich's box.
    line = one_line_error(run(*[a.format(file=system) for a in args]), bound)
    assert line.startswith(first), line


def test_a_trace_with_too_many_counter_points_is_refused_before_writing(system: Path, tmp_path: Path):
    out = tmp_path / "t.json"
    p = run("simulate", system, "--duration", "10s", "--bin", "1ns", "--trace", out, timeout=60)
    one_line_error(p, "--bin")
    assert not out.exists()
