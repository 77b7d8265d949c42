"""Running the installed ``criticore`` as a user does, for the CLI-wide tests
(test_first_hour.py, test_what_users_read.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CRITICORE = Path(sys.executable).parent / "criticore"


def run(*args: str | Path, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run([str(CRITICORE), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr naming every needle."""
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def system(tmp_path: Path) -> Path:
    """A copy of the MRS example to write beside (and, in tests of data loss, over)."""
    dest = tmp_path / "g.toml"
    shutil.copy(EXAMPLES / "mrs-synthetic.toml", dest)
    return dest


def sigint_default() -> None:
    """Popen's preexec_fn for a child the test interrupts with SIGINT: a test
    run started in the background (`make test &`, nohup) ignores SIGINT, its
    children inherit that, and Python then installs no Ctrl-C handler, so
    the SIGINT a user's Ctrl-C sends would never arrive."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
