"""Importing other tools' models (docs/amalthea.md): :func:`import_amalthea`."""

from criticore.imports.library import Imported, import_amalthea

__all__ = ["Imported", "import_amalthea"]
