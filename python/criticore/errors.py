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
