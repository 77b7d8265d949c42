"""What every command.py shares: the CLI's side of bad input (the one line on
stderr, exit 2), duration options, help texts. Not in cli.py, which imports
every command.py (a circle otherwise)."""

from __future__ import annotations

import sys
from typing import NoReturn

try:  # typer vendors click (typer._click) since 0.2x; the one it runs is the one whose errors come
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - an older typer on plain click
    from click import exceptions as click_errors

from criticore.errors import InputError, input_error, input_error_line
import criticore.units as units
from criticore.units import U64_MAX, duration_ns

EXIT_BAD_INPUT = 2

#: The largest CPU number a --cpu option takes (the kernel's CPU sets hold
#: 8192); whether this machine has it is the runtime's one-line error.
MAX_CPU = 8191

#: The bound of counts the engine holds in 32 bits (jobs, batches, systems).
U32_MAX = 2**32 - 1

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
    """A seed the engine holds (units.seed), or a one-line error naming --seed."""
    try:
        units.seed(seed, str(file), "--seed")
    except InputError as e:
        fail(e)


def usage_error_line(err) -> str:
    """Click's own usage errors (unknown option, bad or out-of-range value) as
    the one line every bad input gets: ``error: OPTION: REASON``, the usage
    hint in the same line, not Rich's box."""
    names = [o for o in getattr(getattr(err, "param", None), "opts", ()) if o.startswith("--")]
    if isinstance(err, click_errors.BadParameter) and not isinstance(err, click_errors.MissingParameter) and names:
        line = f"error: {names[0]}: {err.message}"
    else:
        line = f"error: {err.format_message()}"
    ctx = getattr(err, "ctx", None)
    if isinstance(err, click_errors.UsageError) and ctx is not None:
        line += f" (see {ctx.command_path} --help)"
    return " ".join(line.split())


def int_option(value: int | None, option: str, file, low: int, high: int, meaning: str = "") -> None:
    """An int option within [low, high] (None: not given), or a one-line error
    naming it; ``high`` is what the engine holds, so no OverflowError later."""
    if value is not None and not low <= value <= high:
        shown = "2^64 − 1" if high == U64_MAX else "2^32 − 1" if high == U32_MAX else f"{high:,}"
        bad(file, option, f"must be {low} to {shown}{meaning}, got {value}")
