"""The Python front's layout (issue 24): the package's face re-exports and no
module imports it, so no import reaches back through it; the import graph
(module- and function-level imports) has no circle; every module imports on
its own with the package's modules forgotten before each (an import circle
through a package's __init__ fails there, whatever the order tests import in)."""

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
    # __main__ runs the CLI when imported; importing the others has no effect.
    modules = [m for m, _ in _modules() if m != "criticore.__main__"]
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


def _graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at any depth of the code
    (function-level imports count: they close a circle at run time too)."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
                # `from P import m` runs P's __init__ and then P.m, if m is a module.
                targets = [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target.split(".")[0] == package and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_circle():
    graph = _graph(PACKAGE, "criticore")
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100
    assert _circles(graph) == []


def test_the_graph_finds_a_circle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "circ"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from circ.sub import run\n")
    (pkg / "sub" / "__init__.py").write_text("from .run import run\n")
    (pkg / "sub" / "run.py").write_text("def run():\n    from circ import helpers\n")
    (pkg / "helpers.py").write_text("import json\n")
    graph = _graph(pkg, "circ")
    assert graph["circ.sub.run"] == {"circ", "circ.helpers"}
    assert _circles(graph) == [["circ", "circ.sub", "circ.sub.run"]]
