#!/usr/bin/env python3
"""MRS on real processes (mrs-multi-resource-server §III, issue 24): the share
of core 1 each server's load gets, to the percent. The runtime tests
(tests/regulate/test_regulate_mrs.py) check the mechanism on any host; how much of its
held time a load actually runs depends on what else runs on the core, so the
shares are measured here, with the load average beside them.

Two servers on core 1, period 20 ms: A (high) budget 5 ms, B (low) 10 ms, each
one unpaced `criticore load --buffer 64MiB` (the tests' system). Scenarios:

- ``idle``: no memory budget. Rules 1-3, 6: A 5 ms then B 10 ms then nobody,
  so shares 25 % and 50 % (a 1 ms interval in which the server changes counts
  for both, so up to 2/20 more);
- ``memory``: A's memory budget 5,000 lines per period (rule 5): A runs until
  it spent them (well under 1 ms), B still 50 %.

Per run: ``criticore regulate FILE --duration 4s --log periods.parquet --json``;
a load's share = the 1 ms intervals of its own log, after its first second, in
which it moved any line; the regulator's median hold per period (period length
less the time stopped) and median period-start lateness from its log.

    .venv/bin/python benches/mrs_shares.py [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
# The tests' system and log readers.
sys.path[:0] = [str(ROOT / "tests" / "regulate"), str(ROOT / "tests")]
from test_regulate_mrs import SYSTEM, held_ns, period_log, running_share  # noqa: E402

MEMORY = {"idle": "", "memory": "memory_budget = 5000"}


def one(scenario: str, tmp: Path) -> dict:
    f = tmp / "mrs.toml"
    f.write_text(SYSTEM.format(memory_a=MEMORY[scenario], tmp=tmp))
    load_before = os.getloadavg()[0]
    r = subprocess.run(
        [sys.executable, "-m", "criticore", "regulate", str(f), "--duration", "4s", "--log", str(tmp / "periods.parquet"), "--json"],
        capture_output=True, text=True, timeout=120,
    )
    if r.returncode != 0:
        raise SystemExit(f"criticore regulate failed: {r.stderr.strip()}")
    json.loads(r.stdout)
    p = period_log(tmp)
    return {
        "scenario": scenario,
        "loadavg": load_before,
        "share_a": running_share(tmp / "a.parquet"),
        "share_b": running_share(tmp / "b.parquet"),
        "held_a_ms": float(np.median(held_ns(p, 0))) / 1e6,
        "held_b_ms": float(np.median(held_ns(p, 1))) / 1e6,
        "lateness_us": float(np.median(p["lateness_ns"])) / 1e3,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print("scenario  rep  load-avg  share A  share B  held A ms  held B ms  lateness µs (medians)")
    for rep in range(args.reps):
        for scenario in MEMORY:
            with tempfile.TemporaryDirectory(prefix="criticore-mrs-bench-") as d:
                m = one(scenario, Path(d))
            print(f"{scenario:8}  {rep:3}  {m['loadavg']:8.2f}  {m['share_a']:7.3f}  {m['share_b']:7.3f}  {m['held_a_ms']:9.3f}  {m['held_b_ms']:9.3f}  {m['lateness_us']:11.0f}")


if __name__ == "__main__":
    main()
