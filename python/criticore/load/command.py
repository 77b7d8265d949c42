"""`criticore load`: the memory-load generator (blin-bandwidth-monitor §3.1),
its periodic mode and the bandwidth/latency sweep."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress

import criticore._core as _core
from criticore.cli_common import MAX_CPU, duration_option, fail, int_option
from criticore.errors import InputError
from criticore.load import generator as gen
from criticore.load import sweep as sw
from criticore.load.render import render_load
from criticore.outputs import IMAGE, TABLE, distinct, system_inputs, writable, write_table
from criticore.render import table
from criticore.system import check
from criticore.units import U64_MAX, bandwidth_text, duration_text

#: The shortest --interval: every interval is a record kept for the whole run
#: (a 1 ns interval asked for a billion per second of run).
MIN_INTERVAL_NS = 1_000_000


def load(
    reads: int = typer.Option(0, "--reads", "-r", help="Lines read of every 10 (the rest are written), blin-bandwidth-monitor §3.1."),
    delay: int = typer.Option(0, "--delay", help="Delay-loop iterations after every 10 lines (Fig. 4)."),
    bandwidth: str = typer.Option(None, "--bandwidth", "-b", help="Pace to this bandwidth, e.g. 500MB/s (instead of the delay)."),
    duration: str = typer.Option(None, "--duration", "-d", help="Run this long, e.g. 10s (default: until Ctrl-C, exit status 130 after the report, or SIGTERM)."),
    cpu: int = typer.Option(None, "--cpu", "-c", help="Pin to this CPU."),
    buffer: str = typer.Option(None, "--buffer", help="Buffer size, e.g. 128MiB (default: 4x the LLC, at least 64MiB)."),
    interval: str = typer.Option("1ms", "--interval", help="Report interval for the achieved bandwidth."),
    fresh_pages: bool = typer.Option(False, "--fresh-pages", help="Drop the buffer's pages at every pass, so each page faults again (a kernel-counted memory event)."),
    pattern: str = typer.Option("stream", "--pattern", help="Walk the buffer in address order (stream) or in a fixed random order, each line once per pass (random)."),
    count: str = typer.Option("auto", "--count", help="Also count a perf event over the run: auto (LLC misses, reads and write-backs, where there is a PMU), none, or an event such as raw:0x17,0x18 or sw:page-faults."),
    log: Path = typer.Option(None, "--log", help="Write the per-interval bandwidth (.parquet or .csv)."),
    sweep: bool = typer.Option(False, "--sweep", help="Instead: bandwidth over the reads x delay grid (Fig. 5) and loaded latency against 0-3 loads."),
    plot: Path = typer.Option(None, "--plot", "-o", help="--sweep: draw the grid and the latency curve (.png or .svg)."),
    data: Path = typer.Option(None, "--data", help="--sweep: write the grid (.parquet or .csv) and the latency curve beside it (NAME.latency.EXT)."),
    point: str = typer.Option("100ms", "--point", help="--sweep: length of each grid point's run."),
    file: Path = typer.Option(None, "--file", help="Periodic mode, like rt-app: run --task of this task-system file, a job of its work every period."),
    task: str = typer.Option(None, "--task", help="Periodic mode: the task to run."),
    jobs: int = typer.Option(None, "--jobs", help="Periodic mode: stop after this many jobs."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
) -> None:
    """Generate memory load: the microbenchmark of blin-bandwidth-monitor §3.1, optionally paced."""
    where = Path("criticore load")

    def parse(fn, value, option):
        try:
            return fn(value)
        except ValueError as e:
            fail(InputError(f"{where}: {option}: {e}", str(where), option, str(e)))

    int_option(reads, "--reads", where, 0, 10, " (lines read of every 10)")
    int_option(delay, "--delay", where, 0, U64_MAX)
    int_option(cpu, "--cpu", where, 0, MAX_CPU)
    int_option(jobs, "--jobs", where, 1, U64_MAX)

    if sweep:
        _load_sweep(where, cpu, plot, data, duration_option(point, "--point", where), buffer, as_json, force, parse)
        return
    if file is not None or task is not None:
        _load_periodic(file, task, jobs, duration_option(duration, "--duration", where) if duration else None, cpu, log, as_json, force)
        return
    interval_ns = duration_option(interval, "--interval", where)
    if interval_ns < MIN_INTERVAL_NS:
        fail(InputError(f"{where}: --interval: at least 1ms (one record per interval is kept for the whole run), got {interval}",
                        str(where), "--interval", f"at least 1ms (one record per interval is kept for the whole run), got {interval}"))
    try:
        if log is not None:
            writable(log, force, "--log", TABLE)
        console = Console(stderr=as_json)
        status = None
        if not as_json and console.is_terminal:
            status = console.status("loading…")
            status.start()

        def progress(elapsed_ns: int, lines: int, last: int) -> bool:
            if status is not None:
                status.update(f"{duration_text(elapsed_ns)}, {lines:,} lines, last interval {last:,} lines")
            return True

        try:
            run = gen.run(
                reads=reads,
                delay=delay,
                bandwidth_bytes_per_s=parse(_core.bandwidth_bytes_per_s, bandwidth, "--bandwidth") if bandwidth else None,
                duration_ns=duration_option(duration, "--duration", where) if duration else None,
                cpu=cpu,
                buffer_bytes=parse(_core.size_bytes, buffer, "--buffer") if buffer else None,
                interval_ns=interval_ns,
                fresh_pages=fresh_pages,
                pattern=pattern,
                count=count,
                on_progress=progress,
            )
        finally:
            if status is not None:
                status.stop()
        if log is not None:
            write_table(run.table(), log, "--log")
    except InputError as e:
        fail(e)
    if as_json:
        print(json.dumps({**run.summary, **run.stats()}, indent=2))
    else:
        render_load(console, run, cpu)
        if log is not None:
            console.print(f"  per-interval log: {log}")
    _exit_if_ctrl_c()


def _exit_if_ctrl_c() -> None:
    """A run a Ctrl-C stopped has reported what it did; its status says so (130)."""
    if _core.load_stopped_by_ctrl_c():
        raise SystemExit(130)


def _load_periodic(file: Path | None, task: str | None, jobs: int | None, duration_ns: int | None, cpu: int | None, log: Path | None, as_json: bool, force: bool) -> None:
    if file is None or task is None:
        missing = "--file" if file is None else "--task"
        fail(InputError(f"criticore load: {missing}: the periodic mode needs both --file and --task", "criticore load", missing, "the periodic mode needs both --file and --task"))
    log, force = gen.job_log(log, force)
    try:
        if log is not None:
            writable(log, force, "--log", TABLE, inputs=system_inputs(file))
        check(file)
        run = gen.run_periodic(str(file), task, jobs=jobs, duration_ns=duration_ns, cpu=cpu)
        if log is not None:
            write_table(run.table(), log, "--log")
    except InputError as e:
        fail(e)
    st = run.stats()
    if as_json:
        print(json.dumps(st, indent=2))
        _exit_if_ctrl_c()
        return
    console = Console()
    if run.background:
        console.print(f"[bold]{file}[/bold] task {task}: background task, no jobs (its memory profile walked round after round until the end)")
    else:
        console.print(
            f"[bold]{file}[/bold] task {task}: {st['jobs']} jobs, {st['deadline_misses']} deadline misses; response p50 {st['response_ms_p50']:.3f} ms, "
            f"max {st['response_ms_max']:.3f} ms; CPU per job {st['exec_ms_mean']:.3f} ms"
        )
    for n in st["notes"]:
        console.print(f"  note: {n}")
    if log is not None:
        console.print(f"  job records: {log}")
    _exit_if_ctrl_c()


def sweep_table(grid: dict, victim: int):
    """The bandwidth grid of `criticore load --sweep`: a row per read ratio, a column per delay."""
    t = table(f"Bandwidth alone on cpu {victim} (GB/s): reads:writes of 10 lines x delay-loop iterations")
    t.add_column("r:w")
    delays = sorted(set(grid["delay"].tolist()))
    for d in delays:
        t.add_column(str(d), justify="right")
    for r in sorted(set(grid["reads"].tolist())):
        m = grid["reads"] == r
        by = dict(zip(grid["delay"][m].tolist(), grid["bytes_per_s"][m].tolist()))
        t.add_row(f"{r}:{10 - r}", *(f"{by[d] / 1e9:.2f}" for d in delays))
    return t


def _load_sweep(where: Path, cpu: int | None, plot: Path | None, data: Path | None, point_ns: int, buffer: str | None, as_json: bool, force: bool, parse) -> None:
    victim = 0 if cpu is None else cpu
    latency_data = None if data is None else data.with_name(f"{data.stem}.latency{data.suffix}")
    try:
        outputs = [(plot, "--plot", IMAGE), (data, "--data", TABLE), (latency_data, "--data", TABLE)]
        for path, option, suffixes in outputs:
            if path is not None:
                writable(path, force, option, suffixes)
        distinct([(path, option) for path, option, _ in outputs])
        buffer_bytes = parse(_core.size_bytes, buffer, "--buffer") if buffer else None
        console = Console(stderr=as_json)
        load_cpus = sw.load_cpus_for(victim)
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("bandwidth grid", total=len(sw.READS) * len(sw.DELAYS))
            grid = sw.bandwidth_grid(victim, point_ns=point_ns, buffer_bytes=buffer_bytes, on_point=lambda i, n: progress.update(task, completed=i))
            task2 = progress.add_task("loaded latency", total=1 + 5 * len(load_cpus))
            curve = sw.latency_curve(victim, load_cpus, point_ns=2 * point_ns, on_point=lambda i, n: progress.update(task2, completed=i, total=n))
        import pyarrow as pa  # loaded for --data only

        if data is not None:
            write_table(pa.table(grid), data, "--data")
            write_table(pa.table(curve), latency_data, "--data")
        if plot is not None:
            sw.plot(grid, curve, plot)
    except InputError as e:
        fail(e)
    bad = sw.non_monotone(grid)
    if as_json:
        print(json.dumps({"grid": {k: v.tolist() for k, v in grid.items()}, "latency": {k: v.tolist() for k, v in curve.items()}, "non_monotone": bad}, indent=2))
        return
    console.print(sweep_table(grid, victim))
    peak = float(grid["bytes_per_s"].max())
    console.print(f"  peak {bandwidth_text(peak)}; " + ("bandwidth falls monotonically with the delay for every ratio" if not bad else f"[yellow]rises with the delay at[/yellow] {bad} (noise above 5%?)"))
    alone = curve["latency_ns"][curve["loads"] == 0]
    console.print(f"  victim latency alone {duration_text(float(alone[0]))} per access; with loads on cpus {load_cpus}: " + ", ".join(
        f"{duration_text(lat)} at {bandwidth_text(bw)}" for n, lat, bw in zip(curve["loads"], curve["latency_ns"], curve["load_bytes_per_s"]) if n > 0
    ))
    if len(load_cpus) < 3:
        console.print(f"  (this machine has {os.cpu_count()} CPUs: {len(load_cpus)} load core(s) besides the victim, not 3)")
    for label, path in (("plot", plot), ("grid", data), ("latency curve", latency_data)):
        if path is not None:
            console.print(f"  {label}: {path}")
