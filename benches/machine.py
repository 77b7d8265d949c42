"""Facts about the machine a benchmark ran on, for benches/RESULTS.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def machine() -> dict:
    """Cores, CPU model, Python version and the commit."""
    return {"nproc": os.cpu_count(), "cpu": cpu_model(), "python": sys.version.split()[0], "commit": commit()}
