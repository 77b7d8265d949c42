"""Pure-Python second method for the classic tests (issue 12): written from
the papers' formulas (docs/analysis.md), not from the Rust code, and used by
the equality test in test_analyze_classic.py and as the peer of
benches/classic_analysis.py.

Systems are dicts: {"cores": m, "tasks": [{"name", "pet", "period", "deadline",
"core" | None, "server" | None, "priority" | None, "offset" (optional, 0)}], "servers": [{"name",
"core", "kind", "period", "budget", "priority"}]}, all times in ns.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction


def rank_order(tasks: list[dict], idx: list[int]) -> list[int]:
    """Most important first: explicit priority (higher first), then shorter period, then file order."""
    return sorted(idx, key=lambda i: (-(tasks[i]["priority"]) if tasks[i]["priority"] is not None else math.inf, tasks[i]["period"], i))


def sbf_inverse(x: int, supply: tuple | None, from_start: bool = False) -> int:
    """Least window length that surely supplies x; None = a dedicated core;
    (P, Q, R): Q within R of each period's start; ("blocks", P, {K: G_K},
    (C, R) or None): G_K in any K consecutive periods, and C within R of each
    period's start where known (whichever serves x sooner). `from_start`:
    the window opens at a start of the server's period."""
    if supply is None or x == 0:
        return x
    if supply[0] == "blocks":
        _, p, blocks, per_period = supply
        # A window holds n whole periods once it is (n + 1)·P long, at worst;
        # n·P from a period's start.
        by_blocks = (min(k * -(-x // g) for k, g in blocks.items()) + (0 if from_start else 1)) * p
        return by_blocks if per_period is None else min(by_blocks, sbf_inverse(x, (p, *per_period), from_start))
    p, q, r = supply
    # Walk the worst-case pattern: blackout (none from a period's start: the
    # first Q ends by R), then Q every P.
    t = (r - q) if from_start else (p - q) + (r - q)
    while x > q:
        t += p
        x -= q
    return t + x


def fp_response(c: int, t: int, hp: list[tuple[int, int]], supply=None, from_start: bool = False) -> int | None:
    """Busy-period response time of (c, t) below hp (Lehoczky 1990), over a
    supply (from one of its periods' starts where every release is on one)."""
    if supply is None:
        rate = Fraction(1)
    elif supply[0] == "blocks":
        rate = max([Fraction(g, k * supply[1]) for k, g in supply[2].items()] + [Fraction(supply[3][0] if supply[3] else 0, supply[1])])
    else:
        rate = Fraction(supply[1], supply[0])
    if Fraction(c, t) + sum(Fraction(hc, ht) for hc, ht in hp) > rate:
        return None
    worst, q = 0, 0
    while q < 10_000_000:
        w = sbf_inverse((q + 1) * c + sum(hc for hc, _ in hp), supply, from_start)
        while True:
            nxt = sbf_inverse((q + 1) * c + sum(-(-w // ht) * hc for hc, ht in hp), supply, from_start)
            if nxt == w:
                break
            w = nxt
        worst = max(worst, w - q * t)
        if w <= (q + 1) * t:
            return worst
        q += 1
    return None


def edf_ok(tasks: list[tuple[int, int, int]]) -> bool:
    """Processor demand test over the synchronous busy period."""
    if not tasks:
        return True
    if sum(Fraction(c, t) for c, t, _ in tasks) > 1:
        return False
    length = sum(c for c, _, _ in tasks)
    while True:
        nxt = sum(-(-length // t) * c for c, t, _ in tasks)
        if nxt == length:
            break
        length = nxt
    points = sorted({d + k * t for c, t, d in tasks for k in range(0, max(0, (length - d) // t) + 1) if d + k * t <= length})
    return all(sum(((p - d) // t + 1) * c for c, t, d in tasks if p >= d) <= p for p in points)


def gfp_bounds(tasks: list[tuple[int, int, int]], m: int) -> list[int | None]:
    """Bertogna & Cirinei: the paper's iteration R <- f(R) from C, to its least fixed point."""
    out: list[int | None] = []
    for k, (c, t, d) in enumerate(tasks):
        if any(b is None for b in out) or d > t or c > d:
            out.append(None)
            continue

        def f(r: int) -> int:
            total = 0
            for (hc, ht, _), hr in zip(tasks[:k], out):
                span = r + hr - hc
                n = span // ht
                total += min(n * hc + min(hc, span - n * ht), r - c + 1)
            return c + total // m

        def work(r: int) -> list[int]:
            res = []
            for (hc, ht, _), hr in zip(tasks[:k], out):
                span = r + hr - hc
                n = span // ht
                res.append(n * hc + min(hc, span - n * ht))
            return res

        r, bound = c, None
        while True:
            nxt = f(r)
            if nxt <= r:
                bound = r
                break
            if nxt > d:
                break
            # Kleene's step can crawl 1 ns at a time while the caps R − C + 1 bind.
            # W_i never falls, so for R ≥ r, f(R) ≥ C + ⌊Σ min(W_i(r), R − C + 1)/m⌋ =: g(R);
            # with x = R − C + 1, g(R) > R ⟺ Σ min(a_i, x) ≥ m·x, a concave-minus-linear
            # test that holds at r and fails from some x on: bisect for that x and skip
            # there, as no R before it can have f(R) ≤ R.
            a = work(r)
            lo, hi = r - c + 1, sum(a) // m + 1
            while lo < hi:
                mid = (lo + hi) // 2
                if sum(min(ai, mid) for ai in a) >= m * mid:
                    lo = mid + 1
                else:
                    hi = mid
            r = max(nxt, lo + c - 1)
            if r > d:
                break
        out.append(bound)
    return out


def most_work(q: int, p: int, length: int, r: int | None = None) -> int:
    """The most a server of q per period p runs in any window of `length`:
    each period's q placed anywhere in its first r (its response, at most
    p), so each period gives the window min(q, the part of [jp, jp + r) it
    covers); only the first and last periods' parts move with the window's
    start x, so the maximum is at a start where one of them crosses q or an
    end of that span."""
    r = p if r is None else min(max(r, q), p)

    def at(x: int) -> int:
        total, start, end = 0, x, x + length
        j = 0
        while j * p < end:
            total += min(q, max(0, min(end, j * p + r) - max(start, j * p)))
            j += 1
        return total
    return max(at(x % p) for x in (0, r - q, r, -length, r - q - length, r - length, q - length))


def on_grid(q: int, p: int, hp: list[tuple[int, int]]) -> dict[int, int] | None:
    """Per K = 1..16, the least a server gets in K consecutive periods when
    every server starts at 0 and those above (each sure of its budget in its
    period) run their whole budgets: period j gets min(q, the idle time of
    that schedule in it). The schedule's work done by t is Reich's
    min over s ≤ t of (work released before s) + (t − s), s = 0 or a release.
    None past 4,096 periods or 100,000 jobs above in the hyperperiod."""
    h = p
    for _, ph in hp:
        h = h * ph // math.gcd(h, ph)
        if h // p > 4096:
            return None
    if sum(h // ph for _, ph in hp) > 100_000:
        return None
    releases = sorted({m * ph for _, ph in hp for m in range(h // ph)})

    def done(t: int) -> int:
        return min(sum(-(-s // ph) * qh for qh, ph in hp) + t - s for s in [r for r in releases if r <= t] + [t])

    n = h // p
    got = [min(q, p - (done((j + 1) * p) - done(j * p))) for j in range(n)]
    return {k: min(sum(got[(j + i) % n] for i in range(k)) for j in range(n)) for k in range(1, 17)}


def partly_sure(q: int, p: int, hp: list[tuple[int, int]], spans: list[int], grid: dict[int, int] | None = None) -> tuple | None:
    """A server whose budget q is not sure within its period p below hp: per
    period, the largest C with C + Σ⌈t/P_h⌉Q_h ≤ t at some t ≤ p (Lehoczky's
    points: the multiples of each P_h up to p, and p), within its response;
    per K = 1..16 periods, what the K·p window leaves after the most the
    servers above can run there, taken q at most per period. The per-period
    one where its share is the best, else the blocks with it beside them."""
    points = {p} | {m * ph for _, ph in hp for m in range(1, p // ph + 1)}
    c = min(q, max(t - sum(-(-t // ph) * qh for qh, ph in hp) for t in points))
    blocks = {}
    for k in range(1, 17):
        left = k * p - sum(most_work(qh, ph, k * p, rh) for (qh, ph), rh in zip(hp, spans))
        # The least Σ min(q, x_j) over k periods with Σ x_j ≥ left, x_j ≤ p.
        g = (left // p) * q + min(q, left % p) if left > 0 else 0
        g = max(g, grid[k]) if grid else g
        if g > 0:
            blocks[k] = g
    best = max((Fraction(g, k) for k, g in blocks.items()), default=Fraction(0))
    if c > 0 and c >= best:
        return (p, c, fp_response(c, p, hp))
    if blocks:
        if c > 0:
            blocks[1] = max(blocks.get(1, 0), c)
        return ("blocks", p, blocks, (c, fp_response(c, p, hp)) if c > 0 else None)
    return None


def analyze(system: dict, scheduler: str) -> dict[str, int | None]:
    """Bound per task name under pfp, pedf, gfp or servers (periodic)."""
    tasks = system["tasks"]
    bounds: dict[str, int | None] = {}
    if scheduler in ("pfp", "pedf"):
        for core in range(system["cores"]):
            idx = [i for i, x in enumerate(tasks) if x["core"] == core]
            if scheduler == "pedf":
                ok = edf_ok([(tasks[i]["pet"], tasks[i]["period"], tasks[i]["deadline"]) for i in idx])
                bounds.update({tasks[i]["name"]: tasks[i]["deadline"] if ok else None for i in idx})
                continue
            order = rank_order(tasks, idx)
            for k, i in enumerate(order):
                hp = [(tasks[j]["pet"], tasks[j]["period"]) for j in order[:k]]
                bounds[tasks[i]["name"]] = fp_response(tasks[i]["pet"], tasks[i]["period"], hp)
    elif scheduler == "gfp":
        order = rank_order(tasks, list(range(len(tasks))))
        b = gfp_bounds([(tasks[i]["pet"], tasks[i]["period"], tasks[i]["deadline"]) for i in order], system["cores"])
        bounds = {tasks[i]["name"]: v for i, v in zip(order, b)}
    elif scheduler == "servers":
        servers = system["servers"]
        supplies: dict[int, tuple | None] = {}
        for core in range(system["cores"]):
            on = sorted((s for s, v in enumerate(servers) if v["core"] == core), key=lambda s: (-servers[s]["priority"], s))
            spans: dict[int, int] = {}
            for k, s in enumerate(on):
                q, p = servers[s]["budget"], servers[s]["period"]
                hp = [(servers[h]["budget"], servers[h]["period"]) for h in on[:k]]
                r = fp_response(q, p, hp)
                # A server serves its budget within its response where that is
                # at most its period, else anywhere in its period.
                spans[s] = r if r is not None and r <= p else p
                # All servers start at 0: below servers sure of their budgets, its periods' share is known.
                sure_above = all(isinstance(supplies[h], tuple) and supplies[h][0] != "blocks" and supplies[h][1] == servers[h]["budget"] for h in on[:k])
                grid = on_grid(q, p, hp) if sure_above else None
                supplies[s] = (p, q, r) if r is not None and r <= p else partly_sure(q, p, hp, [spans[h] for h in on[:k]], grid)
        for s, sv in enumerate(servers):
            idx = [i for i, x in enumerate(tasks) if x["server"] == sv["name"]]
            order = rank_order(tasks, idx)
            for k, i in enumerate(order):
                if supplies[s] is None:
                    bounds[tasks[i]["name"]] = None
                    continue
                hp = [(tasks[j]["pet"], tasks[j]["period"]) for j in order[:k]]
                # Every release of it and of the tasks above it at a start of
                # the server's period (all start at 0): its windows open at one.
                on_starts = all(tasks[j]["period"] % sv["period"] == 0 and tasks[j].get("offset", 0) % sv["period"] == 0 for j in order[: k + 1])
                bounds[tasks[i]["name"]] = fp_response(tasks[i]["pet"], tasks[i]["period"], hp, supplies[s], on_starts)
    else:
        raise ValueError(scheduler)
    return bounds


MS = 1_000_000
PERIODS = [10 * MS, 20 * MS, 25 * MS, 40 * MS, 50 * MS, 100 * MS, 200 * MS]


def uunifast(rng: random.Random, n: int, total: float) -> list[float]:
    out, s = [], total
    for i in range(1, n):
        nxt = s * rng.random() ** (1 / (n - i))
        out.append(s - nxt)
        s = nxt
    return out + [s]


def random_system(rng: random.Random, scheduler: str) -> dict:
    """A random system for `scheduler` (the distributions of analysis_soundness.rs)."""
    def task(name, u, period, **place):
        pet = min(max(int(u * period), 10_000), period)
        deadline = pet + int(rng.random() * (period - pet)) if rng.random() < 0.5 else period
        prio = rng.randint(1, 99) if rng.random() < 0.3 else None
        return {"name": name, "pet": pet, "period": period, "deadline": deadline, "priority": prio, "core": None, "server": None, **place}

    if scheduler in ("pfp", "pedf"):
        tasks = []
        for core in range(2):
            for k, u in enumerate(uunifast(rng, rng.randint(1, 5), 0.2 + 0.85 * rng.random())):
                tasks.append(task(f"c{core}t{k}", u, rng.choice(PERIODS), core=core))
        return {"cores": 2, "tasks": tasks, "servers": []}
    if scheduler == "gfp":
        m = rng.choice([2, 4])
        us = uunifast(rng, rng.randint(m + 1, 3 * m), m * (0.2 + 0.8 * rng.random()))
        return {"cores": m, "tasks": [task(f"t{k}", min(u, 1.0), rng.choice(PERIODS)) for k, u in enumerate(us)], "servers": []}
    servers, tasks = [], []
    for core in range(2):
        for u in uunifast(rng, rng.randint(1, 3), 0.3 + 0.7 * rng.random()):
            period = rng.choice([5, 10, 20, 25]) * MS
            budget = min(max(int(u * period), 100_000), period)
            name = f"s{len(servers)}"
            servers.append({"name": name, "core": core, "kind": "periodic", "period": period, "budget": budget, "priority": rng.randint(1, 5)})
            for j, tu in enumerate(uunifast(rng, rng.randint(1, 3), budget / period * (0.1 + 0.8 * rng.random()))):
                t = task(f"{name}t{j}", tu, rng.choice([40, 50, 100, 200]) * MS, server=name)
                # One in four first released later: at a start of its server's period, or anywhere.
                if rng.random() < 0.25:
                    t["offset"] = rng.randrange(t["period"] // period) * period if rng.random() < 0.5 else rng.randrange(t["period"])
                tasks.append(t)
    return {"cores": 2, "tasks": tasks, "servers": servers}


def to_toml(system: dict) -> str:
    lines = [f"[platform]\ncores = {system['cores']}"]
    for s in system["servers"]:
        lines.append(
            f'[[server]]\nname = "{s["name"]}"\ncore = {s["core"]}\nkind = "{s["kind"]}"\npriority = {s["priority"]}\n'
            f'period = "{s["period"]}ns"\nbudget = "{s["budget"]}ns"'
        )
    for t in system["tasks"]:
        text = f'[[task]]\nname = "{t["name"]}"\nperiod = "{t["period"]}ns"\ndeadline = "{t["deadline"]}ns"\npet = "{t["pet"]}ns"'
        if t["core"] is not None:
            text += f"\ncore = {t['core']}"
        if t["server"] is not None:
            text += f'\nserver = "{t["server"]}"'
        if t["priority"] is not None:
            text += f"\npriority = {t['priority']}"
        if t.get("offset"):
            text += f'\noffset = "{t["offset"]}ns"'
        lines.append(text)
    return "\n".join(lines) + "\n"
