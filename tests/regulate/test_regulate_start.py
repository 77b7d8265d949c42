"""Common start for instrumented programs (issue 25, Build 7): a Python
program under `criticore regulate` says it takes part
(`instrument.will_wait()`), sets up, then waits in `instrument.wait_start()`:
the run waits for its set-up, and its time 0 is the regulation's, written
after the program was ready. The C twin (`criticore_attach_waiting`,
`criticore_wait_start`) is checked in crates/criticore-rt/tests/c_header.rs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_regulate import regulate_json

PROGRAM = """import sys, time
from criticore import instrument
instrument.will_wait()
time.sleep(0.5)                     # set-up, unregulated
before = time.monotonic_ns()
t0 = instrument.wait_start()
after = time.monotonic_ns()
instrument.count(10)
open(sys.argv[1], "w").write(f"{before} {t0} {after}")
time.sleep(5)
"""


def test_a_python_program_takes_part_in_the_common_start(tmp_path: Path):
    out = tmp_path / "times"
    f = tmp_path / "start.toml"
    f.write_text(
        '[platform]\ncores = 1\n[regulation]\nkind = "memguard"\nperiod = "1ms"\nbudgets = [100000]\n'
        '[[task]]\nname = "p"\ncore = 0\nperiod = "10ms"\npet = "1ms"\n'
        f"command = {json.dumps([sys.executable, '-c', PROGRAM, str(out)])}\n"
    )
    summary = regulate_json(str(f), "--counter", "shm", "--duration", "300ms", timeout=60)
    # The run waited for it: one program set up before time 0.
    assert any(n.startswith("common start: 1 program(s) set up") for n in summary["notices"]), summary["notices"]
    before, t0, after = map(int, out.read_text().split())
    # Time 0 was written once it was ready (after its set-up), and it got it then.
    assert before <= t0 <= after
