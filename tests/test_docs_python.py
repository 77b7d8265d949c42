"""docs/python.md stays true: its Python snippets run in order, in one
namespace, from the repository root (issue 14)."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "python.md"


def test_every_python_snippet_of_the_tour_runs(monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 10
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC.name} snippet {i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    # A few printed values the page states in its comments, worked out by hand.
    assert "<TaskSystem mrs: 2 cores, 8 tasks, 5 servers>" in out
    assert "servers True 18000000" in out
    assert "<python> | task[0].period | expected a duration string" in out
    matplotlib.pyplot.close("all")
