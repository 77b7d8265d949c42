#!/usr/bin/env python3
"""Global-EDF simulator throughput at scale: criticore vs SchedCAT (and SimSo), one run (issue 13).

Every point of every sweep runs the SAME generated task systems through
  - criticore, summary only: `criticore._core.simulate(.., SimOptions(.., scheduler="gedf"))`,
    timed with perf_counter around the call (TOML parse included; the parse
    alone, timed with `_core.check` (parse, validation, a small outline), is
    reported apart);
  - SchedCAT's native G-EDF simulator (GlobalScheduler<EarliestDeadlineFirst>,
    PeriodicJobSequence), through our driver benches/schedcat_peer/driver.cpp
    built by benches/schedcat_peer/build.sh from a SchedCAT checkout outside
    this repository; it times the simulation alone and with construction;
  - SimSo 0.8.5 (.venv-simso, benches/simso_runner.py) on small systems only,
    over a horizon cut to about --simso-jobs jobs.
jobs/s = jobs finished by the horizon / wall seconds. A repeat runs every
system of a point (each `passes` times when runs are short); min and median
over --repeats repeats. criticore's engine and SchedCAT take turns repeat by
repeat (the one going first alternates), and the paired ratio is taken
within a turn: on a shared host the load drifts. Completed jobs and
deadline misses of criticore and SchedCAT must agree: same model (jobs of a task run in order, a late job keeps
its deadline), no deadline ties (distinct prime periods), same horizon rule
(a job finishing exactly at the horizon counts).

Sweeps (--sweeps, default a,b,c):
  a  the systems of benches/sim_throughput.rs (4 cores, 20 tasks, U = 3.0,
     prime periods 10-100 ms in µs, 20 s), read from target/sim_throughput/
     (the bench is run once to write them if they are missing);
  b  n in {20, 100, 1000, 5000, 20000, 50000} tasks on 16 cores at U/m = 1.02
     and 0.9, horizon for about --target-jobs jobs;
  c  U/m in {0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5}, 1000 tasks, 16 cores.
Generated systems: UUniFast-discard utilizations (on the slack 1 - u when
U > n/2, where plain discard never succeeds), distinct prime periods in whole
ns uniform in [10 ms, 100 ms], WCET = round(u·T) ns, implicit deadlines.
A sweep is a function returning Points; add one to SWEEPS (a Point may bring
its own criticore timing function, e.g. a batch API).

Usage, from the repository root after `make build` (SimSo: `make bench-simso`'s
.venv-simso recipe):
    .venv/bin/python benches/sim_scale.py [--quick] [--sweeps a,b,c,d] [--no-simso]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))  # this checkout's build, not another one's
from criticore import _core  # noqa: E402
from criticore.simulation import SimOptions  # noqa: E402

SIMSO_PY = ROOT / ".venv-simso" / "bin" / "python"
SIMSO_RUNNER = ROOT / "benches" / "simso_runner.py"
BUILD_SH = ROOT / "benches" / "schedcat_peer" / "build.sh"
BENCH_DIR = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "sim_throughput"
MIN_SAMPLE_S = 0.2  # a repeat lasts at least this long (short runs pass several times)


@dataclass
class System:
    name: str
    cores: int
    horizon_ns: int
    tasks: list[tuple[int, int, int]]  # (wcet, period, deadline) ns
    toml: bytes = b""

    def __post_init__(self) -> None:
        if not self.toml:
            lines = [f"[platform]\ncores = {self.cores}\n"]
            for i, (c, p, d) in enumerate(self.tasks):
                lines.append(f'[[task]]\nname = "T{i}"\nperiod = "{p}ns"\npet = "{c}ns"\n' + ("" if d == p else f'deadline = "{d}ns"\n'))
            self.toml = "\n".join(lines).encode()

    @property
    def utilization(self) -> float:
        return sum(c / p for c, p, _ in self.tasks)


def time_criticore_each(systems: list[System], passes: int) -> tuple[float, list[dict]]:
    """Wall seconds of `passes` summary-only simulations of every system, and each system's report."""
    reports = []
    total = 0.0
    for s in systems:
        for _ in range(passes):
            start = time.perf_counter()
            report = _core.simulate(s.toml, s.name, SimOptions(s.horizon_ns, scheduler="gedf", memory=False))[0]
            total += time.perf_counter() - start
        reports.append(json.loads(report))
    return total, reports


@dataclass
class Point:
    sweep: str
    label: str
    params: dict
    systems: list[System]
    criticore: Callable[[list[System], int], tuple[float, list[dict]]] = time_criticore_each
    simso: bool = False  # SimSo runs these systems too
    result: dict = field(default_factory=dict)


# ---------------------------------------------------------------- generation

def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.2e9."""
    if n < 2:
        return False
    for p in (2, 3, 5, 7):
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in (2, 3, 5, 7):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def uunifast_discard(rng: random.Random, n: int, total: float) -> list[float]:
    """n values in (0, 1] summing to total, uniform over that set (UUniFast-discard)."""
    flip = total > n / 2  # draw the slacks 1 - u instead: discard stays rare
    want = n - total if flip else total
    while True:
        us, left = [], want
        for i in range(1, n):
            nxt = left * rng.random() ** (1.0 / (n - i))
            us.append(left - nxt)
            left = nxt
        us.append(left)
        if all(u <= 1.0 for u in us):
            return [1.0 - u for u in us] if flip else us


def generate(seed: int, n: int, cores: int, load: float, target_jobs: int, max_horizon_s: float) -> System:
    rng = random.Random(f"sim_scale {seed} {n} {cores} {load}")
    us = uunifast_discard(rng, n, load * cores)
    periods: list[int] = []
    seen: set[int] = set()
    while len(periods) < n:
        p = rng.randrange(10_000_001, 100_000_000, 2)
        if p not in seen and is_prime(p):
            periods.append(p)
            seen.add(p)
    tasks = [(min(max(round(u * p), 1), p), p, p) for u, p in zip(us, periods)]
    releases_per_s = sum(1e9 / p for _, p, _ in tasks)
    # Overloaded: about 1/load of the releases finish.
    horizon_s = min(max_horizon_s, target_jobs * max(1.0, load) / releases_per_s)
    horizon_ns = max(round(horizon_s * 1000), 100) * 1_000_000  # whole ms, at least 100 ms
    return System(f"n{n}-m{cores}-u{load}-s{seed}", cores, horizon_ns, tasks)


def bench_systems(horizon_ns: int = 20_000_000_000) -> list[System]:
    """The systems of benches/sim_throughput.rs, as that bench writes them."""
    files = sorted(BENCH_DIR.glob("gedf-*.toml"))
    if not files:
        cmd = ["cargo", "bench", "--quiet", "-p", "criticore", "--bench", "sim_throughput"]
        print(f"$ SIM_THROUGHPUT_MODES=summary {' '.join(cmd)}  # writes {BENCH_DIR}", flush=True)
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env={**os.environ, "SIM_THROUGHPUT_MODES": "summary"})
        files = sorted(BENCH_DIR.glob("gedf-*.toml"))
    out = []
    for f in files:
        text = f.read_bytes()
        doc = tomllib.loads(text.decode())
        us = lambda v: int(v.removesuffix("us")) * 1000  # noqa: E731 (the bench writes whole µs)
        tasks = [(us(t["pet"]), us(t["period"]), us(t.get("deadline", t["period"]))) for t in doc["task"]]
        out.append(System(f.stem, doc["platform"]["cores"], horizon_ns, tasks, toml=text))
    return out


# ---------------------------------------------------------------- sweeps

def sweep_a(args) -> list[Point]:
    systems = bench_systems()
    return [Point("a", "sim_throughput systems", {"systems": len(systems), "cores": 4, "tasks": 20, "U": 3.0}, systems, simso=True)]


def sweep_b(args) -> list[Point]:
    points = []
    for load in (1.02, 0.9):
        for n in args.tasks:
            s = generate(0, n, 16, load, args.target_jobs, args.max_horizon_s)
            points.append(Point("b", f"n={n} U/m={load}", {"tasks": n, "cores": 16, "load": load}, [s], simso=n <= args.simso_max_tasks))
    return points


def sweep_c(args) -> list[Point]:
    return [
        Point("c", f"U/m={load}", {"tasks": 1000, "cores": 16, "load": load},
              [generate(0, 1000, 16, load, args.target_jobs, args.max_horizon_s)])
        for load in args.loads
    ]


def small_system(rng: random.Random, k: int, horizon_ns: int) -> System:
    """Sweep d: 4 cores, 10 tasks, U = 3.0, periods in whole µs in [10, 100] ms."""
    us = uunifast_discard(rng, 10, 3.0)
    periods = [rng.randrange(10_000, 100_001) * 1000 for _ in us]
    return System(f"small-{k}", 4, horizon_ns, [(min(max(round(u * p), 1), p), p, p) for u, p in zip(us, periods)])


def sweep_d(args) -> list[Point]:
    rng = random.Random("sim_scale batch")
    systems = [small_system(rng, k, 1_000_000_000) for k in range(args.batch_systems)]
    return [Point("d", f"batch of {len(systems):,}", {"systems": len(systems), "cores": 4, "tasks": 10, "U": 3.0, "duration_s": 1}, systems)]


SWEEPS: dict[str, Callable] = {"a": sweep_a, "b": sweep_b, "c": sweep_c, "d": sweep_d}


# ---------------------------------------------------------------- measurement

def rates(jobs: int, seconds: list[float]) -> dict:
    r = sorted(jobs / s for s in seconds)
    return {"min": r[0], "median": statistics.median(r), "max": r[-1]}


def engine_binary() -> Path:
    """criticore's engine-only timer (benches/sim_scale.rs), built like any bench."""
    out = subprocess.run(["cargo", "bench", "-p", "criticore", "--bench", "sim_scale", "--no-run", "--message-format=json"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    exes = [json.loads(line).get("executable") for line in out.splitlines() if '"executable"' in line]
    return Path(next(e for e in exes if e))


def run_engine(binary: Path, systems: list[System], passes: int, repeats: int) -> list[dict]:
    """criticore's engine alone (parsed once, like SchedCAT's simulation-only time): per system, seconds per sample."""
    with tempfile.TemporaryDirectory(prefix="sim-scale-") as d:
        lines = []
        for i, s in enumerate(systems):
            path = Path(d) / f"{i}.toml"
            path.write_bytes(s.toml)
            lines.append(f"{path} {s.horizon_ns}\n")
        manifest = Path(d) / "manifest.txt"
        manifest.write_text("".join(lines))
        out = subprocess.run([str(binary), str(manifest), str(passes), str(repeats)], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def run_schedcat(binary: Path, systems: list[System], runs: int) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="sim-scale-") as f:
        for s in systems:
            f.write(f"{s.cores} {s.horizon_ns} {len(s.tasks)}\n")
            f.write("".join(f"{c} {p} {d}\n" for c, p, d in s.tasks))
        f.flush()
        out = subprocess.run([str(binary), f.name, str(runs)], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def run_simso(systems: list[System], repeats: int, max_jobs: int) -> dict:
    """SimSo over a horizon cut to about max_jobs releases; jobs/s per repeat."""
    specs = []
    for s in systems:
        per_s = sum(1e9 / p for _, p, _ in s.tasks)
        horizon = min(s.horizon_ns, max(1, round(max_jobs / per_s * 1000)) * 1_000_000)
        specs.append({"name": s.name, "scheduler": "gedf", "cores": s.cores, "horizon_ns": horizon,
                      "tasks": [{"wcet_ns": c, "period_ns": p, "deadline_ns": d} for c, p, d in s.tasks]})
    with tempfile.TemporaryDirectory(prefix="sim-scale-simso-") as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps({"systems": specs, "repeats": repeats, "finish_times": False, "no_print": True}))
        subprocess.run([str(SIMSO_PY), str(SIMSO_RUNNER), str(src), str(dst)], check=True)
        out = json.loads(dst.read_text())
    jobs = sum(r["jobs_finished"] for r in out["results"])
    # criticore's count on SimSo's horizon: the same schedule for non-overloaded systems.
    crit = sum(json.loads(_core.simulate(s.toml, s.name, SimOptions(sp["horizon_ns"], scheduler="gedf", memory=False))[0])["completed"]
               for s, sp in zip(systems, specs))
    seconds = [sum(r["seconds"][k] for r in out["results"]) for k in range(repeats)]
    return {"horizon_ns": [sp["horizon_ns"] for sp in specs], "jobs": jobs, "criticore_jobs": crit,
            "jobs_per_s": rates(jobs, seconds), "version": out["simso_version"]}


def take_turns(repeats: int, ours: Callable[[], list[dict]], theirs: Callable[[], list[dict]]) -> tuple[list[list[dict]], list[list[dict]]]:
    """One repeat of criticore's engine, then one of SchedCAT, the one going
    first alternating: on a shared host the load drifts, and both see the same drift."""
    mine, peer = [], []
    for k in range(repeats):
        for side in ("ours", "theirs") if k % 2 == 0 else ("theirs", "ours"):
            if side == "ours":
                mine.append(ours())
            else:
                peer.append(theirs())
    return mine, peer


def measure(p: Point, args, schedcat: Path, engine: Path) -> dict:
    # Untimed first run: counts, and how many passes make a repeat long enough.
    start = time.perf_counter()
    _, reports = p.criticore(p.systems, 1)
    once = time.perf_counter() - start
    passes = max(1, math.ceil(MIN_SAMPLE_S / once))
    jobs = sum(r["completed"] for r in reports)
    crit_s = [p.criticore(p.systems, passes)[0] for _ in range(args.repeats)]
    parse_s = []
    for s in p.systems:
        start = time.perf_counter()
        _core.check(s.toml, s.name)
        parse_s.append(time.perf_counter() - start)

    engs, scs = take_turns(
        args.repeats,
        lambda: run_engine(engine, p.systems, passes, 1),  # a warm-up sample, then one
        lambda: run_schedcat(schedcat, p.systems, 1 + passes),  # the first run is a warm-up
    )
    eng_s = [sum(x["seconds"][0] for x in eng) for eng in engs]
    sim_s = [sum(sum(x["sim_s"][1:]) for x in sc) for sc in scs]
    total_s = [sum(sum(x["total_s"][1:]) for x in sc) for sc in scs]
    sc_jobs = sum(x["jobs"] for x in scs[-1])
    res = {
        "sweep": p.sweep, "label": p.label, **p.params,
        "utilization": [round(s.utilization, 4) for s in p.systems],
        "horizon_ns": [s.horizon_ns for s in p.systems], "passes": passes,
        "jobs": jobs, "schedcat_jobs": sc_jobs,
        "deadline_misses": sum(r["deadline_misses"] for r in reports),
        "schedcat_deadline_misses": sum(x["deadline_misses"] for x in scs[-1]),
        "events": sum(r["events"] for r in reports),
        "criticore": rates(jobs * passes, eng_s),
        "criticore_python": rates(jobs * passes, crit_s),
        "engine_jobs": sum(x["jobs"] for x in engs[-1]),
        "criticore_parse_s": sum(parse_s),
        "criticore_call_s": statistics.median(crit_s) / passes,
        "schedcat": rates(sc_jobs * passes, sim_s),
        "schedcat_with_construction": rates(sc_jobs * passes, total_s),
    }
    res["agree"] = res["jobs"] == sc_jobs == res["engine_jobs"] and res["deadline_misses"] == res["schedcat_deadline_misses"]
    res["ratio_median"] = res["criticore"]["median"] / res["schedcat"]["median"]
    res["ratio_pessimistic"] = res["criticore"]["min"] / res["schedcat"]["max"]
    # Per repeat, criticore against the SchedCAT run beside it (same jobs, so a ratio of times).
    paired = sorted(sim / e * jobs / sc_jobs for sim, e in zip(sim_s, eng_s))
    res["ratio_paired"] = {"min": paired[0], "median": statistics.median(paired), "max": paired[-1]}
    if p.simso and not args.no_simso:
        systems = p.systems[: args.simso_systems]
        res["simso"] = run_simso(systems, args.simso_repeats, args.simso_jobs)
    return res


def measure_batch(p: Point, args, schedcat: Path, engine: Path) -> dict:
    """Sweep d: criticore's batch API (files read, parsed and simulated, one
    row each) on one thread and on every core, against SchedCAT simulating the
    same systems one after another in one process (it has no parallel mode)."""
    from criticore.simulation.batch import simulate_many

    with tempfile.TemporaryDirectory(prefix="sim-scale-batch-") as d:
        paths = []
        for i, s in enumerate(p.systems):
            path = Path(d) / f"{i:05}.toml"
            path.write_bytes(s.toml)
            paths.append(path)
        horizon = p.systems[0].horizon_ns
        runs: dict[str, list[float]] = {"threads=1": [], f"threads={os.cpu_count()}": []}
        rows = None
        for _ in range(args.repeats):
            for label, threads in (("threads=1", 1), (f"threads={os.cpu_count()}", None)):
                start = time.perf_counter()
                rows = simulate_many(paths, horizon, scheduler="gedf", memory=False, threads=threads)
                runs[label].append(time.perf_counter() - start)
    jobs = sum(rows.column("completed").to_pylist())
    misses = sum(rows.column("deadline_misses").to_pylist())
    engs, scs = take_turns(args.repeats, lambda: run_engine(engine, p.systems, 1, 1), lambda: run_schedcat(schedcat, p.systems, 2))
    eng_s = [sum(x["seconds"][0] for x in eng) for eng in engs]
    sim_s = [sum(x["sim_s"][1] for x in sc) for sc in scs]
    total_s = [sum(x["total_s"][1] for x in sc) for sc in scs]
    sc_jobs = sum(x["jobs"] for x in scs[-1])
    res = {
        "sweep": p.sweep, "label": p.label, **p.params, "jobs": jobs, "schedcat_jobs": sc_jobs,
        "deadline_misses": misses, "schedcat_deadline_misses": sum(x["deadline_misses"] for x in scs[-1]),
        "criticore_batch": {label: rates(jobs, secs) for label, secs in runs.items()},
        "criticore_engine": rates(jobs, eng_s),
        "systems_per_s": {label: len(p.systems) / statistics.median(secs) for label, secs in runs.items()},
        "schedcat": rates(sc_jobs, sim_s),
        "schedcat_with_construction": rates(sc_jobs, total_s),
    }
    # Periods here may tie (whole µs, not primes): equal deadlines can be broken differently.
    res["agree"] = abs(jobs - sc_jobs) <= max(1, jobs // 10_000)
    return res


def die(message: str) -> None:
    """A missing peer is a setup problem: one line, exit 2."""
    print(f"sim_scale: {message}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer jobs and repeats (about a minute)")
    ap.add_argument("--sweeps", default="a,b,c,d", help="comma-separated subset of " + ",".join(SWEEPS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--target-jobs", type=float, default=2e6, help="jobs per generated run (sweeps b, c)")
    ap.add_argument("--max-horizon-s", type=float, default=3600, help="cap on simulated seconds")
    ap.add_argument("--tasks", default="20,100,1000,5000,20000,50000", help="sweep b's task counts")
    ap.add_argument("--loads", default="0.5,0.75,0.9,1.0,1.1,1.25,1.5", help="sweep c's U/m")
    # Bench-only peers live beside the repository, never inside it.
    ap.add_argument("--schedcat-src", default=str(ROOT.parent / "peers-schedcat" / "src"), help="SchedCAT checkout")
    ap.add_argument("--schedcat-build", default=str(ROOT.parent / "peers-schedcat" / "build"), help="driver build dir (built if missing)")
    ap.add_argument("--no-simso", action="store_true")
    ap.add_argument("--simso-systems", type=int, default=5, help="sweep a: systems SimSo runs")
    ap.add_argument("--simso-repeats", type=int, default=2)
    ap.add_argument("--simso-jobs", type=int, default=20_000, help="SimSo's horizon is cut to about this many jobs")
    ap.add_argument("--simso-max-tasks", type=int, default=100, help="sweep b: SimSo runs systems up to this size")
    ap.add_argument("--batch-systems", type=int, default=10_000, help="sweep d: systems in the batch")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.target_jobs = 2, 3e5
        args.simso_systems, args.simso_repeats, args.simso_jobs, args.simso_max_tasks = 1, 1, 5000, 20
    args.target_jobs = int(args.target_jobs)
    args.tasks = [int(x) for x in args.tasks.split(",")]
    args.loads = [float(x) for x in args.loads.split(",")]
    if not args.no_simso and not SIMSO_PY.exists():
        die(f"{SIMSO_PY} is missing: create it as `make bench-simso` does, or pass --no-simso")
    started = datetime.datetime.now(datetime.timezone.utc)

    schedcat = Path(args.schedcat_build) / "schedcat_gedf"
    driver = BUILD_SH.parent / "driver.cpp"
    if not schedcat.exists() or schedcat.stat().st_mtime < max(driver.stat().st_mtime, BUILD_SH.stat().st_mtime):
        if not (Path(args.schedcat_src) / "native" / "include" / "schedule_sim.h").exists():
            die(f"no SchedCAT checkout at {args.schedcat_src}: `git clone https://github.com/brandenburg/schedcat "
                f"{args.schedcat_src}` (outside this repository), or pass --schedcat-src")
        subprocess.run(["sh", str(BUILD_SH), args.schedcat_src, args.schedcat_build], check=True)
    sc_commit = subprocess.run(["git", "-C", args.schedcat_src, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    engine = engine_binary()
    print(f"criticore: engine {engine}; Python {_core.__file__}")
    print(f"SchedCAT: {schedcat} (source {args.schedcat_src} @ {sc_commit[:12]}; g++ -O2, flags in build.sh)")

    results = []
    for name in args.sweeps.split(","):
        points = SWEEPS[name](args)
        print(f"\n({name}) {len(points)} points", flush=True)
        print(f"{'point':<24}{'jobs':>11}{'misses':>10}{'criticore M/s':>15}{'SchedCAT M/s':>14}{'+constr':>9}"
              f"{'ratio':>7}{'paired':>11}{'pess.':>7}{'Python M/s':>11}{'parse ms':>9}  agree  SimSo jobs/s")
        for p in points:
            if p.sweep == "d":
                r = measure_batch(p, args, schedcat, engine)
                results.append(r)
                b = r["criticore_batch"]
                print(f"{p.label:<24}{r['jobs']:>11,}{r['deadline_misses']:>10,}  criticore batch "
                      + ", ".join(f"{k} {v['median'] / 1e6:.2f} M jobs/s ({r['systems_per_s'][k]:,.0f} systems/s)" for k, v in b.items())
                      + f"; criticore engine alone (one thread, parsed) {r['criticore_engine']['median'] / 1e6:.2f} M jobs/s"
                      + f"; SchedCAT one after another {r['schedcat']['median'] / 1e6:.2f} M jobs/s (sim only), "
                      f"{r['schedcat_with_construction']['median'] / 1e6:.2f} with construction"
                      f"  {'agree' if r['agree'] else 'DIFFER: SchedCAT ' + str(r['schedcat_jobs'])}", flush=True)
                continue
            r = measure(p, args, schedcat, engine)
            results.append(r)
            simso = r.get("simso")
            simso_txt = (f"{simso['jobs_per_s']['median']:,.0f} ({simso['jobs']} jobs, criticore {simso['criticore_jobs']})"
                         if simso else "")
            print(f"{p.label:<24}{r['jobs']:>11,}{r['deadline_misses']:>10,}"
                  f"{r['criticore']['min'] / 1e6:>7.2f}/{r['criticore']['median'] / 1e6:<7.2f}"
                  f"{r['schedcat']['min'] / 1e6:>6.2f}/{r['schedcat']['median'] / 1e6:<7.2f}"
                  f"{r['schedcat_with_construction']['median'] / 1e6:>9.2f}"
                  f"{r['ratio_median']:>7.2f}{r['ratio_paired']['min']:>6.2f}/{r['ratio_paired']['median']:<4.2f}{r['ratio_pessimistic']:>7.2f}{r['criticore_python']['median'] / 1e6:>11.2f}"
                  f"{r['criticore_parse_s'] * 1e3:>9.1f}"
                  f"  {'yes' if r['agree'] else 'NO (SchedCAT ' + str(r['schedcat_jobs']) + ' jobs, ' + str(r['schedcat_deadline_misses']) + ' misses)'}"
                  f"  {simso_txt}", flush=True)

    print("\njobs/s columns: min/median over repeats (M = 1e6); criticore = its engine on the parsed system "
          "(benches/sim_scale.rs), SchedCAT = its simulation only; ratio = criticore / SchedCAT medians; "
          "paired = min/median over repeats of criticore / the SchedCAT run beside it (they alternate); "
          "pess. = criticore min / SchedCAT max; +constr = SchedCAT incl. construction; "
          "Python = criticore through criticore._core.simulate, parse and thread included (median)")
    print(json.dumps({
        "bench": "sim_scale",
        "date": started.isoformat(timespec="seconds"),
        "machine": {"nproc": os.cpu_count(), "platform": platform.platform(), "load": os.getloadavg()},
        "criticore_core": _core.__file__,
        "schedcat_commit": sc_commit,
        "args": {k: v for k, v in vars(args).items()},
        "points": results,
    }))
    sys.exit(0 if all(r["agree"] for r in results) else 1)


if __name__ == "__main__":
    main()
