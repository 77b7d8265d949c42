"""``criticore simulate`` and ``criticore plot gantt``, run as subprocesses of
the installed console script."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MRS = EXAMPLES / "mrs-synthetic.toml"
HEAVY = EXAMPLES / "mc2-llc-heavy.toml"
CRITICORE = Path(sys.executable).parent / "criticore"
MS = 1_000_000
SECOND = 1_000 * MS

JOB_COLUMNS = ["task", "job", "release_ns", "start_ns", "finish_ns", "deadline_ns", "response_ns", "tardiness_ns"]


def run(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    # stdin is not a terminal: an existing output file is refused, never prompted for.
    return subprocess.run(
        [str(CRITICORE), *map(str, args)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def simulate_json(*args: str | Path) -> dict:
    p = run("simulate", *args, "--json")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    return json.loads(p.stdout)


def ms(text: str) -> int:
    """A "40ms" period of the example files in nanoseconds."""
    assert text.endswith("ms"), text
    return int(text[:-2]) * MS


# A hand-worked one-core system under partitioned fixed priority (rate-monotonic):
# hi: 3 ms every 10 ms; lo: 8 ms every 20 ms with a 12 ms deadline.
#   [0, 3) hi#1 · [3, 10) lo#1 (7 of 8 ms) · [10, 13) hi#2 · [13, 14) lo#1 ·
#   idle [14, 20) · [20, 23) hi#3 · [23, 25) lo#2 (unfinished at 25 ms).
# lo#1 finishes at 14 ms, 2 ms after its deadline at 12 ms, preempted once.
ONE_CORE = """\
[platform]
cores = 1

[[task]]
name = "hi"
core = 0
period = "10ms"
pet = "3ms"

[[task]]
name = "lo"
core = 0
period = "20ms"
deadline = "12ms"
pet = "8ms"
"""
ONE_CORE_SLICES = [  # (name, start ms, end ms)
    ("hi#1", 0, 3),
    ("lo#1", 3, 10),
    ("hi#2", 10, 13),
    ("lo#1", 13, 14),
    ("hi#3", 20, 23),
    ("lo#2", 23, 25),
]
ONE_CORE_JOBS = [  # completed jobs: task, job, release, start, finish, deadline, response, tardiness (ms)
    ("hi", 1, 0, 0, 3, 10, 3, 0),
    ("hi", 2, 10, 10, 13, 20, 3, 0),
    ("lo", 1, 0, 3, 14, 12, 14, 2),
    ("hi", 3, 20, 20, 23, 30, 3, 0),
]


@pytest.fixture
def one_core(tmp_path) -> Path:
    path = tmp_path / "one-core.toml"
    path.write_text(ONE_CORE, encoding="utf-8")
    return path


def assert_one_error_line(p: subprocess.CompletedProcess, field: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and p.stderr.endswith("\n"), p.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert field in lines[0], (field, lines[0])
    return lines[0]


# --------------------------------------------------------------------------- MRS synthetic set


@pytest.fixture(scope="module")
def mrs_report() -> dict:
    return simulate_json(MRS, "--duration", "10s")


def test_mrs_synthetic_has_no_deadline_miss(mrs_report):
    # mrs-multi-resource-server §VIII-B Experiment 1: the set is schedulable under its servers.
    assert mrs_report["scheduler"] == "servers"
    assert mrs_report["duration_ns"] == 10 * SECOND
    tasks = {t["task"]: t for t in mrs_report["per_task"]}
    assert sorted(tasks) == [f"Task{i}" for i in range(1, 9)]
    for name, t in tasks.items():
        assert t["deadline_misses"] == 0, (name, t)
        assert t["max_tardiness_ns"] == 0, (name, t)
    assert mrs_report["deadline_misses"] == 0


def test_mrs_synthetic_releases_match_a_hand_count(mrs_report):
    doc = tomllib.loads(MRS.read_text(encoding="utf-8"))
    tasks = {t["task"]: t for t in mrs_report["per_task"]}
    want = {t["name"]: math.ceil(10 * SECOND / ms(t["period"])) for t in doc["task"]}
    # Spot-check the hand count itself: Task1 every 40 ms, Task2 every 48 ms, Task5 every 160 ms.
    assert (want["Task1"], want["Task2"], want["Task5"]) == (250, 209, 63)
    assert {name: t["released"] for name, t in tasks.items()} == want
    for name, t in tasks.items():
        # Released in [0, 10 s); at most the last job of each task is still running at the end.
        assert t["completed"] + t["unfinished"] == t["released"], (name, t)
        assert t["unfinished"] <= 1, (name, t)
    assert mrs_report["released"] == sum(want.values())


def test_human_summary_names_every_task():
    p = run("simulate", MRS, "--duration", "1s")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    for i in range(1, 9):
        assert f"Task{i}" in p.stdout
    assert "Deadline misses" in p.stdout
    assert "Traceback" not in p.stdout


# --------------------------------------------------------------------------- traces


def load_trace(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        doc = json.load(f)
    assert isinstance(doc["traceEvents"], list)
    return doc["traceEvents"]


def assert_well_formed(events: list[dict]) -> None:
    for e in events:
        # M: metadata, X: slices, i: instants, C: counters (bandwidth, with memory traffic only).
        assert e["ph"] in ("M", "X", "i", "C"), e
        if e["ph"] == "C":
            assert isinstance(e["ts"], (int, float)) and all(isinstance(v, (int, float)) for v in e["args"].values()), e
        if e["ph"] == "X":
            for key in ("ts", "dur", "pid", "tid", "name"):
                assert key in e, (key, e)
            assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            assert isinstance(e["name"], str) and e["name"], e


def test_trace_of_mrs_is_a_valid_chrome_trace(tmp_path):
    out = tmp_path / "trace.json"
    p = run("simulate", MRS, "--duration", "500ms", "--trace", out)
    assert p.returncode == 0, p.stderr
    events = load_trace(out)
    assert_well_formed(events)
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    # One track per core (process 1), per server (process 2), per task (process 3).
    assert [threads[(1, c)] for c in range(2)] == ["core 0", "core 1"]
    assert sorted(v for (pid, _), v in threads.items() if pid == 2) == [f"Server{i} (core {c})" for i, c in enumerate([0, 0, 1, 1, 1])]
    assert sorted(v for (pid, _), v in threads.items() if pid == 3) == [f"Task{i}" for i in range(1, 9)]
    slices = [e for e in events if e["ph"] == "X"]
    assert {e["pid"] for e in slices} == {1, 2}
    assert all((e["pid"], e["tid"]) in threads for e in slices)
    instants = {e["name"] for e in events if e["ph"] == "i"}
    assert {"release", "deadline"} <= instants
    assert "miss" not in instants
    # Job slices on one core never overlap, and stay inside the run.
    for core in range(2):
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in slices if e["pid"] == 1 and e["tid"] == core)
        assert spans, core
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end - 1e-6, (core, end, start)
        assert spans[-1][1] <= 500_000 + 1e-6


def test_trace_slices_of_a_hand_worked_system(tmp_path, one_core):
    out = tmp_path / "trace.json"
    p = run("simulate", one_core, "--duration", "25ms", "--trace", out)
    assert p.returncode == 0, p.stderr
    events = load_trace(out)
    assert_well_formed(events)
    slices = [(e["name"], e["ts"], e["ts"] + e["dur"]) for e in events if e["ph"] == "X"]
    # Timestamps are microseconds.
    assert slices == [(n, s * 1000, e * 1000) for n, s, e in ONE_CORE_SLICES]
    assert all(e["pid"] == 1 and e["tid"] == 0 for e in events if e["ph"] == "X")
    instants = [(e["name"], e["tid"], e["ts"]) for e in events if e["ph"] == "i"]
    # Releases and deadlines of the completed jobs; one miss, at lo#1's deadline.
    # Completed jobs, plus "lo" #2 released at 20 ms and unfinished at the end (25 ms);
    # its deadline (32 ms) lies after the end, so it has no deadline or miss instant.
    expected_releases = [("release", 0 if t == "hi" else 1, r * 1000) for t, _, r, *_ in ONE_CORE_JOBS] + [("release", 1, 20_000)]
    assert sorted(i for i in instants if i[0] == "release") == sorted(expected_releases)
    assert sorted(i for i in instants if i[0] == "deadline") == sorted(("deadline", 0 if t == "hi" else 1, d * 1000) for t, _, _, _, _, d, _, _ in ONE_CORE_JOBS)
    assert [i for i in instants if i[0] == "miss"] == [("miss", 1, 12_000)]


# --------------------------------------------------------------------------- job records


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_job_records_of_a_hand_worked_system(tmp_path, one_core, suffix):
    out = tmp_path / f"jobs{suffix}"
    p = run("simulate", one_core, "--duration", "25ms", "--jobs", out, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["scheduler"] == "pfp"
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(out)
    else:
        import pyarrow.csv as pcsv

        table = pcsv.read_csv(out)
    assert set(JOB_COLUMNS) <= set(table.column_names), table.column_names
    rows = table.to_pylist()
    # One row per completed job (lo#2 is still running at 25 ms).
    assert len(rows) == report["completed"] == len(ONE_CORE_JOBS)
    got = sorted(tuple(r[c] for c in JOB_COLUMNS) for r in rows)
    want = sorted((t, j, *(v * MS for v in rest)) for t, j, *rest in ONE_CORE_JOBS)
    assert got == want
    lo1 = next(r for r in rows if r["task"] == "lo")
    assert (lo1["core"], lo1["exec_ns"], lo1["preemptions"], lo1["migrations"]) == (0, 8 * MS, 1, 0)
    tasks = {t["task"]: t for t in report["per_task"]}
    assert (tasks["lo"]["released"], tasks["lo"]["completed"], tasks["lo"]["unfinished"]) == (2, 1, 1)
    assert (tasks["lo"]["deadline_misses"], tasks["lo"]["max_tardiness_ns"]) == (1, 2 * MS)
    assert (tasks["hi"]["released"], tasks["hi"]["deadline_misses"]) == (3, 0)


def test_job_records_of_mrs_agree_with_the_summary(tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "jobs.parquet"
    p = run("simulate", MRS, "--duration", "1s", "--jobs", out, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == report["completed"]
    for t in report["per_task"]:
        mine = [r for r in rows if r["task"] == t["task"]]
        assert len(mine) == t["completed"], t["task"]
        assert sorted(r["job"] for r in mine) == list(range(1, t["completed"] + 1))
        assert max(r["response_ns"] for r in mine) == t["max_response_ns"]
    for r in rows:
        assert r["release_ns"] <= r["start_ns"] <= r["finish_ns"] <= r["deadline_ns"]
        assert r["response_ns"] == r["finish_ns"] - r["release_ns"]
        assert r["tardiness_ns"] == 0


# --------------------------------------------------------------------------- existing outputs


@pytest.mark.parametrize("option,name", [("--trace", "trace.json"), ("--jobs", "jobs.parquet"), ("--jobs", "jobs.csv")])
def test_existing_output_is_kept_without_force(tmp_path, option, name):
    out = tmp_path / name
    out.write_text("keep me\n", encoding="utf-8")
    p = run("simulate", MRS, "--duration", "100ms", option, out)
    line = assert_one_error_line(p, option)
    assert str(out) in line and "--force" in line
    assert out.read_text(encoding="utf-8") == "keep me\n"
    p = run("simulate", MRS, "--duration", "100ms", option, out, "--force")
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() != b"keep me\n"
    if name.endswith(".json"):
        load_trace(out)
    else:
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        table = pq.read_table(out) if name.endswith(".parquet") else pcsv.read_csv(out)
        assert table.num_rows > 0


def test_refused_trace_writes_no_job_file_either(tmp_path):
    trace, jobs = tmp_path / "trace.json", tmp_path / "jobs.csv"
    trace.write_text("keep me\n", encoding="utf-8")
    p = run("simulate", MRS, "--duration", "100ms", "--trace", trace, "--jobs", jobs)
    assert_one_error_line(p, "--trace")
    assert not jobs.exists()
    assert trace.read_text(encoding="utf-8") == "keep me\n"


# --------------------------------------------------------------------------- bad inputs

BAD_OPTIONS = {
    # id: (file, extra arguments, field the error names)
    "unknown-scheduler": (MRS, ["--scheduler", "edf-ish"], "--scheduler"),
    "pfp-task-without-core": (HEAVY, ["--scheduler", "pfp"], "task[15].core"),  # T6#1, Level C
    "pedf-task-without-core": (HEAVY, ["--scheduler", "pedf"], "task[15].core"),
    "duration-unit": (MRS, ["--duration", "10 parsecs"], "--duration"),
    "duration-zero": (MRS, ["--duration", "0s"], "--duration"),
    "exec-level": (MRS, ["--exec-level", "Z"], "--exec-level"),
    "best-case-above-1": (MRS, ["--best-case", "2"], "--best-case"),
    "best-case-negative": (MRS, ["--best-case", "-0.5"], "--best-case"),
    "mc2-without-levels": (MRS, ["--scheduler", "mc2"], "task[0].level"),
    "missing-file": (ROOT / "no-such-file.toml", [], "(file)"),
}


@pytest.mark.parametrize("case", list(BAD_OPTIONS), ids=list(BAD_OPTIONS))
def test_bad_input_gives_one_error_line_and_exit_2(case):
    path, extra, field = BAD_OPTIONS[case]
    p = run("simulate", path, "--duration", "100ms", *extra) if "--duration" not in extra else run("simulate", path, *extra)
    line = assert_one_error_line(p, field)
    assert line.startswith(f"error: {path}: {field}: "), line
    assert line[len(f"error: {path}: {field}: "):].strip(), line


def test_bad_duration_of_plot_gantt(tmp_path):
    out = tmp_path / "g.png"
    p = run("plot", "gantt", MRS, "-o", out, "--duration", "10 parsecs")
    assert_one_error_line(p, "--duration")
    assert not out.exists()


# --------------------------------------------------------------------------- schedulers


@pytest.mark.parametrize(
    "path,scheduler",
    [(MRS, "servers"), (HEAVY, "mc2"), (None, "pfp")],
    ids=["servers", "mc2", "pfp"],
)
def test_default_scheduler_is_what_the_file_implies(path, scheduler, one_core):
    assert simulate_json(path or one_core, "--duration", "100ms")["scheduler"] == scheduler


def test_default_scheduler_without_cores_is_gedf(tmp_path):
    path = tmp_path / "global.toml"
    path.write_text(ONE_CORE.replace("core = 0\n", ""), encoding="utf-8")
    assert simulate_json(path, "--duration", "100ms")["scheduler"] == "gedf"


def test_explicit_scheduler_overrides_the_default(one_core):
    assert simulate_json(one_core, "--duration", "100ms", "--scheduler", "pedf")["scheduler"] == "pedf"


def test_llc_heavy_at_level_b_pets_misses_no_level_a_or_b_deadline():
    r = simulate_json(HEAVY, "--scheduler", "mc2", "--exec-level", "B", "--duration", "3200ms")
    assert r["scheduler"] == "mc2"
    for level in "AB":
        stats = r["per_level"][level]
        assert stats["released"] > 0
        assert stats["deadline_misses"] == 0, (level, stats)
        assert stats["unfinished"] == 0, (level, stats)
    for t in r["per_task"]:
        if t["level"] in ("A", "B"):
            assert t["deadline_misses"] == 0 and t["completed"] == t["released"], t


def test_best_case_runs_are_seeded():
    a = simulate_json(HEAVY, "--duration", "1s", "--best-case", "0.5", "--seed", "7")
    b = simulate_json(HEAVY, "--duration", "1s", "--best-case", "0.5", "--seed", "7")
    c = simulate_json(HEAVY, "--duration", "1s", "--best-case", "0.5", "--seed", "8")
    assert a == b
    assert a["mean_response_ns"] != c["mean_response_ns"]


# --------------------------------------------------------------------------- plot gantt


@pytest.mark.parametrize("path", [MRS, HEAVY], ids=["servers", "mc2"])
def test_gantt_png(tmp_path, path):
    out = tmp_path / "gantt.png"
    p = run("plot", "gantt", path, "-o", out, "--duration", "200ms")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gantt_svg(tmp_path, one_core):
    out = tmp_path / "gantt.svg"
    p = run("plot", "gantt", one_core, "--output", out, "--duration", "25ms")
    assert p.returncode == 0, p.stderr
    text = out.read_text(encoding="utf-8")
    assert "<svg" in text[:2000] and text.rstrip().endswith("</svg>")


def test_gantt_keeps_an_existing_image_without_force(tmp_path):
    out = tmp_path / "gantt.png"
    out.write_bytes(b"not an image")
    p = run("plot", "gantt", MRS, "-o", out)
    assert_one_error_line(p, "--output")
    assert out.read_bytes() == b"not an image"
    p = run("plot", "gantt", MRS, "-o", out, "--force")
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
