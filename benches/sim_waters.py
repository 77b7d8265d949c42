#!/usr/bin/env python3
"""Simulator throughput on WATERS 2017 with its label accesses (issue 27,
Build 3): simulated seconds per wall second of the imported challenge model
at ``--scale 0.7`` (21 tasks, 1,250 runnables, their label accesses to the
LRAMs and the GRAM through the crossbar: the fluid crossbar model,
``sim/memory/crossbar.rs``), against the same file run CPU-only
(``memory=False``: the runnables at their PETs, no accesses), alternating in
the same run so a noisy host moves both sides alike.

Usage (from the repository root, after ``make build``):
    .venv/bin/python benches/sim_waters.py [--model PATH] [--seconds 2] [--passes 5]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import ROOT, machine  # noqa: E402

import criticore  # noqa: E402

MODEL = ROOT.parent / "shared" / "data" / "waters2017-challenge.amxmi.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--seconds", type=int, default=2, help="simulated seconds per pass")
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    if not args.model.is_file():
        sys.exit(f"no model at {args.model}")
    system = criticore.import_amalthea(args.model, scale="0.7").system
    duration_ns = args.seconds * 1_000_000_000
    rates: dict[str, list[float]] = {"crossbar": [], "cpu_only": []}
    jobs: dict[str, int] = {}
    for _ in range(args.passes):
        for side, memory in (("crossbar", True), ("cpu_only", False)):
            start = time.perf_counter()
            run = criticore.simulate(system, duration_ns, memory=memory)
            wall = time.perf_counter() - start
            rates[side].append(args.seconds / wall)
            jobs[side] = run.completed
    summary = {k: {"min": min(v), "median": statistics.median(v)} for k, v in rates.items()}
    ratio = summary["crossbar"]["median"] / summary["cpu_only"]["median"]
    for k, s in summary.items():
        print(f"{k:9s} simulated s per wall s: min {s['min']:.2f}  median {s['median']:.2f}  ({jobs[k]} jobs per pass)")
    print(f"crossbar / CPU-only (medians): {ratio:.2f}")
    print(json.dumps({"model": str(args.model), "seconds": args.seconds, "passes": args.passes, "simulated_s_per_wall_s": summary, "jobs_per_pass": jobs, "crossbar_over_cpu_only": ratio, "machine": machine()}))


if __name__ == "__main__":
    main()
