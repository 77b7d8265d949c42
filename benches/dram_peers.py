#!/usr/bin/env python3
"""Benchmark two cycle-level DRAM simulators (DRAMSim3, Ramulator 2.0a) on identical traces,
and criticore's request-level DRAM model on the same traces if `criticore._core.dram_replay` exists.

    python benches/dram_peers.py --peers /work/peers-dram --requests 5000000 [--quick]

The peers are built out of tree by benches/dram_peers/build.sh (sources, commits and the one bench
patch to DRAMSim3 are documented there); they are expected in PEERS/bin/{dramsim3main,ramulator2}.

Traces (generated once per (pattern, requests, seed) into --workdir, default PEERS/bench):
  canonical (criticore):  one request per line, `R 0x<hex>` or `W 0x<hex>`, no timestamps.
  stream: consecutive 64-byte lines from 0x0; random: uniform 64-byte-aligned addresses in [0, 1 GiB).
  80% reads (numpy default_rng(seed), default seed 0; read/write drawn independently per line).
  DRAMSim3 native: `0x<hex> READ|WRITE 0` (cycle 0 on every line = issue as soon as accepted).
  Ramulator 2 native (LoadStoreTrace): `LD|ST 0x<hex>`.

Common DRAM configuration (both peers; criticore must use the same):
  DDR3-1600 11-11-11, 4Gb x8 devices, 64-bit channel, 1 channel, 1 rank, 8 banks, 65536 rows,
  1024 columns (8 KiB row per rank), BL8 (64 B per request), open page, FR-FCFS, refresh on.
  Address map "row bits highest": Ramulator RoBaRaCoCh == DRAMSim3 rochrababgco, which for this
  geometry is: bits [5:0] byte in line, [12:6] column (128 lines per row), [15:13] bank,
  [31:16] row (rank and channel have 0 bits).  1 GiB of addresses = rows 0..16383.
  tCK 1.25 ns, CL 11, CWL 8, tRCD 11, tRP 11, tRAS 28, tRC 39, BL 8 (tBURST 4 cycles),
  tCCD 4, tRRD 5, tFAW 24, tWR 12, tWTR 6, tRTP 6, tRFC 208 (260 ns), tREFI 6240 (7.8 us), all
  in DRAM cycles.  (Ramulator's DDR3_1600K preset has nCWL 9; it is overridden to the JEDEC 8
  that DRAMSim3's DDR3_4Gb_x8_1600 preset uses.)

Front ends (both: open loop in time, closed by the controller's queues): one request offered per
DRAM cycle; if the controller refuses it (queue full) the same request is offered again next cycle.
  DRAMSim3: read queue 32 and write buffer 32 transactions (trans_queue_size), which feed one
    per-rank command queue of 32 (queue_structure PER_RANK, cmd_queue_size 32, the settings of
    Ramulator 2's perf_comparison); FR-FCFS over the command queue, row-hit cap 4 before an
    on-demand precharge; writes are acknowledged on acceptance and drained when the write buffer
    is full (or > 8 and the command queue is empty).
  Ramulator 2: read buffer 32 and write buffer 32 (ReqBuffer max_size 32; its enqueue test is
    `size <= max_size`, so 33 in practice), FR-FCFS (ready first, then oldest) over the buffer of
    the current mode, write mode entered at 80 % and left at 20 % of the write buffer.
  Both runs end as soon as the last trace request has been accepted (Ramulator's own end condition;
  DRAMSim3 patched to do the same), so requests still queued then are not in the latency average.
  The table also reports the mean number of reads in flight by Little's law
  (reads completed x mean read latency / simulated cycles): the effective read queue depth Q.
  Read latency is measured by both from acceptance into the controller's queue to data return
  (queueing included, front-end retries excluded).  "peer's own avg" is the peer's printed average:
  Ramulator 2.0a divides by send() attempts including refused ones (see run_ramulator2), so the
  "mean read lat" columns use read_latency_0 / total_num_read_requests instead.

criticore hook: if criticore._core.dram_replay exists, it is called as
  dram_replay(trace_path, timing="ddr3-1600", scheduler="frfcfs", queue=32, mapping="robaraco")
  (the keyword is `mapping_name` instead if the built function's signature says so)
  -> dict(requests, row_hits, row_misses, row_conflicts, mean_read_latency_ns, simulated_ns, wall_s)
on the canonical trace (3 repetitions, wall time measured here around the call, so trace parsing is
included as it is for the peers, which read their trace files too), and its rows get a speed ratio
(criticore req/s / peer req/s, both from the minimum wall time) against each peer.
Wall times include process start and trace parsing (Ramulator loads the whole trace first, DRAMSim3
streams it); "cpu min s" is user+sys CPU of the peer process (less sensitive to a shared machine).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TCK_NS = 1.25
LINE = 64
RANDOM_SPAN = 1 << 30  # 1 GiB

DRAMSIM3_INI = """\
; DDR3-1600 11-11-11, 4Gb x8, 1 channel x 1 rank x 8 banks (from DRAMSim3 configs/DDR3_4Gb_x8_1600.ini;
; changed: channel_size 8192 -> 4096 (1 rank), queue_structure PER_BANK -> PER_RANK,
; cmd_queue_size 8 -> 32, refresh_policy RANK_LEVEL_STAGGERED -> RANK_LEVEL_SIMULTANEOUS (all-bank REF
; like Ramulator's AllBank), epoch_period large (no epoch dumps), and `REFI = 6240` -> `tREFI = 6240`:
; DRAMSim3 reads the key tREFI (default 7800 cycles = 9.75 us), so its shipped DDR3 presets silently
; refresh every 7800 cycles, not the 6240 (7.8 us) they state).
[dram_structure]
protocol = DDR3
bankgroups = 1
banks_per_group = 8
rows = 65536
columns = 1024
device_width = 8
BL = 8

[timing]
tCK = 1.25
AL = 0
CL = 11
CWL = 8
tRCD = 11
tRP = 11
tRAS = 28
tRFC = 208
tRFC2 = 208
tRFC4 = 208
tREFI = 6240
tRPRE = 0
tWPRE = 0
tRRD_S = 5
tRRD_L = 5
tWTR_S = 6
tWTR_L = 6
tFAW = 24
tWR = 12
tWR2 = 12
tRTP = 6
tCCD_S = 4
tCCD_L = 4
tCKE = 4
tCKESR = 5
tXS = 216
tXP = 5
tRTRS = 1

[power]
VDD = 1.35
IDD0 = 55
IPP0 = 0.0
IDD2P = 18
IDD2N = 32
IDD3P = 38
IDD3N = 38
IDD4W = 125
IDD4R = 157
IDD5AB = 235
IDD6x = 20

[system]
channel_size = 4096
channels = 1
bus_width = 64
address_mapping = rochrababgco
queue_structure = PER_RANK
refresh_policy = RANK_LEVEL_SIMULTANEOUS
row_buf_policy = OPEN_PAGE
cmd_queue_size = 32
trans_queue_size = 32

[other]
epoch_period = 4000000000
output_level = 1
"""

RAMULATOR_YAML = """\
# DDR3-1600K (11-11-11), DDR3_4Gb_x8, 1 channel x 1 rank x 8 banks; nCWL overridden 9 -> 8 (JEDEC)
Frontend:
  impl: LoadStoreTrace
  path: {trace}
  clock_ratio: 1
  Translation:
    impl: NoTranslation
    max_addr: 4294967296
MemorySystem:
  impl: GenericDRAM
  clock_ratio: 1
  DRAM:
    impl: DDR3
    org:
      preset: DDR3_4Gb_x8
      channel: 1
      rank: 1
    timing:
      preset: DDR3_1600K
      nCWL: 8
  Controller:
    impl: Generic
    Scheduler:
      impl: FRFCFS
    RefreshManager:
      impl: AllBank
    RowPolicy:
      impl: OpenRowPolicy
    plugins:
  AddrMapper:
    impl: RoBaRaCoCh
"""


# ----------------------------------------------------------------------------- traces
def gen_traces(workdir: Path, n: int, seed: int, patterns: list[str]) -> dict[str, dict[str, Path]]:
    import numpy as np

    out: dict[str, dict[str, Path]] = {}
    for pat in patterns:
        stem = workdir / f"{pat}_{n}_s{seed}"
        paths = {
            "canonical": stem.with_suffix(".trace"),
            "dramsim3": stem.with_suffix(".dramsim3.trace"),
            "ramulator2": stem.with_suffix(".ramulator2.trace"),
        }
        out[pat] = paths
        if all(p.exists() for p in paths.values()):
            continue
        # one generator per pattern so a trace does not depend on which others were requested
        rng = np.random.default_rng([seed, 0 if pat == "stream" else 1])
        if pat == "stream":
            addr = np.arange(n, dtype=np.uint64) * LINE
        elif pat == "random":
            addr = rng.integers(0, RANDOM_SPAN // LINE, size=n, dtype=np.uint64) * LINE
        else:
            raise SystemExit(f"unknown pattern {pat}")
        is_read = rng.random(n) < 0.8
        hexes = [format(a, "#x") for a in addr.tolist()]
        rd = is_read.tolist()
        t0 = time.perf_counter()
        for key, rfmt, wfmt in (
            ("canonical", "R {}\n", "W {}\n"),
            ("dramsim3", "{} READ 0\n", "{} WRITE 0\n"),
            ("ramulator2", "LD {}\n", "ST {}\n"),
        ):
            tmp = paths[key].with_suffix(".tmp")
            with open(tmp, "w") as f:
                f.writelines((rfmt if r else wfmt).format(h) for h, r in zip(hexes, rd))
            tmp.replace(paths[key])
        print(f"# generated {pat} trace ({n} requests, {int(is_read.sum())} reads) "
              f"in {time.perf_counter() - t0:.1f} s: {paths['canonical']}", file=sys.stderr)
    return out


# ----------------------------------------------------------------------------- peers
CPU_TIMES: list[float] = []  # user+sys CPU seconds of each peer run, in run order


def run_timed(cmd: list[str], env=None, cwd=None) -> tuple[float, subprocess.CompletedProcess]:
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    dt = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_TIMES.append(ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return dt, r


def run_dramsim3(peers: Path, workdir: Path, trace: Path, n: int) -> tuple[float, dict]:
    ini = workdir / "dramsim3_ddr3_1600.ini"
    ini.write_text(DRAMSIM3_INI)
    outdir = Path(tempfile.mkdtemp(prefix="d3out-", dir=workdir))
    try:
        # -c is only an upper bound: the patched main loop stops once the trace is issued
        dt, _ = run_timed([str(peers / "bin" / "dramsim3main"), str(ini), "-t", str(trace),
                           "-c", str(400 * n + 10**6), "-o", str(outdir)])
        js = json.loads((outdir / "dramsim3.json").read_text())
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    s = js["0"] if "0" in js else js
    col_cmds = s["num_read_cmds"] + s["num_write_cmds"]
    hits = s["num_read_row_hits"] + s["num_write_row_hits"]
    conflicts = s["num_ondemand_pres"]  # PRE forced by a request to another row of an open bank
    misses = s["num_act_cmds"] - conflicts  # ACT to a precharged bank (first touch / after REF)
    lat = s["average_read_latency"]
    return dt, dict(
        requests=n, reads_done=s["num_reads_done"], col_cmds=col_cmds,
        row_hits=hits, row_misses=misses, row_conflicts=conflicts,
        mean_read_latency_cycles=lat, mean_read_latency_ns=lat * TCK_NS,
        reported_read_latency_cycles=lat,  # exact mean over completed reads (histogram of values)
        cycles=s["num_cycles"], simulated_ns=s["num_cycles"] * TCK_NS,
        refreshes=s.get("num_ref_cmds"),
    )


def run_ramulator2(peers: Path, workdir: Path, trace: Path, n: int) -> tuple[float, dict]:
    cfg = workdir / f"ramulator2_{trace.stem}.yaml"
    cfg.write_text(RAMULATOR_YAML.format(trace=trace))
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(peers / "bin") + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    dt, r = run_timed([str(peers / "bin" / "ramulator2"), "-f", str(cfg)], env=env)
    st = {}
    for m in re.finditer(r"^\s*([A-Za-z_0-9]+):\s*([-+0-9.eE]+)\s*$", r.stdout, re.M):
        st[m.group(1)] = float(m.group(2))
    hits, misses, conflicts = st["row_hits_0"], st["row_misses_0"], st["row_conflicts_0"]
    # Ramulator 2.0a's avg_read_latency_0 = read_latency_0 / num_read_reqs_0, but num_read_reqs_0 is
    # incremented on every send() attempt, including the ones refused because the read buffer is
    # full, so with a saturating front end it is several times the number of reads and the average
    # is far too low.  The mean over reads is read_latency_0 / total_num_read_requests (accepted
    # reads; reads forwarded from the write buffer add 0 to the sum, those still queued at the end
    # are counted in the divisor: both negligible here).  Both are kept.
    reads = st["total_num_read_requests"]
    lat = st["read_latency_0"] / reads
    cyc = st["memory_system_cycles"]
    return dt, dict(
        requests=n, reads_done=reads, col_cmds=hits + misses + conflicts,
        row_hits=int(hits), row_misses=int(misses), row_conflicts=int(conflicts),
        mean_read_latency_cycles=lat, mean_read_latency_ns=lat * TCK_NS,
        reported_read_latency_cycles=st["avg_read_latency_0"],
        read_queue_len_avg=st.get("read_queue_len_avg_0"),
        cycles=int(cyc), simulated_ns=cyc * TCK_NS,
        refreshes=None,
    )


PEERS = {"DRAMSim3": run_dramsim3, "Ramulator2.0a": run_ramulator2}


def bench_peer(name, fn, peers, workdir, trace, n, reps):
    walls, stats, cpus = [], None, []
    for _ in range(reps):
        dt, st = fn(peers, workdir, trace, n)
        walls.append(dt)
        cpus.append(CPU_TIMES[-1])
        st["cpu_s"] = cpus
        if stats is not None and (st["cycles"], st["row_hits"]) != (stats["cycles"], stats["row_hits"]):
            print(f"# WARNING: {name} not deterministic across repetitions", file=sys.stderr)
        stats = st
    return walls, stats


# ----------------------------------------------------------------------------- criticore hook
def criticore_replay():
    try:
        import criticore._core as core  # noqa: PLC0415
    except Exception as e:  # pragma: no cover
        print(f"# criticore._core not importable ({e}); criticore rows skipped", file=sys.stderr)
        return None
    fn = getattr(core, "dram_replay", None)
    if fn is None:
        print("# criticore._core has no dram_replay yet; criticore rows skipped", file=sys.stderr)
    return fn


def _replay_kwargs(fn, queue: int) -> dict:
    """Keyword arguments for dram_replay; the address-map argument may be called `mapping` or
    `mapping_name` (pyo3 signature), whichever the built function declares."""
    kw = dict(timing="ddr3-1600", scheduler="frfcfs", queue=queue)
    sig = getattr(fn, "__text_signature__", None) or ""
    kw["mapping_name" if "mapping_name" in sig else "mapping"] = "robaraco"
    return kw


def bench_criticore(fn, trace: Path, n: int, reps: int, queue: int):
    walls, stats = [], None
    kw = _replay_kwargs(fn, queue)
    for _ in range(reps):
        t0 = time.perf_counter()
        d = fn(str(trace), **kw)
        walls.append(time.perf_counter() - t0)
        stats = dict(d)
    sim_ns = float(stats["simulated_ns"])
    lat_ns = float(stats["mean_read_latency_ns"])
    stats.update(requests=stats.get("requests", n), mean_read_latency_cycles=lat_ns / TCK_NS,
                 cycles=sim_ns / TCK_NS, reads_done=stats.get("reads"),
                 reported_read_latency_cycles=None)
    return walls, stats


# ----------------------------------------------------------------------------- report
def row(name, trace, walls, st, n):
    wmin, wmed = min(walls), statistics.median(walls)
    h, m, c = st["row_hits"], st["row_misses"], st["row_conflicts"]
    tot = h + m + c
    inflight = ""
    if st.get("reads_done") and st["cycles"]:
        inflight = f"{st['reads_done'] * st['mean_read_latency_cycles'] / st['cycles']:.1f}"
    return dict(
        peer=name, trace=trace, wmin=wmin, wmed=wmed, rps=n / wmin, stats=st,
        cells=[name, trace, f"{wmin:.2f}", f"{wmed:.2f}",
               f"{min(st['cpu_s']):.2f}" if st.get("cpu_s") else "-", f"{n / wmin / 1e3:,.0f} K",
               f"{100 * h / tot:.2f} %" if tot else "-", f"{h:,}", f"{m:,}", f"{c:,}",
               f"{st['mean_read_latency_ns']:.1f}", f"{st['mean_read_latency_cycles']:.1f}",
               f"{st['reported_read_latency_cycles']:.1f}" if st.get('reported_read_latency_cycles') is not None else "-",
               f"{st['simulated_ns'] / 1e6:.3f}", f"{n / (st['simulated_ns'] / 1e9) / 1e6:.1f}",
               inflight],
    )


HEADER = ["simulator", "trace", "wall min s", "wall median s", "cpu min s", "req/s (wall min)", "row-hit rate",
          "hits", "misses", "conflicts", "mean read lat ns", "(cycles)", "peer's own avg (cycles)", "simulated ms",
          "sim. M req/s", "reads in flight"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", type=Path, default=Path("/work/peers-dram"))
    ap.add_argument("--requests", type=int, default=5_000_000)
    ap.add_argument("--quick", action="store_true", help="200k requests, 1 repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="trace/config dir (default PEERS/bench)")
    ap.add_argument("--traces", default="stream,random")
    ap.add_argument("--only", default="", help="comma list of peers to run (DRAMSim3,Ramulator2.0a)")
    ap.add_argument("--queue", type=int, default=32, help="queue capacity passed to criticore")
    ap.add_argument("--json", type=Path, default=None, help="also dump raw results here")
    a = ap.parse_args(argv)
    n, reps = a.requests, a.reps
    if a.quick:
        n, reps = min(n, 200_000), 1
    workdir = a.workdir or (a.peers / "bench")
    workdir.mkdir(parents=True, exist_ok=True)
    patterns = [p for p in a.traces.split(",") if p]
    traces = gen_traces(workdir, n, a.seed, patterns)

    peers = {k: v for k, v in PEERS.items() if not a.only or k in a.only.split(",")}
    for k in list(peers):
        exe = a.peers / "bin" / ("dramsim3main" if k == "DRAMSim3" else "ramulator2")
        if not exe.exists():
            print(f"# {exe} missing (run benches/dram_peers/build.sh); {k} skipped", file=sys.stderr)
            del peers[k]
    cc = criticore_replay()

    rows, raw = [], []
    for pat in patterns:
        for name, fn in peers.items():
            key = "dramsim3" if name == "DRAMSim3" else "ramulator2"
            print(f"# running {name} on {pat} ({n} requests) x{reps}", file=sys.stderr)
            walls, st = bench_peer(name, fn, a.peers, workdir, traces[pat][key], n, reps)
            rows.append(row(name, pat, walls, st, n))
            raw.append(dict(peer=name, trace=pat, requests=n, walls=walls, stats=st))
        if cc is not None:
            print(f"# running criticore dram_replay on {pat} x{reps}", file=sys.stderr)
            walls, st = bench_criticore(cc, traces[pat]["canonical"], n, reps, a.queue)
            rows.append(row("criticore", pat, walls, st, n))
            raw.append(dict(peer="criticore", trace=pat, requests=n, walls=walls,
                            stats={k: v for k, v in st.items()}))

    print(f"\n{n:,} requests per trace, 80 % reads, DDR3-1600 11-11-11, 1 ch x 1 rank x 8 banks, "
          f"open page, FR-FCFS, RoBaRaCoCh/rochrababgco, refresh on; {reps} repetition(s)\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for r in rows:
        print("| " + " | ".join(r["cells"]) + " |")
    crit = [r for r in rows if r["peer"] == "criticore"]
    if crit:
        print("\ncriticore req/s from the call's wall time (trace parsing included, like the peers); "
              "'replay only' uses the wall_s it reports (simulation alone).\n")
        print("| trace | criticore req/s | ÷ " + " | ÷ ".join(peers)
              + " | replay-only req/s | ÷ " + " | ÷ ".join(peers) + " |")
        print("|" + "---|" * (3 + 2 * len(peers)))
        for c in crit:
            ws = c["stats"].get("wall_s")
            rps2 = n / ws if ws else None
            r1, r2 = [], []
            for p in peers:
                pr = [r for r in rows if r["peer"] == p and r["trace"] == c["trace"]]
                r1.append(f"{c['rps'] / pr[0]['rps']:.1f}x" if pr else "-")
                r2.append(f"{rps2 / pr[0]['rps']:.1f}x" if pr and rps2 else "-")
            only = f"{rps2 / 1e6:.2f} M" if rps2 else "-"
            print(f"| {c['trace']} | {c['rps'] / 1e6:.2f} M | " + " | ".join(r1)
                  + f" | {only} | " + " | ".join(r2) + " |")
    if a.json:
        a.json.write_text(json.dumps(raw, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
