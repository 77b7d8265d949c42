#!/usr/bin/env python3
"""Overhead-table build time for the full §3.1 grid (issue 10), against the
arithmetic no builder can avoid, measured in the same run.

Dataset: the full profiling grid of blin-bandwidth-monitor §3.1 on the
simulator, 11 read-write ratios × 10 delays × the 5 load configurations of
``criticore.monitor.simulated.CONFIGS`` ([1x], [1x,1x], [1x,2x], [1x,1x,1x],
[1x,2x,3x]) = 550 constant loads, plus the isolation run, for task ``rt`` of
``examples/monitor/rt-with-loads.toml`` on best-effort cores 1,2,3:
``simulated_dataset(..., loads=microbenchmark_loads())``, the function behind
``criticore tables simulate``. (``criticore tables simulate ... --be-cores
1,2,3`` itself profiles only the configurations with all three cores loaded,
[1x,1x,1x] and [1x,2x,3x]: 220 loads; that dataset is timed too, as "cli".)
Both are written once to a temporary directory (the simulation time is
printed, not compared).

Timed, per dataset, interleaved and rotated, ``--reps`` times:

- whole process: ``criticore tables build DATASET -o TABLE --force`` (degree
  chosen, §3.2), the same with ``--degree D`` (D the chosen degree: no
  degree choice), ``criticore version`` (the CLI's start-up alone), and the
  peer as a process (``python benches/table_build.py --peer DATASET D``);
- in process: ``criticore.monitor.tables`` (``dataset.read``,
  ``profile_from_dataset``, ``build``, ``table_text``), degree chosen and
  given, against the peer function.

Peer (the floor): plain pyarrow + numpy doing what any builder must, reading
the Parquet file (``pyarrow.parquet.read_table``, the columns needed), ObsB
and Ovd per phase against the largest time alone, and one ``numpy.polyfit``
per curve at the chosen degree (one curve per read-write ratio and load
configuration, per phase, as the builder fits: 55 × 4 for the full grid).
Its coefficients are checked against the builder's own fits (before the
lift) so that both do the same arithmetic. No validation, no degree choice,
no envelope, packing or file.

Wall time by ``time.perf_counter``; processes' CPU from
``resource.getrusage(RUSAGE_CHILDREN)``. Min / median per command; ratios
are the median of the per-repetition ratios (each against the peer run next
to it). Nothing is a threshold: the numbers go to benches/RESULTS.md.

Usage (from the repository root):
    .venv/bin/python benches/table_build.py [--reps 11] [--keep DIR]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "monitor" / "rt-with-loads.toml"
CLI = str(ROOT / ".venv" / "bin" / "criticore")
PY = str(ROOT / ".venv" / "bin" / "python")
PEER_COLUMNS = ["load", "load_reads", "load_multipliers", "warmup", "phase", "exec_ns", "bytes"]


# --------------------------------------------------------------------------- the peer


def peer_fits(path: str | Path, degree: int) -> dict[tuple[int, int, str], np.ndarray]:
    """The floor: read the dataset, ObsB (MB/s) and Ovd per (loaded run,
    phase), one least-squares polynomial per (phase, reads, multipliers) at
    ``degree`` (bandwidth in GB/s, as the builder fits). Imports only
    pyarrow and numpy."""
    t = pq.read_table(path, columns=PEER_COLUMNS)
    load = np.asarray(t.column("load").to_pylist(), dtype=object)
    reads = t.column("load_reads").to_numpy(zero_copy_only=False)
    mult = np.asarray(t.column("load_multipliers").to_pylist(), dtype=object)
    keep = ~t.column("warmup").to_numpy(zero_copy_only=False)
    phase = t.column("phase").to_numpy()
    exec_ns = t.column("exec_ns").to_numpy().astype(float)
    nbytes = t.column("bytes").to_numpy().astype(float)
    alone = load == "alone"
    out = {}
    for p in range(int(phase.max()) + 1):
        here = keep & (phase == p)
        base = exec_ns[here & alone].max()  # ExecT_p: the largest alone
        sel = here & ~alone
        x = nbytes[sel] / exec_ns[sel]  # bytes/ns = GB/s
        y = exec_ns[sel] / base - 1.0
        r, m = reads[sel].astype(np.int64), mult[sel]
        for key in sorted(set(zip(r.tolist(), m.tolist()))):
            g = (r == key[0]) & (m == key[1])
            out[(p, key[0], key[1])] = np.polyfit(x[g], y[g], degree)
    return out


# --------------------------------------------------------------------------- criticore in process


def builder(path: str | Path, degree: int | None):
    """What ``criticore tables build`` does in process: read and validate,
    the builder's view, the tables, the file's text."""
    from criticore.monitor import dataset as ds
    from criticore.monitor import tables

    prof = tables.profile_from_dataset(ds.read(path), str(path))
    built = tables.build(prof, degree=degree)
    return built, tables.table_text(built)


def breakdown(path: Path) -> dict:
    """One pass with the builder's steps timed separately (degree chosen)."""
    from criticore.monitor import dataset as ds
    from criticore.monitor import tables

    t0 = time.perf_counter()
    table = ds.read(path)
    t1 = time.perf_counter()
    prof = tables.profile_from_dataset(table, str(path))
    t2 = time.perf_counter()
    groups = tables.curve_groups(prof.keys)
    traces = [tables.job_trace(prof, i, prof.sample_ns)[0] for i in range(len(prof.run_ids))]
    degree, _ = tables.choose_degree(prof, groups, traces, prof.sample_ns, 10, True, tables.cutoff_mb_s(prof))
    t3 = time.perf_counter()
    built = tables.build(prof, degree=degree)
    t4 = time.perf_counter()
    tables.table_text(built)
    t5 = time.perf_counter()
    return {"read_validate_s": t1 - t0, "profile_from_dataset_s": t2 - t1, "choose_degree_s": t3 - t2,
            "fit_envelope_pack_s": t4 - t3, "table_text_s": t5 - t4, "degree": degree}


def check_same_fits(path: Path, degree: int) -> float:
    """Largest |peer − builder| over every coefficient (the builder's
    unlifted fits at ``degree``): the peer does the builder's arithmetic."""
    from criticore.monitor import dataset as ds
    from criticore.monitor import tables

    prof = tables.profile_from_dataset(ds.read(path), str(path))
    groups = tables.curve_groups(prof.keys)
    order = sorted(set(prof.keys))
    peer = peer_fits(path, degree)
    worst = 0.0
    for p in range(prof.n_phases):
        fits = tables.fit_polynomials(prof.obs_mb_s[p], prof.ovd[p], groups, degree)
        for g, coef in fits.items():
            reads, mults = order[g]
            other = peer[(p, reads, ",".join(str(m) for m in mults))]
            worst = max(worst, float(np.max(np.abs(other - coef))))
    if len(peer) != prof.n_phases * len(order):
        raise SystemExit(f"peer fitted {len(peer)} curves, the builder {prof.n_phases * len(order)}")
    return worst


# --------------------------------------------------------------------------- timing


def run_process(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["timeout", "-k", "5", "300", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stats(xs: list[float]) -> dict:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs), "n": len(xs)}


def ratio(a: list[float], b: list[float]) -> dict:
    return stats([x / y for x, y in zip(a, b)])


def make_datasets(tmp: Path) -> dict:
    from criticore.monitor import dataset as ds
    from criticore.monitor.simulated import microbenchmark_loads, simulated_dataset

    out = {}
    t0 = time.perf_counter()
    full = simulated_dataset(EXAMPLE, "rt", [1, 2, 3], loads=microbenchmark_loads())
    seconds = time.perf_counter() - t0
    path = tmp / "full-grid.parquet"
    ds.write(full, path)
    out["full"] = {"path": path, "make_s": seconds, "how": "simulated_dataset(rt-with-loads.toml, 'rt', [1,2,3], loads=microbenchmark_loads())"}
    path = tmp / "cli.parquet"
    cmd = [CLI, "tables", "simulate", str(EXAMPLE), "--rt-task", "rt", "--be-cores", "1,2,3", "-o", str(path)]
    t0 = time.perf_counter()
    subprocess.run(["timeout", "-k", "5", "900", *cmd], check=True, stdout=subprocess.DEVNULL)
    out["cli"] = {"path": path, "make_s": time.perf_counter() - t0, "how": " ".join(["criticore", *cmd[1:3], "examples/monitor/rt-with-loads.toml", *cmd[4:-2], "-o", "cli.parquet"])}
    for d in out.values():
        t = pq.read_table(d["path"])
        load = t.column("load").to_pylist()
        d.update(rows=t.num_rows, loads=len(set(load)) - 1, runs=len(set(t.column("run").to_pylist())),
                 configs=sorted(set(t.column("load_multipliers").to_pylist()) - {""}),
                 samples_per_job=len(next(s for s in t.column("samples").to_pylist() if s is not None)),
                 bytes=d["path"].stat().st_size)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=11, help="timed repetitions per command (default 11)")
    parser.add_argument("--keep", type=Path, help="keep the datasets and tables in this folder")
    parser.add_argument("--peer", nargs=2, metavar=("DATASET", "DEGREE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:  # the peer as a process: pyarrow and numpy only
        fits = peer_fits(args.peer[0], int(args.peer[1]))
        print(len(fits))
        return

    sys.path.insert(0, str(ROOT / "benches"))
    from machine import machine

    info = machine()
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    print(f"{date}  nproc={info['nproc']}  cpu={info['cpu']}  python {info['python']}  commit {info['commit']}  load avg {os.getloadavg()}", flush=True)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="criticore-tablebench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    data = make_datasets(tmp)
    for name, d in data.items():
        print(f"dataset {name}: {d['loads']} loads + alone, {d['runs']} runs, {d['rows']} rows, configurations {d['configs']}, "
              f"{d['samples_per_job']} samples per job, {d['bytes']:,} bytes; made in {d['make_s']:.1f} s by {d['how']}", flush=True)

    results: dict = {}
    for name, d in data.items():
        path = d["path"]
        built, text = builder(path, None)
        degree = built.degree
        d["degree"] = degree
        d["curves"] = len(built.curves[0]) * len(built.curves)
        d["max_coef_diff_peer_vs_builder"] = check_same_fits(path, degree)
        table = tmp / f"{name}-table.toml"
        # The CLI writes the same file as the in-process builder.
        subprocess.run([CLI, "tables", "build", str(path), "-o", str(table), "--force"], check=True, stdout=subprocess.DEVNULL)
        d["cli_file_identical"] = table.read_text() == text
        d["breakdown"] = breakdown(path)
        print(f"dataset {name}: degree {degree} chosen, {d['curves']} curves; peer vs builder fits: max |Δcoef| "
              f"{d['max_coef_diff_peer_vs_builder']:.1e}; CLI file identical to in-process: {d['cli_file_identical']}; "
              "one pass: " + ", ".join(f"{k} {v:.3f}" for k, v in d["breakdown"].items() if k.endswith("_s")), flush=True)

        procs = {
            "cli-build": [CLI, "tables", "build", str(path), "-o", str(table), "--force"],
            "cli-build-degree": [CLI, "tables", "build", str(path), "-o", str(table), "--force", "--degree", str(degree)],
            "cli-version": [CLI, "version"],
            "peer-process": [PY, str(Path(__file__).resolve()), "--peer", str(path), str(degree)],
        }
        funcs = {
            "build": lambda: builder(path, None),
            "build-degree": lambda: builder(path, degree),
            "peer": lambda: peer_fits(path, degree),
        }
        wall = {k: [] for k in [*procs, *funcs]}
        cpu = {k: [] for k in procs}
        for f in funcs.values():  # warm-up: imports, page cache
            f()
        for k, c in procs.items():
            run_process(c)
        started = time.monotonic()
        for rep in range(args.reps):
            order = list(procs)
            k0 = rep % len(order)
            for k in order[k0:] + order[:k0]:
                w, c = run_process(procs[k])
                wall[k].append(w)
                cpu[k].append(c)
            order = list(funcs)
            k0 = rep % len(order)
            for k in order[k0:] + order[:k0]:
                t0 = time.perf_counter()
                funcs[k]()
                wall[k].append(time.perf_counter() - t0)
            print(f"[{time.monotonic() - started:6.1f} s] {name} rep {rep + 1}: "
                  + "  ".join(f"{k} {wall[k][-1]:.3f}" for k in wall), flush=True)
        res = {
            "wall": {k: stats(v) for k, v in wall.items()},
            "cpu": {k: stats(v) for k, v in cpu.items()},
            "ratio": {
                "cli-build / peer-process": ratio(wall["cli-build"], wall["peer-process"]),
                "cli-build-degree / peer-process": ratio(wall["cli-build-degree"], wall["peer-process"]),
                "cli-version / peer-process": ratio(wall["cli-version"], wall["peer-process"]),
                "build / peer": ratio(wall["build"], wall["peer"]),
                "build-degree / peer": ratio(wall["build-degree"], wall["peer"]),
            },
        }
        results[name] = res

    print()
    for name, res in results.items():
        d = data[name]
        print(f"### {name}: {d['loads']} loads ({len(d['configs'])} configurations) + alone, {d['rows']} rows, degree {d['degree']}")
        print()
        print("| what | wall min / median s | CPU median s | **ratio to the peer** (median of pairs; min–max) |")
        print("|---|---:|---:|---:|")
        rows = [("criticore tables build (degree chosen)", "cli-build", "cli-build / peer-process"),
                (f"criticore tables build --degree {d['degree']}", "cli-build-degree", "cli-build-degree / peer-process"),
                ("criticore version (start-up)", "cli-version", "cli-version / peer-process"),
                ("peer process (pyarrow + numpy.polyfit)", "peer-process", None),
                ("in process: read + build + text (degree chosen)", "build", "build / peer"),
                (f"in process: the same, degree {d['degree']} given", "build-degree", "build-degree / peer"),
                ("in process: peer", "peer", None)]
        for label, k, rk in rows:
            w = res["wall"][k]
            c = res["cpu"].get(k)
            r = res["ratio"].get(rk) if rk else None
            print(f"| {label} | {w['min']:.3f} / {w['median']:.3f} | {'—' if c is None else format(c['median'], '.3f')} | "
                  + ("—" if r is None else f"**{r['median']:.1f}×** ({r['min']:.1f}–{r['max']:.1f})") + " |")
        print()
    if not args.keep:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()
    for d in data.values():
        d["path"] = str(d["path"].name)
    print(json.dumps({"date": date, "machine": info, "reps": args.reps, "datasets": data, "results": results}))


if __name__ == "__main__":
    main()
