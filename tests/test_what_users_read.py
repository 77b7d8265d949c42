"""What a user reads (issue 24, "What was found"): what simulate and analyze
print, the help, numbers, and the docs and examples. The sections "what
simulate prints", "help" and "docs and examples" are the integrator's first-hour
tests (their other sections, data loss and bad options, live in another file);
the rest are this slice's. The CLI runs as a subprocess, as a user runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import EXAMPLES, ROOT, one_line_error, run, system  # noqa: F401  (system: a fixture)


# --------------------------------------------------------------------------- what simulate prints


def test_a_task_that_finished_no_job_says_so_and_how_old_its_oldest_job_is(system: Path):
    # 10 ms of mrs-synthetic: Task3 (server 1) releases at 0 and has not finished by 10 ms.
    p = run("simulate", system, "--duration", "10ms")
    assert p.returncode == 0, p.stderr
    row = next(ln for ln in p.stdout.splitlines() if ln.startswith("Task3 "))
    assert " 0/1 " in row
    # No response time is made up: not "0" under max resp, but a dash, and the
    # oldest unfinished job's age (released at 0, so 10 ms at the end) is given.
    cells = row.split()
    assert cells[5] != "0" and cells[5] in ("—", "-"), row
    assert "Task3" in p.stdout and re.search(r"no job finished.*10 ms", p.stdout), p.stdout


def test_no_regulation_table_when_no_core_was_stalled(system: Path):
    p = run("simulate", system, "--duration", "10ms", "--regulator", "none")
    assert p.returncode == 0, p.stderr
    assert "Regulation" not in p.stdout, p.stdout


def test_a_regulation_table_when_cores_were_stalled():
    # memguard-bombs: the bombs exhaust their 3,000-request budget in every 1 ms period.
    p = run("simulate", EXAMPLES / "memguard-bombs.toml", "--duration", "20ms")
    assert p.returncode == 0, p.stderr
    assert "Regulation" in p.stdout and "no core, server or group was stopped" not in p.stdout, p.stdout


def test_a_regulator_that_stalled_nothing_says_so_in_one_line(tmp_path: Path):
    # memguard-bombs with budgets far above what any core issues in a 1 ms period
    # (a bomb issues about 63,131 lines per ms): MemGuard runs and never stalls.
    text = (EXAMPLES / "memguard-bombs.toml").read_text().replace("budgets = [20000, 3000, 3000, 3000]", "budgets = [10000000, 10000000, 10000000, 10000000]")
    (tmp_path / "b.toml").write_text(text)
    p = run("simulate", tmp_path / "b.toml", "--duration", "20ms")
    assert p.returncode == 0, p.stderr
    assert "Regulation" not in p.stdout and "regulator: no core, server or group was stopped" in p.stdout, p.stdout


def test_the_batch_table_shows_the_max_response(system: Path, tmp_path: Path):
    # Two copies of mrs-synthetic for 10 ms: Task1 and Task2 finish their first
    # job (2 ms and 6 ms, the one-system table below), nothing else finishes.
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("a.toml", "b.toml"):
        shutil.copy(system, folder / name)
    one = run("simulate", system, "--duration", "10ms")
    task2 = next(ln for ln in one.stdout.splitlines() if ln.startswith("Task2 "))
    assert " 6 ms " in task2, task2
    p = run("simulate", "two", "--duration", "10ms", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "max resp" in p.stdout, p.stdout
    rows = [ln for ln in p.stdout.splitlines() if re.match(r"two/[ab]\.toml ", ln)]
    assert len(rows) == 2 and all(re.search(r" 2/8 +0 +6 ms ", r) for r in rows), p.stdout


# --------------------------------------------------------------------------- what analyze prints


def test_analysis_notes_are_whole_and_name_the_term():
    p = run("analyze", EXAMPLES / "memguard-bombs.toml", "--json")
    assert p.returncode == 0, p.stderr
    import json

    notes = {t["task"]: t["note"] for t in json.loads(p.stdout)["tasks"]}
    assert notes["rt"] == "with memory stalls (fluid model) and MemGuard's budget stalls"
    # Each bomb's PET equals its 100 ms period; memory stalls push its cost beyond it.
    for bomb in ("bomb1", "bomb2", "bomb3"):
        assert re.fullmatch(r"its cost with memory stalls \(fluid model\), [\d.]+ ms, exceeds its period", notes[bomb]), notes[bomb]
        assert float(notes[bomb].split(", ")[1].removesuffix(" ms")) > 100


def test_a_task_without_memory_gets_no_memory_note(tmp_path: Path):
    # memguard-bombs plus a task with no memory profile on core 0 below rt, and
    # one whose 60 ms PET exceeds its 50 ms period.
    extra = """
[[task]]
name = "quiet"
core = 0
priority = 5
period = "100ms"
pet = "10ms"

[[task]]
name = "long"
core = 0
priority = 1
period = "50ms"
pet = "60ms"
"""
    (tmp_path / "m.toml").write_text((EXAMPLES / "memguard-bombs.toml").read_text() + extra)
    p = run("analyze", tmp_path / "m.toml", "--json")
    assert p.returncode == 0, p.stderr
    import json

    notes = {t["task"]: t["note"] for t in json.loads(p.stdout)["tasks"]}
    assert notes["quiet"] is None, notes
    # Below rt, which issues memory requests: the cost is charged with memory
    # stalls, but its own PET alone (60 ms) exceeds the 50 ms period.
    assert notes["long"] == "its PET, 60 ms, exceeds its period", notes
    text = run("analyze", tmp_path / "m.toml").stdout
    assert "long: its PET, 60 ms, exceeds its period" in " ".join(text.split())


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (1_000, "1 µs"),  # was "1e-06 s"
        (10**15, "1,000,000 s"),  # was "1e+06 s": seconds take no k/M prefix
        (14_153_100, "14.15 ms"),  # was "14.1531"
        (999_999.9, "1 ms"),  # rounds to 1000 µs, printed with the next prefix
        (123_456_789_012, "123.5 s"),
        (2_500_000, "2.5 ms"),
        (-2_500_000, "-2.5 ms"),
        (1, "1 ns"),
        (0, "0"),  # zero needs no unit
        (None, "—"),
    ],
)
def test_durations_have_four_significant_digits_and_an_si_prefix(ns, text):
    from criticore.units import duration_text

    assert duration_text(ns) == text


def test_sizes_and_bandwidths():
    from criticore.units import bandwidth_text, si, size_text

    assert size_text(1 << 20) == "1 MiB"
    assert size_text(3 * 4096) == "12 KiB"
    assert size_text(1.5 * (1 << 30)) == "1.5 GiB"
    assert size_text(512) == "512 B"
    assert size_text(0) == bandwidth_text(0) == "0"
    assert bandwidth_text(2_020_000_000) == "2.02 GB/s"  # 63,131 lines/ms × 32 B
    assert bandwidth_text(96_000_000) == "96 MB/s"
    assert bandwidth_text(640_123_456) == "640.1 MB/s"
    assert si(0.5, "Hz") == "500 mHz"
    assert si(float("nan"), "s") == "—"


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", "examples/memguard-bombs.toml", "--duration", "1s"),
        ("simulate", "examples/mrs-synthetic.toml", "--duration", "1000s"),
        ("simulate", "examples/mrs-synthetic.toml", "--duration", "1us"),
        ("analyze", "examples/mc2-llc-heavy.toml"),
        ("analyze", "examples/mrs-synthetic.toml", "--check-sim", "--duration", "1s"),
    ],
)
def test_no_number_is_printed_with_an_exponent(args):
    p = run(*args, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    assert not re.search(r"\d[eE][+-]?\d", p.stdout), p.stdout


# --------------------------------------------------------------------------- help


def test_version_flag_prints_the_version():
    p = run("--version")
    assert p.returncode == 0, p.stderr
    # The installed distribution's version, read by a second route than the CLI's.
    from importlib.metadata import version

    assert p.stdout.strip() == run("version").stdout.strip() == version("criticore")


@pytest.mark.parametrize("command", ["simulate", "analyze", "optimize", "regulate", "load", "study", "profile", "report"])
def test_help_names_no_python_types(command: str):
    p = run(command, "--help")
    assert p.returncode == 0, p.stderr
    assert "<bool>" not in p.stdout and "{FILE...}..." not in p.stdout, p.stdout
    assert not re.search(r"<(list\[Path\]|Path|str|int|float)>", p.stdout), p.stdout


def test_optimize_help_lists_the_nine_schemes_and_its_description_is_whole():
    p = run("optimize", "--help")
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    # The nine schemes of mc2-io-ipc-os-isolation §6.1, written out by hand
    # (the first draft of this test named an "O|C+A/B-R" that does not exist).
    nine = ("R|R", "C|C", "O|C", "C|C+A/B-ALL", "C|C+A/B-LP", "C|C+A/B-SP", "O|C+A/B-ALL", "O|C+A/B-LP", "O|C+A/B-SP")
    for scheme in nine:
        assert re.search(rf"(?<![\w|+/-]){re.escape(scheme)}(?![\w|+/-])", text), scheme
    # The description's first paragraph ends a sentence.
    assert re.search(r"LLC ways\.", text), text


# --------------------------------------------------------------------------- docs and examples


def test_readme_quotes_an_error_the_tool_prints(tmp_path: Path):
    """README tour item 4 shows the error for a Level-B period that is not a
    multiple of the Level-A hyperperiod: the tool must print that very line."""
    readme = (ROOT / "README.md").read_text()
    quoted = re.search(r"^\s*(error: sys\.toml: task\[\d+\]\.period: .*)$", readme, re.M)
    assert quoted, "README no longer quotes the error"
    text = (EXAMPLES / "mc2-llc-heavy.toml").read_text()
    m = re.search(r"task\[(\d+)\]", quoted.group(1))
    index = int(m.group(1))
    # Build the README's case: that task is Level B with a 150 ms period.
    import tomllib

    doc = tomllib.loads(text)
    task = doc["task"][index]
    assert task["level"] == "B", "the README's task index is not a Level-B task of mc2-llc-heavy.toml"
    blocks = re.split(r"(?m)^(?=\[\[task\]\])", text)
    head, tasks = blocks[0], blocks[1:]
    tasks[index] = re.sub(r'(?m)^period = "[^"]*"', 'period = "150ms"', tasks[index])
    (tmp_path / "sys.toml").write_text(head + "".join(tasks))
    line = one_line_error(run("check", "sys.toml", cwd=tmp_path))
    assert line == quoted.group(1), (line, quoted.group(1))


#: The engine's own check of this rule: it holds the patterns it looks for as
#: needles and test data, and cites nothing (its first draft here flagged it).
CITATION_CHECKS = {Path("crates/criticore/tests/no_outside_citations.rs")}


def test_examples_and_docs_cite_no_file_outside_the_repository():
    bad = []
    for folder in ("examples", "docs", "python", "crates"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".md", ".toml", ".py", ".rs", ".ipynb", ".c", ".h") or "target" in path.parts:
                continue
            if path.relative_to(ROOT) in CITATION_CHECKS:
                continue
            text = path.read_text(errors="replace")
            for m in re.finditer(r"\.\./shared/|(?<![\w/.-])notes/[\w-]+\.md", text):
                bad.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    bad += [f"README.md: {m.group(0)}" for m in re.finditer(r"\.\./shared/|(?<![\w/.-])notes/[\w-]+\.md", (ROOT / "README.md").read_text())]
    assert not bad, "\n".join(bad[:20]) + f"\n({len(bad)} in all)"


def test_the_mcti_folder_example_of_the_readme_finishes_jobs():
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"criticore simulate examples/mcti (--duration \S+)", readme)
    assert m, "README no longer shows the mcti folder example"
    p = run("simulate", "examples/mcti", *m.group(1).split(), "--json", timeout=300)
    assert p.returncode == 0, p.stderr
    import json

    rows = json.loads(p.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert all(r["completed"] > 0 for r in rows), rows
