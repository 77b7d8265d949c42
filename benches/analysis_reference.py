#!/usr/bin/env python3
"""In-run reference for the MC² analysis benchmark (issue 2).

Runs the Rust benchmark (`cargo bench -p criticore --bench analysis`, or a
built bench binary given with --rust-binary) and, in the same run, a plain
pure-Python implementation of the same Level-A/B/C tests under configuration
(i) (MC² analysis, isolated PETs) on systems drawn from the same distribution as
`generate::mc2_uniform`. Prints Rust and Python throughput and their ratio: the
machine is shared and noisy, so the ratio measured in one run is the number to
compare across runs, not the absolute systems/s.

Before timing, every Python-generated system is written as TOML and analyzed by
the Rust engine through the Python package (`criticore._core.analyze`, built by
`make build`), and the verdicts, total utilizations and tardiness offsets x must
agree with the Python reference: the reference is checked to run the same tests.

Usage (from the repository root):
    .venv/bin/python benches/analysis_reference.py
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from machine import machine  # benches/machine.py

ROOT = Path(__file__).resolve().parent.parent
MS = 1_000_000
CORES = 4
MIN_TASKS, MAX_TASKS = 20, 60
MEAN_TASK_UTILIZATION = 0.05  # Level-C utilization per task drawn in [0, 2·mean]
EPS = 1e-12  # analysis::UTILIZATION_EPS

console = Console(highlight=False, width=110)


# --------------------------------------------------------------------------
# Generator: the distribution of generate::mc2_uniform (not the same stream:
# Python's Mersenne Twister instead of ChaCha8, so different systems).
# --------------------------------------------------------------------------

def generate(seed: int) -> list[dict]:
    rng = random.Random(seed)
    n = rng.randint(MIN_TASKS, MAX_TASKS)
    tasks = []
    for i in range(n):
        r = rng.randrange(4)  # A:B:C = 1:1:2
        level = "A" if r == 0 else "B" if r == 1 else "C"
        if level == "A":
            period = rng.choice([25, 50, 100]) * MS
        elif level == "B":
            period = rng.choice([100, 200, 400]) * MS
        else:
            period = rng.randint(10, 100) * MS
        u_c = rng.uniform(0.0, 2 * MEAN_TASK_UTILIZATION)
        pet_c = max(int(u_c * period), 1)
        pet_b = max(int(pet_c * rng.uniform(1.0, 2.0)), pet_c)
        pet_a = max(int(pet_b * 1.5), pet_b)
        inflation = rng.uniform(1.0, 1.5)
        pet = {"A": pet_a, "B": pet_b, "C": pet_c}
        tasks.append({
            "name": f"T{i}",
            "level": level,
            "core": rng.randrange(CORES) if level in ("A", "B") else None,
            "period": period,
            "pet": pet,
            "pet_unmanaged": {l: int(p * inflation) for l, p in pet.items()},
        })
    return tasks


# --------------------------------------------------------------------------
# Reference analysis, configuration (i): the Level-ℓ test uses Level-ℓ PETs
# with hardware isolation. Float arithmetic throughout, written plainly.
# --------------------------------------------------------------------------

def core_test(tasks: list[dict], core: int, levels: tuple[str, ...], pet_level: str) -> dict:
    """Per-core utilization test (Level A: A tasks at A PETs; Level B: A and B tasks at B PETs)."""
    members = []
    utilization = 0.0
    for level in levels:
        for i, t in enumerate(tasks):
            if t["level"] == level and t["core"] == core:
                members.append(i)
                utilization += t["pet"][pet_level] / t["period"]
    return {"core": core, "tasks": members, "utilization": utilization, "schedulable": utilization <= 1.0 + EPS}


def level_c_test(tasks: list[dict], cores: int) -> dict:
    """Restricted-supply G-EDF: Σû ≥ U_C and Σû > (m−1)·u_max + U_L(m−1); x and bounds."""
    per_core = []
    for p in range(cores):
        higher = [t for level in ("A", "B") for t in tasks if t["level"] == level and t["core"] == p]
        used = sum(t["pet"]["C"] / t["period"] for t in higher)
        if used >= 1.0:
            per_core.append({"core": p, "capacity": 0.0, "supply_delay_ns": 0.0})
        else:
            delay = sum(2.0 * t["pet"]["C"] * (1.0 - t["pet"]["C"] / t["period"]) for t in higher)
            per_core.append({"core": p, "capacity": 1.0 - used, "supply_delay_ns": delay})
    members = [i for i, t in enumerate(tasks) if t["level"] == "C"]
    pets = [tasks[i]["pet"]["C"] for i in members]
    utils = [tasks[i]["pet"]["C"] / tasks[i]["period"] for i in members]
    m = cores
    supply = sum(s["capacity"] for s in per_core)
    total_delay = sum(s["supply_delay_ns"] for s in per_core)
    total_utilization = sum(utils)
    max_task_utilization = max(utils, default=0.0)
    largest_utilization_sum = sum(sorted(utils, reverse=True)[: m - 1])
    largest_pet_sum = sum(sorted(pets, reverse=True)[: m - 1])
    capacity_condition = supply >= total_utilization - EPS
    slack = supply - (m - 1) * max_task_utilization - largest_utilization_sum
    tardiness_condition = not members or slack > EPS
    x = None
    if capacity_condition and tardiness_condition and members:
        x = (largest_pet_sum + total_delay) / slack
    bounds = [math.ceil(x + e) if x is not None else None for e in pets]
    return {
        "tasks": members,
        "per_core": per_core,
        "total_utilization": total_utilization,
        "supply": supply,
        "max_task_utilization": max_task_utilization,
        "largest_utilization_sum": largest_utilization_sum,
        "largest_pet_sum_ns": largest_pet_sum,
        "capacity_condition": capacity_condition,
        "tardiness_condition": tardiness_condition,
        "schedulable": capacity_condition and tardiness_condition,
        "x_ns": x,
        "tardiness_bounds_ns": bounds,
    }


def analyze(tasks: list[dict], cores: int = CORES) -> dict:
    level_a = [core_test(tasks, p, ("A",), "A") for p in range(cores)]
    level_b = [core_test(tasks, p, ("A", "B"), "B") for p in range(cores)]
    level_c = level_c_test(tasks, cores)
    total_utilization = sum(t["pet"]["C"] / t["period"] for t in tasks if t["level"] != "D")
    verdicts = {
        "A": all(c["schedulable"] for c in level_a),
        "B": all(c["schedulable"] for c in level_b),
        "C": level_c["schedulable"],
    }
    return {
        "level_a": level_a,
        "level_b": level_b,
        "level_c": level_c,
        "total_utilization": total_utilization,
        "levels": verdicts,
        "schedulable": all(verdicts.values()),
    }


# --------------------------------------------------------------------------
# Cross-check against the Rust engine (not timed).
# --------------------------------------------------------------------------

def to_toml(tasks: list[dict], cores: int = CORES) -> str:
    lines = ["[platform]", f"cores = {cores}"]
    for t in tasks:
        lines += ["", "[[task]]", f'name = "{t["name"]}"', f'level = "{t["level"]}"']
        if t["core"] is not None:
            lines.append(f"core = {t['core']}")
        lines.append(f'period = "{t["period"]}ns"')
        for key in ("pet", "pet_unmanaged"):
            fields = ", ".join(f'{l} = "{ns}ns"' for l, ns in t[key].items())
            lines.append(f"{key} = {{ {fields} }}")
    return "\n".join(lines) + "\n"


def close(a: float | None, b: float | None, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def cross_check(systems: list[list[dict]]) -> tuple[int, list[str]]:
    """Compare the reference with the Rust engine on every system; returns (checked, problems)."""
    try:
        from criticore import _core
    except ImportError as e:  # package not built (`make build`)
        return 0, [f"criticore._core not importable ({e}); run `make build`"]
    problems = []
    for seed, tasks in enumerate(systems):
        rust = json.loads(_core.analyze(to_toml(tasks).encode(), f"python-seed-{seed}.toml"))
        ref = analyze(tasks)
        c = rust["levels"]["C"]
        checks = [
            ("schedulable", rust["schedulable"] == ref["schedulable"]),
            *((f"level {l}", rust["levels"][l]["schedulable"] == ref["levels"][l]) for l in "ABC"),
            ("total_utilization", close(rust["configurations"]["mc2_isolated"]["total_utilization"], ref["total_utilization"])),
            ("x_ns", close(c["x_ns"], ref["level_c"]["x_ns"])),
            ("supply", close(c["supply"], ref["level_c"]["supply"])),
        ]
        problems += [f"seed {seed}: {name} differs" for name, ok in checks if not ok]
    return len(systems), problems


# --------------------------------------------------------------------------
# Driver.
# --------------------------------------------------------------------------

def run_rust(binary: str | None) -> dict:
    cmd = [binary] if binary else ["cargo", "bench", "-p", "criticore", "--bench", "analysis"]
    console.print(f"[bold]$ {' '.join(cmd)}[/bold]")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    last = ""
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.strip():
            last = line.strip()
    if proc.wait() != 0:
        sys.exit(f"Rust benchmark failed with exit status {proc.returncode}")
    return json.loads(last)




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=2000, help="Python reference systems (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="Python repeats before and after the Rust run (default 5 each)")
    parser.add_argument("--rust-binary", help="run this built bench binary instead of cargo bench")
    args = parser.parse_args()

    info = machine()
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    console.print(f"[bold]MC² analysis: Rust vs pure-Python reference[/bold]  {date}")
    console.print(f"machine: {info['nproc']} cores, {info['cpu']}; Python {info['python']}\n")

    systems = [generate(seed) for seed in range(args.systems)]
    mean_tasks = sum(len(s) for s in systems) / len(systems)
    checked, problems = cross_check(systems)
    if problems:
        for p in problems[:20]:
            console.print(f"[red]cross-check: {p}[/red]")
        sys.exit(f"the Python reference disagrees with the Rust engine ({len(problems)} problems)")
    console.print(f"cross-check: reference agrees with the Rust engine on all {checked} Python-generated systems\n")
    schedulable = sum(analyze(s)["schedulable"] for s in systems)

    def time_python() -> list[float]:
        rates = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            ok = 0
            for s in systems:
                ok += analyze(s)["schedulable"]
            rates.append(len(systems) / (time.perf_counter() - start))
            assert ok == schedulable
        return rates

    # Python is timed before and after the Rust run, so drift of the shared
    # machine during the run shows up as a before/after difference.
    before = time_python()
    rust = run_rust(args.rust_binary)
    after = time_python()
    rates = before + after
    py = {"min": min(rates), "median": statistics.median(rates)}
    console.print(
        f"\nPython reference median systems/s: {statistics.median(before):,.0f} before the Rust run, "
        f"{statistics.median(after):,.0f} after"
    )
    ra = rust["a_analyze_mc2_isolated"]
    ratio = {"median": ra["median"] / py["median"], "min": ra["min"] / py["min"]}

    table = Table(title="configuration (i), one thread, systems/s")
    for col in ("implementation", "systems", "mean tasks", "schedulable", "min", "median"):
        table.add_column(col, justify="left" if col == "implementation" else "right")
    table.add_row(
        "Rust mc2::analyze (a)",
        f"{rust['systems']:,}",
        f"{rust['mean_tasks']:.1f}",
        f"{100 * rust['schedulable_share_mc2_isolated']:.2f}%",
        f"{ra['min']:,.0f}",
        f"{ra['median']:,.0f}",
    )
    table.add_row(
        "pure-Python reference",
        f"{len(systems):,}",
        f"{mean_tasks:.1f}",
        f"{100 * schedulable / len(systems):.2f}%",
        f"{py['min']:,.0f}",
        f"{py['median']:,.0f}",
    )
    console.print()
    console.print(table)
    console.print(
        f"Rust / Python: [bold]{ratio['median']:.0f}×[/bold] (medians), {ratio['min']:.0f}× (mins)"
    )
    print(json.dumps({
        "bench": "mc2_analysis_reference",
        "date": date,
        "machine": info,
        "rust": rust,
        "python": {
            "systems": len(systems),
            "mean_tasks": mean_tasks,
            "repeats_before_and_after_rust": args.repeats,
            "schedulable_share_mc2_isolated": schedulable / len(systems),
            "min": round(py["min"]),
            "median": round(py["median"]),
            "median_before_rust": round(statistics.median(before)),
            "median_after_rust": round(statistics.median(after)),
            "cross_checked_systems": checked,
        },
        "ratio_rust_over_python": ratio,
    }))


if __name__ == "__main__":
    main()
