"""`criticore analyze --explain TASK`: one task's bound split into its terms
(`analysis::classic::BoundTerms`: the demand in the window that ends with the
task's worst job)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from criticore.errors import InputError
from criticore.render import rule, table
from criticore.units import duration_text

#: The terms in the order they are printed, with what each is.
TERMS = [
    ("own_pet_ns", "its own PETs"),
    ("own_interference_ns", "memory interference on them (their LLC share, fluid model)"),
    ("own_cold_ns", "cold starts (its lines evicted between its jobs)"),
    ("higher_pet_ns", "higher-priority PETs"),
    ("higher_interference_ns", "higher-priority memory interference and cold starts"),
    ("higher_share_ns", "higher-priority work shared among the cores (global FP)"),
    ("contention_ns", "bus waits and row conflicts of all those jobs (in a server: what co-runners add)"),
    ("access_ns", "their label accesses at their paths' latency (crossbar)"),
    ("port_wait_ns", "their waits at the memories' ports (crossbar)"),
    ("reload_ns", "preemption reloads"),
    ("regulation_ns", "budget stalls and the monitor's suspensions"),
    ("blocking_ns", "blocking by lower-priority work"),
    ("supply_wait_ns", "time its server (or MC²'s Level-A table) does not give it"),
]


def explanation(file: str, report: dict, task: str) -> dict:
    """The row of `task` with its terms, as `--json` adds it; InputError if
    the task is not in the report or the analysis gives no bounds to split."""
    row = next((r for r in report["tasks"] if r["task"] == task), None)
    if row is None:
        names = ", ".join(r["task"] for r in report["tasks"])
        reason = f'no task named "{task}" (tasks: {names})'
        raise InputError(f"{file}: --explain: {reason}", file, "--explain", reason)
    out = {k: row[k] for k in ("task", "on", "pet_ns", "deadline_ns", "bound_ns", "schedulable", "note")}
    out["terms"] = row.get("terms")
    if out["terms"] is not None:
        t = out["terms"]
        # The largest term besides the task's own PETs: what to look at first.
        rest = [(t[k], k) for k, _ in TERMS if k != "own_pet_ns" and t[k] > 0]
        out["largest_term"] = max(rest)[1] if rest else None
    return out


def render_explain(console: Console, file: str, report: dict, e: dict) -> None:
    rule(console, f"[bold]{escape(file)}[/] — {report['scheduler']}: {escape(e['task'])} on {escape(e['on'])}")
    if e["terms"] is None and e["bound_ns"] is not None:
        # A bound whose test does not split it yet (docs/analysis.md, "What a bound is made of").
        verdict = "within" if e["schedulable"] else "past"
        console.print(f"  bound {duration_text(e['bound_ns'])}, {verdict} its deadline {duration_text(e['deadline_ns'])}")
        console.print(f"  the {report['scheduler']} test does not split its bounds into terms yet")
        if e["note"]:
            console.print(f"  note: {escape(e['note'])}")
        return
    if e["terms"] is None:
        why = e["note"] or f"the {report['scheduler']} test gives a verdict, not a response split into terms"
        console.print(f"  no bound to split: {escape(why)}")
        return
    t = e["terms"]
    window = sum(t[k] for k, _ in TERMS)
    tab = table(f"What the bound is made of: the window that ends with its worst job ({t['jobs']} of its jobs)")
    tab.add_column("term")
    tab.add_column("time", justify="right")
    tab.add_column("share", justify="right")
    for key, label in TERMS:
        # Higher-priority PETs shown even when 0, but not under global FP
        # (its share of their work stands in their place).
        if t[key] or key == "own_pet_ns" or (key == "higher_pet_ns" and not t["higher_share_ns"]):
            tab.add_row(Text(label), duration_text(t[key]), f"{t[key] / window:.1%}" if window else "—")
    tab.add_row(Text("window"), duration_text(window), "")
    if t["earlier_releases_ns"]:
        tab.add_row(Text("− its worst job's release in the window"), duration_text(t["earlier_releases_ns"]), "")
    tab.add_row(Text("= bound"), duration_text(e["bound_ns"]), "")
    console.print(tab)
    verdict = "within" if e["schedulable"] else "past"
    console.print(f"  bound {duration_text(e['bound_ns'])}, {verdict} its deadline {duration_text(e['deadline_ns'])}")
    if e.get("largest_term"):
        label = dict(TERMS)[e["largest_term"]]
        console.print(f"  largest term besides its own PETs: {label}, {duration_text(t[e['largest_term']])}")
    if e["note"]:
        console.print(f"  note: {escape(e['note'])}")
