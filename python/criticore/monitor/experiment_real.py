"""`criticore experiment monitor-real FILE -- CMD`: the evaluation of
blin-bandwidth-monitor §4.3 on this machine, with real processes
(docs/bandwidth-monitor.md, "Experiment on the machine").

FILE is one application as for `experiment monitor` (its `[regulation]` is the
bandwidth monitor of its real-time task, with the overhead table built for
the program, e.g. by `criticore profile` + `criticore tables build`); CMD is
the real-time program, which marks its jobs (and phases) through the tiny API.
For every constant load of the grid (the §3.1 microbenchmark on the
best-effort CPUs):

- **without the monitor**: one profiling point (the program next to the
  load, `crates/criticore-rt/src/workload/profile.rs`), its jobs' times;
- **with the monitor**: `criticore regulate --mode monitor` on a variant of
  FILE whose real-time task runs CMD and whose best-effort tasks run
  `criticore load` with the load's ratio and delay, for one second (left out:
  the loads start) and then `--duration`. The regulator runs on the
  best-effort CPUs, as the paper's monitor samples on a best-effort core
  (§3.3), so that it does not take the program's CPU.

A job's overhead is its time over ExecT − 1, ExecT the largest time of the
program alone, measured first in the same run (as the builder takes it, §3.2).
A job's parallelism is the share of it before the best-effort loads were
suspended (1 when they were not). The rows have the columns of
`experiment monitor`'s, so the same summary and figures apply; the load's
demand is the bandwidth the loads moved next to the program without the
monitor.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

import criticore._core as _core
import criticore.regulate as reg
from criticore.monitor import real
from criticore.monitor import simulated as sim

#: Under the monitor, jobs in the first second are left out: the load
#: generators (`criticore load`, a Python start-up) are not running yet.
SETTLE_NS = 1_000_000_000


def _point_jobs(argv: Sequence[str], cpu: int, instances, jobs: int, warmup: int, tick_ns: int, line_bytes: int):
    """Job times (warm-up dropped) of the program next to ``instances``, and the loads' bytes per second."""
    d = _core.profile_point(list(argv), cpu, instances, tick_ns, {"jobs": jobs, "quiet": True, "line_bytes": line_bytes})
    rec = real.Recording.from_core(d)
    if rec.end == "interrupted":
        raise KeyboardInterrupt
    found = real.jobs_of(rec, [1.0], 1_000_000, line_bytes)
    times = np.array([j.end_ns - j.begin_ns for j in found[warmup:]], dtype=np.int64)
    if not len(times):
        raise RuntimeError(f"`{' '.join(argv)}` ended no job after its {warmup} warm-up jobs (does it mark them?)")
    seconds = max(rec.exit_ns - rec.start_ns, 1) / 1e9
    return times, sum(d["load_lines"]) * line_bytes / seconds


def _variant(file: Path, rt_task: str, argv: Sequence[str], rt_cpu: int, load: real.Point, be_cpus: Sequence[int], out: Path) -> Path:
    """FILE with the real-time task running CMD and one `criticore load` task per best-effort CPU."""
    doc = sim._load_doc(file)
    regulation = dict(doc["regulation"])
    regulation["overhead_table"] = str((file.parent / str(regulation["overhead_table"])).resolve())
    rt = next(t for t in doc["task"] if t.get("name") == rt_task)
    tasks = [{**rt, "core": rt_cpu, "command": list(argv)}]
    for cpu, reads, delay in load.instances(be_cpus):
        command = [*reg.criticore_command(), "load", "--cpu", str(cpu), "--reads", str(reads), "--delay", str(delay)]
        tasks.append({"name": f"load{cpu}", "core": cpu, "period": "10s", "pet": "10s", "command": command})
    variant = {k: v for k, v in doc.items() if k not in ("task", "regulation", "server", "allocation")}
    variant["regulation"] = regulation
    variant["task"] = tasks
    out.write_text(sim.dump_toml(variant))
    return out


def run_real(
    app,
    argv: Sequence[str],
    rt_cpu: int,
    points: Sequence[real.Point],
    *,
    jobs: int = 20,
    warmup: int = 3,
    duration_ns: int = 1_000_000_000,
    tick_ns: int = 1_000_000,
    line_bytes: int = 64,
    on_load: Callable[[int, int], None] | None = None,
):
    """The experiment's rows for one application (``experiment.Application``) on this machine."""
    import pyarrow as pa

    alone, _ = _point_jobs(argv, rt_cpu, [], jobs, warmup, tick_ns, line_bytes)
    exec_ns = int(alone.max())
    cols: dict[str, list] = {}
    with tempfile.TemporaryDirectory(prefix="criticore-experiment-") as tmp:
        for i, load in enumerate(points):
            instances = load.instances(app.be_cores)
            times, load_b_s = _point_jobs(argv, rt_cpu, instances, jobs, warmup, tick_ns, line_bytes)
            variant = _variant(app.file, app.rt_task, argv, rt_cpu, load, app.be_cores, Path(tmp) / "variant.toml")
            # The monitor samples on a best-effort CPU (§3.3), never on the program's.
            mask = os.sched_getaffinity(0)
            os.sched_setaffinity(0, set(app.be_cores))
            try:
                r = reg.run(variant, mode="monitor", duration_ns=SETTLE_NS + duration_ns)
            finally:
                os.sched_setaffinity(0, mask)
            j = r.monitor_jobs
            # Jobs from SETTLE_NS on: the load processes are running by then.
            done = (j["end_ns"] > j["begin_ns"]) & (j["by_deadline"] == 0) & (j["begin_ns"] >= SETTLE_NS)
            begin, end, stopped = (j[k][done].astype(np.int64) for k in ("begin_ns", "end_ns", "suspended_ns"))
            if not len(begin):
                raise RuntimeError(f"{load.label()}: no job of `{' '.join(argv)}` ended under the monitor within --duration")
            span = end - begin
            par = np.where(stopped > 0, np.clip((stopped - begin) / span, 0.0, 1.0), 1.0)
            over_none, over_mon = times / exec_ns - 1, span / exec_ns - 1
            values = {
                "application": app.label, "file": str(app.file), "rt_task": app.rt_task,
                "be_cores": ",".join(map(str, app.be_cores)), "threshold": app.threshold,
                "sample_ns": app.sample_ns, "exec_ns": exec_ns,
                "load": load.label(), "load_reads": load.reads, "load_delay": load.delay, "load_cores": len(load.multipliers),
                "load_multipliers": ",".join(map(str, load.multipliers)), "load_mb_s": load_b_s / 1e6,
                "jobs": int(len(span)), "max_overhead_none": float(over_none.max()), "max_overhead_monitor": float(over_mon.max()),
                "parallelism_mean": float(par.mean()), "parallelism_min": float(par.min()),
                "overheads_none": over_none.tolist(), "overheads_monitor": over_mon.tolist(), "parallelism": par.tolist(),
            }
            for name, v in values.items():
                cols.setdefault(name, []).append(v)
            if on_load is not None:
                on_load(i + 1, len(points))
    meta = {"experiment": "monitor", "source": "real", "command": json.dumps(list(argv)), "duration_ns": str(duration_ns), "jobs": str(jobs)}
    return pa.table(cols).replace_schema_metadata(meta)
