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


def scheme_names() -> list[str]:
    """The nine schemes of mc2-io-ipc-os-isolation §6.1, as the engine names them."""
    return list(_core.study_schemes())


def scheme_name(scheme: str, file: str, field: str = "scheme") -> str:
    """The canonical name of one of the nine schemes of mc2-io-ipc-os-isolation
    §6.1, given in any case; an InputError naming ``field`` otherwise."""
    names = scheme_names()
    match = next((n for n in names if isinstance(scheme, str) and n.lower() == scheme.strip().lower()), None)
    if match is None:
        raise input_error(file, field, f"unknown scheme {scheme!r} (expected one of {', '.join(names)})")
    return match


# --------------------------------------------------------------------------- printing quantities
# One rule for every quantity the CLI prints (docs/format.md, "Numbers as
# printed"): 4 significant digits, the SI prefix that puts 1 to 999 before
# the point, trailing zeros dropped; never an exponent.

_PREFIXES = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))
_BINARY = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))
DIGITS = 4


def _digits(v: float) -> str:
    """``v`` (|v| < 1000 after rounding, or an integer count) to DIGITS significant digits, no exponent."""
    if abs(v) >= 10**DIGITS / 10:
        return f"{round(v):,}"
    return f"{v:.{DIGITS}g}"


def _rounded(v: float) -> float:
    return float(f"{v:.{DIGITS - 1}e}")


def si(value: float | None, unit: str, *, largest: str = "G") -> str:
    """``value`` in ``unit`` (a base unit: "s", "B/s", "Hz") with the SI prefix
    that puts 1 to 999 before the point and 4 significant digits: si(1e-06,
    "s") is "1 µs", si(0.0141531, "s") "14.15 ms", si(2.5e9, "B/s") "2.5 GB/s".
    No prefix above ``largest`` ("" for seconds: 1e6 s is "1,000,000 s");
    0 is "0"; None and NaN are "—"."""
    if value is None or value != value:  # None or NaN: nothing measured
        return "—"
    if value == 0:
        return "0"  # zero needs no unit (and no prefix to choose)
    v = _rounded(value)  # before choosing the prefix: 999,999.9 ns is 1 ms, not 1000 µs
    top = [p for p, name in _PREFIXES].index(next(p for p, name in _PREFIXES if name == largest))
    for scale, prefix in _PREFIXES[top:]:
        if abs(v) >= scale * (1 - 1e-12) or scale == _PREFIXES[-1][0]:
            return f"{_digits(v / scale)} {prefix}{unit}"
    raise AssertionError("unreachable")


def duration_text(ns: float | None) -> str:
    """A duration given in ns, printed by :func:`si` in seconds (ns to s, no ks)."""
    return si(None if ns is None else ns / 1e9, "s", largest="")


def bandwidth_text(bytes_per_s: float | None) -> str:
    """A bandwidth given in bytes/s, printed by :func:`si` (kB/s, MB/s, GB/s: decimal, as the file's "500MB/s")."""
    return si(bytes_per_s, "B/s")


def size_text(size: float | None) -> str:
    """A size in bytes with binary prefixes (KiB, MiB, GiB, TiB: as the file's "128MiB") and 4 significant digits."""
    if size is None or size != size:
        return "—"
    if size == 0:
        return "0"
    v = _rounded(size)
    for scale, name in _BINARY:
        if abs(v) >= scale:
            return f"{_digits(_rounded(v / scale))} {name}"
    return f"{_digits(v)} B"
