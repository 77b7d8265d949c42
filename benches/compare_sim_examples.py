"""Measured vs simulated for every example under examples/regulate/ (issue 25):
`criticore regulate FILE --duration D --compare-sim --json`, N runs each, every
row checked against the tolerances docs/runtime.md states ("Measured vs
simulated: tolerances"). Also the 16 MiB variant of mrs-tables.toml (every
task's `wss = "1MiB"` made "16MiB", its commands pointed at the variant).

Prints one markdown table per file (the runs' measured values side by side,
the simulated value, the tolerance, pass or not) and exits 1 if any row is
out of its tolerance in any run. No timing threshold in a test: this is a
benchmark, recorded in benches/RESULTS.md.

    .venv/bin/python benches/compare_sim_examples.py --runs 3 --duration 8s
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [str(ROOT / ".venv/bin/criticore")]

#: docs/runtime.md, "Measured vs simulated: tolerances". (what, check, words)
#: A check takes (measured, simulated, row) and says whether they agree.
TOLERANCES = {
    "jobs": (lambda m, s, r: abs(m - s) <= 1, "±1 job"),
    "response_ms_mean": (lambda m, s, r: s > 0 and m > 0 and 1 / 1.5 <= m / s <= 1.5, "within 1.5×"),
    # Of the replay: within 1.5× of some point of its band (job times ±5%).
    "response_ms_mean_band": (lambda m, band, r: band is not None and m > 0 and band[0] / 1.5 <= m <= band[1] * 1.5, "within 1.5× of the band"),
    "used_of_budget": (lambda m, s, r: -0.10 <= m - s <= 0.15, "−0.10 / +0.15"),
    "throttled_share": (lambda m, s, r: abs(m - s) <= 0.10, "±0.10"),
}
#: Which side a quantity is checked against (default: the simulation):
#: a task's mean response against the replay of the run's job times, the
#: plain simulation's reported (docs/runtime.md says why).
CHECKED_SIDES = {"response_ms_mean": ("replayed",)}
#: Reported, not checked (docs/runtime.md says why).
UNCHECKED = {"deadline_misses", "response_ms_max", "exhausted_share", "exec_ms_median"}


def variant_16mib(tmp: Path) -> Path:
    src = ROOT / "examples/regulate/mrs-tables.toml"
    out = tmp / "mrs-tables-16MiB.toml"
    text = src.read_text().replace('wss = "1MiB"', 'wss = "16MiB"').replace("--file examples/regulate/mrs-tables.toml", f"--file {out}")
    out.write_text(text)
    return out


def run_once(file: Path, duration: str) -> list[dict]:
    p = subprocess.run([*CLI, "regulate", str(file), "--duration", duration, "--compare-sim", "--json"], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{file}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return json.loads(p.stdout)["compare_sim"]


def fmt(v) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else (f"{v:.3g}" if isinstance(v, float) else str(v))


def with_band(v, band) -> str:
    return fmt(v) if band is None or band[0] == band[1] else f"{fmt(v)} ({fmt(band[0])}–{fmt(band[1])})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--only", help="substring of the file names to run")
    a = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted((ROOT / "examples/regulate").glob("*.toml")) + [variant_16mib(Path(tmp))]
        for file in files:
            if a.only and a.only not in file.name:
                continue
            runs = []
            for i in range(a.runs):
                print(f"{file.name}: run {i + 1} of {a.runs}", file=sys.stderr, flush=True)
                runs.append(run_once(file, a.duration))
            print(f"\n### {file.name} ({a.runs} runs of {a.duration})\n")
            print("| kind | name | what | measured (runs) | simulated | replayed (runs) | tolerance | simulated agrees | replay agrees |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            for k, row in enumerate(runs[0]):
                what = row["what"]
                ms = [r[k]["measured"] for r in runs]
                rs = [r[k]["replayed"] for r in runs]
                bands = [r[k]["replay_band"] for r in runs]
                s = row["simulated"]
                verdicts = []
                for side, values in (("simulated", [s] * len(ms)), ("replayed", bands if what == "response_ms_mean" else rs)):
                    if what in UNCHECKED or what not in TOLERANCES:
                        verdicts.append("(reported)")
                    elif any(v is None for v in values) or any(m is None for m in ms):
                        verdicts.append("(no value)")
                    else:
                        check = TOLERANCES[what + "_band" if side == "replayed" and what == "response_ms_mean" else what][0]
                        ok = all(check(m, v, row) for m, v in zip(ms, values))
                        checked = side in CHECKED_SIDES.get(what, ("simulated",))
                        failures += checked and not ok
                        verdicts.append(("yes" if ok else "**no**") if checked else ("yes" if ok else "no") + " (reported)")
                words = TOLERANCES[what][1] if what in TOLERANCES else "—"
                print(f"| {row['kind']} | {row['name']} | {what} | {' / '.join(fmt(m) for m in ms)} | {fmt(s)} | {' / '.join(with_band(v, b) for v, b in zip(rs, bands))} | {words} | {verdicts[0]} | {verdicts[1]} |")
    print(f"\n{failures} row(s) out of tolerance")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
