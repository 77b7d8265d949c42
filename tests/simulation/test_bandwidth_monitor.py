"""The bandwidth monitor (blin-bandwidth-monitor §3–4) on the simulator, with
an overhead table from the profiling step (§3.2): the simulated profile
dataset (criticore.monitor.simulated) through the table builder
(criticore.monitor.tables).

Acceptance: for a synthetic real-time task with phases and constant
best-effort loads, the measured overhead of every real-time job stays under the
5% threshold in every run, while the best-effort cores keep some parallelism.
Method and results: docs/bandwidth-monitor.md.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from criticore.monitor import tables
from criticore.monitor.simulated import (
    Load,
    dump_toml,
    microbenchmark_loads,
    microbenchmark_peak_mb_s,
    simulated_dataset,
    write_variant,
)
from criticore.monitor.tables import Curve, build_table, envelope, pack
from criticore.simulation import simulate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "monitor" / "rt-with-loads.toml"
TABLE = EXAMPLE.parent / "overheads.toml"
SECOND = 1_000_000_000
THRESHOLD = 0.05
STEP = 20.48  # MB/s per table entry: 2^10 bytes per 50 µs sample
ENTRIES = 147 + 1  # i·20.48 ≤ 3000 for i = 0…146, then the 0 that holds beyond


# --------------------------------------------------------------------------- helpers


def simulated_table(loads=None, out: Path | None = None) -> tables.Tables:
    """Profile rt on the simulator and build its table (writing it to ``out``)."""
    data = simulated_dataset(EXAMPLE, "rt", [1, 2, 3], loads)
    built = tables.build(tables.profile_from_dataset(data))
    if out is not None:
        tables.write_table_file(out, built)
    return built


@pytest.fixture(scope="module")
def ns_per_line(tmp_path_factory) -> dict[int, float]:
    """Isolated time per line of the undelayed microbenchmark, per reads out of 10."""
    tmp = tmp_path_factory.mktemp("peaks")
    return {r: 32 / (microbenchmark_peak_mb_s(EXAMPLE, 1, r, tmp) / 1e3) for r in range(11)}


def rt_overheads(run) -> np.ndarray:
    """Per real-time job: (finish − start) / exec − 1. The rt task is alone on
    core 0 with the highest priority, so it is never preempted."""
    j = run.jobs
    rt = j["task"] == 0
    assert rt.sum() > 0
    assert (j["preemptions"][rt] == 0).all()
    return (j["finish_ns"][rt] - j["start_ns"][rt]) / j["exec_ns"][rt] - 1


def parallelism(run) -> np.ndarray:
    details = run.report["regulation"]["details"]
    return np.asarray(details["parallelism"])


def monitored_and_not(path: Path, duration: int = SECOND):
    mon = simulate(path, duration, regulator="monitor", jobs=True)
    bare = simulate(path, duration, regulator="none", jobs=True)
    return mon, bare


# --------------------------------------------------------------------------- table builder


def test_table_grid_5_percent_rule_and_zero_beyond_3000():
    # One curve, Ovd = 0.1 per GB/s, observed between 200 and 1000 MB/s.
    c = Curve(np.array([0.1, 0.0]), lo=200.0, hi=1000.0)
    unpacked, packed = build_table([c], sample_ns=50_000, shift=10, packing=False)
    assert len(unpacked) == ENTRIES and np.array_equal(unpacked, packed)
    i = np.arange(ENTRIES - 1)
    # Entry i covers [i·20.48, (i+1)·20.48) and holds the curve's maximum over it;
    # below 200 MB/s the curve holds its value there; beyond 1050 (5% past the
    # largest observation) the value at 1050 holds up to 3000; then 0.
    hi_edge = np.clip((i + 1) * STEP, 200.0, 1050.0)
    assert np.allclose(unpacked[:-1], 0.1 * hi_edge / 1000)
    assert unpacked[-1] == 0.0
    assert envelope([c], np.array([1100.0, 2999.0, 3000.0, 3000.1])).tolist() == pytest.approx([0.105, 0.105, 0.105, 0.0])


def test_envelope_takes_each_curve_only_near_its_data():
    low = Curve(np.array([1.0, 0.0]), lo=0.0, hi=1000.0)  # steep, observed up to 1000 MB/s
    high = Curve(np.array([0.1, 0.0]), lo=0.0, hi=1500.0)  # flat, observed up to 1500 MB/s
    env = envelope([low, high], np.array([500.0, 1050.0, 1060.0, 1575.0, 2500.0]))
    # The steep curve counts up to 1050 MB/s only; past 1575 the value at 1575 holds.
    assert env.tolist() == pytest.approx([0.5, 1.05, 0.106, 0.1575, 0.1575])


def test_packing_hand_worked():
    # Grid 0, 1, 2 MB/s with overheads 0, 0, 1. A sample at 1 MB/s can be half
    # at 0 and half at 2: rates 1 and 1/2 average 3/4, overhead 1/0.75 − 1 = 1/3.
    assert pack(np.array([0.0, 0.0, 1.0]), 1.0).tolist() == pytest.approx([0.0, 1 / 3, 1.0])
    # Packing never lowers an entry.
    rng = np.random.default_rng(0)
    o = rng.uniform(0, 1, 40)
    assert (pack(o, STEP) >= o).all()


# --------------------------------------------------------------------------- profiling


@pytest.fixture(scope="module")
def small_profile(tmp_path_factory):
    out = tmp_path_factory.mktemp("profile") / "small.toml"
    loads = microbenchmark_loads(reads=(0, 5, 10), delays_ns=(0, 40, 320, 2560), configs=((1, 1, 1), (1, 2, 3)))
    return simulated_table(loads, out), out


def test_profile_measures_phases_and_covers_every_point(small_profile):
    built, _ = small_profile
    prof = built.profile
    assert prof.exec_ns == 5_000_000  # ExecT alone = the PET the monitor divides by
    assert prof.phase_exec_ns == [1_200_000, 400_000, 2_400_000, 1_000_000]
    # Phase-only variants add up to the whole job next to every load.
    assert prof.phase_sum_error < 1e-6
    peak = json.loads(prof.metadata["load_peak_mb_s"])
    assert peak["0"] == pytest.approx(2020.0)  # the write-only bomb at the bus peak (§2.3)
    assert 1 <= built.degree <= 5 and built.degree_chosen and built.traces == {"stored": len(prof.run_ids)}
    # The table (before packing) sits on or above every profiled point (ObsB, Ovd).
    for p in range(prof.ovd.shape[0]):
        idx = (prof.obs_mb_s[p] / built.step_mb_s).astype(int)
        assert (built.unpacked[p][idx] >= prof.ovd[p] - 1e-9).all()
        assert (built.table[p] >= built.unpacked[p]).all()
        assert built.table[p][-1] == 0.0
    assert (prof.ovd >= 0).all() and prof.ovd[1].max() > 0.5  # phase 2 suffers most


def test_table_file_format_and_engine_reads_it(small_profile, tmp_path, ns_per_line):
    built, path = small_profile
    doc = tomllib.loads(path.read_text())
    assert (doc["task"], doc["sample"], doc["shift"], doc["be_cores"]) == ("rt", "50us", 10, 3)
    rows = [np.array(ph["overhead"]) for ph in doc["phase"]]
    assert len(rows) == 4  # one per memory phase, in order
    for row, exact in zip(rows, built.table):
        assert len(row) == ENTRIES and row[-1] == 0.0 and (row >= 0).all()
        assert (row >= exact - 1e-12).all() and (row - exact < 1.1e-6).all()  # rounded up
    # The engine parses it and monitors with it.
    v = write_variant(
        EXAMPLE, tmp_path / "v.toml", rt_task="rt", be_cores=[1, 2, 3], load=Load(0, 0, (1, 1, 1)),
        bomb_ns_per_line=ns_per_line, keep_regulation=True, overhead_table=path,
    )
    run = simulate(v, 200_000_000, regulator="monitor", jobs=True)
    assert rt_overheads(run).max() <= THRESHOLD
    assert run.report["regulation"]["details"]["jobs"] == 20


def test_profiling_is_deterministic_and_the_committed_table_is_its_output(tmp_path):
    out = tmp_path / "overheads.toml"
    built = simulated_table(out=out)
    assert built.profile.n_loads == len(built.profile.run_ids) == 11 * 10 * 2
    assert out.read_bytes() == TABLE.read_bytes(), "regenerate examples/monitor/overheads.toml (docs/bandwidth-monitor.md)"


# --------------------------------------------------------------------------- the monitor

# (load, kind). heavy: without the monitor the overhead passes 5%; moderate:
# it does not, but the conservative table still suspends the best-effort cores
# at some point; light: they are never suspended. Delays of 5, 30, 111 and
# 500 ns and 4 reads per 6 writes are not in the profiling grid; the [1x] load
# leaves two best-effort cores idle (the table is for all three active).
CASES = [
    (Load(0, 0, (1, 1, 1)), "heavy"),  # three write-only bombs at the bus peak: 16%
    (Load(0, 5, (1, 2, 3)), "heavy"),
    (Load(3, 20, (1, 2, 3)), "heavy"),  # the example's loads
    (Load(4, 30, (1, 1, 1)), "heavy"),
    (Load(0, 0, (1,)), "heavy"),
    (Load(10, 0, (1, 1, 1)), "moderate"),  # read-only bombs: 3.4% unregulated
    (Load(7, 111, (1, 2, 3)), "moderate"),
    (Load(0, 500, (1, 1, 1)), "light"),
    (Load(5, 2560, (1, 1, 1)), "light"),
]


@pytest.mark.parametrize("load,kind", CASES, ids=[c[0].label().replace(" ", "-") for c in CASES])
def test_monitor_bounds_overhead_and_keeps_parallelism(load, kind, tmp_path, ns_per_line):
    v = write_variant(
        EXAMPLE, tmp_path / "v.toml", rt_task="rt", be_cores=[1, 2, 3], load=load,
        bomb_ns_per_line=ns_per_line, keep_regulation=True,
    )
    mon, bare = monitored_and_not(v)
    ovd, free = rt_overheads(mon), rt_overheads(bare)
    par = parallelism(mon)
    assert len(ovd) == len(par) == 100
    assert ovd.max() <= THRESHOLD, f"{load.label()}: overhead {ovd.max():.4f}"
    assert (par > 0).all()  # the best-effort cores ran during every rt job
    assert ovd.max() <= free.max() + 1e-4  # never slower than without the monitor
    if kind == "heavy":
        assert free.max() > THRESHOLD  # the test has teeth: without the monitor, > 5%
        assert par.mean() < 1  # and the monitor suspended the best-effort cores
    else:
        assert free.max() <= THRESHOLD
        if kind == "moderate":
            assert par.mean() < 1
        else:
            assert (par == 1).all()


def test_the_example_as_written():
    mon, bare = monitored_and_not(EXAMPLE)
    assert rt_overheads(mon).max() <= THRESHOLD < rt_overheads(bare).max()
    assert 0 < parallelism(mon).mean() < 1
    assert mon.report["regulation"]["details"]["suspensions"] == 100


def test_loads_that_change_within_a_sample(tmp_path):
    """Not constant: each best-effort core alternates a bus-saturating write
    burst with slow reads, with periods 130, 167 and 204 µs, so samples see
    mixes (what packing is for, §3.2)."""
    doc = tomllib.loads(EXAMPLE.read_text())
    doc["regulation"]["overhead_table"] = str(TABLE)
    for k, t in enumerate(doc["task"][1:]):
        t["period"] = t["pet"] = f"{130 + 37 * k}us"
        t["memory"] = {
            "wss": "64MiB", "pattern": "stream", "phases": [
                {"work": f"{40 + 11 * k}us", "accesses_per_ms": 1e6 / (32 / 2.02), "read_fraction": 0.0},
                {"accesses_per_ms": 1e6 / (120 + 1280), "read_fraction": 1.0},
            ],
        }
    v = tmp_path / "bursts.toml"
    v.write_text(dump_toml(doc))
    mon, bare = monitored_and_not(v)
    assert rt_overheads(mon).max() <= THRESHOLD < rt_overheads(bare).max()
    assert (parallelism(mon) > 0).all()


def test_an_overrunning_job_does_not_leave_its_successor_unmonitored(tmp_path):
    # rt's 5 ms jobs with a 4.8 ms period: each job is released while its
    # predecessor still runs. Every job must still be monitored (overhead ≤ 5%)
    # and the reported parallelism must be a share in [0, 1].
    text = EXAMPLE.read_text().replace('period = "10ms"', 'period = "4.8ms"', 1)
    path = tmp_path / "overrun.toml"
    path.write_text(text)
    (tmp_path / "overheads.toml").write_text((EXAMPLE.parent / "overheads.toml").read_text())
    run = simulate(path, 100_000_000, regulator="monitor", jobs=True)
    assert (rt_overheads(run) <= 0.05).all(), rt_overheads(run)
    par = parallelism(run)
    assert len(par) > 0 and ((par >= 0) & (par <= 1)).all(), par
