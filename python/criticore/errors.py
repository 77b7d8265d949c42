"""One-line error reporting for the CLI: file, field, reason; exit code 2."""

from __future__ import annotations

import sys

from criticore import InputError

EXIT_BAD_INPUT = 2


def input_error_line(err: InputError) -> str:
    """The single line shown for a bad input: ``error: FILE: FIELD: REASON``."""
    if len(err.args) == 4:
        _, file, field, reason = err.args
        line = f"error: {file}: {field}: {reason}"
    else:
        line = f"error: {err}"
    return " ".join(line.split())  # always a single line


def fail(err: InputError) -> None:
    print(input_error_line(err), file=sys.stderr)
    raise SystemExit(EXIT_BAD_INPUT)


def input_error(file, field: str, reason: str) -> InputError:
    """The InputError naming ``file``, ``field`` and ``reason`` (its message is the one line)."""
    return InputError(f"{file}: {field}: {reason}", str(file), field, reason)


def bad(file, field: str, reason: str) -> None:
    """Fail with one line naming ``file``, ``field`` and ``reason``."""
    fail(input_error(file, field, reason))


def duration_option(text: str, option: str, file) -> int:
    """A positive duration option ("50us") in ns, or a one-line error naming it."""
    from criticore.api import duration_ns

    try:
        return duration_ns(text, str(file), option)
    except InputError as e:
        fail(e)
        raise  # not reached: fail exits
