"""Rich rendering of engine reports. Only formats values the engine returned."""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from criticore.units import duration_text

MAX_SLOTS_SHOWN = 8


def table(title: str | None = None) -> Table:
    """A table for 80 columns: no edges or vertical rules and two spaces
    between columns (a ruled table spends 3 columns per column, and Rich cuts
    cells with "…" when the table does not fit)."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0), header_style="bold")


def rule(console: Console, title: str) -> None:
    """A rule titled `title` (markup); a title too long for one rule goes on
    lines of its own above it, where Rich would cut it with "…"."""
    if cell_len(Text.from_markup(title).plain) + 6 <= console.width:
        console.rule(title)
    else:
        console.print(title)
        console.rule()


def _verdict(ok: bool | None, none: str = "n/a") -> Text:
    """None is "n/a" where nothing was tested, "not decided" where a classic test stopped at its limit."""
    if ok is None:
        return Text(none, style="dim")
    return Text("schedulable", style="bold green") if ok else Text("NOT schedulable", style="bold red")


def render_task_bounds(console: Console, file: str, r: dict) -> None:
    """A classic test's report (`analysis::classic`): per task its bound against its deadline."""
    rule(console, f"[bold]{escape(file)}[/] — {r['scheduler']}")
    console.print(f"  test: {escape(r['test'])}")
    if not r["tasks"]:
        console.print("  no task to analyze: nothing is schedulable or not")
        return
    if all(row.get("background") for row in r["tasks"]):
        console.print("  only background tasks (no jobs): nothing is schedulable or not")
        return
    t = table("Per task: worst-case response-time bound")
    t.add_column("task")
    t.add_column("on")
    t.add_column("PET", justify="right")
    t.add_column("period", justify="right")
    t.add_column("deadline", justify="right")
    t.add_column("bound", justify="right")
    t.add_column("slack", justify="right")
    t.add_column("verdict")
    for row in r["tasks"]:
        if row.get("background"):
            # No jobs: nothing per job, no deadline to meet.
            t.add_row(Text(row["task"]), Text(row["on"]), "—", "—", "—", "—", "—", Text("background", style="dim"))
            continue
        b = row["bound_ns"]
        slack = "—" if b is None else duration_text(row["deadline_ns"] - b)
        t.add_row(Text(row["task"]), Text(row["on"]), duration_text(row["pet_ns"]), duration_text(row["period_ns"]), duration_text(row["deadline_ns"]),
                  duration_text(b), slack, _verdict(row["schedulable"], "not decided"))
    console.print(t)
    for row in r["tasks"]:
        if row["note"] and not row["schedulable"]:
            console.print(f"  {escape(row['task'])}: {escape(row['note'])}")
    g = table("Per core or server")
    g.add_column("name")
    g.add_column("utilization", justify="right")
    g.add_column("verdict")
    for grp in r["groups"]:
        g.add_row(Text(grp["name"]), f"{grp['utilization']:.4f}", _verdict(grp["schedulable"], "not decided"))
    console.print(g)
    for grp in r["groups"]:
        if grp["note"]:
            console.print(f"  {escape(grp['name'])}: {escape(grp['note'])}")
    for note in r["notes"]:
        console.print(f"  note: {escape(note)}")
    render_chain_bounds(console, r.get("chains") or [])
    console.print("  verdict:", _verdict(r["schedulable"], "not decided"))
    if "check_sim" in r:
        render_check_sim(console, r)


def render_chain_bounds(console: Console, chains: list[dict]) -> None:
    """Each cause-effect chain's reaction-time and data-age bounds."""
    if not chains:
        return
    t = table("Cause-effect chains (bounds)")
    for col in ("chain", "tasks", "reaction", "data age"):
        t.add_column(col, justify="left" if col in ("chain", "tasks") else "right")
    for c in chains:
        t.add_row(Text(c["name"]), Text(" → ".join(c["tasks"])), duration_text(c["reaction_ns"]), duration_text(c["data_age_ns"]))
    console.print(t)
    for c in chains:
        if c.get("note"):
            console.print(f"  {escape(c['name'])}: {escape(c['note'])}")


def render_chain_latencies(console: Console, chains: list[dict]) -> None:
    """Each cause-effect chain's measured reaction times and data ages."""
    if not chains:
        return
    t = table("Cause-effect chains (simulated)")
    for col in ("chain", "reactions", "max", "p99", "outputs", "max age", "p99 age"):
        t.add_column(col, justify="left" if col == "chain" else "right")
    for c in chains:
        t.add_row(Text(c["chain"]), f"{c['reactions']:,}", duration_text(c["max_reaction_ns"]), duration_text(c["p99_reaction_ns"]),
                  f"{c['outputs']:,}", duration_text(c["max_data_age_ns"]), duration_text(c["p99_data_age_ns"]))
    console.print(t)


def render_check_sim(console: Console, r: dict) -> None:
    """Each task's bound beside the simulated worst response (`analyze --check-sim`)."""
    t = table(f"Bound vs simulation ({duration_text(r['check_sim_duration_ns'])} simulated, same scheduler)")
    t.add_column("task")
    t.add_column("bound", justify="right")
    t.add_column("simulated max", justify="right")
    t.add_column("slack", justify="right")
    t.add_column("sim. misses", justify="right")
    t.add_column("")
    for row in r["check_sim"]:
        holds = row["holds"]
        mark = Text("—", style="dim") if holds is None else (Text("bound ≥ simulated", style="green") if holds else Text("EXCEEDED", style="bold red"))
        misses = "—" if row["simulated_misses"] is None else str(row["simulated_misses"])
        times = [duration_text(row[k]) for k in ("bound_ns", "simulated_max_ns", "slack_ns")]
        t.add_row(Text(row["task"]), *times, misses, mark)
    console.print(t)
    if r.get("check_sim_chains"):
        t = table("Chains: bound vs simulation")
        for name in ("chain", "reaction bound", "simulated max", "data age bound", "simulated max", ""):
            t.add_column(name, justify="left" if name in ("chain", "") else "right")
        for row in r["check_sim_chains"]:
            holds = row["holds"]
            mark = Text("—", style="dim") if holds is None else (Text("bound ≥ simulated", style="green") if holds else Text("EXCEEDED", style="bold red"))
            times = [duration_text(row[k]) for k in ("reaction_bound_ns", "reaction_simulated_max_ns", "data_age_bound_ns", "data_age_simulated_max_ns")]
            t.add_row(Text(row["chain"]), *times, mark)
        console.print(t)


def render_analysis(console: Console, file: str, r: dict) -> None:
    rule(console, f"[bold]{escape(file)}[/] — MC² analysis on {r['cores']} cores")
    for level, pet in (("A", "Level-A PETs"), ("B", "Level-B PETs")):
        t = table(f"Level {level} (per core, {pet})")
        t.add_column("core", justify="right")
        t.add_column("tasks")
        t.add_column("utilization", justify="right")
        t.add_column("verdict")
        for c in r["levels"][level]["per_core"]:
            t.add_row(str(c["core"]), Text(", ".join(c["tasks"]) or "—"), f"{c['utilization']:.4f}", _verdict(c["schedulable"]))
        console.print(t)

    c = r["levels"]["C"]
    t = table("Level C (global EDF, Level-C PETs)")
    t.add_column("core", justify="right")
    t.add_column("capacity û A, B leave", justify="right")
    t.add_column("supply delay σ", justify="right")
    for s in c["per_core"]:
        t.add_row(str(s["core"]), f"{s['capacity']:.4f}", duration_text(s["supply_delay_ns"]))
    console.print(t)
    m = r["cores"]
    console.print(
        f"  U_C = {c['total_utilization']:.4f} ≤ Σû = {c['supply']:.4f}: "
        f"{'yes' if c['capacity_condition'] else '[red]no[/]'};  "
        f"Σû > (m−1)·u_max + U_L(m−1) = {(m - 1) * c['max_task_utilization'] + c['largest_utilization_sum']:.4f}: "
        f"{'yes' if c['tardiness_condition'] else '[red]no[/]'}"
    )
    if c["tasks"]:
        bounds = sorted({b["bound_ns"] for b in c["tardiness_bounds"] if b["bound_ns"] is not None})
        if bounds:
            console.print(f"  tardiness bounds: x = {duration_text(c['x_ns'])}; per task {duration_text(bounds[0])} … {duration_text(bounds[-1])}")
    console.print("  Level C:", _verdict(c["schedulable"]))

    t = table("Configurations (mc2-hardware-management §4.3)")
    t.add_column("configuration")
    t.add_column("total utilization", justify="right")
    for level in "ABC":
        t.add_column(level, justify="center")
    t.add_column("verdict")
    for cfg in r["configurations"].values():
        if not cfg["available"]:
            t.add_row(cfg["label"], "—", "", "", "", Text(f"n/a: {cfg['reason']}", style="dim"))
            continue
        lv = cfg["levels"]
        t.add_row(
            cfg["label"],
            f"{cfg['total_utilization']:.4f}",
            *("✓" if lv[level] else "✗" for level in "ABC"),
            _verdict(cfg["schedulable"]),
        )
    console.print(t)

    for lat in r["level_a_tables"]:
        slots = lat["slots"]
        if slots is None:
            console.print(f"  Level-A table, core {lat['core']}: [red]none[/] ({escape(lat['note'])})")
        elif slots:
            shown = ", ".join(
                f"{s['task']} {duration_text(s['start_ns'])} – {duration_text(s['start_ns'] + s['length_ns'])}" for s in slots[:MAX_SLOTS_SHOWN]
            )
            more = f", … {len(slots) - MAX_SLOTS_SHOWN} more (--json)" if len(slots) > MAX_SLOTS_SHOWN else ""
            console.print(f"  Level-A table, core {lat['core']} (hyperperiod {duration_text(lat['hyperperiod_ns'])}): {escape(shown)}{more}")
    if r["best_effort"]:
        console.print(f"  Level D (best effort, not analyzed): {escape(', '.join(r['best_effort']))}")
    console.print("Overall (configuration (i)):", _verdict(r["schedulable"]))


def _of_finished(x: dict, key: str) -> str:
    """A statistic of the finished jobs: "—" when none finished (not a made-up 0)."""
    return duration_text(x[key]) if x["completed"] else "—"


def _no_job_finished(console: Console, tasks: list[dict], end_ns: int) -> None:
    """Under the table: the tasks that finished no job, and how old the oldest of theirs is at the end."""
    for x in tasks:
        if x["completed"]:
            continue
        name = escape(x["task"])
        if x.get("background"):
            console.print(f"  {name}: background task (no jobs): {x['memory_requests']:,} memory requests, "
                          f"{duration_text(x['memory_stall_ns'])} stalled")
            continue
        oldest = x.get("oldest_unfinished_release_ns")
        if not x["released"] or oldest is None:
            console.print(f"  {name}: no job released")
        else:
            console.print(f"  {name}: no job finished; the oldest, released at {duration_text(oldest)}, "
                          f"is {duration_text(end_ns - oldest)} old at the end")


def render_simulation(console: Console, file: str, r: dict) -> None:
    rule(console, f"[bold]{escape(file)}[/] — simulated {duration_text(r['duration_ns'])} under {r['scheduler']}")
    tasks = r["per_task"]
    has_level = any(x["level"] != "-" for x in tasks)
    has_server = any(x["server"] for x in tasks)
    t = table("Per task")
    cols = [("task", "left")]
    cols += [("lvl", "center")] if has_level else []
    cols += [("core", "right")] + ([("server", "left")] if has_server else [])
    cols += [("jobs", "right"), ("miss", "right"), ("max resp", "right"), ("mean resp", "right"), ("max tard", "right"),
             ("pre", "right"), ("mig", "right")]
    for col, just in cols:
        t.add_column(col, justify=just)
    for x in tasks:
        row = [Text(x["task"])] + ([x["level"]] if has_level else [])
        row += ["—" if x["core"] is None else str(x["core"])] + ([Text(x["server"] or "—")] if has_server else [])
        if x.get("background"):
            row += [Text("background", style="dim"), "—", "—", "—", "—", str(x["preemptions"]), str(x["migrations"])]
            t.add_row(*row)
            continue
        misses = Text(str(x["deadline_misses"]), style="bold red" if x["deadline_misses"] else "green")
        row += [f"{x['completed']}/{x['released']}", misses, _of_finished(x, "max_response_ns"), _of_finished(x, "mean_response_ns"),
                _of_finished(x, "max_tardiness_ns"), str(x["preemptions"]), str(x["migrations"])]
        t.add_row(*row)
    console.print(t)
    _no_job_finished(console, tasks, r["duration_ns"])
    if has_level:
        t = table("Per level")
        for col in ("level", "jobs", "misses", "max response", "max tardiness"):
            t.add_column(col, justify="right")
        for level, x in r["per_level"].items():
            t.add_row(level, f"{x['completed']}/{x['released']}", str(x["deadline_misses"]), _of_finished(x, "max_response_ns"),
                      _of_finished(x, "max_tardiness_ns"))
        console.print(t)
    if r["memory_requests"]:
        console.print(f"  memory: {r['memory_requests']:,} requests by all jobs, {duration_text(r['memory_stall_ns'])} stalled")
    reg = r.get("regulation")
    if reg:
        stalls = [x for x in reg["states"] if x["intervals"]]
        if stalls:
            t = table("Regulation")
            for col in ("state", "core/server/group", "intervals", "total"):
                t.add_column(col, justify="right")
            for x in stalls:
                t.add_row(x["state"], str(x["index"]), f"{x['intervals']:,}", duration_text(x["total_ns"]))
            console.print(t)
        else:
            console.print("  regulator: no core, server or group was stopped")
        details = reg.get("details")
        if details and details.get("parallelism"):
            par = details["parallelism"]
            console.print(f"  monitor: {details['jobs']} real-time jobs, {details['suspensions']} suspensions, "
                          f"best-effort parallelism min {min(par):.2f} / mean {sum(par) / len(par):.2f}")
    render_chain_latencies(console, r.get("chains") or [])
    style = "bold red" if r["deadline_misses"] else "bold green"
    console.print(f"Deadline misses: [{style}]{r['deadline_misses']}[/] of {r['released']} jobs released "
                  f"({r['unfinished']} unfinished at the end); {r['events']} events")


#: More systems than this: the summary line only (the rows go to --table).
BATCH_ROWS_SHOWN = 20


def render_batch(console: Console, data: list[dict], asked: int, duration_ns: int, wall_s: float, table_file, interrupted: bool) -> None:
    """`criticore simulate` on several systems: a row per system (up to
    BATCH_ROWS_SHOWN) with its jobs, misses, max response and max tardiness, then a summary line."""
    if len(data) <= BATCH_ROWS_SHOWN:
        t = table(f"{len(data)} systems, {duration_text(duration_ns)} each")
        for col, just in (("file", "left"), ("sched", "left"), ("U", "right"), ("jobs", "right"), ("miss", "right"),
                          ("max resp", "right"), ("max tard", "right")):
            t.add_column(col, justify=just, overflow="fold")
        for r in data:
            miss = Text(str(r["deadline_misses"]), style="bold red" if r["deadline_misses"] else "green")
            t.add_row(Text(r["file"]), r["scheduler"], f"{r['utilization']:.3f}", f"{r['completed']}/{r['released']}", miss,
                      _of_finished(r, "max_response_ns"), _of_finished(r, "max_tardiness_ns"))
        console.print(t)
    jobs = sum(r["completed"] for r in data)
    clean = sum(1 for r in data if r["no_deadline_miss"])
    console.print(f"{len(data):,} of {asked:,} systems simulated: {clean:,} without a deadline miss; "
                  f"{jobs:,} jobs in {duration_text(wall_s * 1e9)} ({jobs / max(wall_s, 1e-9):,.0f} jobs/s)")
    if interrupted:
        console.print("[bold yellow]partial[/]: stopped by Ctrl-C")
    if table_file is not None:
        console.print(f"  summary rows: {table_file}")
    elif len(data) > BATCH_ROWS_SHOWN:
        console.print("  write every row with --table FILE.parquet")
