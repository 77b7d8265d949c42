"""The overhead-table builder (criticore.monitor.tables, blin-bandwidth-monitor
§3.2) on hand-made profile datasets with known answers, the dataset rules
(criticore.monitor.dataset, docs/format.md "Profile dataset"), and the
`criticore tables` / `criticore plot table` commands."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import tomllib
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from criticore import InputError
from criticore.monitor import dataset as ds
from criticore.monitor import tables
from criticore.monitor.tables import Curve, envelope, fit_curves, pack

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "monitor" / "rt-with-loads.toml"
TABLE = EXAMPLE.parent / "overheads.toml"
CRITICORE = Path(sys.executable).parent / "criticore"


def cli(*args: str | Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([str(CRITICORE), *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def one_line_error(r: subprocess.CompletedProcess, *needles: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# --------------------------------------------------------------------------- a synthetic dataset

#: Ovd = a·x² + b·x + c (x: ObsB in GB/s) per reads out of 10, in phase 0;
#: phase 1 suffers half as much. Values are whole nanoseconds and bytes, so
#: the dataset holds them exactly.
QUAD = {0: (0.08, 0.02, 0.01), 5: (0.05, 0.01, 0.005), 10: (0.03, 0.0, 0.002)}
X_GB_S = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2)
ALONE_NS = (1_000_000, 2_000_000)
SCALE = (1.0, 0.5)
META = {"task": "syn", "line_bytes": 64, "sample_ns": 50_000, "source": "real", "machine": "test bench", "be_cores": 3}


def quad(reads: int, x: float, phase: int) -> float:
    a, b, c = QUAD[reads]
    return SCALE[phase] * (a * x * x + b * x + c)


def synthetic_rows(whole_job: bool = False) -> list[dict]:
    """Run 0 alone (100 MB/s), then one run per ratio and bandwidth; with
    ``whole_job``, −1 rows (the phases' sums, traces at 50 µs)."""
    rows = []

    def add(run, label, reads, delay, phases):
        base = {"run": run, "repetition": 0, "warmup": False, "load": label, "load_reads": reads, "load_delay": delay,
                "load_cores": 0 if reads is None else 3, "load_multipliers": "" if reads is None else "1,1,1"}
        for p, (e, b) in enumerate(phases):
            rows.append({**base, "phase": p, "exec_ns": e, "bytes": b, "samples": None})
        if whole_job:
            e = [x for x, _ in phases]
            b = [y for _, y in phases]
            rows.append({**base, "phase": -1, "exec_ns": sum(e), "bytes": sum(b),
                         "samples": tables.reconstruct_samples(np.array(e), np.array(b), 50_000).tolist()})

    add(0, ds.ALONE, None, None, [(e, e // 10) for e in ALONE_NS])
    run = 1
    for r in QUAD:
        for k, x in enumerate(X_GB_S):
            phases = []
            for p, alone in enumerate(ALONE_NS):
                e = round(alone * (1 + quad(r, x, p)))
                phases.append((e, round(x * e)))
            add(run, f"{r}r{10 - r}w d{k}", r, float(100 * k), phases)
            run += 1
    return rows


def to_table(rows: list[dict], meta: dict = META, drop: tuple[str, ...] = ()) -> pa.Table:
    cols = {name: [row[name] for row in rows] for name in [*ds.COLUMNS, ds.SAMPLES] if name not in drop}
    if all(v is None for v in cols.get(ds.SAMPLES, [0])):
        cols.pop(ds.SAMPLES, None)
    return ds.make(cols, meta)


def built(rows: list[dict], **kw) -> tables.Tables:
    return tables.build(tables.profile_from_dataset(to_table(rows)), **kw)


def write_raw(path: Path, cols: dict, meta: dict | None = META) -> Path:
    """A Parquet file as given, unchecked (for the bad-input tests)."""
    table = pa.table(cols)
    if meta is not None:
        table = table.replace_schema_metadata({k: str(v) for k, v in meta.items()})
    pq.write_table(table, path)
    return path


# --------------------------------------------------------------------------- envelope and packing


def test_lifted_line_hand_worked_and_the_envelope_covers_every_point():
    # Points (0.5, 0.1), (1.0, 0.3), (1.5, 0.2) GB/s: the least-squares line is
    # 0.1·x + 0.1, 0.1 below (1.0, 0.3), so lifted: 0.1·x + 0.2.
    obs = np.array([500.0, 1000.0, 1500.0])
    ovd = np.array([0.1, 0.3, 0.2])
    (c,) = fit_curves(obs, ovd, np.zeros(3, int), 1)
    assert c.coef == pytest.approx([0.1, 0.2])
    assert (c.lo, c.hi) == (500.0, 1500.0)
    env = envelope([c], obs)
    assert (env >= ovd).all() and env[1] == pytest.approx(0.3)  # on the highest point, above the others
    # 5% beyond 1500 MB/s, then flat to 3000 MB/s, then 0; below 500 MB/s, the value at 500.
    x = np.array([100.0, 1575.0, 2000.0, 3000.0, 3000.5])
    assert envelope([c], x).tolist() == pytest.approx([0.25, 0.3575, 0.3575, 0.3575, 0.0])


def test_the_table_lies_on_or_above_every_observation():
    rng = np.random.default_rng(1)
    rows = synthetic_rows()
    for row in rows:  # noisy overheads (and some negative, as real runs give)
        if row["load"] != ds.ALONE:
            row["exec_ns"] = int(row["exec_ns"] * rng.uniform(0.97, 1.05))
    for packing in (False, True):
        t = built(rows, packing=packing)
        prof = t.profile
        assert (prof.ovd < 0).any()
        for p in range(prof.n_phases):
            idx = (prof.obs_mb_s[p] / t.step_mb_s).astype(int)  # the monitor's index of that bandwidth
            assert (t.unpacked[p][idx] >= prof.ovd[p]).all()
            assert (t.table[p][idx] >= prof.ovd[p]).all()
            for c in t.curves[p]:
                sel = tables.curve_groups(prof.keys) == c.group
                assert (c(prof.obs_mb_s[p][sel]) >= prof.ovd[p][sel] - 1e-12).all()


def test_packing_hand_worked_and_never_below_the_constant_load_value():
    # Grid 0, 1, 2, 3 MB/s with overheads 0, 0.5, 0, 1. At 2 MB/s: half at 1
    # (rate 1/1.5) and half at 3 (rate 1/2) average 7/12, overhead 12/7 − 1 = 5/7;
    # at 1 MB/s no mix beats its own 0.5 (the best, 2/3 at 0 and 1/3 at 3, gives 0.2).
    assert pack(np.array([0.0, 0.5, 0.0, 1.0]), 1.0).tolist() == pytest.approx([0.0, 0.5, 5 / 7, 1.0])
    rng = np.random.default_rng(7)
    for _ in range(20):
        o = rng.uniform(0, 2, 60) * (rng.uniform(size=60) < 0.7)
        assert (pack(o, 20.48) >= o).all()
    t = built(synthetic_rows())
    assert (t.table >= t.unpacked).all()
    assert not (t.table == t.unpacked).all()  # and packing does something here


def _pack_every_pair(o: np.ndarray, step: float) -> np.ndarray:
    """§3.2's packing by brute force: every pair B1 < B < B2 of grid points."""
    b, rate, out = np.arange(len(o)) * step, 1.0 / (1.0 + o), o.astype(float).copy()
    for i in range(1, len(o) - 1):
        for j in range(i):
            for k in range(i + 1, len(o)):
                t2 = (b[i] - b[j]) / (b[k] - b[j])
                out[i] = max(out[i], 1.0 / ((1 - t2) * rate[j] + t2 * rate[k]) - 1.0)
    return out


def test_packing_by_the_hull_equals_every_pair():
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 5, 40):
        for _ in range(10):
            o = rng.uniform(0, 3, n) * (rng.uniform(size=n) < 0.6)
            assert pack(o, 20.48) == pytest.approx(_pack_every_pair(o, 20.48), rel=1e-12, abs=1e-12)
    flat = np.full(30, 0.25)  # collinear rates: nothing to gain by mixing
    assert pack(flat, 1.0).tolist() == pytest.approx(flat.tolist())


# --------------------------------------------------------------------------- index arithmetic


def test_index_arithmetic_is_exact():
    # 2^10 bytes per 50 µs sample = 20.48 MB/s per entry (§3.3); i·20.48 ≤ 3000 up to i = 146.
    assert tables.step_mb_s(50_000, 10) == pytest.approx(20.48, rel=1e-15)
    assert tables.entries(50_000, 10) == 147 and 146 * 20.48 <= 3000 < 147 * 20.48
    assert tables.step_mb_s(100_000, 11) == pytest.approx(20.48, rel=1e-15)
    assert tables.step_mb_s(50_000, 12) == pytest.approx(81.92, rel=1e-15) and tables.entries(50_000, 12) == 37
    # The monitor's lookup: a sample that moved b bytes reads entry b >> 10 (the
    # last, 0, for anything from 147 × 1024 bytes = 3010.56 MB/s on).
    row = np.arange(148, dtype=float)
    row[-1] = 0.0
    table = row[None, :]
    one = np.zeros(1, dtype=int)
    for b, entry in ((0, 0), (1023, 0), (1024, 1), (146 * 1024 + 1023, 146), (147 * 1024, 0), (10**9, 0)):
        assert tables.replay(table, np.array([b]), one, 10, 1.0) == entry
    # Entry i holds the largest value over its bin [i·20.48, (i+1)·20.48) MB/s.
    c = Curve(np.array([0.1, 0.0]), lo=0.0, hi=3000.0)
    unpacked, _ = tables.build_table([c], 50_000, 10, packing=False)
    i = np.arange(147)
    assert unpacked[:-1] == pytest.approx(0.1 * np.minimum((i + 1) * 20.48, 3000.0) / 1000)
    assert len(unpacked) == 148 and unpacked[-1] == 0.0


def test_written_file_names_the_sample_and_shift(tmp_path):
    t = built(synthetic_rows(), sample_ns=100_000, shift=11)
    doc = tomllib.loads(tables.write_table_file(tmp_path / "t.toml", t).read_text())
    assert (doc["task"], doc["sample"], doc["shift"], doc["be_cores"]) == ("syn", "100us", 11, 3)
    assert [len(p["overhead"]) for p in doc["phase"]] == [148, 148]
    assert t.traces == {"reconstructed": 18}


def test_job_traces_stored_aggregated_or_rebuilt():
    # Phases of 75 µs at 0.1 byte/ns and 50 µs at 0.2 byte/ns: two whole 50 µs
    # samples, 5000 bytes, then 25 µs × 0.1 + 25 µs × 0.2 = 7500 bytes.
    assert tables.reconstruct_samples(np.array([75_000, 50_000]), np.array([7_500, 10_000]), 50_000).tolist() == [5_000, 7_500]
    rows = synthetic_rows(whole_job=True)
    prof = tables.profile_from_dataset(to_table(rows))
    stored = prof.job_samples[0]
    assert tables.job_trace(prof, 0, 50_000)[1] == "stored"
    agg, kind = tables.job_trace(prof, 0, 150_000)
    assert kind == "aggregated" and agg.tolist() == [int(stored[k : k + 3].sum()) for k in range(0, len(stored) - 2, 3)]
    assert tables.job_trace(prof, 0, 75_000)[1] == "reconstructed"
    assert built(rows, sample_ns=100_000).traces == {"aggregated": 18}
    assert built(rows, sample_ns=70_000).traces == {"reconstructed": 18}


# --------------------------------------------------------------------------- degree choice and fit


@pytest.mark.parametrize("whole_job", [False, True], ids=["traces-rebuilt-from-phases", "traces-given"])
def test_a_known_quadratic_per_ratio_gives_degree_2_and_its_coefficients(whole_job):
    t = built(synthetic_rows(whole_job))
    assert t.degree_chosen and t.degree == 2
    assert t.traces == ({"stored": 18} if whole_job else {"reconstructed": 18})
    assert tables.degree_wins(t.rss) == {1: 0, 2: 3, 3: 0, 4: 0, 5: 0}
    assert all(t.rss[1][r] > 5 * t.rss[2][r] for r in QUAD)  # a line is far worse
    keys = sorted(set(t.profile.keys))
    for p in range(2):
        assert len(t.curves[p]) == 3
        for c in t.curves[p]:
            reads = keys[c.group][0]
            want = SCALE[p] * np.array(QUAD[reads])
            assert c.coef == pytest.approx(want, abs=1e-9)
            assert (c.lo, c.hi) == pytest.approx((200.0, 1200.0))
    # The same data at a forced degree: the given degree is used, nothing is replayed.
    t3 = built(synthetic_rows(whole_job), degree=3)
    assert (t3.degree, t3.degree_chosen, t3.rss, t3.traces) == (3, False, {}, {})


def test_exec_t_alone_is_the_largest_isolation_run():
    rows = synthetic_rows()
    extra = [dict(r, run=100, repetition=1) for r in rows if r["run"] == 0]
    extra[1]["exec_ns"] += 20_000  # phase 1 took 1% longer in the second isolation run
    prof = tables.profile_from_dataset(to_table(rows + extra))
    assert prof.phase_exec_ns == [1_000_000, 2_020_000] and prof.exec_ns == 3_020_000 and prof.alone_runs == 2
    assert prof.ovd[1] == pytest.approx(np.array([row["exec_ns"] for row in rows if row["phase"] == 1 and row["run"] > 0]) / 2_020_000 - 1)


def test_warmup_rows_are_discarded():
    rows = synthetic_rows(whole_job=True)
    reference = tables.table_text(built(rows))
    warm = [dict(r, run=r["run"] + 1000, warmup=True) for r in rows]
    assert tables.table_text(built(rows + warm)) == reference
    for r in warm:  # whatever the warm-up runs measured
        r["exec_ns"] *= 3
        r["bytes"] //= 7
        r["samples"] = None if r["samples"] is None else [5 * s for s in r["samples"]]
    t = built(rows + warm)
    assert tables.table_text(t) == reference and t.profile.warmup_rows == len(warm)


def test_a_phase_missing_from_a_run_or_a_duplicate_row_is_refused():
    rows = synthetic_rows()
    with pytest.raises(InputError, match="run 3: no row for phase 1"):
        to_table([r for r in rows if not (r["run"] == 3 and r["phase"] == 1)])
    with pytest.raises(InputError, match="run 1, phase 0: more than one row"):
        to_table(rows + [rows[2]])
    with pytest.raises(InputError, match="load_multipliers"):
        to_table([dict(r, load_multipliers="1,2") if r["run"] == 4 else r for r in rows])


# --------------------------------------------------------------------------- the CLI


def test_build_and_plot_through_the_cli(tmp_path):
    data = ds.write(to_table(synthetic_rows(whole_job=True)), tmp_path / "syn.parquet")
    out = tmp_path / "syn.toml"
    r = cli("tables", "build", data, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "degree 2" in r.stdout and "built in" in r.stdout
    assert out.read_text() == tables.table_text(built(synthetic_rows(whole_job=True)))
    one_line_error(cli("tables", "build", data, "-o", out), str(out), "--output", "exists; pass --force")
    assert cli("tables", "build", data, "-o", out, "--force", "--degree", "4", "--sample", "100us", "--shift", "11").returncode == 0
    doc = tomllib.loads(out.read_text())
    assert (doc["sample"], doc["shift"]) == ("100us", 11) and "polynomial degree 4 (given)" in out.read_text()
    png = tmp_path / "fig6.png"
    r = cli("plot", "table", out, "-o", png, "--dataset", data, "--degree", "4")
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_datasets_are_one_line_and_exit_2(tmp_path):
    rows = synthetic_rows()
    good = {name: [row[name] for row in rows] for name in ds.COLUMNS}
    out = tmp_path / "t.toml"

    def build(cols: dict, meta: dict | None = META, name: str = "bad.parquet", *options: str) -> str:
        path = write_raw(tmp_path / name, cols, meta)
        return one_line_error(cli("tables", "build", path, "-o", out, *options), str(path))

    assert build({k: v for k, v in good.items() if k != "bytes"}).endswith("bytes: missing column")
    assert "exec_ns: wrong type double (expected int64)" in build({**good, "exec_ns": [float(v) for v in good["exec_ns"]]})
    assert "warmup: wrong type string" in build({**good, "warmup": ["no"] * len(rows)})
    alone = [row["load"] == ds.ALONE for row in rows]
    assert "load: no 'alone' rows outside warm-up" in build({k: [v for v, a in zip(vs, alone) if not a] for k, vs in good.items()})
    assert "load: no 'alone' rows outside warm-up" in build({**good, "warmup": alone})  # the only alone run is a warm-up
    assert "metadata.sample_ns: missing" in build(good, {k: v for k, v in META.items() if k != "sample_ns"})
    assert "metadata.source: expected one of real, simulated" in build(good, {**META, "source": "measured"})
    assert "exec_ns: run 0, phase 0: 0 must be positive" in build({**good, "exec_ns": [0] + good["exec_ns"][1:]})
    assert "load_reads: run 1: 11" in build({**good, "load_reads": [None, None] + [11] * (len(rows) - 2)})
    (tmp_path / "junk.parquet").write_text("not parquet")
    one_line_error(cli("tables", "build", tmp_path / "junk.parquet", "-o", out), "junk.parquet", "(file): not a readable Parquet file")
    one_line_error(cli("tables", "build", tmp_path / "none.parquet", "-o", out), "none.parquet", "(file): cannot read")
    data = ds.write(to_table(rows), tmp_path / "ok.parquet")
    one_line_error(cli("tables", "build", data, "-o", out, "--degree", "7"), "--degree", "auto or 1…5")
    one_line_error(cli("tables", "build", data, "-o", out, "--sample", "fast"), "--sample")
    one_line_error(cli("tables", "build", data, "-o", tmp_path / "t.json"), "--output", "unsupported file type")
    assert not out.exists()


def test_simulate_refuses_bad_options(tmp_path):
    out = tmp_path / "d.parquet"
    one_line_error(cli("tables", "simulate", EXAMPLE, "--rt-task", "nope", "--be-cores", "1,2,3", "-o", out), "--rt-task", "no task named 'nope'")
    one_line_error(cli("tables", "simulate", EXAMPLE, "--rt-task", "rt", "--be-cores", "0,1", "-o", out), "--be-cores", "core 0 runs the real-time task")
    one_line_error(cli("tables", "simulate", EXAMPLE, "--rt-task", "rt", "--be-cores", "1,9", "-o", out), "--be-cores", "core 9 does not exist")
    assert not out.exists()


def test_evaluate_prints_the_monitor_against_50_loads():
    r = cli("tables", "evaluate", EXAMPLE, "--rt-task", "rt", "--be-cores", "1,2,3", "--duration", "100ms")
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and "%" in line]
    assert len(rows) == 50
    worst = float(r.stdout.rsplit("largest overhead with the monitor ", 1)[1].rstrip().rstrip("%"))
    assert worst <= 5.0


# --------------------------------------------------------------------------- the example, end to end

#: examples/monitor/overheads.toml as the argparse profiler (criticore.profiling,
#: before the dataset existed) wrote it: 4 phases × 148 entries in millionths,
#: differences along each row, int32 little-endian, zlib, base85.
OLD_TABLE = (
    "c-pPhdu&W;7{~Dk+tPOE7Hv`0>h$W;GK@RhHV9Fa72@(oL$q0z1`SnPm(UQ6OWJN+)^<e|B{30{B_pb-TZN`6>YiF^x?K&T?(zCg"
    "^2(k}CjMyr@yYKwlQZY?p67XMyNWb>h<w0jwDuHf2NV3@k068~95IN61w$|bi5QC{Bx5>eAqDfX0O`m;7FJ^eHe)Laup5OaMhR><"
    "i8DBl3RI#Bw{ahJc!nmt!h0zE&{o6;KOz9Z2tzdDV8t*bU>qi58fGB{X;_2|WMLgPVk-"
    "*p2ln9*Y$$~t<*0<;XQjUCsCCjhYyLU|bRDQ`XLixqRoBk!W)Ni19l<(#=-QbfE<(}MAk4t5g=-"
    "NyBX#Y}D1&H&7_ApBapUY<k){43N8vz3fXF=TMIAx|IYu!Yi0#5U<1E_Hi<7VuPhsiC+M^obK_V+~4d(75t5AcuV393oL{bmF2Re"
    "p`tVA6qgo>O-"
    "WKWSD@D3AMgEv@W7I}_E;q(xeMKA}*iR2qb@r^MkntLKOhQ8`0vLEAn({Cv3!}IoKW@34MWX6dM?MDydYJd8~Lf;SI{DI7kRm67?"
    "*GJ=Ek$;Bpd_zU*hl#u#F5)qg85<=M|C7kVc&?owQkzKcj%I$wFau-h;c>j{c-"
    "CnG&zQt}P7*mXS!C)I{{OScfhS7cg6C7E24F6>!;S_7)GL*U#n_2*JV)R&rQ-"
    "1m@^A)^;pI@OA7&sMMYw_{bZSs)FlJ*dif|DP@cCD%SR`W!@^At*Xoi2IQdUgEGUVeJs?Y?}fAkbm5587WZCLkK|MU0;Pt91jb(5"
    "~z8PdqhO&WO{(v^>!H0d<fCKv79q*Di%+8tj*`s#No6Xp?&g)pM(Dz4~kN&P*JTl#xT&-"
    "<#mRH?VjVyTzN1>C?rIPe;+yjfoaAqrL`Vlw7n0Wy(;eC&k{c2wdn9C!l{ACb;5!-51PBL(SLjcq7|4d-"
    "wJkMIIwVh=(X24Xa(BMmE&i#@QR3^l07JDA$Dm%xHCn2BGp4h1NI9o4AENBDJMkHm0HK^n4AfWtVCS~S7amwtj36OoFvkL({<h{Z"
    "_9Qe<E`GLePfum)?f9y!>EO~}O-"
    "Y(pOM@jG^47xv&!{DpleLNN}Z1V?ZbHXOrol;RZr##z{L4rM4u1uo(;Dsc_hQH5&M;3jHu2lw#+4`HtOq`m+$ap*P"
)


def old_table() -> np.ndarray:
    deltas = np.frombuffer(zlib.decompress(base64.b85decode(OLD_TABLE)), dtype="<i4").reshape(4, 148)
    return np.cumsum(deltas, axis=1) / 1e6


def test_simulated_dataset_round_trip_gives_the_committed_table(tmp_path):
    data, out = tmp_path / "rt.parquet", tmp_path / "overheads.toml"
    r = cli("tables", "simulate", EXAMPLE, "--rt-task", "rt", "--be-cores", "1,2,3", "-o", data)
    assert r.returncode == 0, r.stderr
    table = ds.read(data)
    assert table.schema.metadata[b"source"] == b"simulated" and table.schema.metadata[b"be_cores"] == b"3"
    assert table.num_rows == (1 + 220) * (4 + 1) and table.column("samples").type == pa.list_(pa.int64())
    r = cli("tables", "build", data, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == TABLE.read_bytes(), "regenerate examples/monitor/overheads.toml (docs/bandwidth-monitor.md)"
    # The old profiler's table, up to the integer byte counts of the dataset
    # (ObsB = bytes / exec_ns, bytes rounded to the byte: values move by at most
    # 2e-6 before the file's round-up to 1e-6; see docs/bandwidth-monitor.md).
    new = np.array([p["overhead"] for p in tomllib.loads(out.read_text())["phase"]])
    old = old_table()
    assert new.shape == old.shape and old[:, -1].tolist() == [0.0] * 4
    assert np.abs(new - old).max() <= 2e-6 + 1e-12
    assert "polynomial degree 5;" in out.read_text()


def test_the_cut_off_is_the_papers_3000_unless_the_machine_goes_faster():
    prof = tables.profile_from_dataset(to_table(synthetic_rows()))
    top = float(np.max(prof.obs_mb_s))
    assert top < 2000 and tables.cutoff_mb_s(prof) == 3000.0  # §3.2's value
    # The same runs with 10x the bytes: ObsB 10x, the cut-off 1.5x the largest.
    prof.obs_mb_s = prof.obs_mb_s * 10
    assert tables.cutoff_mb_s(prof) == pytest.approx(15 * top)
    t = tables.build(prof, degree=1)
    # Entries up to the cut-off at 20.48 MB/s each, then the one 0.
    assert t.max_mb_s == pytest.approx(15 * top)
    assert t.table.shape[1] == tables.entries(50_000, 10, 15 * top) + 1 and t.table[:, -1].tolist() == [0.0] * prof.n_phases
    assert tables.build(prof, degree=1, max_mb_s=3000.0).table.shape[1] == 147 + 1
