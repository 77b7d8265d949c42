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


def violated(check: list[dict]) -> list[str]:
    """Tasks whose simulated response exceeded their bound."""
    return [r["task"] for r in check if r["holds"] is False]
