"""The Python front's layout (issue 24): the package's face re-exports and no
module imports it, so no import reaches back through it; every module imports
on its own in a fresh interpreter (an import circle through a package's
__init__ fails there, whatever the order tests import in)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "criticore"


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


def _imports_of_the_face(path: Path) -> list[int]:
    """Lines that import the package itself (``import criticore``, ``from criticore import x``)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name == "criticore" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "criticore":
            lines.append(node.lineno)
    return lines


def test_no_module_imports_the_face():
    found = {name: _imports_of_the_face(path) for name, path in _modules() if name != "criticore"}
    assert not {k: v for k, v in found.items() if v}


def test_the_check_finds_an_import_of_the_face(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import json\n\ndef f():\n    from criticore import simulate\n")
    assert _imports_of_the_face(bad) == [4]


FRESH = """
import importlib, sys
failed = []
for module in sys.argv[1:]:
    # A fresh start for each: forget every module of the package but the extension (loaded once per process).
    for name in [n for n in sys.modules if n.split(".")[0] == "criticore" and not n.startswith("criticore._core")]:
        del sys.modules[name]
    try:
        importlib.import_module(module)
    except Exception as e:
        failed.append(f"{module}: {type(e).__name__}: {e}")
print("\\n".join(failed))
"""


def test_every_module_imports_alone():
    # __main__ runs the CLI and the watchdog waits on stdin when run; importing the others has no effect.
    modules = [m for m, _ in _modules() if m not in ("criticore.__main__", "criticore.regulate.watchdog")]
    assert len(modules) > 50
    done = subprocess.run([sys.executable, "-c", FRESH, *modules], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_fresh_import_finds_a_circle(tmp_path):
    pkg = tmp_path / "criticore_circle"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from criticore_circle.a import f\n")
    (pkg / "a.py").write_text("from criticore_circle import g\ndef f(): pass\n")
    code = FRESH.replace('"criticore"', '"criticore_circle"')
    done = subprocess.run([sys.executable, "-c", code, "criticore_circle.a"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.startswith("criticore_circle.a: ImportError")
