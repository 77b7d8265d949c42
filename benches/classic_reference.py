#!/usr/bin/env python3
"""In-run peer for the classic-test benchmark (issue 12).

Runs `cargo bench -p criticore --bench classic_analysis` (100,000 systems per
test from `generate::classic`) and, in the same run, the pure-Python second
method of tests/oracles/classic_reference.py (the reference the equality tests in
tests/analysis/test_analyze_classic.py check the engine against, bound for bound) on
systems of the same distributions (Python's own stream, so different
systems), and prints systems per second for both and their ratio: the machine
is shared and noisy, so the ratio from one run is the number to compare.

Usage (from the repository root):
    .venv/bin/python benches/classic_reference.py [--python-systems N] [--rust-systems N]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from oracles import classic_reference as ref  # noqa: E402

SCHEDULERS = ["pfp", "pedf", "gfp", "servers"]


def python_rate(scheduler: str, n: int) -> tuple[float, float]:
    rng = random.Random(2026)
    systems = [ref.random_system(rng, scheduler) for _ in range(n)]
    rates = []
    for _ in range(3):
        start = time.perf_counter()
        for s in systems:
            ref.analyze(s, scheduler)
        rates.append(n / (time.perf_counter() - start))
    return min(rates), statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python-systems", type=int, default=20_000)
    ap.add_argument("--rust-systems", type=int, default=100_000)
    args = ap.parse_args()
    env = {**os.environ, "CRITICORE_BENCH_SYSTEMS": str(args.rust_systems)}
    out = subprocess.run(["cargo", "bench", "-q", "-p", "criticore", "--bench", "classic_analysis"], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    print(out.rstrip())
    rust = json.loads(out.strip().splitlines()[-1])
    result = {}
    for s in SCHEDULERS:
        pmin, pmed = python_rate(s, args.python_systems)
        ratio = rust[s]["median"] / pmed
        print(f"{s:8} Rust median {rust[s]['median']:>10,.0f} systems/s, Python median {pmed:>8,.0f} systems/s ({args.python_systems} systems, min {pmin:,.0f}): {ratio:,.0f}x")
        result[s] = {"rust_median": rust[s]["median"], "python_min": round(pmin), "python_median": round(pmed), "ratio": round(ratio, 1)}
    print(json.dumps({"rust": rust, "python_systems": args.python_systems, "compare": result}))


if __name__ == "__main__":
    main()
