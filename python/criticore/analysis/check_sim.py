"""`criticore analyze FILE --check-sim`: each task's response-time bound from
the analysis beside the longest response the simulator observed on the same
file under the same scheduler (docs/analysis.md, "Checked against the
simulator")."""

from __future__ import annotations


def rows(analysis: dict, sim_report: dict) -> list[dict]:
    """One row per analyzed task: bound, simulated maximum over finished jobs,
    slack (bound − simulated), whether the bound held (None where either side
    has no value), and the simulated deadline misses."""
    simulated = {t["task"]: t for t in sim_report["per_task"]}
    out = []
    for t in analysis["tasks"]:
        s = simulated.get(t["task"])
        observed = s["max_response_ns"] if s and s["completed"] else None
        bound = t["bound_ns"]
        both = bound is not None and observed is not None
        out.append(
            {
                "task": t["task"],
                "bound_ns": bound,
                "simulated_max_ns": observed,
                "slack_ns": bound - observed if both else None,
                "holds": observed <= bound if both else None,
                "simulated_misses": s["deadline_misses"] if s else None,
            }
        )
    return out


def chain_rows(analysis: dict, sim_report: dict) -> list[dict]:
    """One row per cause-effect chain: the bounds on its reaction time and
    data age beside the largest the simulation measured, and whether both
    held (None where a side has no value)."""
    simulated = {c["chain"]: c for c in sim_report.get("chains", [])}
    out = []
    for c in analysis.get("chains", []):
        s = simulated.get(c["name"], {})
        row = {"chain": c["name"]}
        holds = []
        for kind, observed in (("reaction", s.get("max_reaction_ns")), ("data_age", s.get("max_data_age_ns"))):
            bound = c[f"{kind}_ns"]
            row[f"{kind}_bound_ns"] = bound
            row[f"{kind}_simulated_max_ns"] = observed
            if bound is not None and observed is not None:
                holds.append(observed <= bound)
        row["holds"] = all(holds) if holds else None
        out.append(row)
    return out


def violated(check: list[dict], chains: list[dict] = ()) -> list[str]:
    """Tasks whose simulated response exceeded their bound, and chains whose
    simulated reaction time or data age exceeded theirs."""
    return [r["task"] for r in check if r["holds"] is False] + [c["chain"] for c in chains if c["holds"] is False]
