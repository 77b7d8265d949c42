"""Issue 13: many task systems at once. `criticore simulate DIR` (or a quoted
glob, or several files) and `criticore.batch.simulate_many` give one summary
row per system, equal to what a single simulation of that file reports; bad
inputs are one-line errors; Ctrl-C keeps the rows simulated so far."""

from __future__ import annotations

import json
import os
import pty
import random
import re
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from criticore import _core
from criticore.simulation.batch import ROW_FIELDS, simulate_many
from criticore.simulation import Interrupted, simulate
from cli_run import sigint_default

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CRITICORE = Path(sys.executable).parent / "criticore"
MS = 1_000_000
SECOND = 1_000 * MS

# The run's totals a row repeats from the single-file report.
TOTALS = ("scheduler", "duration_ns", "partial", "events", "released", "completed", "deadline_misses", "unfinished",
          "max_response_ns", "mean_response_ns", "max_tardiness_ns", "preemptions", "migrations", "memory_requests",
          "memory_stall_ns")


def run(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([str(CRITICORE), *map(str, args)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def utilization(path: Path) -> float:
    """Σ PET/period at Level C, from the file itself."""
    total = 0.0
    for task in tomllib.loads(path.read_text())["task"]:
        pet = task["pet"] if isinstance(task["pet"], str) else task["pet"]["C"]
        total += _core.duration_ns(pet) / _core.duration_ns(task["period"])
    return total


def check_row(row: dict, path: Path, duration_ns: int) -> None:
    """A row is the single-file simulation's summary of that system (a row
    cut short by Ctrl-C: of the time it reached)."""
    single = simulate(path, duration_ns)
    assert row["file"] == str(path)
    for name in TOTALS:
        if name != "partial":
            assert row[name] == single.report[name], (path, name)
    assert row["cores"] == single.outline["cores"]
    assert row["tasks"] == len(single.outline["tasks"])
    assert row["no_deadline_miss"] == (single.report["deadline_misses"] == 0)
    assert row["utilization"] == pytest.approx(utilization(path), rel=1e-12, abs=0)


def test_rows_of_the_mcti_examples_equal_single_runs():
    # Not in name order: rows come in the order given.
    files = [EXAMPLES / "mcti" / f"{name}.toml" for name in ("McMtC", "ScSt", "McSt", "ScMtC", "McMt", "ScStC", "McStC", "ScMt")]
    duration = 2 * SECOND
    table = simulate_many(files, duration)
    assert table.column_names == [name for name, _ in ROW_FIELDS]
    rows = table.to_pylist()
    assert [r["file"] for r in rows] == [str(f) for f in files]
    for row, path in zip(rows, files):
        check_row(row, path, duration)
        assert row["duration_ns"] == duration and row["partial"] is False
    # PET/period: TUA 500 ms / 10 s, then 10 s / 10 s per co-runner or bomb.
    by_name = {Path(r["file"]).stem: r["utilization"] for r in rows}
    assert by_name["ScSt"] == pytest.approx(0.05) and by_name["McMtC"] == pytest.approx(4.05)


# --------------------------------------------------------------------------- generated systems

PERIODS_MS = (5, 10, 20, 25, 40, 50, 100)


def system_toml(tasks: list[tuple[int, int]]) -> str:
    """A 2-core system of plain periodic tasks, (period ms, PET µs) each; G-EDF is implied."""
    lines = ["[platform]", "cores = 2", ""]
    for i, (period_ms, pet_us) in enumerate(tasks):
        lines += ["[[task]]", f'name = "t{i}"', f'period = "{period_ms}ms"', f'pet = "{pet_us}us"', ""]
    return "\n".join(lines)


def random_systems(folder: Path, n: int, seed: int) -> dict[Path, float]:
    """`n` random systems in `folder`; their utilizations by path."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for k in range(n):
        tasks = []
        for _ in range(rng.randint(2, 5)):
            period_ms = rng.choice(PERIODS_MS)
            tasks.append((period_ms, rng.randint(100, period_ms * 600)))  # up to 60% of the period
        path = folder / f"sys{k:04d}.toml"
        path.write_text(system_toml(tasks))
        written[path] = sum(pet_us * 1_000 / (period_ms * MS) for period_ms, pet_us in tasks)
    return written


def test_a_folder_of_generated_systems(tmp_path):
    folder = tmp_path / "systems"
    systems = random_systems(folder, 198, seed=13)
    # 3 × 9 ms every 10 ms on 2 cores: U = 2.7 > 2, deadlines are missed.
    over = folder / "overloaded.toml"
    over.write_text(system_toml([(10, 9_000)] * 3))
    # U = 0.1.
    light = folder / "light.toml"
    light.write_text(system_toml([(10, 500), (20, 1_000)]))
    systems[over], systems[light] = 2.7, 0.1
    (folder / "notes.txt").write_text("not a task system")

    out = tmp_path / "rows.parquet"
    p = run("simulate", folder, "--table", out, "--duration", "1s")
    assert p.returncode == 0, p.stderr
    assert f"200 of 200 systems simulated" in " ".join(p.stdout.split())
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == 200
    # Every file, in name order; the .txt is not a task system.
    assert [r["file"] for r in rows] == sorted(str(f) for f in systems)
    for r in rows:
        assert r["scheduler"] == "gedf" and r["cores"] == 2
        assert r["duration_ns"] == SECOND and r["partial"] is False
        assert r["utilization"] == pytest.approx(systems[Path(r["file"])], rel=1e-12)
        assert r["no_deadline_miss"] == (r["deadline_misses"] == 0)
    by_file = {r["file"]: r for r in rows}
    assert by_file[str(over)]["no_deadline_miss"] is False and by_file[str(over)]["deadline_misses"] > 0
    assert by_file[str(light)]["no_deadline_miss"] is True
    for path in (over, light, folder / "sys0000.toml", folder / "sys0137.toml"):
        check_row(by_file[str(path)], path, SECOND)

    # The same through a quoted glob, and through --json.
    p = run("simulate", str(folder / "sys00*.toml"), "--duration", "1s", "--json")
    assert p.returncode == 0, p.stderr
    listed = json.loads(p.stdout)
    assert [r["file"] for r in listed] == [str(folder / f"sys{k:04d}.toml") for k in range(100)]
    assert listed == [by_file[r["file"]] for r in listed]


# --------------------------------------------------------------------------- errors


def one_line_error(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr[-2000:]
    return lines[0]


def test_a_folder_without_task_files_is_a_one_line_error(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.txt").write_text("nothing to simulate")
    line = one_line_error(run("simulate", folder, "--duration", "1s"))
    assert str(folder) in line and "no .toml or .json" in line


def test_a_glob_matching_nothing_is_a_one_line_error(tmp_path):
    line = one_line_error(run("simulate", str(tmp_path / "*.toml"), "--duration", "1s"))
    assert "no .toml or .json" in line


def test_per_system_files_are_refused_for_several_systems(tmp_path):
    files = [EXAMPLES / "mcti" / "ScSt.toml", EXAMPLES / "mcti" / "McMt.toml"]
    for option, name in (("--jobs", "j.parquet"), ("--trace", "t.json"), ("--bandwidth", "bw.csv")):
        line = one_line_error(run("simulate", *files, option, tmp_path / name, "--duration", "1s"))
        assert option in line and "--table" in line
        assert not (tmp_path / name).exists()


def test_a_bad_file_among_many_is_named_and_nothing_is_written(tmp_path):
    folder = tmp_path / "systems"
    random_systems(folder, 5, seed=1)
    bad = folder / "sys0003.toml"
    # A period without its unit in the first task.
    bad.write_text(re.sub(r'period = "(\d+)ms"', r'period = "\1"', bad.read_text(), count=1))
    assert tomllib.loads(bad.read_text())["task"][0]["period"].isdigit()
    out = tmp_path / "rows.parquet"
    line = one_line_error(run("simulate", folder, "--table", out, "--duration", "1s"))
    assert line.startswith(f"error: {bad}: task[0].period: ")
    assert not out.exists()


# --------------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_in_progress_returns_the_rows_so_far(tmp_path):
    folder = tmp_path / "systems"
    random_systems(folder, 200, seed=7)
    files = sorted(folder.iterdir())
    duration = 100_000 * SECOND  # minutes of wall time in all
    calls: list[tuple[int, int]] = []

    def progress(done: int, jobs: int) -> None:
        calls.append((done, jobs))
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        simulate_many(files, duration, threads=2, progress=progress)
    assert [c[1] for c in calls] == sorted(c[1] for c in calls) and calls[-1][1] > 0
    rows = stop.value.partial.to_pylist()
    assert len(rows) < len(files)
    # Rows in the order given, of the systems started; those running when
    # stopped are partial, the run of the time they reached.
    order = {str(f): i for i, f in enumerate(files)}
    assert [order[r["file"]] for r in rows] == sorted(order[r["file"]] for r in rows)
    partial = [r for r in rows if r["partial"]]
    assert 1 <= len(partial) <= 2
    for r in rows:
        assert (r["duration_ns"] < duration) == r["partial"]
    check_row(partial[0], Path(partial[0]["file"]), partial[0]["duration_ns"])


def test_ctrl_c_stops_a_batch_on_the_command_line(tmp_path):
    folder = tmp_path / "systems"
    random_systems(folder, 2_000, seed=5)
    out = tmp_path / "rows.parquet"
    # About 12 s of wall time at 300 s each on 2 cores, uninterrupted. stderr is
    # a terminal: the progress bar shows once the engine has run a second, and
    # then Ctrl-C is sent.
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    proc = subprocess.Popen([str(CRITICORE), "simulate", str(folder), "--duration", "300s", "--table", str(out),
                             "--threads", "2"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, preexec_fn=sigint_default, stdout=subprocess.PIPE,
                            stderr=slave, text=True)
    os.close(slave)
    shown: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while b"simulating 2,000 systems" not in b"".join(shown):
            assert proc.poll() is None, (proc.returncode, b"".join(shown)[-2000:])
            assert time.monotonic() < deadline, "no progress bar within 60 s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        stdout, _ = proc.communicate(timeout=30)
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        reader.join(timeout=10)
        os.close(master)
    assert proc.returncode == 130, (stdout, b"".join(shown)[-2000:])
    assert waited < 1.0, f"exit {waited:.2f} s after SIGINT"
    assert any(line.startswith("partial") for line in stdout.splitlines()), stdout
    rows = pq.read_table(out).to_pylist()
    assert 0 < len(rows) < 2_000
    assert f"{len(rows):,} of 2,000 systems simulated" in " ".join(stdout.split())
    assert all((r["duration_ns"] < 300 * SECOND) == r["partial"] for r in rows)
