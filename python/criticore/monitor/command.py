"""`criticore profile FILE -- CMD`: profile a real real-time program against
the load grid of blin-bandwidth-monitor §3.1 (:mod:`criticore.monitor.real`)
and write the profile dataset `criticore tables build` reads.

What comes from FILE: the real-time task (`--rt-task`, default the
`[regulation]` table's `rt_task`), its core (where the program is pinned),
its phases' work (to split jobs by time when the program marks no phases),
the best-effort cores (`[regulation] be_cores`, default every other CPU) and
the monitor's sampling interval (`[regulation] sample`, default 50 µs).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

import criticore._core as _core
from criticore.cli_common import MAX_CPU, U32_MAX, bad, duration_option, fail, int_option
from criticore.errors import InputError
from criticore.load.sweep import DELAYS, READS
from criticore.monitor import dataset as ds
from criticore.monitor import real
from criticore.monitor.simulated import _duration_ns, _load_doc, _pet_ns, configs_for
from criticore.outputs import DATASET, system_inputs, writable
from criticore.system import check
from criticore.units import duration_text

QUICK_READS = (0, 5, 10)
QUICK_DELAYS = (0, 200, 2000)


def _ints(text: str, file: Path, option: str, low: int, high: int | None = None) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        bad(file, option, f"expected comma-separated integers, got {text!r}")
    if not values:
        bad(file, option, "empty list")
    for v in values:
        if v < low or (high is not None and v > high):
            bad(file, option, f"{v} is outside {low}…{high if high is not None else '∞'}")
    return values


def check_program(file: Path, argv: list[str]) -> None:
    """The real-time program after --: given, and one that can start (else one line, exit code 2)."""
    if not argv:
        bad(file, "COMMAND", "give the real-time program after --, e.g. -- ./rt-program")
    if shutil.which(argv[0]) is None:
        why = "not executable" if Path(argv[0]).is_file() else "no such program (not a file, not in PATH)"
        bad(file, "COMMAND", f"cannot start `{argv[0]}`: {why}")


def _task_and_cores(file: Path, rt_task: str | None, be: str | None, cpu: int | None):
    """(task name, its core, be cores, work shares, sample_ns from the file or None)."""
    check(file)  # one-line errors for a bad file, before reading it raw
    doc = _load_doc(file)
    reg = doc.get("regulation") or {}
    name = rt_task or reg.get("rt_task")
    if not name:
        bad(file, "--rt-task", "name the real-time task (the file has no [regulation] rt_task)")
    task = next((t for t in doc.get("task", []) if t.get("name") == name), None)
    if task is None:
        bad(file, "--rt-task", f"no task named {name!r}")
    ncpu = os.cpu_count() or 1
    core = cpu if cpu is not None else task.get("core")
    if core is None:
        bad(file, "--cpu", f"task {name!r} has no core; pass --cpu")
    if not 0 <= core < ncpu:
        bad(file, "--cpu" if cpu is not None else f"task {name!r}.core", f"CPU {core} does not exist on this machine ({ncpu} CPUs)")
    if be is not None:
        cores = _ints(be, file, "--be-cores", 0)
        field = "--be-cores"
    elif reg.get("be_cores"):
        cores, field = [int(c) for c in reg["be_cores"]], "regulation.be_cores"
    else:
        cores, field = [c for c in range(ncpu) if c != core], "--be-cores"
    for c in cores:
        if not 0 <= c < ncpu:
            bad(file, field, f"CPU {c} does not exist on this machine ({ncpu} CPUs)")
        if c == core:
            bad(file, field, f"CPU {c} is the real-time program's")
    if not cores:
        bad(file, field, "no best-effort CPU to load (this machine has one CPU)")
    # Work shares of the phases, for jobs whose phases the program does not mark.
    mem = task.get("memory") or {}
    phases = mem.get("phases") or []
    shares = [1.0]
    if len(phases) > 1:
        pet = _pet_ns(task)
        works, used = [], 0
        for p in phases[:-1]:
            w = _duration_ns(p["work"]) if "work" in p else 0
            works.append(w)
            used += w
        works.append(max(pet - used, 0))
        total = sum(works)
        if total > 0:
            shares = [w / total for w in works]
    sample = reg.get("sample")
    return name, core, cores, shares, _duration_ns(sample) if sample else None


def profile_command(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Task-system file: the real-time task, its core and phases, the \\[regulation] be_cores and sample."),
    output: Path = typer.Option(..., "--output", "-o", help="Profile dataset to write (.parquet; docs/format.md)."),
    rt_task: str = typer.Option(None, "--rt-task", help="The real-time task the command runs (default: \\[regulation] rt_task)."),
    be_cores: str = typer.Option(None, "--be-cores", help="CPUs for the loads, e.g. 1,2,3 (default: \\[regulation] be_cores, else every other CPU)."),
    cpu: int = typer.Option(None, "--cpu", help="Pin the program here (default: the task's core)."),
    reads: str = typer.Option(None, "--reads", help="Read ratios of the loads, reads of 10, e.g. 0,5,10 (default: 0…10)."),
    delays: str = typer.Option(None, "--delays", help="Delay-loop iterations of the loads (default: 0…8000, the sweep's 11 values)."),
    quick: bool = typer.Option(False, "--quick", help=f"A small grid: reads {','.join(map(str, QUICK_READS))}, delays {','.join(map(str, QUICK_DELAYS))}."),
    jobs: int = typer.Option(20, "--jobs", help="Jobs per load (launches, for a program that marks no jobs)."),
    warmup: int = typer.Option(3, "--warmup", help="First jobs of each load marked warm-up (the builder drops them)."),
    sample: str = typer.Option(None, "--sample", help="The monitor's sampling interval for the per-job samples (default: \\[regulation] sample, else 50us)."),
    tick: str = typer.Option("1ms", "--tick", help="How often the global counts are recorded."),
    fifo: int = typer.Option(None, "--fifo", help="Run the program at this SCHED_FIFO priority (default: SCHED_OTHER)."),
    buffer: str = typer.Option(None, "--buffer", help="Each load's buffer, e.g. 128MiB (default: 4x the LLC, at least 64MiB)."),
    counter: str = typer.Option("auto", "--counter", help="auto (LLC misses where there is a PMU, else the software counts), software, or a perf event (llc-misses, raw:0x17,0x18)."),
    limit: str = typer.Option("60s", "--limit", help="Stop a point that runs longer than this."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite the output."),
) -> None:
    """Profile a real-time program alone and against the load grid (blin-bandwidth-monitor §3.1): a profile dataset."""
    import json

    int_option(cpu, "--cpu", file, 0, MAX_CPU)
    int_option(jobs, "--jobs", file, 1, U32_MAX)
    int_option(fifo, "--fifo", file, 1, 99)
    try:
        # The program after -- is an input too.
        writable(output, force, "--output", DATASET, inputs=system_inputs(file) + [Path(a) for a in ctx.args[:1]])
        name, core, cores, shares, file_sample = _task_and_cores(file, rt_task, be_cores, cpu)
    except InputError as e:
        fail(e)
    check_program(file, ctx.args)
    if jobs < 1:
        bad(file, "--jobs", f"must be positive, got {jobs}")
    if not 0 <= warmup < jobs:
        bad(file, "--warmup", f"must be 0…{jobs - 1} (below --jobs), got {warmup}")
    sample_ns = duration_option(sample, "--sample", file) if sample else (file_sample or 50_000)
    tick_ns = duration_option(tick, "--tick", file)
    limit_ns = duration_option(limit, "--limit", file)
    read_list = QUICK_READS if quick else READS
    delay_list = QUICK_DELAYS if quick else DELAYS
    if reads is not None:
        read_list = _ints(reads, file, "--reads", 0, 10)
    if delays is not None:
        delay_list = _ints(delays, file, "--delays", 0)
    buffer_bytes = None
    if buffer is not None:
        try:
            buffer_bytes = _core.size_bytes(buffer)
        except ValueError as e:
            bad(file, "--buffer", str(e))
    pmu = _core.pmu_present()
    notices = []
    event = None
    if counter == "auto":
        if pmu:
            event = "llc-misses"
        else:
            notices.append("no hardware PMU: memory counts unavailable; bandwidth from the load generators' own counts and the program's counter page")
    elif counter != "software":
        event = counter
    points = real.grid(read_list, delay_list, configs_for(len(cores)))

    console = Console(stderr=True, soft_wrap=True)
    for n in notices:
        console.print(f"[yellow]note:[/] {n}")
    started = time.perf_counter()
    progress = Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=console, transient=True,
        disable=not console.is_terminal,
    )
    try:
        with progress:
            bar = progress.add_task("alone", total=len(points) + 1)

            def on_point(done: int, total: int, label: str) -> None:
                progress.update(bar, completed=done, description=label)

            result = real.profile(
                list(ctx.args), task=name, rt_cpu=core, be_cpus=cores, points=points, shares=shares,
                sample_ns=sample_ns, line_bytes=_core.machine_line_bytes(), jobs=jobs, warmup=warmup, tick_ns=tick_ns, fifo=fifo,
                buffer_bytes=buffer_bytes, event=event, limit_ns=limit_ns, on_point=on_point,
            )
    except KeyboardInterrupt:
        console.print("interrupted before a complete point: nothing written")
        raise SystemExit(130)
    except InputError as e:
        fail(e)
    except (RuntimeError, ValueError) as e:
        bad(file, "COMMAND", str(e))
    seconds = time.perf_counter() - started
    notices += result.notices
    wrote = None
    if result.table is not None:
        wrote = ds.write(result.table, output)
    alone = result.summary.get(ds.ALONE)
    summary = {
        "output": str(wrote) if wrote else None, "points": result.points_done, "of": result.points,
        "interrupted": result.interrupted, "phases": result.phases,
        "phases_by": "time (the file's work shares)" if result.table is not None and result.table.schema.metadata[b"phases"].startswith(b"by time") else "program marks",
        "jobs_by": "launches" if result.jobs_by_time else "program marks",
        "alone_job_ms": alone[1] / 1e6 if alone else None, "seconds": round(seconds, 2), "notices": notices,
    }
    if as_json:
        print(json.dumps(summary))
    else:
        for n in result.notices:
            console.print(f"[yellow]note:[/] {n}")
        out = Console(soft_wrap=True)
        out.print(f"profiled {name} on CPU {core}: {result.points_done} of {result.points} points (alone + loads on CPUs {','.join(map(str, cores))}) in {seconds:.1f} s")
        if alone:
            out.print(f"  alone: {alone[0]} jobs kept, mean {duration_text(alone[1])}; {result.phases} phases by {summary['phases_by']}")
        loaded = [(k, v) for k, v in result.summary.items() if k != ds.ALONE and v[0]]
        if loaded and alone:
            worst = max(loaded, key=lambda kv: kv[1][1])
            out.print(f"  slowest load: {worst[0]}, mean job {duration_text(worst[1][1])} ({100 * (worst[1][1] / alone[1] - 1):+.1f}% vs alone)")
        if wrote:
            out.print(f"  wrote {wrote}; next: criticore tables build {wrote} -o TABLE.toml")
    if result.interrupted:
        if wrote is None:
            console.print("interrupted: too little measured to write a dataset (needs alone and one load)")
        raise SystemExit(130)
