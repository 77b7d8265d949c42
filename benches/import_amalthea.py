#!/usr/bin/env python3
"""Amalthea import time on the WATERS 2017 challenge model (issue 27; target:
under 2 s), as a ratio against reading the same file with the standard
library, so that a noisy shared host moves both sides alike.

Measured, alternating, ``--passes`` times each, one thread:

- import: ``criticore.import_amalthea(MODEL)``: read the file, gunzip, parse
  the XML, build the intermediate model, map it, write the TOML text and
  parse it back into a TaskSystem (everything `criticore import amalthea`
  does but writing the file);
- baseline: ``xml.etree.ElementTree.parse(gzip.open(MODEL))``: gunzip and
  parse the XML into a tree, nothing more;
- CLI: ``criticore import amalthea MODEL -o OUT --force`` as a user runs it,
  process start included (once per pass).

Reported: min and median seconds of each, and import / baseline (medians).

Usage (from the repository root, after ``make build``):
    .venv/bin/python benches/import_amalthea.py [--model PATH] [--passes 7]
The model defaults to the shared data folder beside the repository. The
last line of output is one JSON object with every number.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import ROOT, machine  # noqa: E402

import criticore  # noqa: E402

MODEL = ROOT.parent / "shared" / "data" / "waters2017-challenge.amxmi.gz"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    if not args.model.is_file():
        sys.exit(f"no model at {args.model}")
    cli = [str(Path(sys.executable).parent / "criticore"), "import", "amalthea", str(args.model), "--force", "-o"]
    times: dict[str, list[float]] = {"import": [], "baseline": [], "cli": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "waters.toml")
        for _ in range(args.passes):
            times["import"].append(timed(lambda: criticore.import_amalthea(args.model)))
            times["baseline"].append(timed(lambda: ET.parse(gzip.open(args.model))))
            times["cli"].append(timed(lambda: subprocess.run([*cli, out], check=True, capture_output=True)))
    summary = {k: {"min_s": min(v), "median_s": statistics.median(v)} for k, v in times.items()}
    ratio = summary["import"]["median_s"] / summary["baseline"]["median_s"]
    for k, s in summary.items():
        print(f"{k:9s} min {s['min_s']:.3f} s   median {s['median_s']:.3f} s")
    print(f"import / baseline (medians): {ratio:.2f}")
    print(json.dumps({"model": str(args.model), "passes": args.passes, "times": summary, "import_over_baseline": ratio, "machine": machine()}))


if __name__ == "__main__":
    main()
