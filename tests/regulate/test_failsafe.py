"""Fail-safe without holes (issue 25, Build 9): whatever is killed — the
CLI, its watchdog, both, the CLI's process group — nothing the run started
is left stopped, frozen, real-time or running, and no counter page of the
run stays in /dev/shm (after the next run or `criticore regulate --clean`
when both the CLI and its watchdog were killed). Also: a command's own
children end with it, a task that fails at once is reported (exit 1 when
every task did), Ctrl-C exits 130, a period below the machine's floor is
one line.

Every test signals only processes it started (the CLI, and what the CLI
started: identified by pid and start time), bounds every wait, and in a
finally block resumes, kills and thaws what it started, even when an
assertion fails. Other clones' tests run at the same time: cgroups and pages
are filtered to the ones of this test's CLI (`criticore-<its pid>…`).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_regulate import CLI, children_of, one_line_error, run_cli, state, wait_for
from test_regulate import _frozen as frozen  # frozen in a criticore cgroup, v1 or v2

FREEZER_V1 = Path("/sys/fs/cgroup/freezer")
UNIFIED = Path("/sys/fs/cgroup/unified")

#: A light instrumented load: counts 1,000 lines, sleeps 2 ms, forever (under
#: SCHED_FIFO it must not take a core from the machine's other work).
HOG = "import time\nfrom criticore import instrument\nwhile True:\n    instrument.count(1000)\n    time.sleep(0.002)\n"

#: The monitor's real-time program: an 80 ms job every 100 ms, forever (the
#: best-effort load is suspended during most of each job).
RT = (
    "import time\nfrom criticore import instrument\nj = 0\n"
    "while True:\n    instrument.job_begin(j)\n    instrument.phase(0)\n    end = time.monotonic() + 0.08\n"
    "    while time.monotonic() < end:\n        instrument.count(10)\n        time.sleep(0.001)\n"
    "    instrument.job_end(j)\n    j += 1\n    time.sleep(0.02)\n"
)


def argv(program: str) -> str:
    return json.dumps([sys.executable, "-c", program])


def start_time(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rfind(")") + 2 :].split()[19])


def pgrp(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rfind(")") + 2 :].split()[2])


def alive(p: tuple[int, int]) -> bool:
    """The process `pid` that started at `start`, and not a zombie."""
    pid, start = p
    return start_time(pid) == start and state(pid) not in (None, "Z", "X")


def realtime(pid: int) -> bool:
    try:
        return any(os.sched_getscheduler(int(t.name)) in (os.SCHED_FIFO, os.SCHED_RR, 6) for t in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and pgrp(int(d.name)) == pgid:
            out.append(int(d.name))
    return out


def cgroups_of(owner: int) -> list[Path]:
    """The criticore cgroup directories of one owner (`criticore-<owner>[-k]`)."""
    found = []
    for root in (FREEZER_V1, UNIFIED):
        for top, dirs, _ in os.walk(root, onerror=lambda e: None):
            for d in dirs:
                if d == f"criticore-{owner}" or d.startswith(f"criticore-{owner}-"):
                    found.append(Path(top) / d)
            dirs[:] = [d for d in dirs if not d.startswith("criticore-")]
    return found


def files_of(owner: int) -> list[Path]:
    """Counter pages and run-state files of one owner in /dev/shm."""
    shm = Path("/dev/shm")
    return sorted([*shm.glob(f"criticore-{owner}-*"), *shm.glob(f"criticore-run-{owner}-*")])


class Run:
    """What one CLI started, by pid and start time, learnt while it runs."""

    def __init__(self, cli: subprocess.Popen):
        self.cli = cli
        self.procs: set[tuple[int, int]] = set()
        self.watchdog: tuple[int, int] | None = None
        self.tasks: set[tuple[int, int]] = set()
        s = start_time(cli.pid)
        if s is not None:
            self.procs.add((cli.pid, s))

    def look(self) -> None:
        for pid in children_of(self.cli.pid):
            s = start_time(pid)
            if s is None:
                continue
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if comm.startswith("criticore-watch"):
                # Seen before its exec it looked like a task.
                self.watchdog = (pid, s)
                self.tasks.discard((pid, s))
            elif (pid, s) != self.watchdog:
                self.tasks.add((pid, s))
            self.procs.add((pid, s))
        # What the tasks started: the members of their process groups.
        for pid, _ in list(self.tasks):
            for m in group_members(pid):
                s = start_time(m)
                if s is not None:
                    self.procs.add((m, s))

    def alive(self) -> list[tuple[int, int]]:
        return sorted(p for p in self.procs if alive(p))

    def release(self) -> None:
        """Whatever happened: everything it started resumed and killed, its
        cgroups thawed, its files removed. Only processes we identified."""
        with contextlib.suppress(ProcessLookupError):
            self.cli.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.cli.wait(timeout=10)
        for pid, s in self.procs:
            if start_time(pid) == s:
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
        for d in cgroups_of(self.cli.pid):
            for name, text in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                with contextlib.suppress(OSError):
                    (d / name).write_text(text)
        for f in files_of(self.cli.pid):
            f.unlink(missing_ok=True)


@contextlib.contextmanager
def started(*args: str, session: bool = False):
    cli = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=session)
    run = Run(cli)
    try:
        yield run
    finally:
        run.look() if cli.poll() is None else None
        run.release()


def left_over(run: Run) -> list[str]:
    """What the run left: one line per process, cgroup or file."""
    out = []
    for pid, _ in run.alive():
        out.append(f"pid {pid} alive (state {state(pid)}, real-time {realtime(pid)}, frozen {frozen(pid)})")
    out += [f"cgroup {d}" for d in cgroups_of(run.cli.pid)]
    out += [f"file {f}" for f in files_of(run.cli.pid)]
    return out


def wait_clean(run: Run, timeout_s: float) -> list[str]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if not left_over(run):
            return []
        time.sleep(0.02)
    return left_over(run)


# ---------------------------------------------------------------------------
# Focused checks (each failed before its fix)


def test_a_commands_own_children_end_with_the_run(tmp_path):
    # A command that forks 50 `sleep 30` and waits: all 51 end with the run.
    f = tmp_path / "sys.toml"
    f.write_text(
        '[platform]\ncores = 2\n[[task]]\nname = "fork"\ncore = 0\nperiod = "100ms"\npet = "100ms"\n'
        'command = ["sh", "-c", "for i in $(seq 50); do sleep 30 & done; wait"]\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    with started("regulate", str(f), "--counter", "sw:page-faults", "--duration", "2s", "--json") as run:
        seen = wait_for(lambda: (run.look(), sum(1 for p in run.procs if alive(p)))[1] >= 52, 15)
        assert seen, f"the command never forked its 50 sleeps ({len(run.procs)} processes seen)"
        out, err = run.cli.communicate(timeout=40)
        assert run.cli.returncode == 0, err
        # Every process the command started ended with the run (no grace needed: SIGTERM ends sleep).
        assert [f"{p} {state(p[0])}" for p in run.alive() if p[0] != run.cli.pid] == []


def test_sigkill_of_the_cli_ends_its_tasks_their_children_and_pages(tmp_path):
    f = tmp_path / "sys.toml"
    f.write_text(
        "[platform]\ncores = 2\n"
        f'[[task]]\nname = "hog"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = {argv(HOG)}\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    with started("regulate", str(f), "--counter", "shm", "--duration", "30s") as run:
        assert wait_for(lambda: (run.look(), run.tasks and files_of(run.cli.pid))[1], 20), "the task never started"
        time.sleep(0.3)
        run.look()
        run.cli.kill()
        run.cli.wait(timeout=10)
        # The watchdog ends the task (SIGTERM ends it at once) and removes the page.
        assert wait_clean(run, 10) == []


def test_a_task_that_fails_at_once_is_reported_and_the_exit_is_1(tmp_path):
    f = tmp_path / "sys.toml"
    f.write_text(
        '[platform]\ncores = 2\n[[task]]\nname = "bad"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = ["sh", "-c", "exit 3"]\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    # Shared-memory counters (this machine's default): a perf counter cannot
    # be opened on a process that is gone already, which is a one-line error.
    r = run_cli("regulate", str(f), "--counter", "shm", "--json", timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    s = json.loads(r.stdout)
    assert s["tasks_failed"] is True
    notes = [n for n in s["notices"] if '"bad"' in n]
    assert len(notes) == 1 and "exit status 3" in notes[0], s["notices"]
    assert "every task ended with a failure" in r.stderr


def test_one_failed_task_among_running_ones_is_a_notice_and_exit_0(tmp_path):
    f = tmp_path / "sys.toml"
    f.write_text(
        "[platform]\ncores = 2\n"
        '[[task]]\nname = "bad"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = ["sh", "-c", "exit 1"]\n'
        '[[task]]\nname = "ok"\ncore = 1\nperiod = "100ms"\npet = "100ms"\ncommand = ["sleep", "30"]\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    r = run_cli("regulate", str(f), "--counter", "shm", "--duration", "1s", "--json", timeout=60)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["tasks_failed"] is False
    assert [n for n in s["notices"] if "ended by itself" in n] == [next(n for n in s["notices"] if '"bad"' in n)]
    assert "exit status 1" in next(n for n in s["notices"] if '"bad"' in n)


def test_ctrl_c_exits_130_and_leaves_nothing(tmp_path):
    f = tmp_path / "sys.toml"
    f.write_text(
        "[platform]\ncores = 2\n"
        f'[[task]]\nname = "hog"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = {argv(HOG)}\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    with started("regulate", str(f), "--counter", "shm", "--duration", "30s", "--json") as run:
        # Regulating: the task runs and the live loop has the counter page.
        assert wait_for(lambda: (run.look(), run.tasks and files_of(run.cli.pid))[1], 20), "the task never started"
        time.sleep(1.0)
        run.look()
        os.kill(run.cli.pid, signal.SIGINT)
        out, err = run.cli.communicate(timeout=30)
        assert run.cli.returncode == 130, (run.cli.returncode, err)
        assert json.loads(out)["end"] == "interrupted"
        assert wait_clean(run, 10) == []


def test_a_period_below_the_floor_is_one_line_with_the_floor(tmp_path):
    f = tmp_path / "sys.toml"
    f.write_text(
        '[platform]\ncores = 2\n[[task]]\nname = "s"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = ["sleep", "30"]\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    r = run_cli("regulate", str(f), "--counter", "sw:page-faults", "--period", "1us", "--duration", "300ms", timeout=60)
    one_line_error(r, "--period: 1 µs is below what this machine can honour", "median lateness of the regulator's timer wake-ups")
    r = run_cli("regulate", str(f), "--counter", "sw:page-faults", "--period", "1ms", "--duration", "10000s", timeout=60)
    # 10,000 s of 1 ms periods for 2 groups (one per core): 2 × 10,000,001 records, beyond 10,000,000.
    one_line_error(r, "--duration", "over 2 group(s) is 20000002 records", "at most 10000000")


def test_clean_needs_no_file_and_a_run_needs_one(tmp_path):
    r = run_cli("regulate", "--clean", timeout=60)
    assert r.returncode == 0, r.stderr
    one_line_error(run_cli("regulate", timeout=60), "FILE", "--clean")


# ---------------------------------------------------------------------------
# The acceptance test: fault injection


def system(tmp_path: Path, mode: str) -> Path:
    head = '[platform]\ncores = 2\nllc = { size = "32MiB", ways = 16, colors = 16, line = "64B" }\n'
    hog = argv(HOG)
    if mode in ("memguard", "mcti"):
        text = (
            head + f'[regulation]\nkind = "{mode}"\nperiod = "100ms"\nbudgets = [1, 1]\n'
            f'[[task]]\nname = "a"\ncore = 0\npriority = 2\nperiod = "100ms"\npet = "100ms"\ncommand = {hog}\n'
            f'[[task]]\nname = "b"\ncore = 1\npriority = 1\nperiod = "100ms"\npet = "100ms"\ncommand = {hog}\n'
        )
    elif mode == "mrs":
        text = (
            head + '[regulation]\nkind = "mrs"\n'
            '[[server]]\nname = "A"\ncore = 0\nkind = "periodic"\npriority = 2\nperiod = "20ms"\nbudget = "2ms"\n'
            '[[server]]\nname = "B"\ncore = 1\nkind = "periodic"\npriority = 1\nperiod = "20ms"\nbudget = "2ms"\n'
            f'[[task]]\nname = "a"\nserver = "A"\npriority = 2\nperiod = "100ms"\npet = "100ms"\ncommand = {hog}\n'
            f'[[task]]\nname = "b"\nserver = "B"\npriority = 1\nperiod = "100ms"\npet = "100ms"\ncommand = {hog}\n'
        )
    else:
        (tmp_path / "table.toml").write_text('task = "rt"\nsample = "1ms"\nshift = 10\nbe_cores = 1\n[[phase]]\noverhead = [0.0, 1.0]\n')
        text = (
            head + '[regulation]\nkind = "monitor"\nrt_task = "rt"\nbe_cores = [1]\nsample = "1ms"\nthreshold = 0.2\noverhead_table = "table.toml"\n'
            f'[[task]]\nname = "rt"\ncore = 0\nperiod = "100ms"\npet = "80ms"\ncommand = {argv(RT)}\n'
            f'[[task]]\nname = "load"\ncore = 1\nperiod = "100ms"\npet = "100ms"\ncommand = {hog}\n'
        )
    path = tmp_path / f"{mode}.toml"
    path.write_text(text)
    return path


MODES = ["memguard", "mcti", "mrs", "monitor"]
THROTTLES = ["signal", "freezer"]
TARGETS = ["cli", "watchdog", "both", "pgroup"]
SEED = 25


def trials() -> list[tuple[str, str, str, float]]:
    """24 trials: every (mode, throttle) with three of the four targets in
    turn, so that every target meets every mode and every throttle; the
    moment of the kill, 0.1–1.2 s into the regulation, drawn from SEED."""
    rng = random.Random(SEED)
    out = []
    for i, (mode, throttle) in enumerate((m, t) for m in MODES for t in THROTTLES):
        for k in range(3):
            out.append((mode, throttle, TARGETS[(i + k) % 4], round(rng.uniform(0.1, 1.2), 3)))
    return out


TRIALS = trials()


@pytest.mark.parametrize("mode,throttle,target,delay", TRIALS, ids=[f"{m}-{t}-{x}" for m, t, x, _ in TRIALS])
def test_fault_injection(tmp_path, mode, throttle, target, delay):
    file = system(tmp_path, mode)
    with started("regulate", str(file), "--throttle", throttle, "--counter", "shm", "--duration", "6s", session=True) as run:
        # Regulating: both tasks launched and their pages made, the watchdog known.
        up = wait_for(lambda: (run.look(), run.watchdog and len(run.tasks) >= 2 and len(list(Path("/dev/shm").glob(f"criticore-{run.cli.pid}-*"))) >= 2)[1], 30)
        if not up:
            out, err = run.cli.communicate(timeout=30) if run.cli.poll() is not None else ("", "")
            pytest.fail(f"the run never started its tasks (exit {run.cli.poll()}): {err[-2000:]}")
        end = time.monotonic() + delay
        while time.monotonic() < end:
            run.look()
            time.sleep(0.01)
        run.look()
        # What the kill leaves to undo (reported with -s; docs/runtime.md counts them).
        tasks = [p for p, _ in run.tasks]
        held = [name for name, f in (("real-time", realtime), ("frozen", frozen), ("stopped", lambda p: state(p) == "T")) if any(f(p) for p in tasks)]
        print(f"\ntrial {mode} {throttle} {target} at {delay} s: {len(run.procs)} processes, at the kill: {', '.join(held) or 'running'}")
        cli, wd = run.cli.pid, run.watchdog[0]
        if target == "cli":
            os.kill(cli, signal.SIGKILL)
        elif target == "watchdog":
            os.kill(wd, signal.SIGKILL)
        elif target == "pgroup":
            os.killpg(cli, signal.SIGKILL)  # the CLI leads its own session and group
        else:
            os.kill(wd, signal.SIGKILL)
            os.kill(cli, signal.SIGKILL)
        run.cli.wait(timeout=30)
        if target == "both":
            # Nobody is left to undo the run: the next `--clean` does.
            r = run_cli("regulate", "--clean", timeout=60)
            assert r.returncode == 0, r.stderr
        left = wait_clean(run, 15)
        assert left == [], f"{mode} {throttle} {target} at {delay} s left: {left}"


def test_ctrl_c_during_the_launch_launches_no_more_and_exits_130(tmp_path):
    # Under shared-memory counters the run waits (up to 5 s) for an
    # uninstrumented command to attach; a Ctrl-C in that wait ends the launch:
    # the task after it is never started, nothing is regulated, exit 130.
    mark = tmp_path / "second-started"
    f = tmp_path / "sys.toml"
    f.write_text(
        "[platform]\ncores = 2\n"
        '[[task]]\nname = "first"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = ["sleep", "30"]\n'
        f'[[task]]\nname = "second"\ncore = 1\nperiod = "100ms"\npet = "100ms"\ncommand = ["touch", "{mark}"]\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    with started("regulate", str(f), "--counter", "shm", "--duration", "30s", "--json") as run:
        assert wait_for(lambda: (run.look(), run.tasks)[1], 20), "the first task never started"
        os.kill(run.cli.pid, signal.SIGINT)
        out, err = run.cli.communicate(timeout=30)
        assert run.cli.returncode == 130, (run.cli.returncode, err)
        s = json.loads(out)
        assert (s["end"], s["elapsed_ns"]) == ("interrupted", 0)
        assert not mark.exists()
        assert wait_clean(run, 10) == []


def test_a_launched_command_starts_with_no_signal_blocked(tmp_path):
    # The session blocks SIGINT and SIGTERM while it runs (it takes Ctrl-C
    # itself); a command inheriting that mask would not end at SIGTERM.
    out = tmp_path / "status"
    f = tmp_path / "sys.toml"
    f.write_text(
        "[platform]\ncores = 2\n"
        f'[[task]]\nname = "s"\ncore = 0\nperiod = "100ms"\npet = "100ms"\ncommand = ["sh", "-c", "grep SigBlk /proc/self/status > {out}; exec sleep 30"]\n'
        '[regulation]\nkind = "memguard"\nperiod = "10ms"\nbudgets = [1000000, 1000000]\n'
    )
    r = run_cli("regulate", str(f), "--counter", "sw:page-faults", "--duration", "300ms", "--json", timeout=60)
    assert r.returncode == 0, r.stderr
    assert int(out.read_text().split()[1], 16) == 0, out.read_text()
