"""Phase 3 of the optimizer (LLC ways) as a MILP solved by HiGHS: the reference
for the exact Rust solver (``criticore._core.solve_llc_ways``).

The problem (docs/optimizer.md; Rust: crates/criticore/src/optimize/llc_ways.rs)
is given as a dict with the ``WayProblem`` JSON shape::

    {"ways": N,
     "cores": [{"u_a_a": [N+1 floats], "u_ab_b": [...], "u_ab_c": [...]}, ...],
     "level_c": {"u_c": [[...] per w_c], "u_max": [[...]], "u_l": [[...]]}}

Level-C tables are indexed ``[w_c][w_lock]``; row w_c needs N − w_c + 1 entries.
The answer is ``{"per_core": [W_p], "level_c": W_C, "lock": W_lock,
"objective": float}`` or ``None`` when no allocation passes every level.

Formulation ("multiple choice": one binary per table entry). It is exact for
any tables, convex or not, so it needs neither the chord linearization of the
MC² code base nor convex costs, and the Level-C tables may depend jointly on
(W_C, W_lock):

- x[p, w] ∈ {0, 1} for core p and w = 0..N, Σ_w x[p, w] = 1 (W_p = Σ_w w·x[p, w]);
- y[c, l] ∈ {0, 1} for c + l ≤ N, Σ y[c, l] = 1 ((W_C, W_lock) = the chosen pair);
- ways: Σ_p Σ_w w·x[p, w] + Σ (c + l)·y[c, l] ≤ N;
- Levels A and B, per core: x[p, w] is fixed to 0 (upper bound 0) where
  u_a_a[p][w] > 1 + ε or u_ab_b[p][w] > 1 + ε. This is the row
  Σ_w u_a_a[p][w]·x[p, w] ≤ 1 + ε (and the same for u_ab_b) decided up front,
  which keeps HiGHS's tolerances out of the per-core tests;
- Level C, with S = Σ_p Σ_w (1 − u_ab_c[p][w])·x[p, w] (= Σ_p û_p):
  capacity   S − Σ u_c[c][l]·y[c, l] ≥ −ε + μ,
  tardiness  S − Σ r[c, l]·y[c, l] ≥ ε + μ, r = (m−1)·u_max + u_l, except that a
  pair with u_max = 0 (no Level-C task; the analysis waives the condition)
  gets r = (a lower bound on S) − 1 so that its row never binds;
- objective: minimize Σ_p Σ_w u_ab_c[p][w]·x[p, w] + Σ u_c[c][l]·y[c, l].

ε = 1e-12 is the engine's UTILIZATION_EPS. HiGHS accepts a row violated by up
to its feasibility tolerance τ (set to 1e-9 here, with zero optimality gaps:
the defaults allow a relative gap of 1e-4). The Level-C rows are therefore
moved inward by μ = 2τ: every allocation HiGHS accepts passes the exact test
(also the strict ``> ε``, which a MILP cannot state), and the reference only
differs from the exact semantics on allocations whose Level-C slack lies
within about μ above its threshold, where it may reject what the exact test
accepts (e.g. S = U_C exactly). :func:`slacks` lets a caller check that an
instance keeps clear of that band.

The answer's allocation is read off the binaries and its objective recomputed
from the tables in the engine's canonical order (see :func:`evaluate`), so it
can be compared with the exact solver to the last bit when both return the
same allocation; ``milp_objective`` keeps HiGHS's own value.
"""

from __future__ import annotations

import json

import highspy
import numpy as np

import criticore._core as _core

#: The engine's tolerance for utilization comparisons (analysis::UTILIZATION_EPS).
EPS = 1e-12
#: Objectives within this of the optimum are ties (llc_ways::TIE_EPS).
TIE_EPS = EPS
#: HiGHS's primal and MIP feasibility tolerance τ as set by :func:`run_model`.
HIGHS_TOLERANCE = 1e-9
#: How far the Level-C rows are moved inward (μ = 2τ).
MARGIN = 2 * HIGHS_TOLERANCE


def _cost(core: dict, w: int) -> float:
    """cost_p(w): u_ab_c if the core passes Levels A and B with w ways, else inf."""
    if core["u_a_a"][w] <= 1.0 + EPS and core["u_ab_b"][w] <= 1.0 + EPS:
        return float(core["u_ab_c"][w])
    return float("inf")


def slacks(problem: dict, per_core: list[int], level_c: int, lock: int) -> tuple[float, float] | None:
    """Level-C slacks of an allocation that fits in N ways and passes Levels A
    and B: (S − U_C + ε, S − (m−1)·u_max − U_L − ε), the second +inf when
    u_max = 0. The allocation passes Level C iff the first is ≥ 0 and the
    second > 0. None if it does not fit or a core fails Level A or B.

    The same floating-point order as the Rust solver:
    C_AB = cost_0 + (cost_1 + (… + (cost_{m−1} + 0.0))), S = m − C_AB.
    """
    n = problem["ways"]
    cores = problem["cores"]
    m = len(cores)
    if len(per_core) != m or min([level_c, lock, *per_core]) < 0 or sum(per_core) + level_c + lock > n:
        return None
    c_ab = _c_ab(cores, per_core)
    if c_ab == float("inf"):
        return None
    t = problem["level_c"]
    u_c, u_max, u_l = (float(t[k][level_c][lock]) for k in ("u_c", "u_max", "u_l"))
    supply = m - c_ab
    capacity = supply - (u_c - EPS)
    tardiness = float("inf") if u_max == 0.0 else supply - (m - 1) * u_max - u_l - EPS
    return capacity, tardiness


def _c_ab(cores: list[dict], per_core: list[int]) -> float:
    c_ab = 0.0
    for p in reversed(range(len(cores))):
        c_ab = _cost(cores[p], per_core[p]) + c_ab
    return c_ab


def evaluate(problem: dict, per_core: list[int], level_c: int, lock: int) -> float | None:
    """Objective of an allocation if every level passes, else None.

    The same semantics and floating-point order as the Rust solver: with
    C_AB = cost_0 + (cost_1 + (… + (cost_{m−1} + 0.0))) and S = m − C_AB,
    Level C passes iff S ≥ U_C − ε and (u_max = 0 or S − (m−1)·u_max − U_L > ε);
    objective = C_AB + u_c[W_C][W_lock].
    """
    slack = slacks(problem, per_core, level_c, lock)
    if slack is None or not (slack[0] >= 0.0 and slack[1] > 0.0):
        return None
    return _c_ab(problem["cores"], per_core) + float(problem["level_c"]["u_c"][level_c][lock])


def solve_exact(problem: dict) -> dict | None:
    """The exact Rust solver (``criticore._core.solve_llc_ways``) on a problem dict
    (handed over as Python objects: no JSON text, floats bit for bit)."""
    out = _core.solve_llc_ways(problem)
    return None if out is None else json.loads(out)


def build_model(problem: dict) -> tuple[highspy.HighsLp, list[tuple[int, int]]]:
    """The MILP as a HighsLp, and the (W_C, W_lock) pair of each y column."""
    n = problem["ways"]
    cores = problem["cores"]
    m = len(cores)
    t = problem["level_c"]
    pairs = [(c, l) for c in range(n + 1) for l in range(n + 1 - c)]
    # Rows: m assignment rows, the pair row, the ways row, capacity, tardiness.
    r_pair, r_ways, r_cap, r_tard = m, m + 1, m + 2, m + 3
    num_row = m + 4
    lower = np.full(num_row, -highspy.kHighsInf)
    upper = np.full(num_row, highspy.kHighsInf)
    lower[: m + 1] = upper[: m + 1] = 1.0
    upper[r_ways] = n
    lower[r_cap] = -EPS + MARGIN
    lower[r_tard] = EPS + MARGIN

    costs, col_upper, starts, index, value = [], [], [], [], []

    def column(cost: float, entries: list[tuple[int, float]], allowed: bool = True) -> None:
        starts.append(len(index))
        costs.append(cost)
        col_upper.append(1.0 if allowed else 0.0)
        for row, v in entries:
            if v != 0.0:
                index.append(row)
                value.append(v)

    supply_floor = 0.0  # a lower bound on S over all x
    for p, core in enumerate(cores):
        supply_floor += 1.0 - max(core["u_ab_c"])
        for w in range(n + 1):
            c = float(core["u_ab_c"][w])
            passes_a_b = core["u_a_a"][w] <= 1.0 + EPS and core["u_ab_b"][w] <= 1.0 + EPS
            column(c, [(p, 1.0), (r_ways, float(w)), (r_cap, 1.0 - c), (r_tard, 1.0 - c)], passes_a_b)
    for c, l in pairs:
        u_c, u_max, u_l = (float(t[k][c][l]) for k in ("u_c", "u_max", "u_l"))
        r = (m - 1) * u_max + u_l if u_max != 0.0 else supply_floor - 1.0
        column(u_c, [(r_pair, 1.0), (r_ways, float(c + l)), (r_cap, -u_c), (r_tard, -r)])

    lp = highspy.HighsLp()
    lp.num_col_ = len(costs)
    lp.num_row_ = num_row
    lp.col_cost_ = np.array(costs)
    lp.col_lower_ = np.zeros(len(costs))
    lp.col_upper_ = np.array(col_upper)
    lp.row_lower_ = lower
    lp.row_upper_ = upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.array(starts + [len(index)], dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * len(costs)
    return lp, pairs


def run_model(lp: highspy.HighsLp) -> tuple[np.ndarray, float] | None:
    """Solve a built model with HiGHS: (column values, HiGHS objective), or None
    if HiGHS proves it infeasible."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.0)
    h.setOptionValue("primal_feasibility_tolerance", HIGHS_TOLERANCE)
    h.setOptionValue("mip_feasibility_tolerance", HIGHS_TOLERANCE)
    h.setOptionValue("small_matrix_value", 1e-12)
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS: {h.modelStatusToString(status)}")
    return np.asarray(h.getSolution().col_value), h.getInfo().objective_function_value


def solve_milp(problem: dict) -> dict | None:
    """Solve the MILP with HiGHS; the allocation, or None if HiGHS proves infeasibility."""
    n = problem["ways"]
    m = len(problem["cores"])
    lp, pairs = build_model(problem)
    solved = run_model(lp)
    if solved is None:
        return None
    x, milp_objective = solved
    per_core = [int(np.argmax(x[p * (n + 1) : (p + 1) * (n + 1)])) for p in range(m)]
    level_c, lock = pairs[int(np.argmax(x[m * (n + 1) :]))]
    return {
        "per_core": per_core,
        "level_c": level_c,
        "lock": lock,
        # Recomputed from the tables; None only if HiGHS accepted, within its
        # tolerances, an allocation that the exact test rejects (the tests check
        # that this does not happen on their instances).
        "objective": evaluate(problem, per_core, level_c, lock),
        "milp_objective": milp_objective,
    }
