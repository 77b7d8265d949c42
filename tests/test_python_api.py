"""The Python library (issue 14, item 1): task systems built in Python are the
engine's model, validated like files, and analyze/simulate them to the same
numbers as the files; bad values raise InputError naming the field.

The two systems are written here from the papers' tables, not read from the
example files: the MC² case study (mc2-hardware-management §4.3, Table 1 and
the placement of inset (b)) and the MRS synthetic set
(mrs-multi-resource-server §VIII-B, Tables IV and V)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import matplotlib
import pyarrow as pa
import pytest
from matplotlib.figure import Figure

import criticore
from criticore import InputError, TaskSystem

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MS = 1_000_000

# --------------------------------------------------------------------------- MC² case study

# Table 1 (LLC-heavy): task → period (ms), PETs at A/B/C with hardware
# management, and without (LLC off, one DRAM bank), in ms.
TABLE1 = {
    "T0": (100, (4, 3, 2), (5, 4, 3)),
    "T1": (100, (15, 11, 10), (24, 18, 13)),
    "T2": (100, (24, 18, 16), (41, 31, 22)),
    "T3": (200, (41, 31, 27), (72, 55, 38)),
    "T4": (200, (27, 20, 17), (40, 31, 21)),
    "T5": (400, (58, 44, 38), (99, 75, 54)),
    "T6": (800, (123, 93, 82), (199, 151, 109)),
    "T7": (800, (246, 186, 167), (395, 299, 221)),
    "T8": (1600, (549, 416, 359), (816, 618, 459)),
}
# Inset (b): the Level-A/B instances per CPU; T6–T8 run four Level-C instances each.
PLACEMENT = {
    0: [("T0", "A"), ("T1", "A"), ("T3", "B"), ("T4", "B")],
    1: [("T2", "A"), ("T4", "B"), ("T5", "B")],
    2: [("T0", "A"), ("T1", "A"), ("T3", "B"), ("T4", "B")],
    3: [("T2", "A"), ("T1", "B"), ("T4", "B"), ("T5", "B")],
}


def _pets(ms: tuple[int, int, int]) -> dict[str, str]:
    return {level: f"{v}ms" for level, v in zip("ABC", ms)}


def _task(name: str, row: str, level: str, core: int | None = None) -> dict:
    period, managed, unmanaged = TABLE1[row]
    task = {"name": name, "level": level, "period": f"{period}ms", "pet": _pets(managed), "pet_unmanaged": _pets(unmanaged)}
    if core is not None:
        task["core"] = core
    return task


def mc2_case_study(**changes) -> TaskSystem:
    tasks = [_task(f"{row}@cpu{core}", row, level, core) for core, rows in PLACEMENT.items() for row, level in rows]
    tasks += [_task(f"{row}#{i}", row, "C") for row in ("T6", "T7", "T8") for i in range(1, 5)]
    platform = {"cores": 4, "llc": {"size": "1MiB", "ways": 16, "colors": 16, "line": "32B"},
                "dram": {"banks": 8, "bank_size": "128MiB"}, "bus": {"arbiter": "round-robin"}}
    fields = {"platform": platform, "tasks": tasks, **changes}
    return TaskSystem(**fields, name="case-study")


def test_mc2_case_study_built_in_python_is_the_files_system():
    built = mc2_case_study()
    case = TaskSystem.load(EXAMPLES / "mc2-llc-heavy.toml")
    assert [t for t in built.tasks] == [t for t in case.tasks]  # the engine's model, task by task
    assert built.platform == case.platform
    assert built.task("T1@cpu3").level == "B" and built.task("T1@cpu3").pet_ns["B"] == 11 * MS


def test_mc2_case_study_analysis_gives_table_1_loads():
    a = criticore.analyze(mc2_case_study())
    assert a.scheduler == "mc2"
    # By hand from Table 1: Σ PET/period over all instances at each task's
    # own level, per configuration (the file's header; the paper, rounding, 3.592 …).
    loads = {k: round(c.total_utilization, 6) for k, c in a.configurations.items()}
    assert loads == {"mc2_isolated": 3.6025, "mc2_unmanaged": 4.7575, "isolated_only": 5.4675, "neither": 8.665}
    assert [c.schedulable for c in a.configurations.values()] == [True, False, False, False]
    assert a.levels == {"A": True, "B": True, "C": True}
    assert a.json == criticore.analyze(EXAMPLES / "mc2-llc-heavy.toml").json


def test_mc2_case_study_simulates_to_the_files_numbers():
    built = criticore.simulate(mc2_case_study(), "2s", exec_level="B")
    from_file = criticore.simulate(EXAMPLES / "mc2-llc-heavy.toml", 2_000 * MS, exec_level="B")
    assert built.json == from_file.json
    # Releases in [0, 2 s] by hand: cores 0–3 release 60, 35, 60 and 55 Level-A/B
    # jobs (2000 / period each); T6 and T7 at 0, 800, 1600; T8 at 0, 1600.
    assert built.released == 60 + 35 + 60 + 55 + 4 * (3 + 3 + 2)


# --------------------------------------------------------------------------- MRS set

# Table IV: servers (core, priority High 3 / Medium 2 / Low 1, period, budget, memory budget).
TABLE4 = [("Server0", 0, 3, 24, 8, 650), ("Server1", 0, 1, 40, 16, 750), ("Server2", 1, 2, 40, 8, 900),
          ("Server3", 1, 3, 80, 12, 1100), ("Server4", 1, 1, 80, 12, 1100)]
# Table V: tasks (server, priority, period, WCET), ms.
TABLE5 = [("Task1", "Server0", 98, 40, 2), ("Task2", "Server0", 97, 48, 4), ("Task3", "Server1", 98, 60, 8),
          ("Task4", "Server2", 98, 60, 4), ("Task5", "Server2", 97, 160, 10), ("Task6", "Server3", 97, 160, 14),
          ("Task7", "Server4", 98, 200, 8), ("Task8", "Server4", 97, 200, 8)]


def mrs_set() -> TaskSystem:
    servers = [{"name": n, "core": c, "kind": "periodic", "priority": p, "period": f"{t}ms", "budget": f"{q}ms", "memory_budget": m}
               for n, c, p, t, q, m in TABLE4]
    tasks = [{"name": n, "server": s, "priority": p, "period": f"{t}ms", "pet": f"{c}ms"} for n, s, p, t, c in TABLE5]
    return TaskSystem({"cores": 2}, tasks=tasks, servers=servers, name="mrs")


def test_mrs_set_built_in_python_analyzes_like_the_file():
    system = mrs_set()
    assert system.implied_scheduler == "servers"
    assert [s.budget_ns for s in system.servers] == [8 * MS, 16 * MS, 8 * MS, 12 * MS, 12 * MS]
    a = criticore.analyze(system)
    # By hand (tests/test_analyze_classic.py): Server0's worst gap 16 ms, Task1 16 + 2,
    # Task2 16 + 4 + 2, Task3 behind Server1's 32 ms gap: 32 + 8.
    assert (a.bound("Task1").bound_ns, a.bound("Task2").bound_ns, a.bound("Task3").bound_ns) == (18 * MS, 22 * MS, 40 * MS)
    assert a.json == criticore.analyze(EXAMPLES / "mrs-synthetic.toml").json
    table = a.table()
    assert table.num_rows == 8 and table.column("task").to_pylist() == [t[0] for t in TABLE5]


def test_mrs_set_simulates_to_the_files_numbers_with_tables_and_figures():
    sim = criticore.simulate(mrs_set(), "1s", jobs=True, segments=True)
    assert sim.json == criticore.simulate(EXAMPLES / "mrs-synthetic.toml", 1_000 * MS).json
    # Releases in [0, 1 s): ⌈1000 / period⌉ per task.
    assert sim.released == sum(-(-1000 // t) for _, _, _, t, _ in TABLE5) == 104
    assert sim.task("Task1").released == 25
    assert sim.per_task_table().column("released").to_pylist() == [25, 21, 17, 17, 7, 7, 5, 5]
    jobs = sim.jobs
    assert isinstance(jobs, pa.Table) and jobs.num_rows == sim.completed
    assert (jobs["response_ns"].to_numpy() <= sim.max_response_ns).all()
    assert set(sim.segments.column("task").to_pylist()) <= {t[0] for t in TABLE5}
    fig = sim.gantt()
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == [f"server {s[0]}" for s in TABLE4] + [t[0] for t in TABLE5]
    assert isinstance(sim.response_figure(), Figure)
    matplotlib.pyplot.close("all")


def test_simulate_many_takes_objects_and_files_alike():
    rows = criticore.simulate_many([mrs_set(), EXAMPLES / "mrs-synthetic.toml"], "1s")
    a, b = rows.to_pylist()
    assert (a["file"], b["file"]) == ("mrs", str(EXAMPLES / "mrs-synthetic.toml"))
    assert {k: v for k, v in a.items() if k != "file"} == {k: v for k, v in b.items() if k != "file"}
    assert a["released"] == 104


def test_bandwidth_series_is_a_table_in_mb_per_s():
    sim = criticore.simulate(EXAMPLES / "mcti" / "McMtC.toml", "100ms", bin_ns=10 * MS)
    bw = sim.bandwidth
    assert bw.column_names == ["core", "bin_start_ns", "requests", "mb_s"]
    assert bw.num_rows == 4 * 10
    # MB/s = requests × line bytes / bin (ns) × 1e3, and every request lands in a bin.
    line = sim.system.platform.line_bytes
    row = bw.slice(5, 1).to_pylist()[0]
    assert row["mb_s"] == pytest.approx(row["requests"] * line / (10 * MS) * 1e3)
    assert sum(bw["requests"].to_pylist()) == pytest.approx(sim.memory_requests, rel=1e-6)
    assert isinstance(sim.bandwidth_figure(), Figure)
    matplotlib.pyplot.close("all")


# --------------------------------------------------------------------------- bad values


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (lambda t: t[2].update(period=100), "task[2].period", 'expected a duration string with a unit (e.g. "100ms"), got a number'),
        (lambda t: t[0].update(core=7), "task[0].core", None),
        (lambda t: t[3].update(colour=1), "task[3].colour", None),
        (lambda t: t[5].pop("name"), "task[5].name", "missing required field"),
        (lambda t: t[1].update(level="E"), "task[1].level", None),
    ],
)
def test_bad_values_raise_input_error_naming_the_field(change, field, reason, tmp_path):
    tasks = mc2_case_study().to_dict()["task"]
    change(tasks)
    with pytest.raises(InputError) as caught:
        mc2_case_study(tasks=tasks)
    e = caught.value
    assert (e.file, e.field) == ("case-study", field)
    if reason is not None:
        assert e.reason == reason
    assert str(e) == f"case-study: {field}: {e.reason}"
    # The same document in a file: the CLI's one line names the same field, for the same reason.
    bad = tmp_path / "bad.json"
    doc = {"platform": mc2_case_study().to_dict()["platform"], "task": tasks}
    bad.write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, "-m", "criticore", "check", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {bad}: {field}: {e.reason}"


def test_values_json_cannot_hold_are_refused_by_name():
    with pytest.raises(InputError) as caught:
        TaskSystem({"cores": 2}, tasks=[{"name": "t", "core": 0, "period": object(), "pet": "1ms"}])
    assert caught.value.field == "task[0].period" and "object is not a file value" in caught.value.reason
    with pytest.raises(InputError) as caught:
        TaskSystem({"cores": 2, "llc": {"ways": float("nan")}})
    assert (caught.value.field, caught.value.reason) == ("platform.llc.ways", "got nan, not a finite number")


def test_bad_options_raise_input_error_naming_the_option():
    with pytest.raises(InputError) as caught:
        criticore.simulate(mrs_set(), "-1s")
    assert caught.value.field == "duration"
    with pytest.raises(InputError) as caught:
        criticore.analyze(mrs_set(), "edf-vd")
    assert caught.value.field == "--scheduler" and "edf-vd" in caught.value.reason
    with pytest.raises(InputError) as caught:
        criticore.optimize(mc2_case_study(), scheme="best")
    assert caught.value.field == "scheme"


# --------------------------------------------------------------------------- files


def test_write_and_load_round_trip_and_never_overwrite(tmp_path):
    system = mrs_set()
    path = system.write(tmp_path / "mrs.toml")
    again = TaskSystem.load(path)
    assert again == system and again.path == path and again.name == str(path)
    with pytest.raises(FileExistsError):
        system.write(path)
    assert TaskSystem.load(system.write(tmp_path / "mrs.json")) == system
    # The CLI reads what Python wrote.
    out = subprocess.run([sys.executable, "-m", "criticore", "analyze", str(path), "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout) == criticore.analyze(system).json


def test_to_dict_is_a_copy_and_replace_makes_a_new_system():
    system = mrs_set()
    doc = system.to_dict()
    doc["task"][0]["pet"] = "39ms"
    assert system.task("Task1").pet_ns["C"] == 2 * MS
    heavier = system.replace(tasks=doc["task"])
    assert heavier.task("Task1").pet_ns["C"] == 39 * MS
    assert criticore.analyze(heavier).bound("Task1").schedulable is False
    with pytest.raises(TypeError):
        system.replace(task=[])


def test_optimize_returns_the_system_with_placements(tmp_path):
    # A generated study system: Level-A/B tasks with cost curves and no cores yet.
    system = TaskSystem.load(EXAMPLES / "study-fig15a.toml")
    assert all(t.core is None for t in system.tasks)
    with pytest.raises(InputError, match="run `criticore optimize"):
        criticore.analyze(system)
    result = criticore.optimize(system)
    assert result.schedulable and result.scheme == "O|C+A/B-ALL"
    placed = result.system
    assert all(t.core is not None for t in placed.tasks if t.level in ("A", "B"))
    assert all(t.core is None for t in placed.tasks if t.level == "C")
    assert sum(placed.allocation.llc_ways.values()) == placed.platform.llc_ways
    assert criticore.analyze(placed).schedulable is True
    # The CLI writes the same system.
    out = tmp_path / "placed.toml"
    run = subprocess.run([sys.executable, "-m", "criticore", "optimize", str(EXAMPLES / "study-fig15a.toml"), "-o", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert TaskSystem.load(out) == placed


def test_study_returns_rows_curves_and_figures(tmp_path):
    out = tmp_path / "study"
    s = criticore.run_study(out, scenarios=["0"], utilization="1,2", max_systems=4, batch=4, half_width=0.4)
    schemes = criticore._core.study_schemes()
    assert s.rows.num_rows == 2 * 4 * len(schemes)  # points × systems × schemes
    assert set(s.sua) == set(schemes)
    # SUA over points 1 and 2 (trapezoid, Δu = 1): the mean of the two fractions.
    fractions = {}
    for r in s.rows.to_pylist():
        fractions.setdefault((r["scheme"], r["utilization"]), []).append(r["schedulable"])
    for k in schemes:
        f1, f2 = (sum(fractions[(k, u)]) / 4 for u in (1.0, 2.0))
        assert s.sua[k] == pytest.approx((f1 + f2) / 2)
    assert isinstance(s.figure(0), Figure) and isinstance(s.sua_figure(), Figure)
    assert criticore.load_study(out).rows.num_rows == s.rows.num_rows
    matplotlib.pyplot.close("all")


def test_platform_shows_its_clock_and_instructions_per_cycle_exactly():
    from fractions import Fraction

    doc = {
        "platform": {"cores": 1, "clock": "200MHz", "instructions_per_cycle": 0.85},
        "task": [{"name": "t", "core": 0, "period": "1ms", "runnables": [{"name": "a", "instructions": 1000}]}],
    }
    s = TaskSystem.from_dict(doc, "ipc.toml")
    assert (s.platform.clock_hz, s.platform.instructions_per_cycle) == (200_000_000, Fraction(17, 20))
    # 1,000 instructions at 17/20 per cycle of 5 ns: 100,000/17 ns, rounded up once.
    assert s.task("t").pet_ns["A"] == -(-100_000 // 17) == 5_883


def test_a_scratchpad_system_shows_its_labels_and_each_runnable_s_accesses():
    from criticore.system import Label, LabelAccess

    s = TaskSystem.load(ROOT / "examples" / "scratchpad.toml")
    # As examples/scratchpad.toml writes them (a label's reads and writes in one runnable: one entry).
    assert s.labels == (Label("speed", 4, "GRAM"), Label("filter_state", 64, "LRAM0"), Label("torque", 4, "LRAM1"))
    assert s.task("sensor").label_accesses == (
        LabelAccess("Sample", "speed", 0, 200),
        LabelAccess("Filter", "filter_state", 500, 500),
    )
    assert TaskSystem.load(ROOT / "examples" / "mc2-llc-heavy.toml").labels == ()
