"""What every command.py shares: the CLI's side of bad input (the one line on
stderr, exit 2), duration options, help texts. Not in cli.py, which imports
every command.py (a circle otherwise)."""

from __future__ import annotations

import sys
from typing import NoReturn

from criticore.errors import InputError, input_error, input_error_line
from criticore.units import U64_MAX, duration_ns

EXIT_BAD_INPUT = 2

SCHEDULER_HELP = "mc2, pfp, pedf, gedf, gfp or servers; default: what the file implies (servers, MC² levels, cores)."


def fail(err: InputError) -> NoReturn:
    print(input_error_line(err), file=sys.stderr)
    raise SystemExit(EXIT_BAD_INPUT)


def bad(file, field: str, reason: str) -> NoReturn:
    """Fail with one line naming ``file``, ``field`` and ``reason``."""
    fail(input_error(file, field, reason))


def duration_option(text: str, option: str, file) -> int:
    """A positive duration option ("50us") in ns, or a one-line error naming it."""
    try:
        return duration_ns(text, str(file), option)
    except InputError as e:
        fail(e)


def seed_option(seed: int, file) -> None:
    """A seed the engine holds (0 to 2^64 − 1), or a one-line error naming --seed."""
    if seed < 0:
        bad(file, "--seed", "must not be negative")
    if seed > U64_MAX:
        bad(file, "--seed", "must be at most 2^64 − 1")
