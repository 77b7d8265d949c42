#!/usr/bin/env python3
"""What `make test` ran, passed and skipped, and why each skip: the last lines of `make test`.

    tools/test_summary.py RUST_LOG PYTEST_JUNIT_XML [PYTEST_JUNIT_XML ...]

RUST_LOG is `cargo test`'s (non-quiet) output: every test binary's
"test result:" line counts, and a test skipped at run time (a missing
capability, crates/criticore-rt/tests) shows as "test NAME ... ignored, REASON".
PYTEST_JUNIT_XML is pytest's --junitxml report (one per pytest run, counted
together): each <skipped> carries its reason. Exit 1 when the logs are
missing, so a summary is never made up.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
# libtest: "test NAME ... ignored, REASON"; libtest-mimic: "test NAME   ... ignored (REASON)".
IGNORED = re.compile(r"^test (\S+)\s+\.\.\. ignored(?:, (.*)| \((.*)\))?$")


def rust(log: Path) -> tuple[int, int, int, list[str]]:
    passed = failed = ignored = 0
    why = []
    for line in log.read_text(errors="replace").splitlines():
        if m := RESULT.search(line):
            passed, failed, ignored = passed + int(m[1]), failed + int(m[2]), ignored + int(m[3])
        elif m := IGNORED.match(line.strip()):
            why.append(f"{m[1]}: {m[2] or m[3] or 'ignored (no reason given)'}")
    return passed, failed, ignored, why


def python(xmls: list[Path]) -> tuple[int, int, int, list[str]]:
    passed = failed = skipped = 0
    why = []
    for case in (c for xml in xmls for c in ET.parse(xml).getroot().iter("testcase")):
        if (s := case.find("skipped")) is not None:
            skipped += 1
            why.append(f"{case.get('classname')}::{case.get('name')}: {s.get('message', '')}")
        elif case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        else:
            passed += 1
    return passed, failed, skipped, why


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not all(Path(a).is_file() for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 1
    rows = [("Rust", *rust(Path(argv[1]))), ("Python", *python([Path(a) for a in argv[2:]]))]
    print("tests: " + "; ".join(f"{name} {p} passed, {f} failed, {s} skipped" for name, p, f, s, _ in rows))
    for name, *_, why in rows:
        for w in why:
            print(f"  skipped ({name}) {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
