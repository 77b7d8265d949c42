"""The engine's MC² analysis against an independent exact-arithmetic reference.

300 seeded random systems (tests/mc2_reference.py) are written as TOML,
analyzed with ``criticore.analyze`` and compared field by field with the
reference: per-level per-core verdicts and utilizations, the Level-C supply,
conditions and tardiness bounds, and the four configurations.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import pytest

import criticore
from oracles import mc2_reference as ref

SEEDS = range(300)
UTIL_TOL = 1e-9  # utilizations
BOUND_TOL_NS = 1  # ⌈x + e⌉ may round either way of an exact integer
# The engine compares utilization sums with this tolerance (analysis/mod.rs
# UTILIZATION_EPS); an exact margin inside it may legitimately go either way.
ENGINE_EPS = Fraction(1, 10**12)



def close(a: float, b: Fraction, tol: float = UTIL_TOL) -> bool:
    return abs(a - float(b)) <= tol


def full_cores_at_level_c(system: dict) -> set[int]:
    """Cores whose Level-A/B tasks use exactly 100 % at managed Level-C PETs."""
    out = set()
    for p in range(system["cores"]):
        u = sum(
            (Fraction(t["pet"]["C"], t["period_ns"]) for t in system["tasks"] if t["level"] in "AB" and t["core"] == p),
            Fraction(0),
        )
        if u == 1:
            out.add(p)
    return out


def compare(report: dict, system: dict) -> list[str]:
    """Every disagreement between the engine's report and the reference, as text."""
    want = ref.analyze(system)
    bad: list[str] = []

    def check(ok: bool, what: str, got, expected) -> None:
        if not ok:
            bad.append(f"{what}: engine {got!r}, reference {expected!r}")

    m = system["cores"]
    check(report["cores"] == m, "cores", report["cores"], m)
    check(report["schedulable"] == want["schedulable"], "schedulable", report["schedulable"], want["schedulable"])

    for level in "AB":
        got, exp = report["levels"][level], want["levels"][level]
        check(got["schedulable"] == exp["schedulable"], f"levels.{level}.schedulable", got["schedulable"], exp["schedulable"])
        check(len(got["per_core"]) == m, f"levels.{level}.per_core length", len(got["per_core"]), m)
        for g, e in zip(got["per_core"], exp["per_core"]):
            where = f"levels.{level}.per_core[{e['core']}]"
            check(g["core"] == e["core"], f"{where}.core", g["core"], e["core"])
            check(sorted(g["tasks"]) == sorted(e["tasks"]), f"{where}.tasks", g["tasks"], e["tasks"])
            check(close(g["utilization"], e["utilization"]), f"{where}.utilization", g["utilization"], float(e["utilization"]))
            check(g["schedulable"] == e["schedulable"], f"{where}.schedulable", g["schedulable"], e["schedulable"])

    got, exp = report["levels"]["C"], want["levels"]["C"]
    check(sorted(got["tasks"]) == sorted(exp["tasks"]), "levels.C.tasks", got["tasks"], exp["tasks"])
    for key in ("total_utilization", "supply", "max_task_utilization", "largest_utilization_sum"):
        check(close(got[key], exp[key]), f"levels.C.{key}", got[key], float(exp[key]))
    check(got["largest_pet_sum_ns"] == exp["largest_pet_sum_ns"], "levels.C.largest_pet_sum_ns", got["largest_pet_sum_ns"], exp["largest_pet_sum_ns"])
    check(len(got["per_core"]) == m, "levels.C.per_core length", len(got["per_core"]), m)
    for g, e in zip(got["per_core"], exp["per_core"]):
        where = f"levels.C.per_core[{e['core']}]"
        check(close(g["capacity"], e["capacity"]), f"{where}.capacity", g["capacity"], float(e["capacity"]))
        check(
            math.isclose(g["supply_delay_ns"], float(e["supply_delay_ns"]), rel_tol=1e-9, abs_tol=1e-3),
            f"{where}.supply_delay_ns", g["supply_delay_ns"], float(e["supply_delay_ns"]),
        )
    # Conditions: exact, except inside the engine's documented tolerance.
    margin_cap = exp["supply"] - exp["total_utilization"]
    if exp["tasks"] and abs(margin_cap) > ENGINE_EPS:
        check(got["capacity_condition"] == exp["capacity_condition"], "levels.C.capacity_condition", got["capacity_condition"], exp["capacity_condition"])
    if exp["tasks"] and abs(exp["slack"]) > ENGINE_EPS:
        check(got["tardiness_condition"] == exp["tardiness_condition"], "levels.C.tardiness_condition", got["tardiness_condition"], exp["tardiness_condition"])
    if not exp["tasks"]:
        check(got["capacity_condition"] and got["tardiness_condition"], "levels.C conditions without tasks", (got["capacity_condition"], got["tardiness_condition"]), (True, True))
    near_boundary = exp["tasks"] and (abs(margin_cap) <= ENGINE_EPS or abs(exp["slack"]) <= ENGINE_EPS)
    if not near_boundary:
        check(got["schedulable"] == exp["schedulable"], "levels.C.schedulable", got["schedulable"], exp["schedulable"])
        if exp["x_ns"] is None:
            check(got["x_ns"] is None, "levels.C.x_ns", got["x_ns"], None)
        else:
            check(
                got["x_ns"] is not None and math.isclose(got["x_ns"], float(exp["x_ns"]), rel_tol=1e-9, abs_tol=1.0),
                "levels.C.x_ns", got["x_ns"], float(exp["x_ns"]),
            )
        got_bounds = {b["task"]: b["bound_ns"] for b in got["tardiness_bounds"]}
        check(len(got_bounds) == len(exp["tardiness_bounds"]), "levels.C.tardiness_bounds length", len(got_bounds), len(exp["tardiness_bounds"]))
        for b in exp["tardiness_bounds"]:
            g = got_bounds.get(b["task"], "missing")
            ok = g == b["bound_ns"] if b["bound_ns"] is None or g is None or g == "missing" else abs(g - b["bound_ns"]) <= BOUND_TOL_NS
            check(ok, f"levels.C.tardiness_bounds[{b['task']}]", g, b["bound_ns"])

    for key, _, _ in ref.CONFIGURATIONS:
        g, e = report["configurations"][key], want["configurations"][key]
        where = f"configurations.{key}"
        check(g["available"] == e["available"], f"{where}.available", g["available"], e["available"])
        if not (g["available"] and e["available"]):
            continue
        check(close(g["total_utilization"], e["total_utilization"]), f"{where}.total_utilization", g["total_utilization"], float(e["total_utilization"]))
        if not near_boundary or key != "mc2_isolated":
            check(g["levels"] == e["levels"], f"{where}.levels", g["levels"], e["levels"])
            check(g["schedulable"] == e["schedulable"], f"{where}.schedulable", g["schedulable"], e["schedulable"])
    # Configuration (i) is the file's own: its summary must agree with the detail.
    i = report["configurations"]["mc2_isolated"]
    check(i["schedulable"] == report["schedulable"], "configurations.mc2_isolated.schedulable vs schedulable", i["schedulable"], report["schedulable"])
    detail = {lv: report["levels"][lv]["schedulable"] for lv in "ABC"}
    check(i["levels"] == detail, "configurations.mc2_isolated.levels vs levels", i["levels"], detail)

    bad += check_level_a_tables(report, system, want)
    return bad


def check_level_a_tables(report: dict, system: dict, want: dict) -> list[str]:
    """Each core's cyclic-executive table gives every Level-A job exactly its
    Level-A PET inside its period, without overlap; no table when Level A fails."""
    bad = []
    tables = {t["core"]: t for t in report["level_a_tables"]}
    if sorted(tables) != list(range(system["cores"])):
        return [f"level_a_tables: cores {sorted(tables)}"]
    for p in range(system["cores"]):
        table = tables[p]
        tasks = [t for t in system["tasks"] if t["level"] == "A" and t["core"] == p]
        fits = want["levels"]["A"]["per_core"][p]["schedulable"]
        if not tasks:
            if table["slots"] not in ([], None) or (table["slots"] == [] and table["hyperperiod_ns"] != 0):
                bad.append(f"level_a_tables[{p}]: core without Level-A tasks has {table}")
            continue
        if not fits:
            if table["slots"] is not None:
                bad.append(f"level_a_tables[{p}]: Level A does not fit but a table was given")
            continue
        if table["slots"] is None:
            bad.append(f"level_a_tables[{p}]: Level A fits but no table was given")
            continue
        hyper = max(t["period_ns"] for t in tasks)  # harmonic periods
        if table["hyperperiod_ns"] != hyper:
            bad.append(f"level_a_tables[{p}].hyperperiod_ns: engine {table['hyperperiod_ns']}, expected {hyper}")
        slots = sorted(table["slots"], key=lambda s: s["start_ns"])
        for s, nxt in zip(slots, slots[1:]):
            if s["start_ns"] + s["length_ns"] > nxt["start_ns"]:
                bad.append(f"level_a_tables[{p}]: slots overlap: {s} and {nxt}")
        for s in slots:
            if s["length_ns"] <= 0 or s["start_ns"] < 0 or s["start_ns"] + s["length_ns"] > hyper:
                bad.append(f"level_a_tables[{p}]: slot outside the hyperperiod: {s}")
        for t in tasks:
            T, e = t["period_ns"], t["pet"]["A"]
            for j in range(hyper // T):
                lo, hi = j * T, (j + 1) * T
                got = sum(
                    max(0, min(s["start_ns"] + s["length_ns"], hi) - max(s["start_ns"], lo))
                    for s in slots if s["task"] == t["name"]
                )
                if got != e:
                    bad.append(f"level_a_tables[{p}]: {t['name']} job {j + 1} gets {got} ns in [{lo}, {hi}), PET {e}")
                    break
        names = {t["name"] for t in tasks}
        stray = {s["task"] for s in slots} - names
        if stray:
            bad.append(f"level_a_tables[{p}]: slots of tasks not Level-A on this core: {stray}")
    return bad


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """(seed, system, path, engine report) for every seed, computed once."""
    d = tmp_path_factory.mktemp("random-systems")
    out = []
    for seed in SEEDS:
        system = ref.random_system(random.Random(seed))
        path = d / f"system-{seed}.toml"
        path.write_text(ref.to_toml(system), encoding="utf-8")
        out.append((seed, system, path, criticore.analyze(path, "mc2").json))
    return out


def test_engine_matches_reference_on_random_systems(cases):
    for seed, system, path, report in cases:
        bad = compare(report, system)
        if bad:
            shown = "\n  ".join(bad[:10])
            pytest.fail(
                f"seed {seed} (random.Random({seed}); file {path}): {len(bad)} mismatch(es), first:\n  {shown}\n"
                f"--- system ---\n{ref.to_toml(system)}",
                pytrace=False,
            )


def test_generated_systems_are_deterministic():
    a = ref.random_system(random.Random(12345))
    b = ref.random_system(random.Random(12345))
    assert a == b
    assert ref.to_toml(a) == ref.to_toml(b)


def test_verdict_mix_is_non_trivial(cases):
    """The random systems exercise both outcomes of every test, not just one."""
    seen = Counter()
    for _, system, _, report in cases:
        want = ref.analyze(system)
        c = want["levels"]["C"]
        seen[("overall", want["schedulable"])] += 1
        seen[("engine overall", report["schedulable"])] += 1
        seen[("A", want["levels"]["A"]["schedulable"])] += 1
        seen[("B", want["levels"]["B"]["schedulable"])] += 1
        if c["tasks"]:
            seen[("C capacity", c["capacity_condition"])] += 1
            seen[("C tardiness", c["tardiness_condition"])] += 1
            seen[("C", c["schedulable"])] += 1
        for key, cfg in want["configurations"].items():
            if cfg["available"]:
                seen[(key, cfg["schedulable"])] += 1
            else:
                seen[(key, "unavailable")] += 1
    n = len(cases)
    for what in ("overall", "engine overall", "A", "B", "C capacity", "C tardiness", "C", "mc2_isolated", "mc2_unmanaged", "isolated_only", "neither"):
        for verdict in (True, False):
            assert seen[(what, verdict)] >= max(3, n // 100), f"{what} = {verdict} only {seen[(what, verdict)]} of {n} times: {dict(seen)}"
    assert seen[("mc2_unmanaged", "unavailable")] > 0


def test_edge_cases_are_generated(cases):
    """The generator's edge cases all appear among the seeds."""
    single = no_c = exact_b = exact_c = equal_capacity = missing_unmanaged = 0
    for _, system, _, _ in cases:
        m = system["cores"]
        single += m == 1
        no_c += not any(t["level"] == "C" for t in system["tasks"])
        missing_unmanaged += any(t["pet_unmanaged"] is None for t in system["tasks"])
        for p in range(m):
            ab = [t for t in system["tasks"] if t["level"] in "AB" and t["core"] == p]
            exact_b += sum(Fraction(t["pet"]["B"], t["period_ns"]) for t in ab) == 1
        exact_c += bool(full_cores_at_level_c(system))
        c = ref.level_c(system)
        equal_capacity += bool(c["tasks"]) and c["supply"] == c["total_utilization"]
    counts = dict(single=single, no_c=no_c, exact_b=exact_b, exact_c=exact_c, equal_capacity=equal_capacity, missing_unmanaged=missing_unmanaged)
    assert all(v >= 3 for v in counts.values()), counts


def test_generated_systems_respect_the_schema_rules():
    for seed in range(100):
        s = ref.random_system(random.Random(seed))
        names = [t["name"] for t in s["tasks"]]
        assert len(set(names)) == len(names)
        for t in s["tasks"]:
            ms = t["period_ns"] // ref.MS
            assert t["period_ns"] % ref.MS == 0
            assert ms in {"A": ref.A_PERIODS_MS, "B": ref.B_PERIODS_MS}.get(t["level"], range(10, 101))
            for pets in (t["pet"], t["pet_unmanaged"]):
                if pets is None:
                    continue
                assert all(v > 0 and v % ref.US == 0 for v in pets.values())
                given = [pets[lv] for lv in ref.LEVELS if lv in pets]
                assert given == sorted(given, reverse=True)  # C ≤ B ≤ A
                assert set(pets) >= {"A": {"A", "B", "C"}, "B": {"B", "C"}, "C": {"C"}}[t["level"]]


def test_reference_worked_out_by_hand():
    """The reference itself on a small system computed on paper.

    Core 0: Level-A task a (T = 100 ms, PETs A/B/C = 30/20/10 ms) and Level-B task
    b (T = 200 ms, B/C = 60/40 ms). Core 1: nothing. Level-C tasks c1 (T = 50 ms,
    C = 25 ms) and c2 (T = 100 ms, C = 30 ms).
      Level A core 0: 30/100 = 0.3.  Level B core 0: 20/100 + 60/200 = 0.5.
      û_0 = 1 − 0.1 − 0.2 = 0.7, σ_0 = 2·10·0.9 + 2·40·0.8 = 82 ms; û_1 = 1, σ_1 = 0.
      U_C = 0.5 + 0.3 = 0.8 ≤ 1.7; slack = 1.7 − 1·0.5 − 0.5 = 0.7 > 0.
      E_L(1) = 30 ms (the largest Level-C PET); x = (30 + 82) ms / 0.7 = 160 ms;
      bounds x + e = 185 ms and 190 ms.
    """
    ms = ref.MS
    system = {
        "cores": 2,
        "tasks": [
            {"name": "a", "level": "A", "core": 0, "period_ns": 100 * ms, "pet": {"A": 30 * ms, "B": 20 * ms, "C": 10 * ms}, "pet_unmanaged": None},
            {"name": "b", "level": "B", "core": 0, "period_ns": 200 * ms, "pet": {"B": 60 * ms, "C": 40 * ms}, "pet_unmanaged": None},
            {"name": "c1", "level": "C", "core": None, "period_ns": 50 * ms, "pet": {"C": 25 * ms}, "pet_unmanaged": None},
            {"name": "c2", "level": "C", "core": None, "period_ns": 100 * ms, "pet": {"C": 30 * ms}, "pet_unmanaged": None},
        ],
    }
    r = ref.analyze(system)
    assert r["levels"]["A"]["per_core"][0]["utilization"] == Fraction(3, 10)
    assert r["levels"]["B"]["per_core"][0]["utilization"] == Fraction(1, 2)
    c = r["levels"]["C"]
    assert [s["capacity"] for s in c["per_core"]] == [Fraction(7, 10), 1]
    assert [s["supply_delay_ns"] for s in c["per_core"]] == [82 * ms, 0]
    assert c["capacity_condition"] and c["tardiness_condition"]
    assert c["largest_pet_sum_ns"] == 30 * ms
    assert c["x_ns"] == 160 * ms
    assert [b["bound_ns"] for b in c["tardiness_bounds"]] == [185 * ms, 190 * ms]
    assert r["configurations"]["mc2_isolated"]["total_utilization"] == Fraction(1, 10) + Fraction(1, 5) + Fraction(4, 5)
    assert not r["configurations"]["mc2_unmanaged"]["available"]
    # Without MC² analysis: a at 30 ms, b at 60 ms, c1/c2 at their only PET.
    assert r["configurations"]["isolated_only"]["total_utilization"] == Fraction(3, 10) + Fraction(3, 10) + Fraction(4, 5)

    # And the engine agrees (exact to the nanosecond here).
    report = analyze_dict(system)
    assert compare(report, system) == []
    assert [b["bound_ns"] for b in report["levels"]["C"]["tardiness_bounds"]] == [185 * ms, 190 * ms]


def analyze_dict(system: dict) -> dict:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "system.toml"
        path.write_text(ref.to_toml(system), encoding="utf-8")
        return criticore.analyze(path, "mc2").json


def _full_core_system() -> dict:
    """Core 0 exactly full at every level with PETs 70/20/10 ms of 100 ms (a float
    sum of 0.7 + 0.2 + 0.1 is 1 − 2⁻⁵³); core 1 empty; one Level-C task 10/100 ms."""
    ms = ref.MS

    def a(name, e):
        return {"name": name, "level": "A", "core": 0, "period_ns": 100 * ms, "pet": {"A": e, "B": e, "C": e}, "pet_unmanaged": None}

    return {
        "cores": 2,
        "tasks": [a("a1", 70 * ms), a("a2", 20 * ms), a("a3", 10 * ms),
                  {"name": "c1", "level": "C", "core": None, "period_ns": 100 * ms, "pet": {"C": 10 * ms}, "pet_unmanaged": None}],
    }


def test_full_core_reference_values():
    """Spec: a full core supplies nothing and has σ_p = 0, so only core 1 counts:
    slack = 1 − 0.1 − 0.1 = 0.8, x = 10 ms / 0.8 = 12.5 ms, bound = 22.5 ms."""
    c = ref.analyze(_full_core_system())["levels"]["C"]
    assert [(s["capacity"], s["supply_delay_ns"]) for s in c["per_core"]] == [(0, 0), (1, 0)]
    assert c["x_ns"] == 12_500_000
    assert c["tardiness_bounds"][0]["bound_ns"] == 22_500_000


def test_full_core_has_no_supply_delay():
    report = analyze_dict(_full_core_system())
    c = report["levels"]["C"]
    assert c["per_core"][0]["capacity"] == 0.0
    assert c["per_core"][0]["supply_delay_ns"] == 0.0
    assert c["x_ns"] == pytest.approx(12_500_000)
    assert c["tardiness_bounds"][0]["bound_ns"] == 22_500_000


def test_empty_core_supply_delay_is_positive_zero():
    report = analyze_dict(_full_core_system())
    delay = report["levels"]["C"]["per_core"][1]["supply_delay_ns"]  # core 1 has no Level-A/B task
    assert delay == 0.0
    assert math.copysign(1.0, delay) == 1.0
