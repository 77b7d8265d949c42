"""Plots (matplotlib). Every ``*_figure`` function returns a Figure (shown
inline in a notebook, ``fig.savefig(path)`` in a script); ``gantt`` writes
one to a file for the CLI.

Importing this module selects matplotlib's headless Agg backend unless a
backend was chosen already (in a notebook, run ``%matplotlib inline`` after
the import)."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

if "matplotlib.pyplot" not in sys.modules:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import numpy as np  # noqa: E402

from criticore.study import report  # noqa: E402

MS = 1e6


def gantt(run, task_names: list[str], server_names: list[str], cores: int, path: Path, title: str) -> None:
    """Write :func:`gantt_figure` to ``path`` (or a file object)."""
    fig = gantt_figure(run, task_names, server_names, cores, title)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def gantt_figure(run, task_names: list[str], server_names: list[str], cores: int, title: str):
    """Execution trace in the style of the MRS paper's figures: one row per
    task, boxes where it runs (coloured by core), arrows at releases, red
    crosses at missed deadlines, and one row per server showing when it holds
    its core. ``run`` is a :class:`~criticore.simulation.SimRun` kept with
    ``segments=True`` (and ``jobs=True`` for releases and misses)."""
    seg = run.segments
    jobs = run.jobs
    rows = [f"server {n}" for n in server_names] + list(task_names)
    fig_h = 1.2 + 0.35 * len(rows)
    fig, ax = plt.subplots(figsize=(12, fig_h))
    colors = plt.get_cmap("tab10")
    y_of_task = {i: len(server_names) + i for i in range(len(task_names))}
    for core in range(cores):
        sel = seg["core"] == core
        for t, s, e in zip(seg["task"][sel], seg["start_ns"][sel], seg["end_ns"][sel]):
            ax.broken_barh([(s / MS, (e - s) / MS)], (y_of_task[int(t)] - 0.35, 0.7), color=colors(core % 10), linewidth=0)
    for srv, s, e in zip(seg["server"], seg["server_start_ns"], seg["server_end_ns"]):
        ax.broken_barh([(s / MS, (e - s) / MS)], (int(srv) - 0.35, 0.7), color="0.7", linewidth=0)
    if jobs is not None:
        end = run.report["duration_ns"]
        # Unfinished jobs count as finishing after the end.
        tasks = np.concatenate([jobs["task"], jobs["unfinished_task"]])
        releases = np.concatenate([jobs["release_ns"], jobs["unfinished_release_ns"]])
        deadlines = np.concatenate([jobs["deadline_ns"], jobs["unfinished_deadline_ns"]])
        finishes = np.concatenate([jobs["finish_ns"], np.full(len(jobs["unfinished_task"]), end + 1, dtype="u8")])
        for t, r, d, f in zip(tasks, releases, deadlines, finishes):
            y = y_of_task[int(t)]
            ax.annotate("", xy=(r / MS, y - 0.4), xytext=(r / MS, y + 0.45), arrowprops=dict(arrowstyle="->", lw=0.6, color="k"))
            if f > d and d <= end:
                ax.plot([d / MS], [y], marker="x", color="red", markersize=6)
    ax.set_yticks(np.arange(len(rows)))
    ax.set_yticklabels(rows)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors(c % 10)) for c in range(cores)]
    labels = [f"core {c}" for c in range(cores)]
    if server_names:
        handles.append(plt.Rectangle((0, 0), 1, 1, color="0.7"))
        labels.append("server holds its core")
    ax.legend(handles, labels, loc="upper right", fontsize=8, ncol=min(len(labels), 5))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def bandwidth_figure(bandwidth, title: str):
    """Memory bandwidth (MB/s) per core over time, from a bandwidth table
    (``core``, ``bin_start_ns``, ``mb_s``: :attr:`criticore.Simulation.bandwidth`)."""
    core = bandwidth.column("core").to_numpy()
    start = bandwidth.column("bin_start_ns").to_numpy()
    mb_s = bandwidth.column("mb_s").to_numpy()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for c in np.unique(core):
        sel = core == c
        ax.step(start[sel] / MS, mb_s[sel], where="post", label=f"core {int(c)}", linewidth=1.1)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("bandwidth (MB/s)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def response_figure(jobs, task_names: list[str], title: str):
    """Response time of every finished job, one column of points per task
    (a job table: :attr:`criticore.Simulation.jobs`)."""
    task = np.asarray(jobs.column("task").to_pylist(), dtype=object)
    response = jobs.column("response_ns").to_numpy() / MS
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(task_names) + 2), 3.8))
    for i, name in enumerate(task_names):
        r = response[task == name]
        ax.scatter(np.full(len(r), i) + np.linspace(-0.2, 0.2, len(r)) if len(r) else [], r, s=6)
    ax.set_xticks(range(len(task_names)))
    ax.set_xticklabels(task_names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("response time (ms)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def schedulability_figure(curves, scenario_id: int, stop: int | None = None):
    """A study scenario's schedulability against system utilization, one line
    per scheme (mc2-io-ipc-os-isolation §6, Fig. 15)."""
    return report.scenario_figure(curves, scenario_id, stop)


def sua_figure(curves, sua):
    """A study's schedulable-utilization area per scheme."""
    return report.sua_figure(curves, sua)
