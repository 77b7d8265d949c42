"""Rich rendering of a regulation run: the live view and the final tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from criticore.render import table
from criticore.units import bandwidth_text, duration_text


def _bandwidth(events_per_s: float, line_bytes: int) -> str:
    return bandwidth_text(events_per_s * line_bytes)


def live_table(snapshot: dict, period_ns: int, line_bytes: int) -> Table:
    t = table(f"criticore regulate: {duration_text(snapshot['elapsed_ns'])}, {snapshot['periods']:,} periods")
    for col, justify in (("group", "left"), ("budget/period", "right"), ("used last period", "right"), ("bandwidth", "right"), ("throttled", "right"), ("state", "left")):
        t.add_column(col, justify=justify)
    for g in snapshot["groups"]:
        t.add_row(
            g["name"],
            f"{g['budget']:,}",
            f"{g['used_last_period']:,}",
            _bandwidth(g["events_per_s"], line_bytes),
            duration_text(g["throttled_ns"]),
            "[red]stopped[/red]" if g["stopped"] else "running",
        )
    return t


def render_run(console: Console, file: str, run, line_bytes: int) -> None:
    s = run.summary
    console.print(f"[bold]{file}[/bold]: {s['mode']} over {duration_text(s['elapsed_ns'])}, period {duration_text(s['period_ns'])} ({s['end']})")
    console.print(f"  counter: {s['counter']}")
    console.print(f"  throttle: {s['throttle']}")
    for n in s["notices"]:
        console.print(f"  note: {n}")
    for w in s["warnings"]:
        console.print(f"  [yellow]warning[/yellow]: {w}")
    m = run.monitor_summary()
    if m is not None:
        console.print(
            f"  monitor: {m['jobs']:,} real-time jobs ({m['jobs_finished']:,} finished), {m['samples']:,} samples; "
            f"best-effort work suspended in {m['jobs_suspending']:,} jobs, {m['jobs_by_deadline']:,} ended at their deadline; "
            f"largest estimated overhead {100 * m['max_sum']:.2f}%"
        )
        console.print(f"  regulator CPU {100 * s['cpu_ns'] / max(s['elapsed_ns'], 1):.2f}% of one core")
        return
    t = table("Per group (whole periods)")
    for col in ("group", "budget", "used/period", "of budget", "exhausted", "throttled", "overshoot p50 / p99 / max"):
        t.add_column(col, justify="left" if col == "group" else "right")
    for g in run.per_group():
        t.add_row(
            g["name"],
            f"{g['budget']:,}",
            f"{g['used_per_period']:,.1f}",
            f"{100 * g['ratio']:.1f}%" if g["ratio"] == g["ratio"] else "-",
            f"{g['exhausted_periods']:,} of {g['periods']:,}",
            duration_text(g["throttled_ns"]),
            f"{g['overshoot_p50']:,.0f} / {g['overshoot_p99']:,.0f} / {g['overshoot_max']:,}",
        )
    console.print(t)
    cpu = s["cpu_ns"] / max(s["elapsed_ns"], 1)
    console.print(
        f"  regulator CPU {100 * cpu:.2f}% of one core; period lateness p50 {duration_text(s['lateness_p50_ns'])}, "
        f"p99 {duration_text(s['lateness_p99_ns'])}; reaction p50 {duration_text(s['reaction_p50_ns'])}, p99 {duration_text(s['reaction_p99_ns'])}"
        + (f"; end to end (crossing to stop) p50 {duration_text(s['reaction_e2e_p50_ns'])}, p99 {duration_text(s['reaction_e2e_p99_ns'])}" if s.get("reaction_e2e_stops") else "")
    )


#: `--compare-sim` quantities: label, and whether a share (shown in %).
COMPARE_LABELS = {
    "jobs": ("jobs", False),
    "deadline_misses": ("deadline misses", False),
    "response_ms_mean": ("response mean (ms)", False),
    "response_ms_max": ("response max (ms)", False),
    "exec_ms_median": ("job time median (ms)", False),
    "used_of_budget": ("used / budget per period", True),
    "exhausted_share": ("periods exhausted", True),
    "throttled_share": ("time stopped", True),
}


def _cell(what: str, v) -> str:
    if v is None:
        return "-"
    if COMPARE_LABELS[what][1]:
        return f"{100 * v:.1f}%"
    return f"{v:,.3f}" if isinstance(v, float) else f"{v:,}"


def _replay_cell(r: dict) -> str:
    """The replay, and its band (job times ±5%) where that is wider."""
    band = r.get("replay_band")
    if band is None or band[0] == band[1]:
        return _cell(r["what"], r["replayed"])
    return f"{_cell(r['what'], r['replayed'])} ({_cell(r['what'], band[0])}–{_cell(r['what'], band[1])})"


def render_compare(console: Console, rows: list[dict]) -> None:
    """`--compare-sim`: measured vs simulated, one line per task or group and quantity."""
    t = table("Measured vs simulated, also replaying the run's job times (±5%) (and the analysis' response bound)")
    for col in ("task / group", "", "measured", "simulated", "replayed", "bound"):
        t.add_column(col, justify="left" if col in ("task / group", "") else "right")
    for i, r in enumerate(rows):
        first = i == 0 or (rows[i - 1]["kind"], rows[i - 1]["name"]) != (r["kind"], r["name"])
        last = i == len(rows) - 1 or (rows[i + 1]["kind"], rows[i + 1]["name"]) != (r["kind"], r["name"])
        name = (f"group {r['name']}" if r["kind"] == "group" else r["name"]) if first else ""
        bound = _cell(r["what"], r["bound"]) if r["what"] == "response_ms_max" else ""
        t.add_row(name, COMPARE_LABELS[r["what"]][0], _cell(r["what"], r["measured"]), _cell(r["what"], r["simulated"]), _replay_cell(r), bound, end_section=last)
    console.print(t)
    if not any(r["kind"] == "task" for r in rows):
        console.print("  no task wrote job records: run tasks as `criticore load --file F --task T` to compare jobs")
