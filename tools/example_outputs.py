#!/usr/bin/env python3
"""Record, or compare, what every example analyzes, simulates and optimizes to.

    tools/example_outputs.py record DIR      # one JSON file per example and command
    tools/example_outputs.py compare OLD NEW [--ignore KEY ...]
                                             # differing JSON paths, exit 1 if any

A refactoring that must not change behaviour records before and after and
compares (issue 24: "every example simulates, analyzes and optimizes to the
same numbers before and after"). Runs the installed CLI (.venv/bin/criticore),
so it compares what a user sees, with each command's --json output, its exit
code, and its stderr's last line when it fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = str(ROOT / ".venv" / "bin" / "criticore")
COMMANDS = {
    "analyze": ["analyze", "{file}", "--json"],
    "simulate": ["simulate", "{file}", "--duration", "1s", "--json"],
    "optimize": ["optimize", "{file}", "--json"],
}


def examples() -> list[Path]:
    return sorted(p for p in (ROOT / "examples").rglob("*.toml"))


def run(file: Path, name: str) -> dict:
    argv = [CLI] + [a.format(file=file) for a in COMMANDS[name]]
    p = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)
    out: dict = {"exit": p.returncode}
    try:
        out["json"] = json.loads(p.stdout)
    except json.JSONDecodeError:
        out["stdout"] = p.stdout.strip().splitlines()[-1:] if p.stdout.strip() else []
    if p.returncode:
        out["stderr"] = p.stderr.strip().splitlines()[-1:] if p.stderr.strip() else []
    return out


def record(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    jobs = [(f, c) for f in examples() for c in COMMANDS]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda fc: run(*fc), jobs))
    for (f, c), r in zip(jobs, results):
        key = str(f.relative_to(ROOT / "examples")).replace("/", "__")
        (dest / f"{key}.{c}.json").write_text(json.dumps(r, indent=1, sort_keys=True) + "\n")
    print(f"{len(jobs)} outputs in {dest}")


def paths(a, b, ignore: set[str], at: str = "") -> list[str]:
    """The JSON paths where a and b differ, keys named in ignore left out."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in ignore:
                out += paths(a.get(k), b.get(k), ignore, f"{at}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in paths(x, y, ignore, f"{at}[{i}]")]
    return [] if a == b else [at or "."]


def compare(old: Path, new: Path, ignore: set[str]) -> int:
    names = sorted({p.name for p in old.glob("*.json")} | {p.name for p in new.glob("*.json")})
    differ = 0
    for n in names:
        a, b = old / n, new / n
        if not (a.exists() and b.exists()):
            print(f"{n}: only in {'old' if a.exists() else 'new'}")
            differ += 1
        elif where := paths(json.loads(a.read_text()), json.loads(b.read_text()), ignore):
            print(f"{n}: {', '.join(where[:4])}{' …' if len(where) > 4 else ''}")
            differ += 1
    print(f"{len(names)} outputs, {differ} differ" + (f" (ignoring {', '.join(sorted(ignore))})" if ignore else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "compare" and sys.argv[4::2] == ["--ignore"] * len(sys.argv[4::2]):
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3]), set(sys.argv[5::2])))
    else:
        sys.exit(__doc__)
