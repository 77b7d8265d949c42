"""The Rust engine's bindings (crates/criticore-py; typed in __init__.pyi).

The extension module itself is ``criticore._core._native``; this package
re-exports all of it, so that ``criticore._core`` is a module of the package
that imports nothing of criticore: every other module may import it without
closing an import circle through the package's face."""

from criticore._core._native import *  # noqa: F403
from criticore._core._native import __all__, __doc__, __version__  # noqa: F401

# The package's names are exactly the extension's (tests/test_stubs.py); the
# extension module stays loaded as criticore._core._native.
del _native  # noqa: F821  (bound by the import system when the submodule loaded)
