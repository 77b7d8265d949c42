"""`criticore experiment monitor`: the evaluation of blin-bandwidth-monitor
§4.3 on the simulator (docs/bandwidth-monitor.md, "Experiment").

Each FILE is one *application*: a task-system file whose ``[regulation]`` is
the bandwidth monitor (``kind = "monitor"``) of its real-time (RT) task, with
the RT task's overhead table. For every application and every constant load
of a grid (§3.1's microbenchmark on the best-effort cores),
:func:`criticore.monitor.simulated.evaluate_monitor` simulates the file with
and without the monitor. Outputs, in OUT_DIR:

- ``monitor.parquet``: one row per (application, load), with the per-job
  overheads and parallelism as list columns;
- ``fig8-overhead.png``: Fig. 8, a violin per application of the RT jobs'
  overheads over all loads, without and with the monitor, and the file's
  threshold;
- ``fig9-parallelism.png``: Fig. 9, per application the worst-case
  parallelism of each load (the smallest over its jobs, §4.3) against the
  load's demand, one marker per load configuration.

The run is deterministic: the same files and options give the same rows.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import typer
from rich.console import Console

import criticore._core as _core
from criticore.cli_common import MAX_CPU, U32_MAX, bad, duration_option, fail, int_option
from criticore.errors import InputError
from criticore.monitor import experiment_real, real
from criticore.monitor import simulated as sim
from criticore.monitor.command import _ints, _task_and_cores, check_program
from criticore.monitor.tables_command import _cores
from criticore.outputs import system_inputs, writable, write_table
from criticore.simulation.run import simulate
from criticore.system import check

experiment_app = typer.Typer(
    help="The papers' evaluations as experiments: figures, data and a summary (on the simulator, and on this machine).",
    no_args_is_help=True,
)


@experiment_app.callback()
def _experiments() -> None:
    """The papers' evaluations as experiments: figures, data and a summary (on the simulator, and on this machine)."""

#: Grids of constant loads (§3.1 microbenchmark): reads out of 10 × delays (ns) ×
#: every §3.1 configuration that fits on the best-effort cores.
GRIDS = {
    # 5 × 5 × up to 5 configurations: 125 loads on 3 best-effort cores.
    "quick": ((0, 3, 5, 7, 10), (0, 20, 80, 320, 1280)),
    # §4.3: 11 ratios × 18 load values × 5 configurations = 990 experiments per
    # application. The 18 delays are §3.1's ten and the eight between them.
    "full": (tuple(range(11)), (0, 5, 10, 15, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 2560)),
}
OUTPUTS = {"data": "monitor.parquet", "fig8": "fig8-overhead.png", "fig9": "fig9-parallelism.png"}
#: Fig. 9's legend: one marker per load configuration (delay multipliers per loaded core).
MARKERS = {(1,): "s", (1, 2): "o", (1, 1): "^", (1, 2, 3): "D", (1, 1, 1): "v"}


@dataclass(frozen=True)
class Application:
    """One application of the experiment: a file's RT task under its monitor."""

    file: Path
    label: str
    rt_task: str
    be_cores: tuple[int, ...]
    threshold: float
    sample_ns: int
    exec_ns: int


def experiment_loads(grid: str, cores: int) -> list[sim.Load]:
    """The loads of ``grid`` for ``cores`` best-effort cores: the §3.1
    configurations with at most ``cores`` loaded cores (and, beyond three,
    the symmetric and asymmetric ones with all of them)."""
    reads, delays = GRIDS[grid]
    configs = [c for c in sim.CONFIGS if len(c) <= cores] + [c for c in sim.configs_for(cores) if c not in sim.CONFIGS]
    return sim.microbenchmark_loads(reads=reads, delays_ns=delays, configs=configs)


# --------------------------------------------------------------------------- input


def _regulation(file: Path) -> tuple[dict, dict, dict]:
    """FILE checked and read: its outline, its document and its monitor's [regulation]."""
    try:
        outline = check(file)
    except InputError as e:
        fail(e)
    try:
        doc = sim._load_doc(file)
    except Exception as e:  # check() accepted it, so this is a format the variant writer cannot read
        bad(file, "(file)", f"cannot read the task system: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    reg = doc.get("regulation")
    if not isinstance(reg, dict):
        bad(file, "regulation.kind", 'no [regulation]; the experiment evaluates the file\'s bandwidth monitor (kind = "monitor")')
    if reg.get("kind") != "monitor":
        bad(file, "regulation.kind", f'expected "monitor" (the experiment evaluates the file\'s bandwidth monitor), got {reg.get("kind")!r}')
    return outline, doc, reg


def application(file: Path, rt_task: str | None, be_cores: list[str] | None) -> Application:
    """Check one FILE with its --rt-task and --be-cores (defaults: the file's
    [regulation] rt_task and be_cores); a bad one is a one-line error."""
    outline, doc, reg = _regulation(file)
    watched = reg["rt_task"]
    name = watched if rt_task is None else rt_task
    task = next((t for t in doc.get("task", []) if t.get("name") == name), None)
    if task is None:
        bad(file, "--rt-task", f"no task named {name!r}")
    if name != watched:
        bad(file, "--rt-task", f"the file's monitor watches {watched!r} ([regulation] rt_task), not {name!r}")
    monitored = [int(c) for c in reg["be_cores"]]
    cores = monitored if be_cores is None else _cores(be_cores, file, outline["cores"], task.get("core"))
    outside = [c for c in cores if c not in monitored]
    if outside:
        bad(file, "--be-cores", f"core {outside[0]} is not among the monitor's best-effort cores {monitored} ([regulation] be_cores): it could not suspend that load")
    if not cores:
        bad(file, "regulation.be_cores", "no best-effort core to load")
    table = file.parent / str(reg["overhead_table"])
    if not table.is_file():
        bad(file, "regulation.overhead_table", f"cannot read {table}: no such file")
    try:
        sample = reg.get("sample", "50us")
        sample_ns = sample if isinstance(sample, int) else _core.duration_ns(str(sample))
        exec_ns = sim._pet_ns(task)
        # The table against the file (sample, phases): the engine's one-line errors, before any long run.
        simulate(file, 1_000, regulator="monitor")
    except ValueError as e:
        bad(file, f"task {name!r}", str(e))
    except InputError as e:
        fail(e)
    return Application(file, file.stem, name, tuple(cores), float(reg["threshold"]), int(sample_ns), exec_ns)


def applications(files: list[Path], rt_tasks: list[str] | None, be_cores: list[str] | None) -> list[Application]:
    """Every FILE's application; --rt-task given once holds for every file, or once per file in order."""
    rt_tasks = rt_tasks or []
    if len(rt_tasks) not in (0, 1, len(files)):
        bad(files[0], "--rt-task", f"give it once (every file) or once per FILE ({len(files)}), not {len(rt_tasks)} times")
    apps = [
        application(f, rt_tasks[0] if len(rt_tasks) == 1 else rt_tasks[i] if rt_tasks else None, be_cores)
        for i, f in enumerate(files)
    ]
    # Labels: the file's stem; with the RT task, or the path, where stems repeat.
    for relabel in (lambda a: f"{a.file.stem}:{a.rt_task}", lambda a: f"{a.file}:{a.rt_task}"):
        stems = [a.label for a in apps]
        apps = [replace(a, label=relabel(a)) if stems.count(a.label) > 1 else a for a in apps]
    seen: set[str] = set()
    for a in apps:
        if a.label in seen:
            bad(a.file, "FILE", f"application {a.rt_task!r} of this file is given twice")
        seen.add(a.label)
    return apps


# --------------------------------------------------------------------------- running


def run(apps: list[Application], grid: str, duration_ns: int, on_load=None):
    """The experiment's rows (a ``pyarrow.Table``, one per application × load).
    ``on_load(app_index, done, total)`` is called after each load. A run in
    which no RT job completes is an InputError on --duration."""
    import pyarrow as pa

    cols: dict[str, list] = {}
    for k, app in enumerate(apps):
        loads = experiment_loads(grid, len(app.be_cores))
        try:
            rows = sim.evaluate_monitor(
                app.file, app.rt_task, app.be_cores, loads, duration_ns,
                on_load=None if on_load is None else (lambda done, total, k=k: on_load(k, done, total)),
            )
        except ValueError as e:  # no RT job completed: the duration is too short
            raise InputError(f"{app.file}: --duration: {e}", str(app.file), "--duration", str(e)) from None
        for r in rows:
            ld = r["load"]
            values = {
                "application": app.label, "file": str(app.file), "rt_task": app.rt_task,
                "be_cores": ",".join(map(str, app.be_cores)), "threshold": app.threshold,
                "sample_ns": app.sample_ns, "exec_ns": app.exec_ns,
                "load": ld.label(), "load_reads": ld.reads, "load_delay_ns": ld.delay_ns, "load_cores": len(ld.multipliers),
                "load_multipliers": ",".join(map(str, ld.multipliers)), "load_mb_s": r["load_mb_s"],
                "jobs": r["jobs"], "max_overhead_none": r["max_overhead_none"], "max_overhead_monitor": r["max_overhead_monitor"],
                "parallelism_mean": r["parallelism_mean"], "parallelism_min": r["parallelism_min"],
                "overheads_none": r["overheads_none"].tolist(), "overheads_monitor": r["overheads_monitor"].tolist(),
                "parallelism": r["parallelism"].tolist(),
            }
            for name, v in values.items():
                cols.setdefault(name, []).append(v)
    meta = {"experiment": "monitor", "grid": grid, "duration_ns": str(duration_ns), "source": "simulated"}
    return pa.table(cols).replace_schema_metadata(meta)


def summary(table) -> list[dict]:
    """Per application, in order: loads, worst overhead without and with the
    monitor, loads whose worst job passes the threshold (both ways), and the
    monitor's parallelism (mean over loads of the per-load mean; worst job)."""
    d = table.to_pydict()
    out = []
    for app in dict.fromkeys(d["application"]):
        idx = [i for i, a in enumerate(d["application"]) if a == app]
        thr = d["threshold"][idx[0]]

        def col(name):
            return np.array([d[name][i] for i in idx], dtype=float)

        none, mon = col("max_overhead_none"), col("max_overhead_monitor")
        out.append({
            "application": app, "threshold": thr, "loads": len(idx),
            "worst_none": float(none.max()), "worst_monitor": float(mon.max()),
            "above_none": int((none > thr).sum()), "above_monitor": int((mon > thr).sum()),
            "parallelism_mean": float(col("parallelism_mean").mean()), "parallelism_worst": float(col("parallelism_min").min()),
        })
    return out


# --------------------------------------------------------------------------- figures


def _violin(ax, values: np.ndarray, x: float, color: str) -> None:
    """A violin at ``x``; a flat bar where every value is the same (no density to draw)."""
    if values.size > 1 and np.ptp(values) > 1e-12:
        parts = ax.violinplot([values], positions=[x], widths=0.8, showextrema=True, showmedians=True)
        for body in parts["bodies"]:
            body.set_facecolor(color)
            body.set_edgecolor("black")
            body.set_alpha(0.75)
        for key in ("cbars", "cmins", "cmaxes", "cmedians"):
            parts[key].set_color("black")
            parts[key].set_linewidth(0.8)
    else:
        ax.hlines(values[:1], x - 0.35, x + 0.35, colors=color, linewidth=3)


def plot_overhead(table, path: Path) -> None:
    """Fig. 8: per application, the RT jobs' overheads over all loads (violins),
    without and with the monitor, and the application's threshold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    d = table.to_pydict()
    apps = list(dict.fromkeys(d["application"]))
    colors = {"none": "0.65", "monitor": "tab:blue"}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.9 * len(apps) + 1.5), 4.6), layout="constrained")
    for k, app in enumerate(apps):
        idx = [i for i, a in enumerate(d["application"]) if a == app]
        for j, reg in enumerate(("none", "monitor")):
            values = 100 * np.concatenate([np.asarray(d[f"overheads_{reg}"][i], dtype=float) for i in idx])
            _violin(ax, values, 3 * k + 1 + j, colors[reg])
        ax.hlines(100 * d["threshold"][idx[0]], 3 * k + 0.4, 3 * k + 2.6, colors="tab:red", linestyles="--", linewidth=1.2)
    ax.set_xticks([3 * k + 1.5 for k in range(len(apps))], apps, rotation=20 if len(apps) > 4 else 0, ha="right" if len(apps) > 4 else "center")
    ax.set_xlim(0, 3 * len(apps))
    ax.set_ylabel("overhead of the real-time job (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(
        [Patch(color=colors["none"]), Patch(color=colors["monitor"]), Line2D([], [], color="tab:red", linestyle="--")],
        ["without the monitor", "with the monitor", "threshold"], fontsize=8, loc="upper right",
    )
    ax.set_title(f"Overhead of every real-time job over {_loads_text(d)} constant loads\n(cf. blin-bandwidth-monitor Fig. 8)", fontsize=10)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_parallelism(table, path: Path) -> None:
    """Fig. 9: per application, each load's worst-case parallelism (its
    smallest over the jobs) against the load's demand, by configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = table.to_pydict()
    apps = list(dict.fromkeys(d["application"]))
    cols = min(3, len(apps))
    rows = (len(apps) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(max(6.0, 4.4 * cols), 1.0 + 3.3 * rows), squeeze=False, sharey=True, layout="constrained")
    for k, ax in enumerate(axes.ravel()):
        if k >= len(apps):
            ax.set_visible(False)
            continue
        idx = [i for i, a in enumerate(d["application"]) if a == apps[k]]
        for conf in dict.fromkeys(d["load_multipliers"][i] for i in idx):
            sel = [i for i in idx if d["load_multipliers"][i] == conf]
            key = tuple(int(m) for m in conf.split(","))
            ax.scatter(
                [d["load_mb_s"][i] for i in sel], [d["parallelism_min"][i] for i in sel], s=16, marker=MARKERS.get(key, "x"),
                label=f"[{conf}]", alpha=0.8, edgecolors="none" if MARKERS.get(key, "x") != "x" else None,
            )
        ax.set_xscale("log")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(apps[k], fontsize=10)
        ax.set_xlabel("load demand (MB/s, instances alone)")
        if k % cols == 0:
            ax.set_ylabel("worst-case parallelism")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, title="configuration", title_fontsize=7, loc="lower left")
    fig.suptitle("Parallelism kept by the monitor: the worst job of each load\n(cf. blin-bandwidth-monitor Fig. 9)", fontsize=10)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def _loads_text(d: dict) -> str:
    counts = sorted(set(map(d["application"].count, dict.fromkeys(d["application"]))))
    return "/".join(map(str, counts))


# --------------------------------------------------------------------------- the command


def _outputs(out: Path, force: bool, inputs: list[Path]) -> dict[str, Path]:
    if out.exists() and not out.is_dir():
        bad(out, "--output", "is a file, not a folder")
    paths = {k: out / name for k, name in OUTPUTS.items()}
    try:
        if out.is_dir():
            for p in paths.values():
                writable(p, force, "--output", inputs=inputs)
    except InputError as e:
        fail(e)
    return paths


def _write_outputs(table, output: Path, paths: dict[str, Path], written: list[Path]) -> None:
    """The Parquet and both figures; ``written`` grows as each lands (for an interrupted run's message)."""
    output.mkdir(parents=True, exist_ok=True)
    for key, write in (("data", lambda p: write_table(table, p, "--output")), ("fig8", lambda p: plot_overhead(table, p)), ("fig9", lambda p: plot_parallelism(table, p))):
        write(paths[key])
        written.append(paths[key])


def _progress(console: Console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("loads; ETA"),
        TimeRemainingColumn(), TextColumn("elapsed"), TimeElapsedColumn(), console=console, transient=True,
        disable=not console.is_terminal,
    )


@experiment_app.command("monitor")
def monitor(
    files: list[Path] = typer.Argument(..., help="Task-system files, one application each: [regulation] kind = \"monitor\" with its overhead table."),
    rt_task: list[str] = typer.Option(None, "--rt-task", help="The real-time task (default: the file's [regulation] rt_task); once for every file, or once per file."),
    be_cores: list[str] = typer.Option(None, "--be-cores", help="Best-effort cores the loads run on, e.g. 1,2,3 (default: the file's [regulation] be_cores)."),
    duration: str = typer.Option("1s", "--duration", "-d", help="Simulated time per load, each way (with and without the monitor)."),
    loads: str = typer.Option("quick", "--loads", help="Load grid: quick (5 ratios × 5 delays × configurations: 125 loads on 3 cores) or full (§4.3: 11 × 18 × 5 = 990)."),
    output: Path = typer.Option(Path("monitor-experiment"), "--output", "-o", help="Folder for monitor.parquet, fig8-overhead.png, fig9-parallelism.png."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
) -> None:
    """§4.3 on the simulator: every application next to a grid of constant loads, with and without its bandwidth monitor (Fig. 8 overheads, Fig. 9 parallelism, a Parquet of the runs)."""
    started = time.perf_counter()
    if loads not in GRIDS:
        bad(files[0], "--loads", f"expected {' or '.join(GRIDS)}, got {loads!r}")
    duration_ns = duration_option(duration, "--duration", files[0])
    apps = applications(files, rt_task, be_cores)
    paths = _outputs(output, force, [p for f in files for p in system_inputs(f)])
    sizes = [len(experiment_loads(loads, len(a.be_cores))) for a in apps]
    done, written = 0, []
    try:
        with _progress(Console(stderr=True)) as bar:
            task = bar.add_task(apps[0].label, total=sum(sizes))

            def on_load(k: int, i: int, n: int) -> None:
                nonlocal done
                done = sum(sizes[:k]) + i
                bar.update(task, completed=done, description=apps[min(k + (i == n), len(apps) - 1)].label)

            table = run(apps, loads, duration_ns, on_load)
        _write_outputs(table, output, paths, written)
    except KeyboardInterrupt:
        kept = f"kept {', '.join(map(str, written))}" if written else "nothing written"
        print(f"interrupted after {done} of {sum(sizes)} loads; {kept}", file=sys.stderr)
        raise SystemExit(130)
    except InputError as e:
        fail(e)
    except OSError as e:
        bad(output, "--output", f"cannot write: {e.strerror or e}")
    _render(Console(), apps, summary(table), loads, duration, time.perf_counter() - started, paths)


def _render(console: Console, apps: list[Application], rows: list[dict], grid: str, duration: str, seconds: float, paths: dict[str, Path], where: str = "simulated") -> None:
    from rich import box
    from rich.table import Table

    n = sum(r["loads"] for r in rows)
    console.print(
        f"[bold]bandwidth monitor[/bold] (blin-bandwidth-monitor §4.3, {where}): {len(apps)} application(s), "
        f"{grid} grid, {n} loads × {duration}, with and without the monitor, in {seconds:.1f} s"
    )
    t = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("application", overflow="fold")
    for col in ("thr.", "loads", "worst overhead", "loads > thr.", "parallelism"):
        t.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        t.add_row(
            r["application"], f"{100 * r['threshold']:g}%", str(r["loads"]),
            f"{100 * r['worst_none']:.2f}% → {100 * r['worst_monitor']:.2f}%",
            f"{100 * r['above_none'] / r['loads']:.0f}% → {100 * r['above_monitor'] / r['loads']:.0f}%",
            f"{r['parallelism_mean']:.2f} ({r['parallelism_worst']:.2f})",
        )
    console.print(t)
    console.print("  overheads and loads past the threshold: without → with the monitor (worst job of each load); parallelism: mean (worst job)")
    for a in apps:
        console.print(f"  {a.label}: {a.file}, task {a.rt_task!r}, loads on cores {','.join(map(str, a.be_cores))}")
    console.print(f"  data: {paths['data']}; Fig. 8: {paths['fig8']}; Fig. 9: {paths['fig9']}")


@experiment_app.command("monitor-real", context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
def monitor_real(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Task-system file: [regulation] kind = \"monitor\" with the program's overhead table (criticore profile, tables build)."),
    rt_task: str = typer.Option(None, "--rt-task", help="The real-time task the command runs (default: the file's [regulation] rt_task)."),
    be_cores: list[str] = typer.Option(None, "--be-cores", help="CPUs the loads run on (default: the file's [regulation] be_cores)."),
    cpu: int = typer.Option(None, "--cpu", help="Pin the program here (default: the task's core)."),
    reads: str = typer.Option("0,5,10", "--reads", help="Read ratios of the loads, reads of 10."),
    delays: str = typer.Option("0,200,2000", "--delays", help="Delay-loop iterations of the loads."),
    jobs: int = typer.Option(20, "--jobs", help="Jobs per load without the monitor (and the alone run)."),
    warmup: int = typer.Option(3, "--warmup", help="First jobs of each run left out."),
    duration: str = typer.Option("1s", "--duration", "-d", help="Time per load under the monitor."),
    output: Path = typer.Option(Path("monitor-experiment-real"), "--output", "-o", help="Folder for monitor.parquet, fig8-overhead.png, fig9-parallelism.png."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing outputs."),
) -> None:
    """§4.3 on this machine: the program after -- next to real constant loads, without and under `criticore regulate --mode monitor` (Fig. 8, Fig. 9, a Parquet)."""
    started = time.perf_counter()
    int_option(cpu, "--cpu", file, 0, MAX_CPU)
    int_option(jobs, "--jobs", file, 1, U32_MAX)
    check_program(file, ctx.args)
    app = application(file, rt_task, be_cores)
    # This machine's CPUs for the program and the loads (one-line errors).
    _, rt_cpu, _, _, _ = _task_and_cores(file, app.rt_task, ",".join(map(str, app.be_cores)) if be_cores else None, cpu)
    if not 0 <= warmup < jobs:
        bad(file, "--warmup", f"must be 0…{jobs - 1} (below --jobs), got {warmup}")
    duration_ns = duration_option(duration, "--duration", file)
    points = real.grid(_ints(reads, file, "--reads", 0, 10), _ints(delays, file, "--delays", 0), sim.configs_for(len(app.be_cores)))
    paths = _outputs(output, force, system_inputs(file) + [Path(a) for a in ctx.args[:1]])
    done, written = 0, []
    try:
        with _progress(Console(stderr=True)) as bar:
            task_bar = bar.add_task(app.label, total=len(points))

            def on_load(i: int, n: int) -> None:
                nonlocal done
                done = i
                bar.update(task_bar, completed=i)

            table = experiment_real.run_real(
                app, list(ctx.args), rt_cpu, points, jobs=jobs, warmup=warmup, duration_ns=duration_ns,
                line_bytes=_core.machine_line_bytes(), on_load=on_load,
            )
        _write_outputs(table, output, paths, written)
    except KeyboardInterrupt:
        kept = f"kept {', '.join(map(str, written))}" if written else "nothing written"
        print(f"interrupted after {done} of {len(points)} loads; {kept}", file=sys.stderr)
        raise SystemExit(130)
    except InputError as e:
        fail(e)
    except RuntimeError as e:
        bad(file, "COMMAND", str(e))
    except OSError as e:
        bad(output, "--output", f"cannot write: {e.strerror or e}")
    _render(Console(soft_wrap=True), [app], summary(table), f"{len(points)}-load", f"{duration} under the monitor", time.perf_counter() - started, paths, where="on this machine")
