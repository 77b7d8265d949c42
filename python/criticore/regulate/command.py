"""`criticore regulate`: MemGuard, MCTI, MRS or the bandwidth monitor on real processes."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import typer
from rich.console import Console
from rich.live import Live

import criticore.regulate as reg
from criticore.cli_common import MAX_CPU, duration_option, fail, int_option
from criticore.errors import InputError
from criticore.outputs import TABLE, TRACE, distinct, not_input, system_inputs, writable, write_table, write_text
from criticore.regulate.compare import RunClock, check_simulable, compare_with_simulation
from criticore.regulate.render import live_table, render_compare, render_run
from criticore.system import check


def regulate(
    ctx: typer.Context,
    file: Path = typer.Argument(None, help="Task-system file: tasks with `command`s and a \\[regulation] table (none with --clean)."),
    mode: str = typer.Option(None, "--mode", "-m", help="memguard, mcti, mrs or monitor; default: the file's \\[regulation] kind."),
    duration: str = typer.Option(None, "--duration", "-d", help="Stop after this long, e.g. 10s (default: when every process ended)."),
    period: str = typer.Option(None, "--period", help="Regulation period, e.g. 1ms (default: the file's)."),
    poll: str = typer.Option(None, "--poll", help="Also read every counter this often (default: on overflow signals and period starts)."),
    counter: str = typer.Option("auto", "--counter", help="auto, shm, llc-misses, raw:0x17,0x18 or sw:page-faults (docs/runtime.md)."),
    throttle: str = typer.Option("signal", "--throttle", help="signal (pidfd SIGSTOP/SIGCONT) or freezer (cgroup)."),
    attach: list[str] = typer.Option(None, "--attach", help="PID=TASK: regulate a running process as that task (repeatable)."),
    task: str = typer.Option(None, "--task", help="The task that the command after -- runs."),
    log: Path = typer.Option(None, "--log", help="Write the per-period log (.parquet or .csv)."),
    trace: Path = typer.Option(None, "--trace", help="Write a Perfetto trace (JSON), the simulator's layout."),
    output: Path = typer.Option(None, "--output", help="Append the commands' output to this file (default: discarded)."),
    fifo: int = typer.Option(None, "--fifo", help="SCHED_FIFO priority of the regulator (1-99; default 90 as root, so what it regulates cannot delay it; 0 = leave as is)."),
    no_lead: bool = typer.Option(False, "--no-lead", help="Stop a group when its count reaches the budget, not earlier by the learnt stop lag (docs/runtime.md)."),
    regulator_cpu: int = typer.Option(None, "--regulator-cpu", help="Pin the regulator to this CPU, best a best-effort one (default: wherever it wakes)."),
    compare_sim: bool = typer.Option(False, "--compare-sim", help="Then simulate the file as long, under the same regulation, and print measured vs simulated: per periodic `criticore load --file F --task T` task its jobs, misses and response times, per group its use of the budget and time stopped; at the file's \\[regulation] period, so not with --period (docs/runtime.md)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    recalibrate: bool = typer.Option(False, "--recalibrate", help="Size the periodic workers' phases on this machine afresh, not from the sizing remembered for an hour (docs/runtime.md, \"Set-up before time 0\")."),
    clean: bool = typer.Option(False, "--clean", help="Only undo what runs killed together with their watchdog left (their tasks, real-time policies, frozen cgroups, counter pages); one line per thing undone. Every run does this first too."),
) -> None:
    """Regulate real processes in user space: MemGuard, MCTI, MRS or the bandwidth monitor on the file's tasks. Exit 130 on Ctrl-C, 1 when every task failed before the run's end (docs/runtime.md)."""
    if clean:
        if file is not None:
            fail(InputError(f"{file}: --clean: takes no FILE", str(file), "--clean", "takes no FILE"))
        for line in reg.clean():
            print(line)
        return
    if file is None:
        fail(InputError("regulate: FILE: missing (a task-system file, or --clean)", "regulate", "FILE", "missing (a task-system file, or --clean)"))
    if recalibrate:
        # Read by every periodic worker this run launches (they inherit it).
        os.environ["CRITICORE_RECALIBRATE"] = "1"
    try:
        _regulate(ctx, file, mode, duration, period, poll, counter, throttle, attach, task, log, trace, output, fifo, no_lead, regulator_cpu, compare_sim, as_json, force)
    except KeyboardInterrupt:
        print("criticore regulate: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


def _regulate(ctx, file, mode, duration, period, poll, counter, throttle, attach, task, log, trace, output, fifo, no_lead, regulator_cpu, compare_sim, as_json, force) -> None:
    int_option(fifo, "--fifo", file, 0, 99, " (1-99; 0 = leave as is)")
    int_option(regulator_cpu, "--regulator-cpu", file, 0, MAX_CPU)
    durations = {}
    for value, option in ((duration, "--duration"), (period, "--period"), (poll, "--poll")):
        durations[option] = duration_option(value, option, file) if value is not None else None
    pairs = []
    for item in attach or []:
        pid, _, name = item.partition("=")
        if not pid.isdigit() or not name:
            fail(InputError(f"{file}: --attach: expected PID=TASK, got {item!r}", str(file), "--attach", f"expected PID=TASK, got {item!r}"))
        int_option(int(pid), "--attach", file, 1, 2**31 - 1, " (a process id)")
        pairs.append((int(pid), name))
    command = None
    if ctx.args:
        if not task:
            fail(InputError(f"{file}: --task: name the task the command after -- runs", str(file), "--task", "name the task the command after -- runs"))
        command = (task, list(ctx.args))
    try:
        # Checked before anything is launched: no output over an input.
        inputs = system_inputs(file)
        for path, option, suffixes in ((log, "--log", TABLE), (trace, "--trace", TRACE)):
            if path is not None:
                writable(path, force, option, suffixes, inputs=inputs)
        if output is not None:
            not_input(output, "--output", inputs)
        distinct([(log, "--log"), (trace, "--trace"), (output, "--output")])
        outline = check(file)
        if compare_sim:
            check_simulable(file, mode, durations["--period"])
        console = Console()
        live = None if as_json or not console.is_terminal else Live(console=console, auto_refresh=False)

        clock = RunClock() if compare_sim else None

        def show(snapshot: dict) -> bool:
            if clock is not None:
                clock.seen(snapshot)
            if live is not None:
                live.update(live_table(snapshot, 0, outline["line_bytes"]), refresh=True)
            return True

        if live is not None:
            live.start()
        job_dir = tempfile.TemporaryDirectory(prefix="criticore-jobs-") if compare_sim else None
        try:
            run = reg.run(
                file,
                mode=mode,
                duration_ns=durations["--duration"],
                period_ns=durations["--period"],
                poll_ns=durations["--poll"],
                counter=counter,
                throttle=throttle,
                attach=pairs,
                command=command,
                output=str(output) if output else None,
                fifo_priority=(90 if os.geteuid() == 0 else None) if fifo is None else (fifo or None),
                on_snapshot=show,
                lead=not no_lead,
                job_log_dir=job_dir.name if job_dir else None,
                regulator_cpu=regulator_cpu,
            )
        finally:
            if live is not None:
                live.stop()
        if log is not None:
            write_table(run.table(), log, "--log")
        if trace is not None:
            write_text(trace, run.trace_json(), "--trace")
        compared = None
        if job_dir is not None:
            with job_dir:
                compared = compare_with_simulation(file, run, Path(job_dir.name), clock)
    except InputError as e:
        fail(e)
    if as_json:
        extra = {} if compared is None else {"compare_sim": compared}
        print(json.dumps({**run.summary, "per_group": run.per_group(), "monitor": run.monitor_summary(), **extra}, indent=2))
    else:
        render_run(console, str(file), run, outline["line_bytes"])
        if compared is not None:
            render_compare(console, compared)
        for label, path in (("per-period log", log), ("trace", trace)):
            if path is not None:
                console.print(f"  {label}: {path}")
    # Ctrl-C (SIGINT) or SIGTERM ended the run: what ran is shown, and the
    # exit is 130 as for `simulate` and `study`.
    if run.summary["end"] == "interrupted":
        raise SystemExit(130)
    if run.summary.get("tasks_failed"):
        print(f"criticore regulate: {file}: every task ended with a failure before the run's end (see the notices)", file=sys.stderr)
        raise SystemExit(1)
