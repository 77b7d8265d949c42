#!/usr/bin/env python3
"""Simulator throughput, criticore vs SimSo 0.8.5, in one run (issue 3).

1. Runs the Rust benchmark `cargo bench -p criticore --bench sim_throughput`
   (or a built bench binary given with --rust-binary): G-EDF, 4 cores, 20
   periodic tasks, U = 3.0, periods 10-100 ms, 20 s simulated, jobs/s in three
   modes (summary only, with job records, with segments + Perfetto JSON). It
   writes its systems as TOML files.
2. Runs SimSo 0.8.5 (global EDF, `simso.schedulers.EDF`, zero overheads) on
   the same TOML systems for the same 20 s, in the benchmark-only environment
   `.venv-simso` through `benches/simso_runner.py`; jobs/s = jobs finished /
   wall time of model construction + run (REPEATS repeats, each over all
   systems; min / median). SimSo runs twice: as shipped (its EDF prints a line
   per decision, sent to /dev/null) and with that print removed; the ratio
   uses the faster, print-removed SimSo.
3. Checks that both simulators produced the same schedule: every job's finish
   time from SimSo equals criticore's (`criticore.simulation.simulate(...,
   jobs=True)` on the same files).
4. Prints the ratio criticore / SimSo (medians, and min / max for the
   pessimistic side) and checks the targets: criticore summary-only at least
   5,000,000 jobs/s and at least 1000x SimSo.

Usage (from the repository root, after `make build` and with .venv-simso;
`make bench-simso` does all of it):
    .venv/bin/python benches/sim_vs_simso.py [--simso-systems 5] [--simso-repeats 3]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from criticore.simulation import simulate

ROOT = Path(__file__).resolve().parent.parent
SIMSO_PY = ROOT / ".venv-simso" / "bin" / "python"
RUNNER = ROOT / "benches" / "simso_runner.py"
TARGET_JOBS_PER_S = 5_000_000
TARGET_RATIO = 1000


def us(text: str) -> int:
    assert text.endswith("us"), text
    return int(text[:-2])


def simso_system(path: Path, horizon_ns: int) -> dict:
    doc = tomllib.loads(path.read_text())
    tasks = []
    for t in doc["task"]:
        period = us(t["period"])
        tasks.append({"period_us": period, "wcet_us": us(t["pet"]), "deadline_us": us(t.get("deadline", t["period"]))})
    return {"name": path.stem, "scheduler": "gedf", "cores": doc["platform"]["cores"], "horizon_ns": horizon_ns, "tasks": tasks}


def run_rust(binary: str | None) -> dict:
    if binary:
        cmd = [binary]
    else:
        cmd = ["cargo", "bench", "--quiet", "-p", "criticore", "--bench", "sim_throughput"]
    print("$", " ".join(cmd), flush=True)
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    lines = out.strip().splitlines()
    for line in lines[:-1]:
        print("  " + line)
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rust-binary", help="a built sim_throughput bench binary (default: cargo bench)")
    ap.add_argument("--simso-systems", type=int, default=5, help="how many of the bench systems SimSo runs (default all 5)")
    ap.add_argument("--simso-repeats", type=int, default=3, help="SimSo repeats over those systems (default 3)")
    args = ap.parse_args()
    if not SIMSO_PY.exists():
        sys.exit(f"{SIMSO_PY} is missing: run `make bench-simso` (it creates the SimSo environment)")
    started = datetime.datetime.now(datetime.timezone.utc)

    rust = run_rust(args.rust_binary)
    horizon_ns = rust["duration_ns"]
    files = [Path(f) for f in rust["files"]][: args.simso_systems]
    systems = [simso_system(f, horizon_ns) for f in files]

    def run_simso(no_print: bool) -> tuple[dict, list[float]]:
        with tempfile.TemporaryDirectory(prefix="sim-vs-simso-") as tmp:
            src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
            src.write_text(json.dumps({"systems": systems, "repeats": args.simso_repeats, "finish_times": True, "no_print": no_print}))
            print(f"$ {SIMSO_PY.relative_to(ROOT)} benches/simso_runner.py  # {len(systems)} systems x {args.simso_repeats} repeats, "
                  f"{horizon_ns / 1e9:.0f} s simulated each, EDF's print {'removed' if no_print else 'to /dev/null'}", flush=True)
            subprocess.run([str(SIMSO_PY), str(RUNNER), str(src), str(dst)], check=True)
            out = json.loads(dst.read_text())
        jobs = sum(r["jobs_finished"] for r in out["results"])
        # jobs/s per repeat, over all its systems.
        return out, [jobs / sum(r["seconds"][k] for r in out["results"]) for k in range(args.simso_repeats)]

    simso, per_repeat_shipped = run_simso(no_print=False)
    simso_quiet, per_repeat = run_simso(no_print=True)
    assert [r["finish"] for r in simso_quiet["results"]] == [r["finish"] for r in simso["results"]]
    results = simso["results"]
    simso_jobs = sum(r["jobs_finished"] for r in results)
    # The faster SimSo configuration (print removed) is the one the ratio uses.
    simso_rate = {"min": min(per_repeat), "median": statistics.median(per_repeat), "max": max(per_repeat)}
    shipped_rate = {"min": min(per_repeat_shipped), "median": statistics.median(per_repeat_shipped), "max": max(per_repeat_shipped)}

    # Same schedule: every finish time equal.
    compared = mismatched = 0
    first = []
    for f, r in zip(files, results):
        run = simulate(f, horizon_ns, scheduler="gedf", jobs=True)
        cols = run.jobs
        mine = {(int(t), int(j)): int(x) for t, j, x in zip(cols["task"], cols["job"], cols["finish_ns"])}
        theirs = {(t, j): x for t, j, x in r["finish"]}
        for key in set(mine) | set(theirs):
            compared += 1
            if mine.get(key) != theirs.get(key):
                mismatched += 1
                if len(first) < 5:
                    first.append({"system": f.stem, "task": key[0], "job": key[1], "criticore_ns": mine.get(key), "simso_ns": theirs.get(key)})

    summary = rust["summary"]
    ratio_median = summary["median"] / simso_rate["median"]
    ratio_pessimistic = summary["min"] / simso_rate["max"]
    print()
    print(f"SimSo {simso['simso_version']} (Python {simso['python']}) G-EDF: {simso_jobs} jobs in {len(systems)} systems; "
          f"jobs/s per repeat {', '.join(f'{x:,.0f}' for x in per_repeat_shipped)} as shipped (print to /dev/null), "
          f"{', '.join(f'{x:,.0f}' for x in per_repeat)} with EDF's print removed (used for the ratio)")
    print(f"same schedule: {compared} jobs compared, {mismatched} finish times differ" + (f"; first: {first}" if first else ""))
    print(f"criticore G-EDF jobs/s (min / median): summary only {summary['min']:,.0f} / {summary['median']:,.0f}; "
          f"with job records {rust['jobs']['min']:,.0f} / {rust['jobs']['median']:,.0f}; "
          f"with trace {rust['trace']['min']:,.0f} / {rust['trace']['median']:,.0f}")
    print(f"criticore / SimSo: {ratio_median:,.0f}x (medians); {ratio_pessimistic:,.0f}x (criticore min / SimSo max); "
          f"with job records {rust['jobs']['median'] / simso_rate['median']:,.0f}x; "
          f"with trace {rust['trace']['median'] / simso_rate['median']:,.0f}x; "
          f"against SimSo as shipped {summary['median'] / shipped_rate['median']:,.0f}x (medians)")
    met_rate = summary["min"] >= TARGET_JOBS_PER_S
    met_ratio = ratio_pessimistic >= TARGET_RATIO
    print(f"targets: >= {TARGET_JOBS_PER_S:,} jobs/s summary-only: {'met' if met_rate else 'NOT met'}; "
          f">= {TARGET_RATIO}x SimSo: {'met' if met_ratio else 'NOT met'}; same schedule: {'yes' if mismatched == 0 else 'NO'}")
    print(json.dumps({
        "bench": "sim_vs_simso",
        "date": started.isoformat(timespec="seconds"),
        "machine": {"nproc": os.cpu_count(), "platform": platform.platform()},
        "simso_version": simso["simso_version"],
        "simso_python": simso["python"],
        "simso_systems": len(systems),
        "simso_repeats": args.simso_repeats,
        "simso_jobs": simso_jobs,
        "simso_jobs_per_s": {k: round(v) for k, v in simso_rate.items()},
        "simso_jobs_per_s_as_shipped": {k: round(v) for k, v in shipped_rate.items()},
        "ratio_median_vs_shipped": round(summary["median"] / shipped_rate["median"]),
        "criticore": {k: rust[k] for k in ("summary", "jobs", "trace", "jobs_per_system", "utilizations", "deadline_misses", "events")},
        "ratio_median": round(ratio_median),
        "ratio_pessimistic": round(ratio_pessimistic),
        "same_schedule": {"jobs": compared, "mismatched": mismatched},
    }))
    sys.exit(0 if mismatched == 0 else 1)


if __name__ == "__main__":
    main()
