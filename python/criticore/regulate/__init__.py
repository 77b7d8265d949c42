"""Regulating real Linux processes (`criticore regulate`).

The Rust runtime (crates/criticore-rt) does the work: it starts the tasks'
commands, counts their memory traffic, stops and resumes them under the
engine's MemGuard / MCTI rules, and keeps a watchdog that resumes everything if
it dies. This module builds its options, shows the live view and turns the
per-period log into a table, a Perfetto trace and summary rows.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import criticore._core as _core
from criticore.system import read_input

LOG_COLUMNS = {
    "period": "<u8",
    "group": "<u4",
    "start_ns": "<u8",
    "lateness_ns": "<u8",
    "budget": "<u8",
    "used": "<u8",
    "overshoot": "<u8",
    "exhausted_ns": "<u8",
    "reaction_ns": "<u8",
    # From the program's own timestamp of the crossing to the stop issued (0: not known).
    "reaction_e2e_ns": "<u8",
    "throttled_ns": "<u8",
    "lead": "<u8",
    # MCTI rule 5: 1 when the group ran a critical job past its budget in the period.
    "overload": "<u4",
}


def _nearest_rank(values: np.ndarray, p: float) -> int:
    """The p-th percentile by nearest rank (as the runtime's p50/p99), 0 for none."""
    if len(values) == 0:
        return 0
    v = np.sort(values)
    return int(v[min(len(v), max(1, int(np.ceil(p / 100 * len(v))))) - 1])


def criticore_command() -> list[str]:
    """How a task's `criticore …` command is started: this interpreter, this package."""
    return [sys.executable, "-m", "criticore"]


#: Monitor mode: one row per sample of a real-time job (blin-bandwidth-monitor §3.3).
MONITOR_SAMPLE_COLUMNS = {
    "job": "<u4",
    "index": "<u4",
    "end_ns": "<u8",
    "length_ns": "<u8",
    "phase": "<u4",
    "bytes": "<u8",
    "sum": "<f8",
    "suspends": "<u4",
}
#: Monitor mode: one row per real-time job.
MONITOR_JOB_COLUMNS = {
    "job": "<u4",
    "begin_ns": "<u8",
    "end_ns": "<u8",
    "by_deadline": "<u4",
    "suspended_ns": "<u8",
    "samples": "<u4",
    "sum": "<f8",
}


@dataclass
class Run:
    summary: dict
    columns: dict[str, np.ndarray]
    #: Monitor mode only: per-sample and per-job columns.
    monitor_samples: dict[str, np.ndarray] | None = None
    monitor_jobs: dict[str, np.ndarray] | None = None

    def group_names(self) -> list[str]:
        return [g["name"] for g in self.summary["groups"]]

    def table(self):
        """The per-period log as a pyarrow table (one row per group and period);
        in monitor mode, one row per sample of a real-time job."""
        import pyarrow as pa

        if self.monitor_samples is not None:
            cols = dict(self.monitor_samples)
            cols["suspends"] = cols["suspends"].astype(bool)
            return pa.table(cols)
        cols = dict(self.columns)
        names = self.group_names()
        cols["group_name"] = np.array([names[g] for g in cols["group"]], dtype=object)
        return pa.table(cols)

    def monitor_summary(self) -> dict | None:
        """Monitor mode: jobs seen, suspended, ended by their deadline, largest estimate."""
        j = self.monitor_jobs
        if j is None:
            return None
        finished = j["end_ns"] > 0
        return {
            "jobs": int(len(j["job"])),
            "jobs_finished": int(finished.sum()),
            "jobs_suspending": int((j["suspended_ns"] > 0).sum()),
            "jobs_by_deadline": int(j["by_deadline"].sum()),
            "samples": int(len(self.monitor_samples["job"])) if self.monitor_samples is not None else 0,
            "max_sum": float(j["sum"].max()) if len(j["sum"]) else 0.0,
        }

    def per_group(self) -> list[dict]:
        """Summary per group: traffic against budget, throttling, overshoot."""
        rows = []
        c = self.columns
        period_ns = self.summary["period_ns"]
        # Whole periods only: the last record of each group is the unfinished period.
        for k, g in enumerate(self.summary["groups"]):
            mask = c["group"] == k
            used = c["used"][mask][:-1] if mask.sum() > 1 else c["used"][mask]
            overshoot = c["overshoot"][mask][:-1] if mask.sum() > 1 else c["overshoot"][mask]
            periods = len(used)
            total = int(used.sum())
            rows.append(
                {
                    "name": g["name"],
                    "budget": g["budget"],
                    "periods": periods,
                    "used": total,
                    "used_per_period": total / periods if periods else 0.0,
                    "ratio": (total / (periods * g["budget"])) if periods and g["budget"] else float("nan"),
                    "exhausted_periods": int((c["exhausted_ns"][mask] > 0).sum()),
                    "throttled_ns": int(c["throttled_ns"][mask].sum()),
                    "overshoot_p50": _nearest_rank(overshoot, 50),
                    "overshoot_p99": _nearest_rank(overshoot, 99),
                    "overshoot_max": int(overshoot.max()) if periods else 0,
                    "period_ns": period_ns,
                    "processes": g["processes"],
                }
            )
        return rows

    def trace_json(self) -> str:
        """Perfetto/Chrome trace in the simulator's layout: the regulator's
        stalls as slices per group (pid 4, as `criticore simulate --trace`) and
        the traffic per period as counters."""
        events: list[dict] = [{"ph": "M", "pid": 4, "name": "process_name", "args": {"name": "regulator (measured)"}}]
        names = self.group_names()
        for k, name in enumerate(names):
            events.append({"ph": "M", "pid": 4, "tid": k, "name": "thread_name", "args": {"name": name}})
        c = self.columns
        for i in range(len(c["period"])):
            k = int(c["group"][i])
            if c["throttled_ns"][i] > 0 and c["exhausted_ns"][i] > 0:
                start = int(c["exhausted_ns"][i] + c["reaction_ns"][i])
                events.append(
                    {"ph": "X", "pid": 4, "tid": k, "ts": start / 1e3, "dur": int(c["throttled_ns"][i]) / 1e3, "name": "stalled", "cat": "regulator"}
                )
            events.append(
                {"ph": "C", "pid": 4, "ts": int(c["start_ns"][i]) / 1e3, "name": f"requests {names[k]}", "args": {"used": int(c["used"][i]), "budget": int(c["budget"][i])}}
            )
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"})


def run(
    file: str | Path,
    *,
    mode: str | None = None,
    duration_ns: int | None = None,
    period_ns: int | None = None,
    poll_ns: int | None = None,
    counter: str = "auto",
    throttle: str = "signal",
    attach: list[tuple[int, str]] | None = None,
    command: tuple[str, list[str]] | None = None,
    output: str | None = None,
    fifo_priority: int | None = None,
    on_snapshot: Callable[[dict], bool] | None = None,
    snapshot_ns: int = 200_000_000,
    lead: bool = True,
    job_log_dir: str | None = None,
    regulator_cpu: int | None = None,
) -> Run:
    """Regulate the file's tasks as real processes; see docs/runtime.md."""
    options = {
        "mode": mode,
        "duration_ns": duration_ns,
        "period_ns": period_ns,
        "poll_ns": poll_ns,
        "counter": counter,
        "throttle": throttle,
        "attach": attach or [],
        "command": command,
        "criticore": criticore_command(),
        "output": output,
        "fifo_priority": fifo_priority,
        "snapshot_ns": snapshot_ns,
        "lead": lead,
        "job_log_dir": job_log_dir,
        "regulator_cpu": regulator_cpu,
    }
    outline = json.loads(_core.check(read_input(file), str(file)))
    reg = outline.get("regulation") or {}
    if (mode or reg.get("kind")) == "monitor" and reg.get("overhead_table"):
        table_file = Path(file).parent / reg["overhead_table"]
        options["overhead_table"] = read_input(table_file).decode("utf-8", errors="replace")
        options["overhead_file"] = str(table_file)
    summary, raw = _core.regulate(read_input(file), str(file), options, on_snapshot)
    columns = {k: np.frombuffer(raw[k], dtype=LOG_COLUMNS[k]) for k in LOG_COLUMNS}
    samples = _decode(summary.pop("monitor_samples", None), MONITOR_SAMPLE_COLUMNS)
    jobs = _decode(summary.pop("monitor_jobs", None), MONITOR_JOB_COLUMNS)
    return Run(summary=summary, columns=columns, monitor_samples=samples, monitor_jobs=jobs)


def clean() -> list[str]:
    """Undo what dead runs left (both the run and its watchdog killed): one
    line per thing undone; see docs/runtime.md."""
    return list(_core.regulate_clean())


def _decode(raw: dict | None, dtypes: dict[str, str]) -> dict[str, np.ndarray] | None:
    if raw is None:
        return None
    return {k: np.frombuffer(raw[k], dtype=dtypes[k]) for k in dtypes}
