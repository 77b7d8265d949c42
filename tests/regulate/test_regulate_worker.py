"""A native periodic worker (issue 25, Build 4): for a task whose command is
`criticore load --file F --task T`, `criticore regulate` starts the shipped
`criticore-worker` program (the same code as `criticore load`), not a Python
interpreter; a command with anything more runs as written."""

from __future__ import annotations

from pathlib import Path

from test_regulate import descendants, started_cli, wait_for


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def test_the_periodic_load_runs_as_the_native_worker(tmp_path: Path):
    f = tmp_path / "w.toml"
    f.write_text(
        '[platform]\ncores = 2\n[regulation]\nkind = "memguard"\nperiod = "1ms"\nbudgets = [100000, 100000]\n'
        f'[[task]]\nname = "a"\ncore = 0\nperiod = "10ms"\npet = "1ms"\ncommand = "criticore load --file {f} --task a"\n'
        f'[[task]]\nname = "b"\ncore = 1\nperiod = "10ms"\npet = "1ms"\ncommand = "criticore load --file {f} --task b --jobs 1000"\n'
    )
    with started_cli("regulate", str(f), "--counter", "shm", "--duration", "20s") as (cli, seen):
        # Both programs up: a as the worker, b as written (its --jobs makes it the user's command line).
        procs = wait_for(lambda: (lambda d: d if sum(str(f) in cmdline(p) for p in d) == 2 else None)(descendants(cli.pid)), 60)
        assert procs, "both task programs started"
        seen.update(procs)
        lines = {p: cmdline(p) for p in procs}
        worker = [c for c in lines.values() if c and Path(c[0]).name == "criticore-worker"]
        assert worker == [[worker[0][0], str(f), "a"]], lines
        python = [c for c in lines.values() if "--task" in c and "b" in c]
        assert python and Path(python[0][0]).name.startswith("python"), lines


def test_the_plain_generator_runs_as_the_native_worker(tmp_path: Path):
    # `criticore load` with generator options only (an unpaced load, as
    # mrs-tables.toml's Task3) runs as `criticore-worker load ...`; one with
    # an option the worker leaves to Python (--log) runs as written.
    f = tmp_path / "g.toml"
    log = tmp_path / "x.csv"
    f.write_text(
        '[platform]\ncores = 2\n[regulation]\nkind = "memguard"\nperiod = "1ms"\nbudgets = [100000, 100000]\n'
        '[[task]]\nname = "a"\ncore = 0\nperiod = "10ms"\npet = "10ms"\ncommand = "criticore load --buffer 1MiB --cpu 0 --duration 20s"\n'
        f'[[task]]\nname = "b"\ncore = 1\nperiod = "10ms"\npet = "10ms"\ncommand = "criticore load --buffer 1MiB --duration 20s --log {log}"\n'
    )
    with started_cli("regulate", str(f), "--counter", "shm", "--duration", "20s") as (cli, seen):
        procs = wait_for(lambda: (lambda d: d if sum("--buffer" in cmdline(p) for p in d) == 2 else None)(descendants(cli.pid)), 60)
        assert procs, "both task programs started"
        seen.update(procs)
        lines = {p: cmdline(p) for p in procs}
        worker = [c for c in lines.values() if c and Path(c[0]).name == "criticore-worker"]
        assert worker == [[worker[0][0], "load", "--buffer", "1MiB", "--cpu", "0", "--duration", "20s"]], lines
        python = [c for c in lines.values() if "--log" in c]
        assert python and Path(python[0][0]).name.startswith("python"), lines


def test_the_native_generator_runs_and_reports_in_one_line():
    import subprocess

    program = Path(__file__).resolve().parents[2] / "python" / "criticore" / "_core" / "_bin" / "criticore-worker"
    r = subprocess.run([str(program), "load", "--buffer", "1MiB", "--duration", "100ms"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    # "criticore load: N lines of 64 B in 0.100 s (X GB/s), buffer 1 MiB"
    assert words[:2] == ["criticore", "load:"] and int(words[2]) > 0 and words[-3:] == ["buffer", "1", "MiB"], r.stdout
    assert 0.1 <= float(words[8]) < 1.0, r.stdout
    # A bad option is one line and exit 2.
    r = subprocess.run([str(program), "load", "--buffer", "lots"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--buffer" in r.stderr, r.stderr
