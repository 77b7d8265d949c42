#!/usr/bin/env python3
"""criticore load vs stress-ng (issue 10): peak bandwidth and pacing error per
1 ms interval, in one run, on the same core.

stress-ng is no dependency of criticore: install it for the benchmark only
(``apt-get install -y stress-ng``; version 0.15.06 on Debian 12). Without it
the script still measures criticore's side and says stress-ng is missing.

**Peak bandwidth** (all pinned to CPU ``--cpu``, default 1; 256 MiB buffers,
well beyond the 32 MiB LLC the VM reports):

- ``criticore load --cpu C --buffer 256MiB --reads R --duration 3s --json``
  for R = 0 (write-only: 8 volatile 64-bit stores per 64 B line), 10
  (read-only: 8 volatile 64-bit loads per line) and 5 (5 lines written, then
  5 read); ``bandwidth_mb_s`` (MB = 10^6 B);
- ``stress-ng --memrate 1 --memrate-bytes 256M --taskset C --timeout 5s
  --metrics-brief``: one worker that cycles through all its methods (0.15.06
  has no method option), MB/s per method (stress-ng's MB = 2^20 B; converted
  to 10^6 B here). Comparable methods: write64 (volatile 64-bit stores) for
  criticore write-only, read64 (volatile 64-bit loads) for read-only; for 5:5
  the rate implied by the two, 2·W·R/(W+R) (5 lines at the write rate plus 5
  at the read rate), since memrate has no mixed method;
- ``stress-ng --stream 1 --taskset C --timeout 6s --metrics-brief`` as a
  further reference (STREAM copy/scale/add/triad with non-temporal stores,
  reads:writes = 3:2; needs ≥ 4.5 s to report).

**Pacing error per 1 ms** at 200 MB/s:

- criticore: ``criticore load --cpu C --buffer 256MiB --bandwidth 200MB/s
  --duration 5s --log x.parquet --json``; the log has one row per 1 ms
  interval (start_ns, reads, writes, bytes_per_s), as counted by the
  generator itself;
- stress-ng: ``stress-ng --memrate 1 --memrate-bytes 256M --memrate-rd-mbs 191
  --memrate-wr-mbs 191 --taskset C --timeout 5s --metrics-brief`` (191 MiB/s =
  200.3 MB/s; errors are taken against each tool's own target). stress-ng
  prints only a mean rate per method, so its per-interval traffic is measured
  with ``benches/peers/sleeplog.c``, an LD_PRELOAD shim (built with ``cc -O2
  -shared``) that timestamps every ``nanosleep`` entry and return: memrate's
  throttled loops run one chunk at full speed, then sleep until chunks/rate
  has elapsed, so each sleep entry ends one chunk, which ran between the
  previous return and that entry; the chunk's bytes are spread evenly over
  that span (it streams at full speed there) and summed per 1 ms bin.
  Chunk sizes (stress-ng 0.15.06 source, stress-memrate.c): the rep-stos
  methods and memset pace per 1 MiB; the other read/write methods per
  ``loops × 16 × element`` bytes with loops = the largest power of two ≤ 2^20
  dividing the buffer, i.e. 16 MiB (write8) to the whole 256 MiB buffer.
  At 191 MiB/s one method's pass over 256 MiB takes 1.34 s, so a 5 s run
  covers only the first three to four methods (write64stoq, write32stow,
  write16stod, write8stob: all 1 MiB chunks; checked below from the sleep
  lengths): this is stress-ng at its finest pacing.
  A second stress-ng run, ``--memrate-bytes 16M --timeout 4s``, goes through
  the whole method cycle (1.9 s): there every non-stos method paces per
  16 MiB chunk (the whole buffer); chunk sizes are assigned from the
  requested sleep (> 20 ms means a 16 MiB chunk, else 1 MiB) and checked
  against the sequence the source implies.
  Limits: both sides count what the program did (criticore its own lines;
  stress-ng's chunk completions), not what reached DRAM (no PMU here); the
  16 MiB buffer of the second run fits the LLC, which does not matter for
  pacing; a chunk's bytes are assumed even over its span.

Per run: intervals after the first 100 ms; relative error e = bytes/target − 1
per 1 ms (and per 10 ms) interval: p1 / p50 / p99, mean |e|, share within
±5 % and ±10 %, share of empty intervals; long-run rate; CPU time of the
pacing processes (rusage of the children) per wall second.

Each measurement is repeated ``--reps`` times (default 3), interleaved
(order rotated every repetition); medians are reported.

Also records whether ``criticore tables build`` exists (table build time); if
``criticore tables --help`` fails, that part is skipped.

Usage (from the repository root):
    .venv/bin/python benches/load_vs_stressng.py [--reps 3] [--cpu 1]
The last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import re
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))
from machine import machine  # noqa: E402

CLI = str(ROOT / ".venv" / "bin" / "criticore")
MIB = 1 << 20
TARGET = 200e6  # criticore --bandwidth 200MB/s
SNG_RATE = 191  # MiB/s for stress-ng
SNG_TARGET = SNG_RATE * MIB
SKIP_NS = 100_000_000


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd: list[str], timeout: float) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run under timeout(1); return the result, wall seconds, children CPU seconds."""
    c0, t0 = children_cpu(), time.monotonic()
    r = subprocess.run(["timeout", "-k", "5", str(int(timeout))] + cmd, capture_output=True, text=True)
    return r, time.monotonic() - t0, children_cpu() - c0


def stressng_metrics(text: str) -> dict[str, float]:
    """'memrate   21877.13 write64stoq MB per sec' -> {'write64stoq': 21877.13} (MiB/s)."""
    out = {}
    for m in re.finditer(r"metrc: \[\d+\] (?:memrate|stream)\s+([0-9.]+) (.+?) (?:MB per sec|\(MB per sec\))", text):
        out[m.group(2)] = float(m.group(1))
    return out


# --------------------------------------------------------------------------- peak

def peak_criticore(cpu: int, reads: int) -> dict:
    cmd = [CLI, "load", "--cpu", str(cpu), "--buffer", "256MiB", "--reads", str(reads), "--duration", "3s", "--json"]
    r, wall, _ = run(cmd, 60)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    s = json.loads(r.stdout)
    return {"mb_s": s["bandwidth_mb_s"], "p50": s["interval_mb_s_p50"], "cmd": " ".join(cmd[1:])}


def peak_memrate(cpu: int) -> dict:
    cmd = ["stress-ng", "--memrate", "1", "--memrate-bytes", "256M", "--taskset", str(cpu), "--timeout", "5s", "--metrics-brief"]
    r, wall, _ = run(cmd, 60)
    m = stressng_metrics(r.stdout + r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return {"mb_s": {k: v * MIB / 1e6 for k, v in m.items()}, "cmd": " ".join(cmd)}


def peak_stream(cpu: int) -> dict:
    cmd = ["stress-ng", "--stream", "1", "--taskset", str(cpu), "--timeout", "6s", "--metrics-brief"]
    r, wall, _ = run(cmd, 60)
    m = stressng_metrics(r.stdout + r.stderr)
    rd = next((v for k, v in m.items() if "read rate" in k), None)
    wr = next((v for k, v in m.items() if "write rate" in k), None)
    if r.returncode != 0 or rd is None:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return {"read_mb_s": rd * MIB / 1e6, "write_mb_s": wr * MIB / 1e6, "total_mb_s": (rd + wr) * MIB / 1e6, "cmd": " ".join(cmd)}


# --------------------------------------------------------------------------- pacing

def error_stats(bins: list[float], target: float) -> dict:
    """bins: bytes per interval of length L; target: bytes per interval."""
    if not bins:
        return {}
    e = sorted(b / target - 1 for b in bins)
    n = len(e)

    def q(p):
        return e[min(n - 1, max(0, int(round(p / 100 * (n - 1)))))]

    return {
        "intervals": n,
        "p1": q(1), "p50": q(50), "p99": q(99),
        "min": e[0], "max": e[-1],
        "mean_abs": sum(abs(x) for x in e) / n,
        "within_5": sum(abs(x) <= 0.05 for x in e) / n,
        "within_10": sum(abs(x) <= 0.10 for x in e) / n,
        "empty": sum(x <= -1 + 1e-12 for x in e) / n,
    }


def group(bins: list[float], k: int) -> list[float]:
    return [sum(bins[i:i + k]) for i in range(0, len(bins) - k + 1, k)]


def pace_criticore(cpu: int, tmp: Path) -> dict:
    log = tmp / "paced.parquet"
    cmd = [CLI, "load", "--cpu", str(cpu), "--buffer", "256MiB", "--bandwidth", "200MB/s", "--duration", "5s",
           "--log", str(log), "--json", "--force"]
    r, wall, cpu_s = run(cmd, 60)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    s = json.loads(r.stdout)
    t = pq.read_table(log).to_pydict()
    bins = [(rd + wr) * 64.0 for st, rd, wr in zip(t["start_ns"], t["reads"], t["writes"]) if st >= SKIP_NS]
    total = sum(bins)
    return {
        "cmd": " ".join(cmd[1:]).replace(str(log), "x.parquet"),
        "ms": error_stats(bins, TARGET * 1e-3),
        "ms10": error_stats(group(bins, 10), TARGET * 1e-2),
        "rate_mb_s": total / (len(bins) * 1e-3) / 1e6 if bins else None,
        "summary": {k: s.get(k) for k in ("bandwidth_mb_s", "error_p50", "error_p99", "error_max", "within_tolerance")},
        "cpu_per_wall": cpu_s / wall,
    }


def read_sleeplog(base: str) -> list[tuple[int, int, int]]:
    """Records of the process with the most sleeps (the memrate worker)."""
    best: list = []
    for f in glob.glob(base + ".*"):
        b = Path(f).read_bytes()
        n = struct.unpack_from("Q", b, 0)[0]
        recs = [struct.unpack_from("QQQ", b, 64 + 24 * i) for i in range(n)]
        if len(recs) > len(best):
            best = recs
    return best


def memrate_chunk(name: str, buffer: int) -> int:
    """Bytes per throttled chunk in stress-ng 0.15.06 (stress-memrate.c)."""
    if "sto" in name or name == "memset":
        return min(MIB, buffer)
    elem = int(re.search(r"(\d+)", name).group(1)) // 8  # write1024 -> 128 B, read64pf -> 8 B
    size = 16 * elem
    best_fit = buffer // size
    for shift in range(20, 9, -1):
        if (buffer >> shift) << shift == buffer and (1 << shift) <= best_fit:
            return (1 << shift) * size
    return best_fit * size


def pace_stressng(cpu: int, tmp: Path, so: str, buffer_mib: int, timeout_s: int, tag: str) -> dict:
    base = str(tmp / f"sleeplog-{tag}")
    for f in glob.glob(base + ".*"):
        os.unlink(f)
    cmd = ["stress-ng", "--memrate", "1", "--memrate-bytes", f"{buffer_mib}M", "--memrate-rd-mbs", str(SNG_RATE),
           "--memrate-wr-mbs", str(SNG_RATE), "--taskset", str(cpu), "--timeout", f"{timeout_s}s", "--metrics-brief"]
    env = dict(os.environ, LD_PRELOAD=so, SLEEPLOG=base)
    c0, t0 = children_cpu(), time.monotonic()
    r = subprocess.run(["timeout", "-k", "5", str(timeout_s + 30)] + cmd, capture_output=True, text=True, env=env)
    wall, cpu_s = time.monotonic() - t0, children_cpu() - c0
    metrics = stressng_metrics(r.stdout + r.stderr)
    if r.returncode != 0 or not metrics:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    recs = read_sleeplog(base)
    buffer = buffer_mib * MIB
    # Chunk sizes: from the requested sleep (a big chunk's schedule is >= 16 MiB / rate = 84 ms).
    big = min((memrate_chunk(n, buffer) for n in metrics if memrate_chunk(n, buffer) > MIB), default=MIB)
    threshold = 0.5 * big / SNG_TARGET * 1e9 if big > MIB else float("inf")
    sizes = [big if req > threshold else MIB for _, _, req in recs]
    # The sequence the source implies, in the method order stress-ng printed.
    seq = []
    for n in metrics:
        c = memrate_chunk(n, buffer)
        seq += [c] * (buffer // c)
    # A chunk finished behind schedule does not sleep (it merges into the next
    # record), so allow the sequence to be shifted by a few chunks.
    mismatches, _, shift = min((sum(a != seq[(i + d) % len(seq)] for i, a in enumerate(sizes)), abs(d), d) for d in range(-4, 5))
    # Spread chunk k (k >= 1) over [exit_{k-1}, entry_k]; bins of 1 ms from exit_0.
    if len(recs) < 3:
        raise SystemExit(f"stress-ng: only {len(recs)} sleeps recorded (is LD_PRELOAD honoured?)")
    t_start = recs[0][1]
    t_end = recs[-1][0]
    nb = int((t_end - t_start) // 1_000_000)
    bins = [0.0] * nb
    for k in range(1, len(recs)):
        a, b, size = recs[k - 1][1] - t_start, recs[k][0] - t_start, sizes[k]
        if b <= a:
            b = a + 1
        rate = size / (b - a)
        i = int(a // 1_000_000)
        while i < nb and i * 1_000_000 < b:
            lo, hi = max(a, i * 1_000_000), min(b, (i + 1) * 1_000_000)
            if hi > lo:
                bins[i] += rate * (hi - lo)
            i += 1
    bins = bins[SKIP_NS // 1_000_000:]
    runs = sorted(recs[k][0] - recs[k - 1][1] for k in range(1, len(recs)))
    return {
        "cmd": " ".join(cmd),
        "methods_reported": {k: round(v * MIB / 1e6, 2) for k, v in metrics.items()},
        "chunks": len(recs),
        "chunks_1mib": sum(s == MIB for s in sizes),
        "chunks_big": sum(s != MIB for s in sizes),
        "big_chunk_bytes": big if big > MIB else None,
        "sequence_mismatches": mismatches,
        "sequence_shift": shift,
        "chunk_run_p50_us": runs[len(runs) // 2] / 1e3,
        "ms": error_stats(bins, SNG_TARGET * 1e-3),
        "ms10": error_stats(group(bins, 10), SNG_TARGET * 1e-2),
        "ms100": error_stats(group(bins, 100), SNG_TARGET * 1e-1),
        "rate_mb_s": sum(bins) / (len(bins) * 1e-3) / 1e6 if bins else None,
        "cpu_per_wall": cpu_s / wall,
    }


# --------------------------------------------------------------------------- report

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    info = machine()
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    print(f"{date}  nproc={info['nproc']}  cpu={info['cpu']}  commit {info['commit']}  load avg {os.getloadavg()}", flush=True)

    tables = subprocess.run([CLI, "tables", "--help"], capture_output=True, text=True)
    tables_exists = tables.returncode == 0
    print(f"criticore tables --help: exit {tables.returncode} -> table build time "
          + ("(exists: not measured by this script yet)" if tables_exists else "skipped (no such command)"), flush=True)

    sng = shutil.which("stress-ng")
    sng_version = subprocess.run(["stress-ng", "--version"], capture_output=True, text=True).stdout.strip() if sng else None
    print(f"stress-ng: {sng_version or 'NOT INSTALLED (apt-get install -y stress-ng): stress-ng side skipped'}", flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="criticore-loadbench-"))
    so = str(tmp / "sleeplog.so")
    if sng:
        cc = ["cc", "-O2", "-shared", "-fPIC", "-o", so, str(ROOT / "benches" / "peers" / "sleeplog.c"), "-ldl"]
        subprocess.run(cc, check=True)
        print("built:", " ".join(cc), flush=True)

    kinds = ["cl-w", "cl-r", "cl-rw", "cl-pace"] + (["sn-memrate", "sn-stream", "sn-pace", "sn-pace16"] if sng else [])
    res: dict[str, list] = {k: [] for k in kinds}
    started = time.monotonic()
    for rep in range(args.reps):
        order = kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]
        for k in order:
            if k == "cl-w":
                r = peak_criticore(args.cpu, 0)
                line = f"{r['mb_s']:,.0f} MB/s"
            elif k == "cl-r":
                r = peak_criticore(args.cpu, 10)
                line = f"{r['mb_s']:,.0f} MB/s"
            elif k == "cl-rw":
                r = peak_criticore(args.cpu, 5)
                line = f"{r['mb_s']:,.0f} MB/s"
            elif k == "sn-memrate":
                r = peak_memrate(args.cpu)
                line = f"write64 {r['mb_s'].get('write64', 0):,.0f}  read64 {r['mb_s'].get('read64', 0):,.0f} MB/s"
            elif k == "sn-stream":
                r = peak_stream(args.cpu)
                line = f"read {r['read_mb_s']:,.0f} + write {r['write_mb_s']:,.0f} MB/s"
            elif k == "cl-pace":
                r = pace_criticore(args.cpu, tmp)
                line = f"1 ms error p1/p50/p99 {100 * r['ms']['p1']:+.1f}/{100 * r['ms']['p50']:+.1f}/{100 * r['ms']['p99']:+.1f} %  rate {r['rate_mb_s']:.1f} MB/s  cpu {r['cpu_per_wall']:.2f}"
            elif k == "sn-pace":
                r = pace_stressng(args.cpu, tmp, so, 256, 5, "256")
                line = (f"1 ms error p1/p50/p99 {100 * r['ms']['p1']:+.1f}/{100 * r['ms']['p50']:+.1f}/{100 * r['ms']['p99']:+.1f} %  rate {r['rate_mb_s']:.1f} MB/s"
                        f"  chunks {r['chunks']} (1 MiB {r['chunks_1mib']}, big {r['chunks_big']}, mismatches {r['sequence_mismatches']} at shift {r['sequence_shift']})  cpu {r['cpu_per_wall']:.3f}")
            else:
                r = pace_stressng(args.cpu, tmp, so, 16, 4, "16")
                line = (f"1 ms error p1/p50/p99 {100 * r['ms']['p1']:+.1f}/{100 * r['ms']['p50']:+.1f}/{100 * r['ms']['p99']:+.1f} %  rate {r['rate_mb_s']:.1f} MB/s"
                        f"  chunks {r['chunks']} (1 MiB {r['chunks_1mib']}, 16 MiB {r['chunks_big']}, mismatches {r['sequence_mismatches']} at shift {r['sequence_shift']})  cpu {r['cpu_per_wall']:.3f}")
            res[k].append(r)
            print(f"[{time.monotonic() - started:6.1f} s] rep {rep + 1} {k:<11} {line}", flush=True)

    summary: dict = {"tables_build": "skipped: criticore has no `tables` command" if not tables_exists else "exists, not measured",
                     "stress_ng": sng_version}
    w = med([r["mb_s"] for r in res["cl-w"]])
    rd = med([r["mb_s"] for r in res["cl-r"]])
    rw = med([r["mb_s"] for r in res["cl-rw"]])
    summary["criticore_peak_mb_s"] = {"write": w, "read": rd, "5:5": rw}
    print()
    print("Peak bandwidth, MB/s (10^6 B/s), medians; ratio = criticore / stress-ng (median of per-repetition ratios)")
    print()
    print("| criticore load | MB/s | stress-ng peer | MB/s | ratio |")
    print("|---|---:|---|---:|---:|")
    if sng:
        mr = res["sn-memrate"]
        sw = med([r["mb_s"]["write64"] for r in mr])
        sr = med([r["mb_s"]["read64"] for r in mr])
        mix = [2 * r["mb_s"]["write64"] * r["mb_s"]["read64"] / (r["mb_s"]["write64"] + r["mb_s"]["read64"]) for r in mr]
        ratio_w = med([a["mb_s"] / b["mb_s"]["write64"] for a, b in zip(res["cl-w"], mr)])
        ratio_r = med([a["mb_s"] / b["mb_s"]["read64"] for a, b in zip(res["cl-r"], mr)])
        ratio_rw = med([a["mb_s"] / m for a, m in zip(res["cl-rw"], mix)])
        best_w = med([max(v for k, v in r["mb_s"].items() if k.startswith("write") or k == "memset") for r in mr])
        best_r = med([max(v for k, v in r["mb_s"].items() if k.startswith("read")) for r in mr])
        st = med([r["total_mb_s"] for r in res["sn-stream"]])
        print(f"| write-only (`--reads 0`) | {w:,.0f} | memrate write64 | {sw:,.0f} | {ratio_w:.2f} |")
        print(f"| read-only (`--reads 10`) | {rd:,.0f} | memrate read64 | {sr:,.0f} | {ratio_r:.2f} |")
        print(f"| 5:5 (`--reads 5`) | {rw:,.0f} | 2·W·R/(W+R) of write64, read64 | {med(mix):,.0f} | {ratio_rw:.2f} |")
        print(f"| | | best memrate write method / best read method | {best_w:,.0f} / {best_r:,.0f} | |")
        print(f"| | | stream (R:W 3:2, NT stores), read + write | {st:,.0f} | |")
        summary["stressng_peak_mb_s"] = {"write64": sw, "read64": sr, "mix_5_5": med(mix), "best_write": best_w, "best_read": best_r,
                                         "stream_total": st, "methods": {k: med([r["mb_s"].get(k) for r in mr]) for k in mr[0]["mb_s"]}}
        summary["peak_ratio"] = {"write": ratio_w, "read": ratio_r, "5:5": ratio_rw}
    else:
        print(f"| write-only | {w:,.0f} | (stress-ng missing) | | |")
        print(f"| read-only | {rd:,.0f} | (stress-ng missing) | | |")
        print(f"| 5:5 | {rw:,.0f} | (stress-ng missing) | | |")

    print()
    print("Pacing at 200 MB/s: relative error per interval after the first 100 ms (medians over the repetitions)")
    print()
    print("| generator | interval | intervals | error p1 / p50 / p99 | mean abs error | within ±5 % | within ±10 % | empty | long-run rate MB/s | CPU s per s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def row(name, runs, key):
        d = {f: med([r[key][f] for r in runs if r[key]]) for f in ("intervals", "p1", "p50", "p99", "mean_abs", "within_5", "within_10", "empty")}
        rate = med([r["rate_mb_s"] for r in runs])
        cpu = med([r["cpu_per_wall"] for r in runs])
        label = {"ms": "1 ms", "ms10": "10 ms", "ms100": "100 ms"}[key]
        print(f"| {name} | {label} | {d['intervals']:,.0f} | {100 * d['p1']:+.1f} / {100 * d['p50']:+.1f} / {100 * d['p99']:+.1f} % | "
              f"{100 * d['mean_abs']:.1f} % | {100 * d['within_5']:.1f} % | {100 * d['within_10']:.1f} % | {100 * d['empty']:.1f} % | "
              f"{rate:.1f} | {cpu:.3f} |")
        return {**d, "rate_mb_s": rate, "cpu_per_wall": cpu}

    summary["pace"] = {}
    summary["pace"]["criticore_1ms"] = row("criticore load --bandwidth 200MB/s", res["cl-pace"], "ms")
    summary["pace"]["criticore_10ms"] = row("criticore load --bandwidth 200MB/s", res["cl-pace"], "ms10")
    if sng:
        for key in ("ms", "ms10", "ms100"):
            summary["pace"][f"stressng256_{key}"] = row("stress-ng memrate 191 MiB/s, 256 MiB (stos methods, 1 MiB chunks)", res["sn-pace"], key)
        for key in ("ms", "ms10", "ms100"):
            summary["pace"][f"stressng16_{key}"] = row("stress-ng memrate 191 MiB/s, 16 MiB (whole method cycle)", res["sn-pace16"], key)
        summary["pace"]["stressng256_methods"] = res["sn-pace"][0]["methods_reported"]
        summary["pace"]["stressng_chunks"] = {k: [(r["chunks"], r["chunks_1mib"], r["chunks_big"], r["sequence_mismatches"]) for r in res[k]]
                                              for k in ("sn-pace", "sn-pace16")}
    summary["criticore_pace_summary"] = [r["summary"] for r in res["cl-pace"]]
    print()
    print(f"total {time.monotonic() - started:.0f} s")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"date": date, "machine": info, "reps": args.reps, "cpu": args.cpu, "summary": summary, "runs": res}))


if __name__ == "__main__":
    main()
