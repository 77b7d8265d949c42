"""Issue 13: `simulate` streams its outputs (job records, Perfetto trace,
bandwidth series) to files batch by batch as the engine runs. The files hold
exactly what an in-memory run keeps; Ctrl-C stops a run within a second with
a partial summary (exit 130) and valid files; memory stays flat however long
the simulated time; the progress callback reports and can stop a run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from criticore.simulation import Interrupted, job_table, simulate
from cli_run import sigint_default

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MS = 1_000_000
SECOND = 1_000 * MS
# Records per batch the engine hands over (crates/criticore-py/src/simulate.rs).
BATCH_ROWS = 1 << 16
# Trace text per batch.
TRACE_CHUNK_BYTES = 4 << 20

STREAMED_EXAMPLES = [
    "memguard-bombs.toml",
    "mrs-synthetic.toml",
    "mc2-isolation.toml",
    "mcti/McMt.toml",
    "monitor/rt-with-loads.toml",
    "regulate/four-loads.toml",
]


def task_names(run) -> list[str]:
    return [t["name"] for t in run.outline["tasks"]]


def csv_text(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pcsv.write_csv(table, sink)
    return sink.getvalue().to_pybytes()


def bandwidth_table(run) -> pa.Table:
    """The in-memory series as the streamed file holds it: start_ns, then MB/s per core."""
    mb_s = run.bandwidth_mb_s(run.outline["line_bytes"])
    cols = {"start_ns": np.arange(mb_s.shape[1], dtype="u8") * np.uint64(run.bin_ns)}
    cols.update({f"core{c}_mb_s": mb_s[c] for c in range(mb_s.shape[0])})
    return pa.table(cols)


def sorted_events(trace_text: str) -> list[str]:
    """The trace's events, order-free (the format does not order them)."""
    trace = json.loads(trace_text)
    return sorted(json.dumps(e, sort_keys=True) for e in trace["traceEvents"])


def check_bandwidth_csv(path: Path, expected: pa.Table) -> None:
    assert path.read_bytes() == csv_text(expected)
    got = pcsv.read_csv(path)
    assert got.column_names == expected.column_names
    assert got["start_ns"].to_pylist() == expected["start_ns"].to_pylist()
    for name in expected.column_names[1:]:
        # Floats exactly as computed, through their text form.
        assert np.array_equal(got[name].to_numpy(), expected[name].to_numpy()), name


@pytest.mark.parametrize("example", STREAMED_EXAMPLES)
def test_streamed_files_hold_what_an_in_memory_run_keeps(example, tmp_path):
    path = EXAMPLES / example
    duration = 2 * SECOND
    kept = simulate(path, duration, jobs=True, trace=True, bin_ns=MS)
    jobs = job_table(kept, task_names(kept))
    bandwidth = bandwidth_table(kept)
    assert bandwidth.num_rows == duration // MS

    streamed = simulate(path, duration, jobs_file=tmp_path / "j.parquet", trace_file=tmp_path / "t.json",
                        bandwidth_file=tmp_path / "bw.csv", bin_ns=MS)
    # Streaming keeps nothing in memory and reports the same run.
    assert streamed.jobs is None and streamed.trace is None and streamed.bandwidth is None
    assert streamed.report == kept.report
    assert not streamed.partial
    assert pq.read_table(tmp_path / "j.parquet").equals(jobs)
    check_bandwidth_csv(tmp_path / "bw.csv", bandwidth)
    assert sorted_events((tmp_path / "t.json").read_text()) == sorted_events(kept.trace)

    # The other writers: jobs as CSV, bandwidth as Parquet.
    simulate(path, duration, jobs_file=tmp_path / "j.csv", bandwidth_file=tmp_path / "bw.parquet", bin_ns=MS)
    assert (tmp_path / "j.csv").read_bytes() == csv_text(jobs)
    assert pq.read_table(tmp_path / "bw.parquet").equals(bandwidth)


def test_several_batches_of_job_records_and_bins(tmp_path):
    # mrs-synthetic completes about 101.7 jobs per simulated second: 1,600 s
    # gives 162,668 job records (3 batches of 65,536) and 160,000 bins of 10 ms.
    path, duration, bin_ns = EXAMPLES / "mrs-synthetic.toml", 1_600 * SECOND, 10 * MS
    kept = simulate(path, duration, jobs=True, bin_ns=bin_ns)
    jobs = job_table(kept, task_names(kept))
    bandwidth = bandwidth_table(kept)
    assert jobs.num_rows > 2 * BATCH_ROWS and bandwidth.num_rows > 2 * BATCH_ROWS
    assert jobs.num_rows == kept.report["completed"]

    simulate(path, duration, jobs_file=tmp_path / "j.parquet", bandwidth_file=tmp_path / "bw.csv", bin_ns=bin_ns)
    assert pq.read_table(tmp_path / "j.parquet").equals(jobs)
    # One Parquet row group per batch written.
    assert pq.ParquetFile(tmp_path / "j.parquet").num_row_groups == -(-jobs.num_rows // BATCH_ROWS)
    check_bandwidth_csv(tmp_path / "bw.csv", bandwidth)

    simulate(path, duration, jobs_file=tmp_path / "j.csv", bandwidth_file=tmp_path / "bw.parquet", bin_ns=bin_ns)
    assert (tmp_path / "j.csv").read_bytes() == csv_text(jobs)
    assert pq.read_table(tmp_path / "bw.parquet").equals(bandwidth)


def test_a_trace_of_several_chunks(tmp_path):
    # About 47 kB of trace per simulated second here: 250 s is some 11.7 MB,
    # three chunks of 4 MiB.
    path, duration, bin_ns = EXAMPLES / "mrs-synthetic.toml", 250 * SECOND, 10 * MS
    kept = simulate(path, duration, trace=True, bin_ns=bin_ns)
    assert len(kept.trace) > 2 * TRACE_CHUNK_BYTES
    simulate(path, duration, trace_file=tmp_path / "t.json", bin_ns=bin_ns)
    assert sorted_events((tmp_path / "t.json").read_text()) == sorted_events(kept.trace)


# --------------------------------------------------------------------------- Ctrl-C

LONG = 100_000 * SECOND  # memguard-bombs runs a few hundred simulated s per wall-clock s: minutes
# The trace's counter bins over LONG: 10 s keeps them under simulate's 10 million per core.
LONG_BIN = "10s"


def interrupt(args: list[str], trace: Path) -> tuple[subprocess.CompletedProcess, float]:
    """Start `criticore simulate ARGS`, send it SIGINT once the engine has
    written some trace, and return its outcome and the seconds from the
    signal to its exit."""
    proc = subprocess.Popen([sys.executable, "-m", "criticore", "simulate", *args], cwd=ROOT, stdin=subprocess.DEVNULL, preexec_fn=sigint_default,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (trace.exists() and trace.stat().st_size > 0):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no trace written within 60 s"
            time.sleep(0.01)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), waited


def test_ctrl_c_gives_a_partial_json_summary_and_valid_files(tmp_path):
    jobs, trace = tmp_path / "j.parquet", tmp_path / "t.json"
    p, waited = interrupt(["examples/memguard-bombs.toml", "--duration", f"{LONG // SECOND}s", "--jobs", str(jobs),
                           "--trace", str(trace), "--bin", LONG_BIN, "--json"], trace)
    assert p.returncode == 130, p.stderr
    assert waited < 1.0, f"exit {waited:.2f} s after SIGINT"
    report = json.loads(p.stdout)
    assert report["partial"] is True
    assert 0 < report["duration_ns"] < LONG
    table = pq.read_table(jobs)
    assert table.num_rows == report["completed"] > 0
    assert pc.max(table["finish_ns"]).as_py() <= report["duration_ns"]
    events = json.loads(trace.read_text())["traceEvents"]
    assert events
    # What was written is the run of the time reached.
    fresh = simulate(EXAMPLES / "memguard-bombs.toml", report["duration_ns"], jobs=True)
    assert {k: v for k, v in fresh.report.items() if k != "partial"} == {k: v for k, v in report.items() if k != "partial"}
    assert table.equals(job_table(fresh, task_names(fresh)))


def test_ctrl_c_marks_the_printed_summary_partial(tmp_path):
    jobs, trace = tmp_path / "j.csv", tmp_path / "t.json"
    p, waited = interrupt(["examples/memguard-bombs.toml", "--duration", f"{LONG // SECOND}s", "--jobs", str(jobs),
                           "--trace", str(trace), "--bin", LONG_BIN], trace)
    assert p.returncode == 130, p.stderr
    assert waited < 1.0, f"exit {waited:.2f} s after SIGINT"
    assert any(line.startswith("partial") for line in p.stdout.splitlines()), p.stdout
    assert "stopped by Ctrl-C" in p.stdout
    assert pcsv.read_csv(jobs).num_rows > 0
    json.loads(trace.read_text())


# --------------------------------------------------------------------------- memory

PEAK_RSS = """
import resource, sys
from criticore.cli import main
sys.argv = ["criticore", "simulate", *sys.argv[1:]]
try:
    main()
except SystemExit as e:
    assert not e.code, e.code
print("maxrss_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def peak_rss_kb(*args: str) -> tuple[int, dict]:
    """Peak resident memory of the CLI run in a fresh interpreter, and its JSON summary."""
    p = subprocess.run([sys.executable, "-c", PEAK_RSS, *args, "--json"], cwd=ROOT, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    word, kb = p.stderr.strip().splitlines()[-1].split()
    assert word == "maxrss_kb"
    return int(kb), json.loads(p.stdout)


@pytest.mark.parametrize("example", ["mrs-synthetic.toml", "mc2-llc-heavy.toml"])
def test_memory_does_not_grow_with_simulated_time(example):
    # Summary only: running statistics, nothing kept per job. (Overloaded
    # examples such as memguard-bombs grow with their backlog of pending jobs,
    # which is the system's state, not output.)
    short, short_report = peak_rss_kb(f"examples/{example}", "--duration", "60s")
    long, long_report = peak_rss_kb(f"examples/{example}", "--duration", "3600s")
    assert long_report["completed"] > 50 * short_report["completed"]
    assert long <= short + 5 * 1024, (short, long)


def test_memory_of_a_streamed_run_does_not_grow_with_simulated_time(tmp_path):
    # Job records to Parquet: from a few batches on, the peak stays where it is
    # (2,000 s: 203,333 records; 12,000 s: 1.2 million).
    runs = []
    for seconds in (2_000, 12_000):
        out = tmp_path / f"{seconds}.parquet"
        runs.append(peak_rss_kb("examples/mrs-synthetic.toml", "--duration", f"{seconds}s", "--jobs", str(out)))
        assert pq.ParquetFile(out).metadata.num_rows == runs[-1][1]["completed"]
        out.unlink()
    (short, _), (long, _) = runs
    assert long <= short + 5 * 1024, (short, long)


# --------------------------------------------------------------------------- progress


def test_progress_reports_and_ctrl_c_in_it_stops_the_run():
    path, duration = EXAMPLES / "mrs-synthetic.toml", 10_000_000 * SECOND  # hours of wall time
    calls: list[tuple[int, int]] = []

    def progress(simulated_ns: int, jobs: int) -> None:
        calls.append((simulated_ns, jobs))
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        simulate(path, duration, progress=progress)
    assert isinstance(stop.value, KeyboardInterrupt)
    assert len(calls) == 3
    times = [t for t, _ in calls]
    jobs = [j for _, j in calls]
    assert times == sorted(times) and times[-1] > times[0] >= 0
    assert jobs == sorted(jobs) and jobs[-1] > 0

    partial = stop.value.partial
    assert partial.partial and partial.report["partial"] is True
    reached = partial.report["duration_ns"]
    assert times[-1] <= reached < duration
    assert partial.report["completed"] >= jobs[-1]

    # A stopped run is the run of the time it reached.
    whole = simulate(path, reached)
    assert not whole.partial
    assert whole.report["per_task"] == partial.report["per_task"]
    assert {k: v for k, v in whole.report.items() if k != "partial"} == {
        k: v for k, v in partial.report.items() if k != "partial"}
