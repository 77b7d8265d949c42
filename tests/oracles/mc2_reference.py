"""Independent reference implementation of the MC² schedulability analysis.

Written from docs/references.md (section MC²) (not from the Rust engine),
in exact rational arithmetic (``fractions.Fraction``), so that the engine's
floating-point results can be checked against it.

The model is a plain dict::

    {"cores": m,
     "tasks": [{"name": str, "level": "A" | "B" | "C", "core": int | None,
                "period_ns": int,
                "pet": {"A": ns, "B": ns, "C": ns},          # levels given
                "pet_unmanaged": {...} or None}]}

Analysis (per provisioning):

* Level A, per core p: Level-A tasks of p at Level-A PETs, U ≤ 1.
* Level B, per core p: Level-A and -B tasks of p at Level-B PETs, U ≤ 1.
* Level C, global over m cores, every task at its Level-C PET:
  û_p = max(0, 1 − Σ_{A/B tasks on p} e/T);
  σ_p = Σ_{A/B tasks on p} 2·e·(1 − e/T), and 0 when the core is full (û_p = 0);
  conditions Σû ≥ U_C and Σû > (m−1)·u_max + U_L(m−1);
  x = (E_L(m−1) + Σσ_p) / (Σû − (m−1)·u_max − U_L(m−1)); bound_i = ⌈x + e_i⌉ ns.
  With no Level-C task both conditions hold vacuously (nothing can be tardy).
* Configurations (mc2-hardware-management §4.3): (i) MC² analysis with the
  managed PETs ``pet``; (ii) MC² analysis with ``pet_unmanaged``; (iii) and (iv)
  the same PET sets without MC² analysis, where each task is charged its most
  critical PET given (the first of A, B, C present) in every test. A
  configuration's total utilization is Σ over all A/B/C tasks of the PET the
  Level-C test charges, divided by the period. A configuration that needs
  ``pet_unmanaged`` is unavailable when some task lacks it.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

LEVELS = ("A", "B", "C")
MS = 1_000_000
US = 1_000

# (key in the engine's configurations object, unmanaged PETs, MC² analysis)
CONFIGURATIONS = (
    ("mc2_isolated", False, True),
    ("mc2_unmanaged", True, True),
    ("isolated_only", False, False),
    ("neither", True, False),
)


class MissingPet(Exception):
    """A provisioning needs a PET the system does not give."""


# --------------------------------------------------------------------------- charging


def charged_pet(task: dict, level: str, *, unmanaged: bool, mc: bool) -> int:
    """The PET (ns) `task` is charged in the Level-`level` test."""
    pets = task.get("pet_unmanaged") if unmanaged else task["pet"]
    if pets is None:
        raise MissingPet(task["name"])
    if mc:
        if level not in pets:
            raise MissingPet(task["name"])
        return pets[level]
    for lv in LEVELS:  # most critical PET given
        if lv in pets:
            return pets[lv]
    raise MissingPet(task["name"])


def util(pet_ns: int, period_ns: int) -> Fraction:
    return Fraction(pet_ns, period_ns)


def _on_core(system: dict, core: int, levels: tuple[str, ...]) -> list[dict]:
    # Level-A tasks first, then Level-B ones, each in file order.
    return [t for lv in levels for t in system["tasks"] if t["level"] == lv and t.get("core") == core]


# --------------------------------------------------------------------------- levels


def partitioned_level(system: dict, core: int, level: str, *, unmanaged: bool = False, mc: bool = True) -> dict:
    """Level A (level='A') or Level B (level='B') test of one core."""
    levels = ("A",) if level == "A" else ("A", "B")
    tasks = _on_core(system, core, levels)
    u = sum((util(charged_pet(t, level, unmanaged=unmanaged, mc=mc), t["period_ns"]) for t in tasks), Fraction(0))
    return {"core": core, "tasks": [t["name"] for t in tasks], "utilization": u, "schedulable": u <= 1}


def level_c(system: dict, *, unmanaged: bool = False, mc: bool = True) -> dict:
    m = system["cores"]
    per_core = []
    for p in range(m):
        higher = [
            (charged_pet(t, "C", unmanaged=unmanaged, mc=mc), t["period_ns"]) for t in _on_core(system, p, ("A", "B"))
        ]
        used = sum((util(e, T) for e, T in higher), Fraction(0))
        if used >= 1:
            capacity, delay = Fraction(0), Fraction(0)
        else:
            capacity = 1 - used
            delay = sum((2 * e * (1 - util(e, T)) for e, T in higher), Fraction(0))
        per_core.append({"core": p, "capacity": capacity, "supply_delay_ns": delay})

    c_tasks = [t for t in system["tasks"] if t["level"] == "C"]
    pets = [charged_pet(t, "C", unmanaged=unmanaged, mc=mc) for t in c_tasks]
    utils = [util(e, t["period_ns"]) for e, t in zip(pets, c_tasks)]
    supply = sum((s["capacity"] for s in per_core), Fraction(0))
    total_delay = sum((s["supply_delay_ns"] for s in per_core), Fraction(0))
    total_u = sum(utils, Fraction(0))
    u_max = max(utils, default=Fraction(0))
    k = m - 1
    u_l = sum(sorted(utils, reverse=True)[:k], Fraction(0))
    e_l = sum(sorted(pets, reverse=True)[:k])
    slack = supply - k * u_max - u_l
    if c_tasks:
        capacity_condition = supply >= total_u
        tardiness_condition = slack > 0
    else:
        capacity_condition = tardiness_condition = True
    schedulable = capacity_condition and tardiness_condition
    x = (e_l + total_delay) / slack if (schedulable and c_tasks) else None
    bounds = [math.ceil(x + e) if x is not None else None for e in pets]
    return {
        "tasks": [t["name"] for t in c_tasks],
        "per_core": per_core,
        "supply": supply,
        "total_utilization": total_u,
        "max_task_utilization": u_max,
        "largest_utilization_sum": u_l,
        "largest_pet_sum_ns": e_l,
        "slack": slack,
        "capacity_condition": capacity_condition,
        "tardiness_condition": tardiness_condition,
        "schedulable": schedulable,
        "x_ns": x,
        "tardiness_bounds": [{"task": t["name"], "bound_ns": b} for t, b in zip(c_tasks, bounds)],
    }


def total_utilization(system: dict, *, unmanaged: bool = False, mc: bool = True) -> Fraction:
    return sum(
        (util(charged_pet(t, "C", unmanaged=unmanaged, mc=mc), t["period_ns"]) for t in system["tasks"]),
        Fraction(0),
    )


def mc2(system: dict, *, unmanaged: bool = False, mc: bool = True) -> dict:
    """All levels under one provisioning; raises MissingPet if a PET is missing."""
    m = system["cores"]
    a = [partitioned_level(system, p, "A", unmanaged=unmanaged, mc=mc) for p in range(m)]
    b = [partitioned_level(system, p, "B", unmanaged=unmanaged, mc=mc) for p in range(m)]
    c = level_c(system, unmanaged=unmanaged, mc=mc)
    verdicts = {"A": all(x["schedulable"] for x in a), "B": all(x["schedulable"] for x in b), "C": c["schedulable"]}
    return {
        "A": {"schedulable": verdicts["A"], "per_core": a},
        "B": {"schedulable": verdicts["B"], "per_core": b},
        "C": c,
        "verdicts": verdicts,
        "schedulable": all(verdicts.values()),
        "total_utilization": total_utilization(system, unmanaged=unmanaged, mc=mc),
    }


def analyze(system: dict) -> dict:
    """Configuration (i) in detail plus the four configurations."""
    main = mc2(system)
    configs = {}
    for key, unmanaged, mc in CONFIGURATIONS:
        try:
            r = mc2(system, unmanaged=unmanaged, mc=mc)
        except MissingPet:
            configs[key] = {"available": False}
            continue
        configs[key] = {
            "available": True,
            "total_utilization": r["total_utilization"],
            "schedulable": r["schedulable"],
            "levels": r["verdicts"],
        }
    return {
        "cores": system["cores"],
        "schedulable": main["schedulable"],
        "levels": {"A": main["A"], "B": main["B"], "C": main["C"]},
        "configurations": configs,
    }


# --------------------------------------------------------------------------- generation

A_PERIODS_MS = (25, 50, 100)
B_PERIODS_MS = (100, 200, 400)


def _ceil_us(x: float) -> int:
    return max(1, math.ceil(x))


def _weights(rng, n: int) -> list[float]:
    w = [rng.random() + 0.05 for _ in range(n)]
    s = sum(w)
    return [x / s for x in w]


def _pets_from_b(rng, level: str, b_us: int, *, c_equals_b: bool = False, a_equals_b: bool = False) -> dict:
    """Managed PETs (µs) around a Level-B PET, with C ≤ B ≤ A."""
    c_us = b_us if c_equals_b else max(1, min(b_us, int(b_us * rng.uniform(0.4, 1.0))))
    pets = {"B": b_us, "C": c_us}
    if level == "A" or rng.random() < 0.5:  # B tasks sometimes give an A PET too (as in the examples)
        pets["A"] = b_us if a_equals_b else _ceil_us(b_us * rng.uniform(1.0, 1.6))
    return pets


def _core_tasks(rng, core: int, *, exact_full: bool) -> list[dict]:
    """A/B tasks of one core (PETs in µs, periods in ms, still to be scaled)."""
    n_a = rng.randint(0, 3)
    n_b = rng.randint(0, 3)
    if exact_full and n_a + n_b == 0:
        n_b = 1
    specs = [("A", rng.choice(A_PERIODS_MS)) for _ in range(n_a)] + [("B", rng.choice(B_PERIODS_MS)) for _ in range(n_b)]
    if not specs:
        return []
    tasks = []
    if exact_full:
        # Level-B utilization exactly 1: Σ e_i·(H/T_i) = H over the hyperperiod H (the
        # largest period, periods being harmonic); the task with period H takes the rest.
        hyper_ms = max(p for _, p in specs)
        last = max(range(len(specs)), key=lambda i: specs[i][1])
        share = rng.uniform(0.3, 0.9)
        w = _weights(rng, len(specs))
        b_pets = [0] * len(specs)
        for i, (_, period) in enumerate(specs):
            if i != last:
                b_pets[i] = max(1, int(share * w[i] * period * US))
        used_us = sum(b_pets[i] * (hyper_ms // specs[i][1]) for i in range(len(specs)) if i != last)
        b_pets[last] = hyper_ms * US - used_us
        assert b_pets[last] >= 1
        c_equals_b = rng.random() < 0.5  # then the core is full at Level C too
        a_equals_b = rng.random() < 0.5  # then Level A is at most 1 (exactly 1 if all tasks are Level A)
    else:
        target = rng.uniform(0.1, 1.08)
        w = _weights(rng, len(specs))
        b_pets = [_ceil_us(target * w[i] * period * US) for i, (_, period) in enumerate(specs)]
        c_equals_b = a_equals_b = False
    for i, ((level, period), b_us) in enumerate(zip(specs, b_pets)):
        tasks.append({
            "name": f"{level}{core}_{i}",
            "level": level,
            "core": core,
            "period_ms": period,
            "pet_us": _pets_from_b(rng, level, b_us, c_equals_b=c_equals_b, a_equals_b=a_equals_b),
        })
    return tasks


def random_system(rng, cores: int = 4) -> dict:
    """A valid random MC² system in the reference's dict form.

    Levels A/B/C; Level-A periods from {25, 50, 100} ms and Level-B periods from
    {100, 200, 400} ms (so every core's periods are harmonic and Level-B periods
    are multiples of the Level-A hyperperiod); Level-C periods whole ms in
    [10, 100]; PETs whole µs with C ≤ B ≤ A. Edge cases appear now and then: a
    single core, a core whose Level-B utilization is exactly 1 (sometimes also at
    Level C and Level A), no Level-C task, Level-C demand exactly equal to the
    supply, missing ``pet_unmanaged``.
    """
    m = 1 if rng.random() < 0.1 else cores
    full_core = rng.randrange(m) if rng.random() < 0.25 else None
    tasks: list[dict] = []
    for p in range(m):
        tasks += _core_tasks(rng, p, exact_full=(p == full_core))

    # Level C.
    periods_ab = {t["period_ms"] for t in tasks}
    supply = sum(
        max(Fraction(0), 1 - sum((Fraction(t["pet_us"]["C"], t["period_ms"] * US) for t in tasks if t["core"] == p), Fraction(0)))
        for p in range(m)
    )
    c_specs: list[tuple[int, int]] = []  # (period ms, C PET µs)
    if rng.random() < 0.1:
        pass  # no Level-C task
    elif rng.random() < 0.1 and periods_ab <= {25, 50, 100} and supply > 0:
        # Level-C demand exactly equal to Σû: everything has period dividing 100 ms.
        remaining = int(supply * 100 * US)
        assert supply * 100 * US == remaining
        while remaining > 0:
            e = min(remaining, rng.randint(1, 90 * US))
            c_specs.append((100, e))
            remaining -= e
    else:
        n_c = rng.randint(1, 3 * m)
        target = float(supply) * rng.uniform(0.2, 1.4) + rng.uniform(0.0, 0.3)
        w = _weights(rng, n_c)
        for i in range(n_c):
            period = rng.randint(10, 100)
            u = min(0.95, target * w[i])
            c_specs.append((period, max(1, int(u * period * US))))
    for i, (period, c_us) in enumerate(c_specs):
        pets = {"C": c_us}
        if rng.random() < 0.5:
            pets["B"] = _ceil_us(c_us * rng.uniform(1.0, 1.8))
            if rng.random() < 0.7:
                pets["A"] = _ceil_us(pets["B"] * rng.uniform(1.0, 1.6))
        tasks.append({"name": f"C_{i}", "level": "C", "core": None, "period_ms": period, "pet_us": pets})

    # Unmanaged PETs: a per-task inflation keeps C ≤ B ≤ A; sometimes absent.
    missing = rng.random() < 0.1
    out = []
    for t in tasks:
        if missing and rng.random() < 0.5:
            unmanaged = None
        else:
            f = rng.uniform(1.0, 1.8)
            unmanaged = {lv: _ceil_us(e * f) * US for lv, e in t["pet_us"].items()}
        out.append({
            "name": t["name"],
            "level": t["level"],
            "core": t["core"],
            "period_ns": t["period_ms"] * MS,
            "pet": {lv: e * US for lv, e in t["pet_us"].items()},
            "pet_unmanaged": unmanaged,
        })
    rng.shuffle(out)  # file order must not matter
    return {"cores": m, "tasks": out}


# --------------------------------------------------------------------------- writing


def duration(ns: int) -> str:
    """A unit string for whole nanoseconds: "100ms", "1234us" or "17ns"."""
    if ns % MS == 0:
        return f"{ns // MS}ms"
    if ns % US == 0:
        return f"{ns // US}us"
    return f"{ns}ns"


def _pets_doc(pets: dict) -> dict:
    return {lv: duration(pets[lv]) for lv in LEVELS if lv in pets}


def to_document(system: dict) -> dict:
    """The criticore file schema as a JSON-able dict (what to_toml writes)."""
    tasks = []
    for t in system["tasks"]:
        d = {"name": t["name"], "level": t["level"]}
        if t["level"] in ("A", "B"):
            d["core"] = t["core"]
        d["period"] = duration(t["period_ns"])
        d["pet"] = _pets_doc(t["pet"])
        if t.get("pet_unmanaged") is not None:
            d["pet_unmanaged"] = _pets_doc(t["pet_unmanaged"])
        tasks.append(d)
    return {"platform": {"cores": system["cores"]}, "task": tasks}


def to_json(system: dict) -> str:
    return json.dumps(to_document(system), indent=2)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for these (ASCII) names and units
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def to_toml(system: dict) -> str:
    doc = to_document(system)
    lines = ["[platform]", f"cores = {doc['platform']['cores']}", ""]
    for t in doc["task"]:
        lines.append("[[task]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in t.items()]
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- reading (a subset of the schema)

_UNITS_NS = {"ns": 1, "us": US, "µs": US, "ms": MS, "s": 1_000_000_000}


def parse_duration(text: str) -> int:
    """Whole nanoseconds of a unit string such as "100ms", "1.5s", "1234us"."""
    t = text.strip()
    number = t.rstrip("nuµms")
    unit = t[len(number):]
    value = Fraction(number) * _UNITS_NS[unit]
    if value.denominator != 1:
        raise ValueError(f"{text!r} is not a whole number of nanoseconds")
    return int(value)


def from_document(doc: dict) -> dict:
    """The reference's dict model of a parsed criticore file (TOML or JSON).

    Only what the analysis reads: cores, and per task name, level, core,
    period and PETs. Level-D tasks are dropped (best effort, not analyzed).
    """
    tasks = []
    for t in doc.get("task", []):
        if t["level"] == "D":
            continue
        unmanaged = t.get("pet_unmanaged")
        tasks.append({
            "name": t["name"],
            "level": t["level"],
            "core": t.get("core"),
            "period_ns": parse_duration(t["period"]),
            "pet": {lv: parse_duration(v) for lv, v in t["pet"].items()},
            "pet_unmanaged": None if unmanaged is None else {lv: parse_duration(v) for lv, v in unmanaged.items()},
        })
    return {"cores": doc["platform"]["cores"], "tasks": tasks}
