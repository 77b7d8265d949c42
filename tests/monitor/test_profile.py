"""Issue 10: `criticore profile FILE -- CMD` (blin-bandwidth-monitor §3.1).

- jobs_of on hand-made recordings: phase times from marks, by time when
  unmarked, bytes read off the counts, samples from the job's begin;
- the bundled C program (examples/profile/rt-program.c, built with cc) profiled
  on this machine: per-phase timing, a one-line notice that counters are
  unavailable, bytes from the generators' and the program's own counts; the
  table built from it drives the simulator's monitor;
- a program that marks nothing: one job per launch, phases by the file's work;
- bad input: one line, exit code 2; Ctrl-C: exit 130, nothing left running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from criticore.monitor import dataset as ds
from criticore.monitor.real import JOB_BEGIN, JOB_END, PHASE, Recording, jobs_of
from regulate.test_regulate import CLI, cleanup, descendants, one_line_error
from cli_run import sigint_default

ROOT = Path(__file__).resolve().parents[2]
#: Lines the bundled program touches per job (examples/profile/rt-program.c: 10 per iteration).
PROGRAM_LINES = 10 * (16000 + 40000 + 2400 + 16000)
TWO_CPUS = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs a CPU for the load")


def _exe(pid: int) -> str | None:
    """The program a process runs, or None once it has exited (it may between two reads)."""
    try:
        return os.path.realpath(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return None


def recording(events: list[tuple[int, int, int]], ticks=(0, 10_000), lines=(0, 10_000), end="jobs", start=0, exit_ns=10_000) -> Recording:
    t, k, a = (np.array(x, dtype=np.int64) for x in zip(*events)) if events else (np.zeros(0, np.int64),) * 3
    return Recording(
        tick_ns=np.array(ticks, dtype=np.int64), lines=np.array(lines, dtype=np.int64), event_t_ns=t, event_kind=k,
        event_arg=a, start_ns=start, exit_ns=exit_ns, end=end, exit_code=0,
    )


# --------------------------------------------------------------------------- jobs_of, by hand


def test_phases_from_marks_bytes_from_the_counts_samples_from_the_begin():
    # One line per ns, 2 bytes per line. Job 1000…4000: phase 0 from its begin
    # (mark at 1100), phase 1 at 2500, phase 0 again at 3500.
    rec = recording([(1000, JOB_BEGIN, 0), (1100, PHASE, 0), (2500, PHASE, 1), (3500, PHASE, 0), (4000, JOB_END, 0)])
    (job,) = jobs_of(rec, [1.0], sample_ns=1000, line_bytes=2)
    assert (job.begin_ns, job.end_ns, job.by_time) == (1000, 4000, False)
    assert job.phase_ns == [1500 + 500, 1000]
    assert job.phase_bytes == [2 * 2000, 2 * 1000]
    assert job.samples == [2000, 2000, 2000]  # three whole samples of 1000 ns


def test_counts_are_linear_between_ticks():
    # 0 lines at 0, 100 at 1000, 100 at 2000: the job 500…1500 moved 50 + 0 lines.
    rec = recording([(500, JOB_BEGIN, 0), (1500, JOB_END, 0)], ticks=(0, 1000, 2000), lines=(0, 100, 100))
    (job,) = jobs_of(rec, [1.0], sample_ns=400, line_bytes=64)
    assert job.phase_bytes == [50 * 64]
    # Samples 500–900 (40 lines), 900–1300 (10 + 0 lines).
    assert job.samples == [40 * 64, 10 * 64]


def test_the_programs_own_count_lands_in_its_jobs_not_in_the_idle_time_around_them():
    # Ticks at 0, 1000, 2000; the program counted 300 lines by 1000 and 300 more
    # by 2000, inside jobs 200…500 and 1200…1300 (+ 1900…2000, still running).
    # Per tick its count spreads over the job time in it: 300 over 300 ns, 300
    # over 100 + 100 ns. The loads add 1 line per ns.
    rec = recording(
        [(200, JOB_BEGIN, 0), (500, JOB_END, 0), (1200, JOB_BEGIN, 1), (1300, JOB_END, 1), (1900, JOB_BEGIN, 2)],
        ticks=(0, 1000, 2000), lines=(0, 1000, 2000),
    )
    rec.program_lines = np.array([0, 300, 600])
    a, b = jobs_of(rec, [1.0], sample_ns=100, line_bytes=1)
    assert a.phase_bytes == [300 + 300] and b.phase_bytes == [150 + 100]
    assert a.samples == [200] * 3 and b.samples == [250]


def test_unmarked_phases_follow_the_files_work_shares():
    rec = recording([(1000, JOB_BEGIN, 0), (2000, JOB_END, 0)])
    (job,) = jobs_of(rec, [0.25, 0.5, 0.25], sample_ns=10_000, line_bytes=1)
    assert job.by_time and job.phase_ns == [250, 500, 250] and job.phase_bytes == [250, 500, 250]
    assert job.samples == []  # shorter than one sample


def test_a_job_not_ended_while_recorded_is_left_out_and_no_marks_means_one_execution():
    rec = recording([(1000, JOB_BEGIN, 0), (2000, JOB_END, 0), (3000, JOB_BEGIN, 1), (20_000, JOB_END, 1)])
    assert [j.begin_ns for j in jobs_of(rec, [1.0], 1000, 1)] == [1000]
    # No marks: the execution from launch (100) to exit (900) is the job.
    (job,) = jobs_of(recording([], start=100, exit_ns=900, end="exited"), [0.5, 0.5], 1000, 1)
    assert (job.begin_ns, job.end_ns, job.phase_ns) == (100, 900, [400, 400])
    # Killed or failed: no job.
    assert jobs_of(recording([], end="limit"), [1.0], 1000, 1) == []


# --------------------------------------------------------------------------- real runs


@pytest.fixture(scope="module")
def rt_program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rt") / "rt-program"
    cc = subprocess.run(["cc", "-O2", "-Wall", "-Werror", f"-I{ROOT / 'include'}", str(ROOT / "examples/profile/rt-program.c"), "-o", str(out)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    return out


def system(tmp: Path, extra: str = "", period: str = "25ms") -> Path:
    """This machine: the real-time task on CPU 0, loads on CPU 1; four phases like the program's."""
    path = tmp / "rt.toml"
    path.write_text(
        '[platform]\ncores = 2\nllc = { size = "32MiB", ways = 16, colors = 16, line = "64B" }\n\n'
        '[regulation]\nkind = "monitor"\nrt_task = "rt"\nbe_cores = [1]\nsample = "250us"\nthreshold = 0.05\n'
        'overhead_table = "table.toml"\n\n'
        f'[[task]]\nname = "rt"\ncore = 0\nperiod = "{period}"\npet = "12ms"\n'
        'memory = { wss = "8MiB", pattern = "random", phases = [\n'
        '  { work = "3ms", accesses_per_ms = 30000, read_fraction = 0.8 },\n'
        '  { work = "6ms", accesses_per_ms = 60000, read_fraction = 0.2 },\n'
        '  { work = "1500us", accesses_per_ms = 10000, read_fraction = 0.9 },\n'
        '  { accesses_per_ms = 40000, read_fraction = 0.6 } ] }\n\n'
        '[[task]]\nname = "load"\ncore = 1\nperiod = "10s"\npet = "10s"\n'
        'memory = { wss = "128MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 100000 }\n' + extra
    )
    return path


def profile(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    cli = subprocess.Popen([*CLI, "profile", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    try:
        out, err = cli.communicate(timeout=timeout)
    finally:
        seen.update(descendants(cli.pid))
        cli.kill()
        cli.wait(timeout=10)
        cleanup(sorted(seen))
    return subprocess.CompletedProcess(cli.args, cli.returncode, out, err)


@TWO_CPUS
def test_the_bundled_program_profiled_here_builds_a_table_that_drives_the_simulated_monitor(tmp_path, rt_program):
    file = system(tmp_path)
    out = tmp_path / "p.parquet"
    jobs, warmup = 6, 2
    r = profile(str(file), "-o", str(out), "--reads", "0,10", "--delays", "0", "--jobs", str(jobs), "--warmup", str(warmup), "--", str(rt_program), "1000", "25000")
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if "PMU" in ln]
    if not __import__("criticore")._core.pmu_present():
        assert len(notes) == 1 and "load generators' own counts" in notes[0], r.stderr
    t = ds.read(out)
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    assert (meta["source"], meta["task"], meta["be_cores"], meta["phases"]) == ("real", "rt", "1", "program marks")
    rows = t.to_pylist()
    # Alone + 2 loads, `jobs` jobs each (the program is stopped after them), 4 phases + the job row.
    runs = {r["run"] for r in rows}
    assert len(runs) == 3 * jobs and len(rows) == 3 * jobs * 5
    assert sum(r["warmup"] for r in rows if r["phase"] == -1) == 3 * warmup
    by_run: dict[int, dict] = {}
    for row in rows:
        by_run.setdefault(row["run"], {})[row["phase"]] = row
    for run in by_run.values():
        # The phases' marks tile the job: their times add up to it exactly, and so do their bytes.
        assert sum(run[p]["exec_ns"] for p in range(4)) == run[-1]["exec_ns"]
        assert abs(sum(run[p]["bytes"] for p in range(4)) - run[-1]["bytes"]) <= 4
        assert len(run[-1]["samples"]) == run[-1]["exec_ns"] // 250_000
    # Alone, the global traffic is the program's own count: PROGRAM_LINES a job,
    # spread over the ticks (linear between them), so over all alone jobs within a job's worth.
    alone = [run[-1]["bytes"] for run in by_run.values() if run[-1]["load"] == "alone"]
    assert abs(sum(alone) - jobs * PROGRAM_LINES * 64) <= PROGRAM_LINES * 64, (sum(alone), jobs * PROGRAM_LINES * 64)
    # Next to a load the jobs' traffic is the program's plus the generator's:
    # more than the program's count alone accounts for, beyond the job's worth
    # the spreading over ticks may shift (how much more depends on the CPU the
    # generator gets on a busy host).
    for label in {run[-1]["load"] for run in by_run.values()} - {"alone"}:
        moved = sum(run[-1]["bytes"] for run in by_run.values() if run[-1]["load"] == label)
        assert moved > (jobs + 1) * PROGRAM_LINES * 64, (label, moved)

    table = tmp_path / "table.toml"
    b = subprocess.run([*CLI, "tables", "build", str(out), "-o", str(table)], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    from criticore.simulation import simulate

    run = simulate(file, 200_000_000, jobs=True)
    details = run.report["regulation"]["details"]
    rt_jobs = int((run.jobs["task"] == 0).sum())
    # 200 ms of 25 ms periods: 8 jobs released, each finished one with the
    # monitor's parallelism. How many finish depends on the table measured
    # here: from a noisy run (alone jobs slowed by the host as much as the
    # loads slow them) its overheads are small, the monitor hardly suspends,
    # and the simulated interference made 3 of 8 late once (2026-11-24).
    rt = run.report["per_task"][0]
    assert rt["released"] == 8 and rt_jobs == rt["completed"] >= 1
    assert len(details["parallelism"]) == rt_jobs


@TWO_CPUS
def test_a_program_that_marks_nothing_is_one_job_per_launch_split_by_the_files_work(tmp_path):
    file = system(tmp_path)
    out = tmp_path / "p.parquet"
    busy = "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done"
    r = profile(str(file), "-o", str(out), "--reads", "5", "--delays", "0", "--jobs", "3", "--warmup", "1", "--", "sh", "-c", busy)
    assert r.returncode == 0, r.stderr
    t = ds.read(out)
    assert t.schema.metadata[b"phases"].startswith(b"by time")
    rows = t.to_pylist()
    assert len({r["run"] for r in rows}) == 2 * 3
    for run in {r["run"] for r in rows}:
        ph = {r["phase"]: r["exec_ns"] for r in rows if r["run"] == run}
        # Work 3 ms, 6 ms, 1.5 ms and the rest of the 12 ms PET: shares 1/4, 1/2, 1/8, 1/8.
        for p, share in enumerate([0.25, 0.5, 0.125, 0.125]):
            assert abs(ph[p] - share * ph[-1]) <= 1, (p, ph)


def test_bad_input_is_one_line_and_exit_code_2(tmp_path):
    file = system(tmp_path)
    out = str(tmp_path / "p.parquet")
    one_line_error(profile(str(file), "-o", out), "COMMAND", "--")
    one_line_error(profile(str(file), "-o", out, "--rt-task", "nope", "--", "true"), "--rt-task", "nope")
    one_line_error(profile(str(file), "-o", out, "--be-cores", "0", "--", "true"), "--be-cores", "real-time program")
    one_line_error(profile(str(file), "-o", out, "--be-cores", "64", "--", "true"), "--be-cores", "does not exist")
    one_line_error(profile(str(file), "-o", out, "--reads", "11", "--", "true"), "--reads")
    one_line_error(profile(str(file), "-o", out, "--jobs", "3", "--warmup", "3", "--", "true"), "--warmup")
    one_line_error(profile(str(file), "-o", out, "--quick", "--", "/nonexistent/rt-program"), "COMMAND", "/nonexistent/rt-program")
    (tmp_path / "exists.parquet").write_text("x")
    one_line_error(profile(str(file), "-o", str(tmp_path / "exists.parquet"), "--", "true"), "--output", "--force")
    assert (tmp_path / "exists.parquet").read_text() == "x"


@TWO_CPUS
def test_ctrl_c_stops_cleanly_keeping_what_was_measured(tmp_path, rt_program):
    file = system(tmp_path)
    out = tmp_path / "p.parquet"
    cli = subprocess.Popen(
        [*CLI, "profile", str(file), "-o", str(out), "--jobs", "5", "--warmup", "1", "--", str(rt_program), "1000", "25000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default,
    )
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        # Wait until the program of the third point or later runs (two complete points to keep).
        launched = 0
        last = None
        while time.monotonic() < deadline and launched < 3:
            kids = [p for p in descendants(cli.pid) if _exe(p) == str(rt_program)]
            if kids and kids[0] != last:
                launched, last = launched + 1, kids[0]
            seen.update(kids)
            time.sleep(0.01)
        assert launched >= 3, "the third point never started"
        cli.send_signal(signal.SIGINT)
        _, err = cli.communicate(timeout=10)
        assert cli.returncode == 130, err
        assert "Traceback" not in err
        for pid in seen:
            assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], f"{pid} still runs"
        t = ds.read(out)  # what was measured is a valid dataset
        assert {r["load"] for r in t.to_pylist()} >= {"alone"}
    finally:
        seen.update(descendants(cli.pid))
        cli.kill()
        cli.wait(timeout=10)
        cleanup(sorted(seen))


# --------------------------------------------------------------------------- experiment monitor-real


def _table(tmp: Path, overhead: float) -> None:
    phases = "".join(f"[[phase]]\noverhead = [{overhead}]\n" for _ in range(4))
    (tmp / "table.toml").write_text(f'task = "rt"\nsample = "250us"\nshift = 10\nbe_cores = 1\n{phases}')


@TWO_CPUS
@pytest.mark.parametrize("overhead", [0.0, 10.0])
def test_the_experiment_on_this_machine_suspends_as_the_table_says(tmp_path, rt_program, overhead):
    """A table of zeros never suspends: every job keeps all its parallelism.
    A table of 10 passes the 5% threshold at the first sample (10 × 0.25 ms /
    12 ms > 0.05 − 0.25 / 12): the loads are suspended about one sample into
    every job, well before its middle.

    What holds on any host, idle or busy: the period (and so the deadline) is
    250 ms, far beyond a job's time even when other processes share the
    program's CPU (with a 25 ms deadline, on a busy host every job ended by its
    deadline and none counted); how many jobs ended is bounded by the periods
    in the measured window, not by how fast the host is."""
    period_ns, duration_ns = 250_000_000, 1_000_000_000
    file = system(tmp_path, period="250ms")
    _table(tmp_path, overhead)
    out = tmp_path / "exp"
    cli = subprocess.Popen(
        [*CLI, "experiment", "monitor-real", str(file), "--reads", "5", "--delays", "0", "--jobs", "6", "--warmup", "1",
         "-d", "1s", "-o", str(out), "--", str(rt_program), "100000", str(period_ns // 1000)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    seen: set[int] = set()
    try:
        _, err = cli.communicate(timeout=60)
    finally:
        seen.update(descendants(cli.pid))
        cli.kill()
        cli.wait(timeout=10)
        cleanup(sorted(seen))
    assert cli.returncode == 0, err
    (row,) = pq.read_table(out / "monitor.parquet").to_pylist()
    # Jobs that began in the measured 1 s window: at most one per period, one more for a job straddling its start.
    assert 1 <= row["jobs"] == len(row["parallelism"]) == len(row["overheads_monitor"]) <= duration_ns // period_ns + 1
    assert len(row["overheads_none"]) == 5
    par = np.array(row["parallelism"])
    if overhead == 0.0:
        assert (par == 1.0).all()
    else:
        # Suspended in every job, in most well before its middle (on a busy
        # host the monitor's first samples may come late in a job or two).
        assert (par > 0).all() and (par < 1.0).all() and float(np.median(par)) < 0.5, par
    assert (out / "fig8-overhead.png").stat().st_size > 0 and (out / "fig9-parallelism.png").stat().st_size > 0
