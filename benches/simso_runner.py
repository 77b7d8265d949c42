#!/usr/bin/env python3
"""Runs task systems in SimSo 0.8.5 (the peer simulator of issue 3).

Runs only inside the benchmark-only environment `.venv-simso` (`make
bench-simso` creates it); it imports SimSo and nothing from criticore, and the
criticore side of the comparison (`simso_crosscheck.py`, `sim_vs_simso.py`)
calls it as a subprocess:

    .venv-simso/bin/python benches/simso_runner.py IN.json OUT.json

IN.json: {"systems": [{"name", "scheduler": "gedf" | "prm", "cores",
"horizon_ns", "tasks": [{"period_us", "wcet_us", "deadline_us", "core"}]}]
(or period_ns, wcet_ns, deadline_ns),
"repeats": 1, "finish_times": true}. OUT.json: per system the wall-clock seconds
of every repeat (model construction + `run_model()`, which includes SimSo's
own end-of-run `Results`), the number of jobs finished, and (with
finish_times) every finished job as [task index, job number (1-based),
finish ns].

How the systems are put into SimSo (read from SimSo's source):

- Time. SimSo counts integer *cycles*; task parameters are given in
  milliseconds (floats) and turned into cycles with `int(x * cycles_per_ms)`
  (Task.execute, Job/WCET.get_ret, Timer). We set cycles_per_ms = 1,000,000,
  so one cycle is one nanosecond, criticore's unit: finish times (`job.end_date`,
  cycles) are nanoseconds with no conversion. Because `int()` truncates, the
  plain double nearest to n/1000 ms loses a cycle for about 1.5 % of n (n = 1001
  µs gives 1000999 cycles); `ms()` below takes the nearest double at or above
  n/1000 for which the truncation gives exactly n µs and asserts it.
- Zero overheads: scheduler overhead / activate / terminate = 0 (SchedulerInfo
  defaults), context save / load = 0 (ProcInfo defaults), execution-time model
  "wcet" (every job runs exactly its WCET at speed 1.0), no caches, no
  preemption or migration penalty, abort_on_miss = False (SimSo's default
  True would kill a job at its deadline; criticore runs it to completion).
- Global EDF: `simso.schedulers.EDF`. Its schedule() prints one line per
  decision; stdout is sent to /dev/null while SimSo runs (it is still formatted
  and written, as in any SimSo run). With "no_print": true in IN.json that
  print is replaced by a no-op in the EDF module (SimSo's fastest possible
  configuration, for a conservative speed comparison).
- Partitioned RM: `FixedPartitionRM` below, SimSo's own PartitionedScheduler
  (the base of its P_RM, P_EDF) with one `simso.schedulers.RM_mono` per
  processor, packed with the given task -> core mapping instead of P_RM's
  least-loaded heuristic, so both simulators use the same partition.
- Tasks are added in file order (task i has identifier i + 1), all periodic
  with activation date 0. Job numbers are the positions in `task.jobs`
  (creation order) + 1, criticore's 1-based numbers.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time

from simso.configuration import Configuration
from simso.core import Model
from simso.core.Scheduler import SchedulerInfo
from simso.utils import PartitionedScheduler

CYCLES_PER_MS = 1_000_000  # one SimSo cycle = 1 ns


def ms(us: int) -> float:
    """Milliseconds as SimSo takes them, such that int(x * CYCLES_PER_MS) is exactly `us` µs."""
    return ms_ns(us * 1000)


def ms_ns(ns: int) -> float:
    """Milliseconds such that int(x * CYCLES_PER_MS) is exactly `ns` ns."""
    target = ns * CYCLES_PER_MS // 1_000_000
    x = ns / 1_000_000
    while int(x * CYCLES_PER_MS) < target:
        x = math.nextafter(x, math.inf)
    while int(x * CYCLES_PER_MS) > target:
        x = math.nextafter(x, -math.inf)
    assert int(x * CYCLES_PER_MS) == target, ns
    return x


def param(task: dict, name: str) -> float:
    """A task's `name`_ns, or else `name`_us, in SimSo's milliseconds."""
    return ms_ns(task[f"{name}_ns"]) if f"{name}_ns" in task else ms(task[f"{name}_us"])


def _fixed_mapping(scheduler) -> bool:
    for task in scheduler.task_list:
        scheduler.affect_task_to_processor(task, scheduler.processors[task.data["core"]])
    return True


class FixedPartitionRM(PartitionedScheduler):
    """Partitioned rate-monotonic with a given task -> processor mapping."""

    def init(self):
        PartitionedScheduler.init(self, SchedulerInfo("simso.schedulers.RM_mono"), packer=_fixed_mapping)


def configure(system: dict) -> Configuration:
    cfg = Configuration()
    cfg.cycles_per_ms = CYCLES_PER_MS
    cfg.etm = "wcet"
    cfg.duration = system["horizon_ns"]  # cycles = ns
    cfg.penalty_preemption = 0
    cfg.penalty_migration = 0
    for i, t in enumerate(system["tasks"]):
        cfg.add_task(
            name=f"T{i}",
            identifier=i + 1,
            task_type="Periodic",
            abort_on_miss=False,
            period=param(t, "period"),
            activation_date=0,
            wcet=param(t, "wcet"),
            deadline=param(t, "deadline"),
            data={"core": t.get("core")},
        )
    for c in range(system["cores"]):
        cfg.add_processor(name=f"CPU{c}", identifier=c + 1)
    if system["scheduler"] == "gedf":
        cfg.scheduler_info.clas = "simso.schedulers.EDF"
    elif system["scheduler"] == "prm":
        cfg.scheduler_info.clas = FixedPartitionRM
    else:
        raise ValueError(f"unknown scheduler {system['scheduler']!r}")
    # SchedulerInfo defaults: overhead = overhead_activate = overhead_terminate = 0.
    si = cfg.scheduler_info
    assert si.overhead == 0 and si.overhead_activate == 0 and si.overhead_terminate == 0
    assert all(p.cs_overhead == 0 and p.cl_overhead == 0 for p in cfg.proc_info_list)
    cfg.check_all()
    return cfg


def run(system: dict) -> Model:
    model = Model(configure(system))
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        model.run_model()
    return model


def finished(model: Model) -> list[list[int]]:
    out = []
    for i, task in enumerate(model.task_list):
        for number, job in enumerate(task.jobs, start=1):
            if job.end_date is not None and not job.aborted:
                out.append([i, number, int(job.end_date)])
    return out


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        spec = json.load(f)
    repeats = spec.get("repeats", 1)
    if spec.get("no_print"):
        import simso.schedulers.EDF as edf_module

        edf_module.print = lambda *args, **kwargs: None
    results = []
    for system in spec["systems"]:
        seconds = []
        model = None
        for _ in range(repeats):
            start = time.perf_counter()
            model = run(system)
            seconds.append(time.perf_counter() - start)
        jobs = finished(model)
        entry = {"name": system["name"], "seconds": seconds, "jobs_finished": len(jobs)}
        if spec.get("finish_times", True):
            entry["finish"] = jobs
        results.append(entry)
    import simso

    with open(dst, "w") as f:
        json.dump({"simso_version": simso.__version__, "python": sys.version.split()[0], "results": results}, f)


if __name__ == "__main__":
    main()
