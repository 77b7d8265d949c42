"""`criticore analyze --explain TASK`: one task's bound split into its terms
(`analysis::classic::BoundTerms`: under fixed priority the demand in the
window that ends with the task's worst job; under EDF its deadline, plus the
tardiness bound's terms), and under EDF the long-run demand the test weighs
(`analysis::classic::Load`)."""

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
    ("deadline_ns", "its deadline"),
    ("tardiness_ns", "the tardiness bound's x"),
]

#: The kinds of an EDF test's long-run demand (`Load`), in shares of a core.
LOAD = [
    ("pet", "PETs"),
    ("cold", "cold starts"),
    ("interference", "memory interference and contention (fluid model)"),
    ("reload", "preemption reloads"),
    ("regulation", "MemGuard's budget stalls"),
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
        # The largest term besides the task's own PETs: what to look at first
        # (none under EDF, whose bound is its deadline, not a demand).
        rest = [(t[k], k) for k, _ in TERMS if k != "own_pet_ns" and t[k] > 0]
        out["largest_term"] = max(rest)[1] if rest and not t["deadline_ns"] else None
    # Under EDF the test weighs its core's (or the cores') load: the group of
    # its row, or the one group of a global test.
    groups = report.get("groups", [])
    group = next((g for g in groups if g["name"] == row["on"]), groups[0] if len(groups) == 1 else None)
    if group is not None and group.get("load") is not None:
        load = group["load"]
        out["load"] = {"of": group["name"], **load, "total": sum(load[k] for k, _ in LOAD)}
        rest = [(load[k], k) for k, _ in LOAD if k != "pet" and load[k] > 0]
        out["largest_load"] = max(rest)[1] if rest else None
    return out


def render_explain(console: Console, file: str, report: dict, e: dict) -> None:
    rule(console, f"[bold]{escape(file)}[/] — {report['scheduler']}: {escape(e['task'])} on {escape(e['on'])}")
    if e["terms"] is None and e["bound_ns"] is not None:
        # A bound whose test does not split it (docs/analysis.md, "What a bound is made of").
        verdict = "within" if e["schedulable"] else "past"
        console.print(f"  bound {duration_text(e['bound_ns'])}, {verdict} its deadline {duration_text(e['deadline_ns'])}")
        console.print(f"  the {report['scheduler']} test does not split this bound into terms")
        if e["note"]:
            console.print(f"  note: {escape(e['note'])}")
        render_load(console, e)
        return
    if e["terms"] is None:
        why = e["note"] or f"the {report['scheduler']} test gives a verdict, not a response split into terms"
        console.print(f"  no bound to split: {escape(why)}")
        render_load(console, e)
        return
    t = e["terms"]
    window = sum(t[k] for k, _ in TERMS)
    if t["tardiness_ns"]:
        title = "What the bound is made of: deadline + x + its cost"
    elif t["deadline_ns"]:
        title = "What the bound is made of: its deadline"
    else:
        title = f"What the bound is made of: the window that ends with its worst job ({t['jobs']} of its jobs)"
    console.print(title)
    tab = table()
    tab.add_column("term")
    tab.add_column("time", justify="right")
    tab.add_column("share", justify="right")
    # Under EDF its bound is its deadline (and tardiness): no zero rows.
    edf = bool(t["deadline_ns"])
    for key, label in TERMS:
        # Higher-priority PETs shown even when 0, but not under global FP
        # (its share of their work stands in their place).
        if t[key] or (not edf and (key == "own_pet_ns" or (key == "higher_pet_ns" and not t["higher_share_ns"]))):
            tab.add_row(Text(label), duration_text(t[key]), f"{t[key] / window:.1%}" if window else "—")
    if not edf:
        tab.add_row(Text("window"), duration_text(window), "")
    if t["earlier_releases_ns"]:
        tab.add_row(Text("− its worst job's release in the window"), duration_text(t["earlier_releases_ns"]), "")
    tab.add_row(Text("= bound"), duration_text(e["bound_ns"]), "")
    console.print(tab)
    if t["tardiness_ns"]:
        late = duration_text(e["bound_ns"] - t["deadline_ns"])
        console.print(f"  bound {duration_text(e['bound_ns'])}: its deadline + a tardiness of at most x + its cost, {late} (Devi & Anderson)")
    elif edf:
        console.print(f"  bound {duration_text(e['bound_ns'])}: its deadline, which EDF meets since the test passes")
    else:
        verdict = "within" if e["schedulable"] else "past"
        console.print(f"  bound {duration_text(e['bound_ns'])}, {verdict} its deadline {duration_text(e['deadline_ns'])}")
    if e.get("largest_term"):
        label = dict(TERMS)[e["largest_term"]]
        console.print(f"  largest term besides its own PETs: {label}, {duration_text(t[e['largest_term']])}")
    if e["note"]:
        console.print(f"  note: {escape(e['note'])}")
    render_load(console, e)


def render_load(console: Console, e: dict) -> None:
    """Under EDF: the long-run demand its test weighs, by kind."""
    load = e.get("load")
    if load is None:
        return
    console.print(f"What the EDF test weighs: the long-run demand on {escape(load['of'])}, in cores")
    tab = table()
    tab.add_column("kind")
    tab.add_column("share", justify="right")
    for key, label in LOAD:
        if load[key] or key == "pet":
            tab.add_row(Text(label), f"{load[key]:.4f}")
    tab.add_row(Text("= total"), f"{load['total']:.4f}")
    console.print(tab)
    if e.get("largest_load"):
        label = dict(LOAD)[e["largest_load"]]
        console.print(f"  largest besides the PETs: {label}, {load[e['largest_load']]:.4f} of a core")
