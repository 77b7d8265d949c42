"""Implicit communication's copies through the Python front and the CLI
(issue 27, Build 5; docs/format.md ``copy_in``): the copies as the engine
read them, a schedule worked out by hand, the analysis's bound, and the
one-line error for copies that do not fit."""

from __future__ import annotations

import criticore
from criticore import TaskSystem

from cli_run import one_line_error, run

US = 1_000


def _system(h_offset: str) -> TaskSystem:
    # l: 10 µs every 40, its copy-in 2 and copy-out 3 (body 2-7, copy-out
    # 7-10 alone); h above it: 1 µs every 40, released at h_offset.
    return TaskSystem.from_dict({
        "platform": {"cores": 1},
        "task": [
            {"name": "h", "core": 0, "priority": 2, "pet": "1us", "period": "40us", "offset": h_offset},
            {"name": "l", "core": 0, "priority": 1, "pet": "10us", "period": "40us", "copy_in": "2us", "copy_out": "3us"},
        ],
    })


def test_a_release_inside_a_copy_waits_for_its_end():
    system = _system("7001ns")
    assert (system.tasks[1].copy_in_ns, system.tasks[1].copy_out_ns) == (2 * US, 3 * US)
    assert (system.tasks[0].copy_in_ns, system.tasks[0].copy_out_ns) == (0, 0)
    # By hand: h at 7.001 µs, 1 ns into l's copy-out, waits until 10 and runs
    # 10-11: 4 µs − 1 ns, the analysis's bound (blocking: the copy-out less 1 ns).
    sim = criticore.simulate(system, 40 * US, exec_level="C")
    assert sim.task("h").max_response_ns == 4 * US - 1
    assert criticore.analyze(system, scheduler="pfp").bound("h").bound_ns == 4 * US - 1
    # Released inside the body instead, it preempts at once.
    assert criticore.simulate(_system("4us"), 40 * US, exec_level="C").task("h").max_response_ns == US


def test_copies_longer_than_the_pet_are_one_line_naming_the_field(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[platform]\ncores = 1\n[[task]]\nname = "t"\ncore = 0\nperiod = "40us"\npet = "5us"\ncopy_in = "4us"\ncopy_out = "2us"\n')
    line = one_line_error(run("check", f), "task[0].pet")
    assert line == f"error: {f}: task[0].pet: 5us, less than its copy_in and copy_out together (6us), which are part of it"


def test_drawn_runs_take_each_runnable_from_its_draw_and_refuse_best_case(tmp_path):
    # One runnable uniform in [1, 3] µs beside a fixed 1 µs every 10 µs: with
    # --drawn each job runs 2-4 µs (not all alike), without it 4 µs.
    f = tmp_path / "d.toml"
    f.write_text('[platform]\ncores = 1\n[[task]]\nname = "t"\ncore = 0\nperiod = "10us"\n'
                 'runnables = [{ name = "u", pet = "3us", min = "1us", draw = "uniform" }, { name = "c", pet = "1us" }]\n')
    system = criticore.TaskSystem.load(f)
    drawn = criticore.simulate(system, "1ms", drawn=True, jobs=True).jobs.column("exec_ns").to_pylist()
    assert len(drawn) == 100 and all(2 * US <= e <= 4 * US for e in drawn) and len(set(drawn)) > 10
    assert set(criticore.simulate(system, "1ms", jobs=True).jobs.column("exec_ns").to_pylist()) == {4 * US}
    line = one_line_error(run("simulate", f, "--drawn", "--best-case", "0.5", "--duration", "1ms"), "--drawn")
    assert "choose one" in line
    assert run("simulate", f, "--drawn", "--duration", "1ms").returncode == 0
