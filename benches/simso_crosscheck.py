#!/usr/bin/env python3
"""Cross-check of the criticore simulator against SimSo 0.8.5 (issue 3).

For SYSTEMS random task systems (seeded) under global EDF and SYSTEMS under
partitioned rate-monotonic, all with zero overheads, every job that finishes
within the horizon must finish at the same nanosecond in both simulators.

criticore runs here, through the Python package of the main environment
(`criticore.simulation.simulate` on a TOML file per system, as a user would);
SimSo runs in the benchmark-only environment `.venv-simso` through
`benches/simso_runner.py` as a subprocess (SimSo is no dependency of
criticore). `make bench-simso` creates that environment and runs this script.

Systems (Python's `random.Random(seed)`):
- periods drawn log-uniformly in [2 ms, 100 ms] and rounded to whole µs,
  distinct within a system; WCETs whole µs (>= 1 µs); UUniFast-discard
  utilizations (each <= 1); tasks in random order; offset 0;
- deadlines implicit, except in every other system (odd seeds), where they
  are constrained: D uniform in [C + (T - C)/2, T] (whole µs);
- G-EDF: 4 cores, 8-24 tasks, total utilization uniform in [1.5, 3.5]; such
  systems may miss deadlines (G-EDF is not optimal), which is included (jobs
  of a task run one after the other in both simulators);
- P-RM: 4 cores, 8-24 tasks, total utilization uniform in [1.0, 2.8],
  partitioned first-fit in task order with the Liu & Layland bound per core
  (a system that does not fit is drawn again); priorities by period in both
  simulators (SimSo's RM_mono and criticore's pfp without explicit priorities
  are both rate-monotonic; periods are distinct, so there are no priority ties).

Equal absolute deadlines are where two correct G-EDF simulators may
legitimately differ, and whole-µs periods alone do not avoid them: with ~16
tasks and ~2,000 jobs per second, two jobs of different tasks share a deadline
in about two thirds of such systems (birthday effect). The two simulators then
differ for two reasons, both found by this script (run it with --allow-ties):
  1. SimSo keeps absolute deadlines as float milliseconds,
     `now_ms() + deadline` with now_ms() = cycles / cycles_per_ms, so two equal
     deadlines reached from different releases can differ by one ulp
     (695.232 + 13.632 = 708.8639999999999 but 697.788 + 11.076 = 708.864):
     SimSo then orders a tie by rounding error;
  2. when a job must preempt one of several running jobs with the same
     (latest) deadline, SimSo's EDF picks the processor by its own order
     (the processor running the scheduler first, then list order); criticore
     preempts the one with the larger task index.
So by default G-EDF systems are drawn without ties: periods are distinct
primes (in µs), so implicit deadlines of two tasks coincide first at
T_i·T_j >= 2003·2011 µs > 4 s, beyond the horizon; constrained deadlines are
drawn again (same seeded stream; the number of draws is recorded) until no
two jobs of different tasks released before the horizon share an absolute
deadline, which the script checks for every system. --allow-ties draws any
whole-µs periods and keeps the first deadlines, and reports mismatches in
systems with ties separately. P-RM needs no such rule (its priorities are the
distinct periods).

Usage (from the repository root, after `make build`):
    .venv/bin/python benches/simso_crosscheck.py [--systems 200] [--horizon-ms 1000]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from criticore.simulation import simulate

ROOT = Path(__file__).resolve().parent.parent
SIMSO_PY = ROOT / ".venv-simso" / "bin" / "python"
RUNNER = ROOT / "benches" / "simso_runner.py"
CORES = 4
US = 1000  # ns


def uunifast_discard(rng: random.Random, n: int, total: float) -> list[float]:
    while True:
        us, left = [], total
        for i in range(1, n):
            nxt = left * rng.random() ** (1.0 / (n - i))
            us.append(left - nxt)
            left = nxt
        us.append(left)
        if all(u <= 1.0 for u in us):
            return us


def is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


def draw_tasks(rng: random.Random, n: int, total: float, constrained: bool, prime_periods: bool) -> list[dict]:
    us = uunifast_discard(rng, n, total)
    periods: set[int] = set()
    while len(periods) < n:
        p = round(math.exp(rng.uniform(math.log(2_000), math.log(100_000))))
        if not prime_periods or is_prime(p):
            periods.add(p)
    tasks = []
    for u, period in zip(us, rng.sample(sorted(periods), n)):
        wcet = min(period, max(1, round(u * period)))
        tasks.append({"period_us": period, "wcet_us": wcet, "deadline_us": period})
    return tasks


def draw_deadlines(rng: random.Random, tasks: list[dict]) -> None:
    """Constrained deadlines, uniform in [C + (T - C)/2, T] (whole µs)."""
    for t in tasks:
        period, wcet = t["period_us"], t["wcet_us"]
        t["deadline_us"] = rng.randint(wcet + (period - wcet + 1) // 2, period)


def gedf_system(seed: int, horizon_ns: int, allow_ties: bool = False) -> dict:
    rng = random.Random(f"gedf-{seed}")
    n = rng.randint(8, 24)
    total = rng.uniform(1.5, 3.5)
    constrained = seed % 2 == 1
    tasks = draw_tasks(rng, n, total, constrained, prime_periods=not allow_ties)
    draws = 0
    while True:
        draws += 1
        if constrained:
            draw_deadlines(rng, tasks)
        system = {"name": f"gedf-{seed}", "scheduler": "gedf", "cores": CORES, "horizon_ns": horizon_ns, "tasks": tasks}
        if allow_ties or coincident_deadlines(system) == 0:
            system["draws"] = draws
            return system
        assert constrained, "distinct prime periods give no coincident implicit deadlines before T_i·T_j >= 4 s"


def ll_bound(k: int) -> float:
    return k * (2 ** (1 / k) - 1)


def prm_system(seed: int, horizon_ns: int) -> dict:
    rng = random.Random(f"prm-{seed}")
    while True:
        n = rng.randint(8, 24)
        total = rng.uniform(1.0, 2.8)
        tasks = draw_tasks(rng, n, total, constrained=False, prime_periods=False)
        if seed % 2 == 1:
            draw_deadlines(rng, tasks)
        load = [[] for _ in range(CORES)]
        ok = True
        for t in tasks:
            u = t["wcet_us"] / t["period_us"]
            for c in range(CORES):
                if sum(load[c]) + u <= ll_bound(len(load[c]) + 1):
                    load[c].append(u)
                    t["core"] = c
                    break
            else:
                ok = False
                break
        if ok:
            return {"name": f"prm-{seed}", "scheduler": "prm", "cores": CORES, "horizon_ns": horizon_ns, "tasks": tasks}


def to_toml(system: dict) -> str:
    lines = ["[platform]", f"cores = {system['cores']}"]
    for i, t in enumerate(system["tasks"]):
        lines += ["", "[[task]]", f'name = "T{i}"']
        if "core" in t:
            lines.append(f"core = {t['core']}")
        lines.append(f'period = "{t["period_us"]}us"')
        if t["deadline_us"] != t["period_us"]:
            lines.append(f'deadline = "{t["deadline_us"]}us"')
        lines.append(f'pet = "{t["wcet_us"]}us"')
    return "\n".join(lines) + "\n"


def coincident_deadlines(system: dict) -> int:
    """Pairs of jobs of different tasks released before the horizon with the same absolute deadline."""
    count = collections.Counter()
    for t in system["tasks"]:
        r = 0
        while r * US < system["horizon_ns"]:
            count[r + t["deadline_us"]] += 1
            r += t["period_us"]
    return sum(k * (k - 1) // 2 for k in count.values() if k > 1)


def run_criticore(system: dict, directory: Path) -> tuple[dict[tuple[int, int], int], dict]:
    path = directory / f"{system['name']}.toml"
    path.write_text(to_toml(system))
    run = simulate(path, system["horizon_ns"], scheduler="gedf" if system["scheduler"] == "gedf" else "pfp", jobs=True)
    cols = run.jobs
    finish = {(int(t), int(j)): int(f) for t, j, f in zip(cols["task"], cols["job"], cols["finish_ns"])}
    return finish, run.report


def run_simso(systems: list[dict], directory: Path, tag: str) -> subprocess.Popen:
    src, dst = directory / f"simso-in-{tag}.json", directory / f"simso-out-{tag}.json"
    src.write_text(json.dumps({"systems": systems, "repeats": 1, "finish_times": True}))
    proc = subprocess.Popen([str(SIMSO_PY), str(RUNNER), str(src), str(dst)])
    proc.dst = dst  # type: ignore[attr-defined]
    return proc


def compare(system: dict, mine: dict[tuple[int, int], int], theirs: dict[tuple[int, int], int]) -> dict:
    keys = set(mine) | set(theirs)
    diffs = []
    for key in sorted(keys):
        a, b = mine.get(key), theirs.get(key)
        if a is None or b is None or abs(a - b) > 1:
            diffs.append({"task": key[0], "job": key[1], "criticore_ns": a, "simso_ns": b})
    exact = sum(1 for k in keys if mine.get(k) is not None and mine.get(k) == theirs.get(k))
    return {"jobs": len(keys), "exact": exact, "mismatches": diffs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", type=int, default=200, help="systems per scheduler (default 200)")
    ap.add_argument("--horizon-ms", type=int, default=1000, help="simulated time per system (default 1000 ms)")
    ap.add_argument("--allow-ties", action="store_true", help="keep G-EDF systems with coincident deadlines")
    ap.add_argument("--keep", type=Path, help="keep the TOML files and SimSo JSON in this directory")
    args = ap.parse_args()
    if not SIMSO_PY.exists():
        sys.exit(f"{SIMSO_PY} is missing: run `make bench-simso` (it creates the SimSo environment)")
    horizon_ns = args.horizon_ms * 1_000_000
    started = time.perf_counter()

    gedf = [gedf_system(s, horizon_ns, args.allow_ties) for s in range(args.systems)]
    prm = [prm_system(s, horizon_ns) for s in range(args.systems)]

    tmp = None
    if args.keep:
        directory = args.keep
        directory.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="simso-crosscheck-")
        directory = Path(tmp.name)

    # SimSo (slow) in two subprocesses, one per scheduler, while criticore runs here.
    procs = {"gedf": run_simso(gedf, directory, "gedf"), "prm": run_simso(prm, directory, "prm")}
    ours = {}
    criticore_seconds = 0.0
    for system in gedf + prm:
        t0 = time.perf_counter()
        ours[system["name"]] = run_criticore(system, directory)
        criticore_seconds += time.perf_counter() - t0
    theirs = {}
    simso_seconds = 0.0
    simso_version = None
    for tag, proc in procs.items():
        if proc.wait() != 0:
            sys.exit(f"SimSo runner failed for {tag} (exit {proc.returncode})")
        out = json.loads(proc.dst.read_text())
        simso_version = out["simso_version"]
        for r in out["results"]:
            theirs[r["name"]] = {(t, j): f for t, j, f in r["finish"]}
            simso_seconds += sum(r["seconds"])

    summary = {}
    details = []
    for label, systems in (("gedf", gedf), ("prm", prm)):
        s = {"systems": len(systems), "systems_identical": 0, "jobs": 0, "jobs_exact": 0, "mismatched_jobs": 0,
             "systems_with_misses": 0, "systems_with_coincident_deadlines": 0, "mismatched_systems_with_ties": 0,
             "tasks_mean": sum(len(x["tasks"]) for x in systems) / len(systems),
             "draws": sum(x.get("draws", 1) for x in systems)}
        for system in systems:
            mine, report = ours[system["name"]]
            c = compare(system, mine, theirs[system["name"]])
            ties = coincident_deadlines(system) if label == "gedf" else 0
            misses = report["deadline_misses"]
            s["jobs"] += c["jobs"]
            s["jobs_exact"] += c["exact"]
            s["mismatched_jobs"] += len(c["mismatches"])
            s["systems_identical"] += not c["mismatches"]
            s["systems_with_coincident_deadlines"] += ties > 0
            if misses:
                s["systems_with_misses"] += 1
            if c["mismatches"]:
                s["mismatched_systems_with_ties"] += ties > 0
                details.append({"system": system["name"], "coincident_deadline_pairs": ties, "deadline_misses": misses,
                                "mismatched_jobs": len(c["mismatches"]), "first": c["mismatches"][:3]})
        summary[label] = s

    print(f"criticore vs SimSo {simso_version}: job finish times, {args.systems} systems per scheduler, "
          f"{args.horizon_ms} ms each, zero overheads, G-EDF systems with coincident deadlines "
          f"{'kept' if args.allow_ties else 'drawn again'}")
    for label, s in summary.items():
        print(f"  {label:5} systems identical {s['systems_identical']}/{s['systems']}; jobs compared {s['jobs']}, "
              f"exactly equal {s['jobs_exact']}, mismatched {s['mismatched_jobs']}; mean tasks {s['tasks_mean']:.1f}; "
              f"systems with deadline misses {s['systems_with_misses']}; "
              f"with coincident deadlines {s['systems_with_coincident_deadlines']}")
    for d in details[:20]:
        print("  mismatch:", json.dumps(d))
    print(f"  time: criticore {criticore_seconds:.2f} s (incl. TOML writing), SimSo {simso_seconds:.1f} s, "
          f"wall {time.perf_counter() - started:.1f} s")
    print(json.dumps({"bench": "simso_crosscheck", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                      "simso_version": simso_version, "horizon_ms": args.horizon_ms, "allow_ties": args.allow_ties, "cores": CORES,
                      "summary": summary, "mismatches": details}))
    if tmp:
        tmp.cleanup()
    sys.exit(1 if any(s["mismatched_jobs"] for s in summary.values()) else 0)


if __name__ == "__main__":
    main()
