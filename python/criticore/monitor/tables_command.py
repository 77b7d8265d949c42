"""`criticore tables`: the bandwidth monitor's overhead tables
(blin-bandwidth-monitor §3.2; docs/bandwidth-monitor.md).

- ``build``: a profile dataset (real or simulated, docs/format.md) → an
  overhead-table file;
- ``simulate``: profile a task of a task-system file on the simulator → a
  profile dataset;
- ``evaluate``: §4.3 on the simulator, the file's monitor next to a grid of
  constant loads.

Bad input is one line on stderr (file, field, reason) and exit code 2.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console

from criticore.cli_common import bad, duration_option, fail
from criticore.errors import InputError
from criticore.monitor import dataset as ds
from criticore.monitor import simulated as sim
from criticore.monitor import tables
from criticore.monitor.tables import DEGREES, degree_wins, ns_text, profile_from_dataset
from criticore.outputs import DATASET, TOML, distinct, system_inputs, writable
from criticore.render import table
from criticore.system import check, read_input
from criticore.units import bandwidth_text

tables_app = typer.Typer(
    help="Overhead tables of the bandwidth monitor (blin-bandwidth-monitor §3.2): build one from a profile dataset, or simulate the profiling.",
    no_args_is_help=True,
)


_bad = bad


def _degree(text: str, file: Path) -> int | None:
    t = text.strip().lower()
    if t == "auto":
        return None
    if t.isdigit() and int(t) in DEGREES:
        return int(t)
    _bad(file, "--degree", f"expected auto or {DEGREES[0]}…{DEGREES[-1]}, got {text!r}")


def _shift(shift: int, file: Path) -> int:
    if not 0 <= shift < 64:
        _bad(file, "--shift", f"expected 0…63, got {shift}")
    return shift


@tables_app.command("build")
def build(
    dataset: Path = typer.Argument(..., help="Profile dataset (.parquet; docs/format.md, \"Profile dataset\")."),
    output: Path = typer.Option(..., "--output", "-o", help="Overhead-table file to write (.toml)."),
    sample: str = typer.Option(None, "--sample", help="The monitor's sampling interval, e.g. 50us (default: the dataset's)."),
    shift: int = typer.Option(10, "--shift", help="Table index = bytes moved in one sample >> shift (10: 20.48 MB/s per entry at 50 µs)."),
    degree: str = typer.Option("auto", "--degree", help="Polynomial degree: auto (chosen by replaying the profiled jobs, §3.2) or 1-5."),
    no_packing: bool = typer.Option(False, "--no-packing", help="Skip §3.2's packing (loads changing within a sample)."),
    no_lift: bool = typer.Option(False, "--no-lift", help="Do not raise each curve above its points (docs/bandwidth-monitor.md)."),
    cut_off: str = typer.Option("auto", "--cut-off", help="MB/s beyond which the table reads 0 (§3.2's 3000); auto: 3000, or 1.5x the largest observed bandwidth if that is more."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing table file."),
) -> None:
    """Build the overhead table (one row per phase) from a profile dataset."""
    started = time.perf_counter()
    sample_ns = duration_option(sample, "--sample", dataset) if sample is not None else None
    deg = _degree(degree, dataset)
    _shift(shift, dataset)
    cut = None
    if cut_off != "auto":
        try:
            cut = float(cut_off)
        except ValueError:
            cut = -1.0
        if not cut > 0:
            _bad(dataset, "--cut-off", f"expected auto or a positive bandwidth in MB/s, got {cut_off!r}")
    try:
        writable(output, force, "--output", TOML, inputs=[dataset])
        table = ds.read(dataset)
        prof = tables.profile_from_dataset(table, str(dataset))
        built = tables.build(prof, sample_ns=sample_ns, shift=shift, degree=deg, packing=not no_packing, lift=not no_lift, max_mb_s=cut)
        tables.write_table_file(output, built)
    except InputError as e:
        fail(e)
    _render_build(Console(), dataset, output, built, time.perf_counter() - started)


def _render_build(console: Console, dataset: Path, output: Path, t, seconds: float) -> None:
    prof = t.profile
    console.print(f"[bold]{output}[/bold]: overhead table of {prof.task!r} from {dataset} ({prof.source}, {prof.machine})")
    runs = len(prof.run_ids)
    console.print(
        f"  {prof.n_loads} constant loads in {runs} runs, {prof.alone_runs} alone run(s), {prof.warmup_rows} warm-up rows dropped; "
        f"ExecT alone {prof.exec_ns:,} ns (the largest alone)"
    )
    if t.degree_chosen:
        wins = degree_wins(t.rss)
        how = ", ".join(f"{n} {k}" for k, n in sorted(t.traces.items()))
        console.print(f"  degree [bold]{t.degree}[/bold] (chosen, §3.2: lowest RSS for {wins[t.degree]} of {sum(wins.values())} read-write ratios; job traces: {how})")
    else:
        console.print(f"  degree [bold]{t.degree}[/bold] (given)")
    cut = t.cutoff_index
    console.print(
        f"  {ns_text(t.sample_ns)} samples, shift {t.shift}: {bandwidth_text(t.step_mb_s * 1e6)} per entry; cut-off {bandwidth_text(t.max_mb_s * 1e6)}: "
        f"entries 0…{cut - 1}, 0 from entry {cut} ({bandwidth_text(cut * t.step_mb_s * 1e6)}) on"
        + ("" if t.packing else "; no packing") + ("" if t.lift else "; no lift")
    )
    if prof.phase_sum_error > 1e-3:
        console.print(f"  note: phases cover the whole job only within {100 * prof.phase_sum_error:.2f}% (time outside phases)")
    tab = table()
    for col in ("phase", "ExecT alone (ns)", "ObsB (MB/s)", "max Ovd observed", "max table entry"):
        tab.add_column(col, justify="right")
    for p in range(prof.n_phases):
        tab.add_row(
            str(p + 1), f"{prof.phase_exec_ns[p]:,}", f"{prof.obs_mb_s[p].min():,.0f}–{prof.obs_mb_s[p].max():,.0f}",
            f"{prof.ovd[p].max():.4f}", f"{t.table[p].max():.4f}",
        )
    console.print(tab)
    console.print(f"  built in {seconds:.2f} s")


def _cores(values: list[str], file: Path, cores: int, rt_core: int | None) -> list[int]:
    out: list[int] = []
    for item in values:
        for part in item.split(","):
            part = part.strip()
            if not part.isdigit():
                _bad(file, "--be-cores", f"expected core numbers like 1,2,3, got {item!r}")
            c = int(part)
            if c >= cores:
                _bad(file, "--be-cores", f"core {c} does not exist (the file has {cores} cores)")
            if c == rt_core:
                _bad(file, "--be-cores", f"core {c} runs the real-time task")
            if c in out:
                _bad(file, "--be-cores", f"core {c} given twice")
            out.append(c)
    if not out:
        _bad(file, "--be-cores", "no core given")
    return out


def _rt_and_cores(file: Path, rt_task: str, be_cores: list[str]) -> list[int]:
    """Check FILE, --rt-task and --be-cores: the best-effort core numbers."""
    try:
        read_input(file)
        outline = check(file)
    except InputError as e:
        fail(e)
    rt = next((t for t in outline["tasks"] if t["name"] == rt_task), None)
    if rt is None:
        _bad(file, "--rt-task", f"no task named {rt_task!r}")
    return _cores(be_cores, file, outline["cores"], rt.get("core"))


@tables_app.command("simulate")
def simulate(
    file: Path = typer.Argument(..., help="Task-system file with the real-time task (TOML)."),
    rt_task: str = typer.Option(..., "--rt-task", help="The real-time task to profile (it needs a memory profile; its phases are the table's)."),
    be_cores: list[str] = typer.Option(..., "--be-cores", help="Best-effort cores the loads run on, e.g. 1,2,3 (or repeat the option)."),
    output: Path = typer.Option(..., "--output", "-o", help="Profile dataset to write (.parquet)."),
    sample: str = typer.Option("50us", "--sample", help="Sampling interval of the jobs' traces (samples column)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing dataset."),
) -> None:
    """Profile a task on the simulator (§3.1–3.2): alone and next to constant loads (11 ratios × 10 delays × the symmetric and asymmetric configurations) → a profile dataset."""
    started = time.perf_counter()
    sample_ns = duration_option(sample, "--sample", file)
    cores = _rt_and_cores(file, rt_task, be_cores)
    console = Console()
    try:
        writable(output, force, "--output", DATASET, inputs=system_inputs(file))
        status = console.status("profiling on the simulator…") if console.is_terminal else None
        if status is not None:
            status.start()
        try:
            table = sim.simulated_dataset(file, rt_task, cores, sample_ns=sample_ns)
        except ValueError as e:
            raise InputError(f"{file}: --rt-task: {e}", str(file), "--rt-task", str(e)) from None
        finally:
            if status is not None:
                status.stop()
        ds.write(table, output)
    except InputError as e:
        fail(e)
    prof = profile_from_dataset(table, str(output))
    console.print(f"[bold]{output}[/bold]: profile dataset of {rt_task!r} on the simulator ({prof.machine})")
    console.print(
        f"  {table.num_rows} rows: {prof.alone_runs} alone run and {len(prof.run_ids)} loaded runs ({prof.n_loads} constant loads on cores "
        f"{','.join(map(str, cores))}), {prof.n_phases} phases + the whole job"
    )
    console.print(
        f"  ExecT alone {prof.exec_ns:,} ns; phases alone {', '.join(f'{x:,}' for x in prof.phase_exec_ns)} ns; "
        f"phase-only runs vs whole job: largest gap {prof.phase_sum_error:.2e}"
    )
    console.print(f"  simulated in {time.perf_counter() - started:.2f} s; next: criticore tables build {output} -o TABLE.toml")


@tables_app.command("evaluate")
def evaluate(
    file: Path = typer.Argument(..., help="Task-system file with [regulation] kind = \"monitor\" and its overhead table."),
    rt_task: str = typer.Option(..., "--rt-task", help="The real-time task."),
    be_cores: list[str] = typer.Option(..., "--be-cores", help="Best-effort cores the loads run on, e.g. 1,2,3."),
    duration: str = typer.Option("1s", "--duration", "-d", help="Simulated time per load."),
) -> None:
    """§4.3 on the simulator: the file's monitor next to 50 constant loads, with and without it (a Markdown table)."""
    duration_ns = duration_option(duration, "--duration", file)
    cores = _rt_and_cores(file, rt_task, be_cores)
    loads = sim.microbenchmark_loads(reads=(0, 3, 5, 7, 10), delays_ns=(0, 20, 80, 320, 1280), configs=sim.configs_for(len(cores)))
    try:
        rows = sim.evaluate_monitor(file, rt_task, cores, loads, duration_ns)
    except InputError as e:
        fail(e)
    print("| load | max overhead, no monitor | max overhead, monitor | parallelism mean (min) |")
    print("| --- | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['load'].label()} | {100 * r['max_overhead_none']:.2f}% | {100 * r['max_overhead_monitor']:.2f}% "
            f"| {r['parallelism_mean']:.2f} ({r['parallelism_min']:.2f}) |"
        )
    worst = max(r["max_overhead_monitor"] for r in rows)
    print(f"\n{len(rows)} loads: largest overhead with the monitor {100 * worst:.2f}%")
