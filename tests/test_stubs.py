"""The type stub of the Rust extension (python/criticore/_core/__init__.pyi, issue 14)
stays in step with the bindings: one stub per public name, the same
parameters in the same order, defaults where the bindings have them.

The stub is read next to this file (not through the installed package), so
the test checks the stub of this checkout even when the extension imported
is another checkout's editable install.
"""

import ast
import inspect
from pathlib import Path

import pytest

from criticore import _core

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "criticore"
STUB = PACKAGE / "_core" / "__init__.pyi"


def _public(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__")) or name == "__version__"


def _stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"), filename=str(STUB))


def _stub_names(tree: ast.Module) -> dict[str, ast.stmt]:
    """Top-level names the stub defines (imports are not re-exported in a .pyi)."""
    names: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
    return names


def _runtime_functions() -> list[str]:
    return sorted(n for n in dir(_core) if _public(n) and inspect.isbuiltin(getattr(_core, n)))


def test_py_typed_marker_ships():
    assert (PACKAGE / "py.typed").is_file()


def test_stub_names_equal_module_names():
    stub = {n for n in _stub_names(_stub_tree()) if _public(n)}
    runtime = {n for n in dir(_core) if _public(n)}
    assert not runtime - stub, f"bindings without a stub in {STUB.name}: {sorted(runtime - stub)}"
    assert not stub - runtime, f"stubs of names criticore._core does not have: {sorted(stub - runtime)}"


def test_stub_all_equals_module_all():
    node = _stub_names(_stub_tree()).get("__all__")
    assert isinstance(node, ast.Assign), "the stub gives __all__ a value"
    assert ast.literal_eval(node.value) == list(_core.__all__)
    # ... and the module's list names exactly the public names.
    assert set(_core.__all__) == {n for n in dir(_core) if _public(n)}


def _stub_params(fn: ast.FunctionDef) -> list[tuple[str, str, ast.expr | None]]:
    """(name, kind, default) per parameter, in order."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [(p.arg, "positional_only" if i < len(a.posonlyargs) else "positional_or_keyword", d)
           for i, (p, d) in enumerate(zip(positional, defaults))]
    if a.vararg:
        out.append((a.vararg.arg, "var_positional", None))
    out += [(p.arg, "keyword_only", d) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append((a.kwarg.arg, "var_keyword", None))
    return out


@pytest.mark.parametrize("name", _runtime_functions())
def test_function_signature_matches(name):
    node = _stub_names(_stub_tree()).get(name)
    assert isinstance(node, ast.FunctionDef), f"{name}: no function stub in {STUB.name}"
    runtime = list(inspect.signature(getattr(_core, name)).parameters.values())
    stub = _stub_params(node)
    assert [p.name for p in runtime] == [s[0] for s in stub], f"{name}: parameter names or order differ"
    assert [p.kind.name.lower() for p in runtime] == [s[1] for s in stub], f"{name}: parameter kinds differ"
    for p, (pname, _, default) in zip(runtime, stub):
        has_default = p.default is not inspect.Parameter.empty
        assert has_default == (default is not None), f"{name}({pname}): default in one and not the other"
        if default is not None and not (isinstance(default, ast.Constant) and default.value is Ellipsis):
            assert ast.literal_eval(default) == p.default, f"{name}({pname}): stub default differs"
            assert type(ast.literal_eval(default)) is type(p.default), f"{name}({pname}): stub default's type differs"
    assert node.returns is not None, f"{name}: no return annotation"
    assert all(arg.annotation is not None for arg in node.args.args), f"{name}: a parameter without a type"
    assert ast.get_docstring(node), f"{name}: no docstring"


def test_classes_are_stubbed_as_classes():
    names = _stub_names(_stub_tree())
    for n in dir(_core):
        if _public(n) and isinstance(getattr(_core, n), type):
            node = names.get(n)
            assert isinstance(node, ast.ClassDef), f"{n}: not a class in the stub"
            assert ast.get_docstring(node)
    assert issubclass(_core.InputError, ValueError)
