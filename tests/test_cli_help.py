"""Every command's help prints its bracketed text as written (issue 14: Rich
read "[f·PET, PET]" and "[regulation]" as markup tags and dropped them)."""

import os
import re
import subprocess
import sys

import typer

from criticore.cli import app

BRACKETS = re.compile(r"\\?\[([^\]]+)\]")


def commands(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, path + (name,))


def flat(text: str) -> str:
    """Help output with box characters and line breaks folded away."""
    return re.sub(r"[\s│╭╮╰╯─]+", " ", text)


def help_of(*path: str) -> str:
    env = {**os.environ, "COLUMNS": "200"}
    p = subprocess.run([sys.executable, "-m", "criticore", *path, "--help"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, (path, p.stderr)
    return flat(p.stdout)


def test_every_bracketed_help_text_is_printed():
    command = typer.main.get_command(app)
    checked = 0
    for path, c in commands(command):
        texts = [c.help or ""] + [getattr(p, "help", None) or "" for p in c.params]
        wanted = [flat(m.group(1)).strip() for t in texts for m in BRACKETS.finditer(t)]
        if not wanted:
            continue
        shown = help_of(*path)
        for w in wanted:
            assert f"[{w}]" in shown, (path, w, shown[:400])
            checked += 1
    assert checked >= 5


def test_the_simulate_help_keeps_the_best_case_range():
    shown = help_of("simulate")
    assert "[f·PET, PET]" in shown
    assert "the file's [regulation]" in shown


def registered() -> list[str]:
    return list(typer.main.get_command(app).commands)


def test_top_level_help_lists_exactly_the_registered_commands():
    shown = help_of()
    listed = re.search(r"Commands: ([a-z0-9, -]+)\.", shown)
    assert listed, shown[:400]
    names = listed.group(1).split(", ")
    assert names == registered()
    # The commands the CLI has today (issue 14: the help promised ones it did not have).
    assert set(names) == {"analyze", "check", "calibrate", "simulate", "report", "optimize", "load", "regulate", "profile",
                          "version", "plot", "tables", "experiment", "study", "import"}
    for name in names:  # and each one runs
        help_of(name)
