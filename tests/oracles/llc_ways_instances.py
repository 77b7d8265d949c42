"""Random phase-3 (LLC-way) instances for tests/test_llc_ways.py and
benches/llc_ways.py, built from the cost-versus-ways model of
docs/references.md (section MC²) and Table 3 of mc2-io-ipc-os-isolation.

Per task: a utilization u (Level-A pessimism, full LLC: Table 3 "Task
Utilization", per level), a slowdown s ∈ {1.16, 2.95, 15.68} and a working-set
size WSS in ways (uniform 1..N; 20 % of tasks fit the private cache, WSS = 0,
and do not depend on w). Cost factor at w ways:

    f(w) = (s − 1)·e^(−r·w) + 1 for w < WSS,   1 for w ≥ WSS,
    r = ln((s − 1)/1e-6) / WSS   (f reaches 1 within 1e-6 at the WSS).

Level-A PET ∝ f(w)·u, Level-B PET = Level-A PET / 1.5, Level-C PET =
Level-B PET × U[0.5, 0.7] (A/B tasks) or × U[0.2, 0.4] (C tasks). Periods cancel
out of every utilization, so none are drawn.

Locked-buffer region (a choice of ours, documented here): half of the Level-C
tasks have a buffer of b ∈ U[0.25, 2] ways through which a share β ∈ U[0.05, 0.3]
of their cost goes; buffers are locked in a random order, so W_lock ways cover
the first buffers in full and the next one in part; a covered fraction φ cuts
the task's cost by β·φ. In 25 % of instances no task has a buffer (the tables
do not depend on W_lock).

Task set: criticality shares from Table 3 category 1 (normalized), tasks added
per level until share × U_sys is reached (the last one scaled down), A/B tasks
placed on cores worst-fit decreasing (phase 1, simplified, without CE).

Mix: U_sys ∈ U[0.25, 3]·m, which gives feasible and infeasible instances;
``tight`` instances scale the Level-C tables by k·(1 ± δ), δ ∈ [1e-4, 1e-2],
around the feasibility boundary k found by bisection with the exact solver.
"""

from __future__ import annotations

import math
import random

from criticore.optimization.milp import solve_exact

S_CHOICES = (1.16, 2.95, 15.68)
CRITICALITY = {  # Table 3, category 1: percent of the workload per level A, B, C
    "C-Light": ((35, 45), (35, 45), (10, 30)),
    "C-Heavy": ((10, 30), (10, 30), (50, 70)),
    "All-Mod": ((28, 39), (28, 39), (28, 39)),
}
TASK_UTILIZATION = {  # Table 3, category 3
    "Light": ((0.001, 0.03), (0.001, 0.05), (0.001, 0.1)),
    "Medium": ((0.02, 0.1), (0.05, 0.2), (0.1, 0.4)),
    "Heavy": ((0.1, 0.2), (0.2, 0.4), (0.4, 0.6)),
}


def cost_factor(s: float, wss: int, w: int) -> float:
    if w >= wss:
        return 1.0
    r = math.log((s - 1.0) / 1e-6) / wss
    return (s - 1.0) * math.exp(-r * w) + 1.0


def _task(rng: random.Random, n: int, u: float) -> dict:
    wss = 0 if rng.random() < 0.2 else rng.randint(1, n) if n > 0 else 0
    return {"u": u, "s": rng.choice(S_CHOICES), "wss": wss}


def _draw_level(rng: random.Random, n: int, target: float, lo: float, hi: float) -> list[dict]:
    tasks, total = [], 0.0
    while total < target:
        u = min(rng.uniform(lo, hi), target - total)
        tasks.append(_task(rng, n, u))
        total += u
    return tasks


def instance(seed: int, m: int | None = None, n: int | None = None, tight: bool | None = None) -> dict:
    """One seeded instance (a WayProblem dict); m, n and tightness drawn unless given."""
    rng = random.Random(seed)
    m = rng.choice((1, 2, 3, 4, 4, 4)) if m is None else m
    n = rng.choice((4, 8, 12, 16, 16)) if n is None else n
    tight = rng.random() < 0.3 if tight is None else tight
    crit = CRITICALITY[rng.choice(sorted(CRITICALITY))]
    util = TASK_UTILIZATION[rng.choice(sorted(TASK_UTILIZATION))]
    shares = [rng.uniform(*r) for r in crit]
    shares = [x / sum(shares) for x in shares]
    u_sys = rng.uniform(0.25, 3.0) * m
    levels = [_draw_level(rng, n, shares[i] * u_sys, *util[i]) for i in range(3)]
    for t in levels[0] + levels[1]:
        t["c_factor"] = rng.uniform(0.5, 0.7)
    for t in levels[2]:
        t["c_factor"] = rng.uniform(0.2, 0.4)

    # Phase 1, simplified: worst-fit decreasing by u, Level A first, then B.
    load = [0.0] * m
    placed: list[list[tuple[str, dict]]] = [[] for _ in range(m)]
    for level, tasks in (("A", levels[0]), ("B", levels[1])):
        for t in sorted(tasks, key=lambda t: -t["u"]):
            p = min(range(m), key=lambda q: load[q])
            load[p] += t["u"]
            placed[p].append((level, t))

    cores = []
    for p in range(m):
        a_a, ab_b, ab_c = [], [], []
        for w in range(n + 1):
            ua = ub = uc = 0.0
            for level, t in placed[p]:
                pet_a = t["u"] * cost_factor(t["s"], t["wss"], w)
                if level == "A":
                    ua += pet_a
                ub += pet_a / 1.5
                uc += pet_a / 1.5 * t["c_factor"]
            a_a.append(ua)
            ab_b.append(ub)
            ab_c.append(uc)
        cores.append({"u_a_a": a_a, "u_ab_b": ab_b, "u_ab_c": ab_c})

    # Locked buffers of Level-C tasks.
    with_buffers = rng.random() >= 0.25
    order = []
    for i, t in enumerate(levels[2]):
        if with_buffers and rng.random() < 0.5:
            t["buffer"] = (rng.uniform(0.25, 2.0), rng.uniform(0.05, 0.3))
            order.append(i)
    rng.shuffle(order)
    start = {}
    acc = 0.0
    for i in order:
        start[i] = acc
        acc += levels[2][i]["buffer"][0]

    u_c, u_max, u_l = [], [], []
    for wc in range(n + 1):
        rows = ([], [], [])
        for wl in range(n + 1 - wc):
            utils = []
            for i, t in enumerate(levels[2]):
                u = t["u"] * cost_factor(t["s"], t["wss"], wc) / 1.5 * t["c_factor"]
                if "buffer" in t:
                    size, beta = t["buffer"]
                    covered = min(1.0, max(0.0, (wl - start[i]) / size))
                    u *= 1.0 - beta * covered
                utils.append(u)
            utils.sort(reverse=True)
            rows[0].append(math.fsum(utils))
            rows[1].append(utils[0] if utils else 0.0)
            rows[2].append(math.fsum(utils[: m - 1]))
        u_c.append(rows[0])
        u_max.append(rows[1])
        u_l.append(rows[2])
    problem = {"ways": n, "cores": cores, "level_c": {"u_c": u_c, "u_max": u_max, "u_l": u_l}}
    tightened = _tighten(problem, rng) if tight else None
    if tightened is not None:
        return {**tightened, "_kind": "tight"}
    return {**problem, "_kind": "random"}


def scaled(problem: dict, k: float) -> dict:
    """The problem with every Level-C table multiplied by k."""
    t = problem["level_c"]
    level_c = {key: [[k * v for v in row] for row in t[key]] for key in ("u_c", "u_max", "u_l")}
    return {"ways": problem["ways"], "cores": problem["cores"], "level_c": level_c}


def _feasible(problem: dict) -> bool:
    return solve_exact({k: v for k, v in problem.items() if not k.startswith("_")}) is not None


def _tighten(problem: dict, rng: random.Random) -> dict | None:
    """Level C scaled to just inside or just outside the feasibility boundary;
    None when Levels A/B fail on their own (nothing to tighten)."""
    if not _feasible(scaled(problem, 0.0)):
        return None
    lo, hi = 0.0, 1.0
    while _feasible(scaled(problem, hi)):
        lo, hi = hi, hi * 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _feasible(scaled(problem, mid)) else (lo, mid)
    delta = 10.0 ** rng.uniform(-4.0, -2.0)
    return scaled(problem, lo * (1.0 - delta if rng.random() < 0.5 else 1.0 + delta))


def strip(problem: dict) -> dict:
    """The WayProblem fields only (drops the generator's ``_kind`` tag)."""
    return {k: v for k, v in problem.items() if not k.startswith("_")}
