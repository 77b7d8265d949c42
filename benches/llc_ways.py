#!/usr/bin/env python3
"""LLC-way allocation (optimizer phase 3, issue 5): exact Rust solver vs the
HiGHS MILP reference, time per instance and speed ratio (target ≥ 100×).

Instances: ``tests/oracles/llc_ways_instances.py`` with the i.MX6 shape, m = 4 cores
and N = 16 ways, seeds 0..count-1 (generated before timing, not timed). Before
timing, every instance is solved both ways and the answers must agree
(feasibility, and the objective to 1e-9). Then each measurement makes
``--passes`` passes over all instances, one thread; time per instance is the
pass time / count, reported as min and median over the passes:

- exact, dict → dict: ``criticore.optimization.milp.solve_exact(problem)`` (tables handed to
  Rust as Python objects, answer parsed back to a dict): the Python API;
- exact, JSON text: ``criticore._core.solve_llc_ways(text)`` with the problem
  as JSON text made beforehand (parsed by Python's json inside the call);
- HiGHS, dict → dict: ``criticore.optimization.milp.solve_milp(problem)``: builds the
  HighsLp from the tables, solves, reads the allocation back;
- HiGHS, model prebuilt: ``criticore.optimization.milp.run_model(lp)`` on HighsLp objects
  built beforehand (a new Highs instance, options, passModel, run, solution).

The headline ratio is HiGHS dict → dict over exact dict → dict (the same work
from the same input); the second ratio compares HiGHS without model building
against the exact solver's Python API, which still converts the tables.

Usage (from the repository root, after ``make build``):
    .venv/bin/python benches/llc_ways.py [--count 500] [--passes 5]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import highspy
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from oracles import llc_ways_instances as gen  # noqa: E402
from machine import machine as base_machine  # noqa: E402  (benches/machine.py)
from criticore import _core  # noqa: E402
from criticore.optimization.milp import build_model, run_model, solve_exact, solve_milp  # noqa: E402

console = Console(highlight=False, width=110)


def machine() -> dict:
    return {**base_machine(), "highspy": highspy.Highs().version()}


def timed(fn, items, passes: int) -> list[float]:
    """Seconds per item for each pass."""
    out = []
    for _ in range(passes):
        start = time.perf_counter()
        for item in items:
            fn(item)
        out.append((time.perf_counter() - start) / len(items))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="instances (default 500)")
    parser.add_argument("--passes", type=int, default=5, help="passes per measurement (default 5)")
    args = parser.parse_args()

    info = machine()
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    console.print(f"{date}  nproc={info['nproc']}  cpu={info['cpu']}  python={info['python']}  HiGHS {info['highspy']}  commit {info['commit']}")

    instances = [gen.instance(seed, m=4, n=16) for seed in range(args.count)]
    kinds = Counter(p["_kind"] for p in instances)
    problems = [gen.strip(p) for p in instances]
    texts = [json.dumps(p) for p in problems]
    models = [build_model(p)[0] for p in problems]

    feasible = 0
    for seed, p in enumerate(problems):
        exact, milp = solve_exact(p), solve_milp(p)
        if (exact is None) != (milp is None) or (exact and abs(exact["objective"] - milp["objective"]) > 1e-9):
            sys.exit(f"seed {seed}: exact {exact} and HiGHS {milp} disagree")
        feasible += exact is not None
    console.print(f"{args.count} instances (m = 4, N = 16; {kinds['random']} random, {kinds['tight']} near the "
                  f"Level-C boundary), {feasible} feasible: exact and HiGHS agree on all")

    runs = {
        "exact, dict → dict": timed(solve_exact, problems, args.passes),
        "exact, JSON text": timed(_core.solve_llc_ways, texts, args.passes),
        "HiGHS, dict → dict": timed(solve_milp, problems, args.passes),
        "HiGHS, model prebuilt": timed(run_model, models, args.passes),
    }
    stats = {k: {"min_us": min(v) * 1e6, "median_us": statistics.median(v) * 1e6} for k, v in runs.items()}
    ratio_e2e = stats["HiGHS, dict → dict"]["median_us"] / stats["exact, dict → dict"]["median_us"]
    ratio_solve = stats["HiGHS, model prebuilt"]["median_us"] / stats["exact, dict → dict"]["median_us"]

    table = Table(title=f"Time per instance over {args.count} instances, {args.passes} passes")
    table.add_column("measurement")
    table.add_column("min µs", justify="right")
    table.add_column("median µs", justify="right")
    for k, v in stats.items():
        table.add_row(k, f"{v['min_us']:,.1f}", f"{v['median_us']:,.1f}")
    console.print(table)
    console.print(f"ratio (medians) HiGHS dict → dict / exact dict → dict: {ratio_e2e:,.0f}×")
    console.print(f"ratio (medians) HiGHS model prebuilt / exact dict → dict: {ratio_solve:,.0f}×")
    print(json.dumps({
        "date": date,
        "machine": info,
        "count": args.count,
        "passes": args.passes,
        "feasible": feasible,
        "kinds": dict(kinds),
        "per_instance": stats,
        "ratio_end_to_end": ratio_e2e,
        "ratio_highs_prebuilt": ratio_solve,
    }))


if __name__ == "__main__":
    main()
