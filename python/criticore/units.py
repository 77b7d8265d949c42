"""Durations, sizes, bandwidths and scheme names as the library takes them:
an integer (ns, bytes) or a string with a unit, like the file (docs/format.md);
anything else is an :class:`~criticore.InputError` naming the argument."""

from __future__ import annotations

import criticore._core as _core
from criticore.errors import input_error

#: The largest value the engine holds (u64).
U64_MAX = 2**64 - 1


def _integer(value, file: str, field: str, parse, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise input_error(file, field, f"expected {what} (int) or a string with a unit")
    if isinstance(value, str):
        try:
            value = parse(value)
        except ValueError as e:
            raise input_error(file, field, str(e)) from None
    if value <= 0:
        raise input_error(file, field, "must be positive")
    if value > U64_MAX:
        raise input_error(file, field, "must be at most 2^64 − 1")
    return value


def duration_ns(duration: int | str, file: str, field: str = "duration") -> int:
    """``duration`` in ns (an int of ns, or a string with a unit such as "10s"),
    positive; an InputError naming ``field`` otherwise."""
    return _integer(duration, file, field, _core.duration_ns, "ns")


def size_bytes(size: int | str, file: str, field: str) -> int:
    """``size`` in bytes (an int, or a string such as "128MiB"), positive."""
    return _integer(size, file, field, _core.size_bytes, "bytes")


def bandwidth_bytes_per_s(bandwidth: int | str, file: str, field: str) -> int:
    """``bandwidth`` in bytes/s (an int, or a string such as "500MB/s"), positive."""
    return _integer(bandwidth, file, field, _core.bandwidth_bytes_per_s, "bytes/s")


def seed(value: int, file: str, field: str = "seed") -> int:
    """A seed: an integer between 0 and 2^64 − 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise input_error(file, field, "expected an integer")
    if not 0 <= value <= U64_MAX:
        raise input_error(file, field, "must be between 0 and 2^64 − 1")
    return value


def scheme_name(scheme: str, file: str, field: str = "scheme") -> str:
    """The canonical name of one of the nine schemes of mc2-io-ipc-os-isolation
    §6.1, given in any case; an InputError naming ``field`` otherwise."""
    names = list(_core.study_schemes())
    match = next((n for n in names if isinstance(scheme, str) and n.lower() == scheme.strip().lower()), None)
    if match is None:
        raise input_error(file, field, f"unknown scheme {scheme!r} (expected one of {', '.join(names)})")
    return match
