"""Bad input as one line: :class:`InputError` (the engine's exception, with its
parts as attributes) and the helpers that build it. No printing and no exit
here: the CLI's side (the line on stderr, exit 2) is :mod:`criticore.cli_common`."""

from __future__ import annotations

from criticore._core import InputError

__all__ = ["InputError", "input_error", "input_error_line"]


def _arg(i: int, doc: str) -> property:
    return property(lambda e: e.args[i] if len(e.args) == 4 else None, doc=doc)


# InputError(message, file, field, reason): the parts also as attributes.
InputError.file = _arg(1, "The file (or label of a system built in Python) the error is in.")  # type: ignore[assignment]
InputError.field = _arg(2, "The field's path, as in the file (``task[3].period``), or the option.")  # type: ignore[assignment]
InputError.reason = _arg(3, "Why the value is refused.")  # type: ignore[assignment]
# The one line ("FILE: FIELD: REASON"), not the tuple of arguments, in tracebacks.
InputError.__str__ = lambda e: e.args[0] if len(e.args) == 4 else ValueError.__str__(e)  # type: ignore[method-assign]


def input_error(file, field: str, reason: str) -> InputError:
    """The InputError naming ``file``, ``field`` and ``reason`` (its message is the one line)."""
    return InputError(f"{file}: {field}: {reason}", str(file), field, reason)


def input_error_line(err: InputError) -> str:
    """The single line shown for a bad input: ``error: FILE: FIELD: REASON``."""
    if len(err.args) == 4:
        _, file, field, reason = err.args
        line = f"error: {file}: {field}: {reason}"
    else:
        line = f"error: {err}"
    return " ".join(line.split())  # always a single line
