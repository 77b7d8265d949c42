"""Multiple-activation limits through the Python front (issue 27, Build 4;
docs/format.md ``activation_limit``): the task's limit as the engine read it,
and the releases the simulation lost, worked out by hand."""

from __future__ import annotations

import criticore
from criticore import TaskSystem

US = 1_000


def _system(limit: int | None) -> TaskSystem:
    task = {"name": "a", "core": 0, "pet": "3us", "period": "2us"}
    if limit is not None:
        task["activation_limit"] = limit
    return TaskSystem.from_dict({"platform": {"cores": 1}, "task": [task]})


def test_an_overloaded_task_loses_the_releases_that_find_its_job_active():
    system = _system(1)
    assert system.tasks[0].activation_limit == 1
    sim = criticore.simulate(system, 40 * US, exec_level="C")
    # By hand: 3 µs every 2 µs, limit 1. Job 0 runs 0-3, so the release at 2
    # is lost; the one at 4 finds it done and runs 4-7; and so on: releases at
    # 0, 4, ..., 36 run (10, the last finishing at 39), those at 2, 6, ..., 38 are lost.
    stats = sim.task("a")
    assert (stats.released, stats.lost_activations, stats.deadline_misses) == (10, 10, 10)
    assert sim.per_task_table().column("lost_activations").to_pylist() == [10]


def test_without_a_limit_every_release_is_a_job():
    system = _system(None)
    assert system.tasks[0].activation_limit is None
    stats = criticore.simulate(system, 40 * US, exec_level="C").task("a")
    assert (stats.released, stats.lost_activations) == (20, 0)
