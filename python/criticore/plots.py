"""Plots (matplotlib, headless). Gantt charts in the style of the MRS paper's
execution traces: one row per task, boxes where it runs, arrows at releases,
and one row per server showing when it holds its core."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

MS = 1e6


def gantt(run, task_names: list[str], server_names: list[str], cores: int, path: Path, title: str) -> None:
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
    fig.savefig(path, dpi=130)
    plt.close(fig)
