"""How long a periodic job runs against its PET, alone and beside a load:
the worker of one build against another's, alternated (issue 25's runtime,
docs/runtime.md "--file F --task T").

    python benches/periodic_pet.py OLD_WORKER NEW_WORKER [--rounds 3] [--seconds 1]

Each round runs every task below under each worker for --seconds, pinned to
CPU 1 with a fresh sizing (CRITICORE_RECALIBRATE=1), first alone, then with
`criticore load` streaming on CPU 0. Prints one JSON line per run: the
median and 90th percentile of job CPU time over the PET.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MS = 1_000_000
# name: (PET ns, the task's memory profile line).
TASKS = {
    # 20,000 lines streamed over 64 MiB (tests/regulate/test_regulate_mcti.py's crit).
    "stream": (4 * MS, 'memory = { wss = "64MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 5000 }\n'),
    # Random reads over 16 MiB.
    "random": (2 * MS, 'memory = { wss = "16MiB", pattern = "random", read_fraction = 1.0, accesses_per_ms = 2000 }\n'),
    # Compute only.
    "compute": (3 * MS, ""),
}


def task_file(d: Path, name: str) -> Path:
    f = d / f"{name}.toml"
    f.write_text('[platform]\ncores = 2\nllc = { size = "32MiB", ways = 16, colors = 16, line = "64B" }\n'
                 f'[[task]]\nname = "{name}"\ncore = 1\nperiod = "20ms"\npet = "{TASKS[name][0]}ns"\n{TASKS[name][1]}')
    return f


def run(worker: str, f: Path, name: str, seconds: float, d: Path) -> list[float]:
    log = d / f"{name}-{time.monotonic_ns()}.csv"
    env = dict(os.environ, CRITICORE_JOB_LOG=str(log), CRITICORE_RECALIBRATE="1", CRITICORE_CACHE_DIR=str(d / "cache"))
    p = subprocess.Popen(["taskset", "-c", "1", worker, str(f), name], env=env)
    try:
        time.sleep(seconds + 0.5)  # set-up, then the jobs
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    with log.open() as fh:
        return sorted(int(r["exec_ns"]) / TASKS[name][0] for r in csv.DictReader(fh))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for r in range(a.rounds):
            for beside in (False, True):
                load = None
                if beside:
                    load = subprocess.Popen([sys.executable, "-m", "criticore", "load", "--cpu", "0", "--buffer", "128MiB"], stdout=subprocess.DEVNULL)
                    time.sleep(0.5)
                try:
                    for name in TASKS:
                        for build, worker in (("old", a.old), ("new", a.new)):
                            x = run(worker, task_file(d, name), name, a.seconds, d)
                            print(json.dumps({"round": r, "task": name, "load_on_cpu0": beside, "build": build, "jobs": len(x),
                                              "cpu_over_pet_p50": round(x[len(x) // 2], 3), "cpu_over_pet_p90": round(x[int(len(x) * 0.9)], 3)}), flush=True)
                finally:
                    if load:
                        load.send_signal(signal.SIGINT)
                        load.wait(timeout=30)


if __name__ == "__main__":
    main()
