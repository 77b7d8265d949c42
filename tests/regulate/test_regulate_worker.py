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
