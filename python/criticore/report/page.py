"""The report as one self-contained HTML page: inline CSS and SVG, the data
inline, no script, font, stylesheet or image fetched from anywhere, so the
file can be mailed and opened offline. Only formats values the engine (and,
with --run, the runtime) returned: a :class:`criticore.report.library.Report`
(not imported: the library imports this module to render it)."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

import numpy as np

from criticore._core import __version__
import criticore.report.svg as svg
from criticore.regulate.compare import finished
from criticore.units import bandwidth_text, duration_text, size_text

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1040px;
       color: #1a1a1a; background: #fff; padding: 0 12px; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
.meta, .caption, .note { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0 0.8em; }
th, td { padding: 2px 8px; text-align: left; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
th { background: #f3f3f3; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ok { color: #1a7f37; font-weight: 600; } .bad { color: #c62828; font-weight: 600; } .na { color: #888; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 6px 12px; min-width: 120px; }
.card b { display: block; font-size: 1.3em; }
.unavailable { background: #fff4e5; border-left: 4px solid #f0a030; padding: 6px 10px; }
.wide { overflow-x: auto; }
pre { background: #f7f7f7; padding: 8px; overflow-x: auto; font-size: 0.8em; max-height: 480px; }
svg.chart { display: block; margin: 6px 0; max-width: 100%; height: auto; }
svg .grid { stroke: #e2e2e2; stroke-width: 1; } svg .frame { fill: none; stroke: #999; }
svg .band { fill: #f6f6f6; } svg text { fill: #333; } svg .tick { fill: #666; font-size: 9px; }
svg .release { stroke: #222; stroke-width: 1; fill: none; }
svg .deadline { stroke: #d62728; stroke-width: 1.2; fill: none; }
svg .miss { stroke: #d62728; stroke-width: 2.2; fill: none; }
svg .bound { stroke: #000; stroke-width: 1.5; stroke-dasharray: 4 2; fill: none; }
svg .whisker, svg .median { stroke: #222; stroke-width: 1.2; fill: none; }
svg .series { fill: none; stroke-width: 1.3; }
svg .window { fill: #000; fill-opacity: 0.05; } svg .window-edge { fill: #555; }
svg .none { fill: #888; font-style: italic; }
"""


class Raw(str):
    """A cell that is HTML already."""


def esc(x: object) -> str:
    return x if isinstance(x, Raw) else html.escape(str(x), quote=True)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], numeric: Sequence[int] = (), cls: str = "") -> str:
    """An HTML table; columns listed in ``numeric`` right-aligned."""
    num = set(numeric)
    head = "".join(f'<th{" class=num" if i in num else ""}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in num else ""}>{esc(c)}</td>' for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<div class="wide"><table{f" class={cls}" if cls else ""}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def verdict(ok: bool | None, none: str = "n/a") -> Raw:
    if ok is None:
        return Raw(f'<span class="na">{none}</span>')
    return Raw('<span class="ok">schedulable</span>' if ok else '<span class="bad">NOT schedulable</span>')


def dt(ns) -> str:
    return duration_text(ns)


def _json_block(title: str, value: object) -> str:
    return f"<details><summary>{esc(title)}</summary><pre>{esc(json.dumps(value, indent=1))}</pre></details>"


def _value(v: object) -> str:
    """A field of the file as written (strings bare, tables and lists as JSON)."""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _fields(doc: dict) -> str:
    """A table of the file's fields as written; an array of tables (MemGuard's
    `[[regulation.group]]`) as a table of its own beneath, one row per entry."""
    plain = [[k, _value(v)] for k, v in doc.items() if not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))]
    out = [table(["field", "value (as in the file)"], plain)] if plain else []
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            keys = list(dict.fromkeys(key for x in v for key in x))
            out.append(f"<p class=note>{esc(k)} ({len(v)}):</p>")
            out.append(table(keys, [["" if key not in x else _value(x[key]) for key in keys] for x in v]))
    return "".join(out)


# --------------------------------------------------------------------------- sections


def _header(r) -> str:
    rep = r.simulation.report
    o = r.options
    reg = (r.simulation.outline or {}).get("regulation") or {}
    regulator = reg.get("kind") or "no regulation"
    name = str(r.system.path) if r.system.path is not None else r.system.name
    misses = rep["deadline_misses"]
    cards = [
        ("jobs released", f"{rep['released']:,}"),
        ("finished", f"{rep['completed']:,}"),
        ("deadline misses", Raw(f'<b class="{"bad" if misses else "ok"}">{misses:,}</b>')),
        ("unfinished at the end", f"{rep['unfinished']:,}"),
        ("analysis", verdict(r.analysis.get("schedulable")) if r.analysis else Raw('<span class="na">none</span>')),
    ]
    cells = "".join(f'<div class="card">{v if isinstance(v, Raw) and v.startswith("<b") else f"<b>{esc(v)}</b>"}{esc(k)}</div>'
                    for k, v in cards)
    return (f"<h1>criticore report: {esc(name)}</h1>"
            f'<p class="meta">Simulated {esc(dt(rep["duration_ns"]))} under <b>{esc(rep["scheduler"])}</b>, '
            f"{esc(regulator)}, seed {o.seed}, jobs at their Level-{esc(o.exec_level)} PET, fluid memory model; "
            f"{'a real run of the commands beside it; ' if r.measured else ''}criticore {esc(__version__)}.</p>"
            f'<div class="cards">{cells}</div>')


def _outline(r) -> str:
    s = r.system
    p = s.platform
    doc = s.to_dict()
    out = ["<h2>System</h2>"]
    out.append(table(["cores", "LLC", "DRAM", "bus"], [[
        p.cores,
        f"{size_text(p.llc_size_bytes)}, {p.llc_ways} ways, {p.llc_colors} colours, {p.line_bytes} B lines",
        f"{p.dram_banks} banks of {size_text(p.bank_size_bytes)}",
        f"{p.arbiter}, {bandwidth_text(p.bus_bytes_per_s)}",
    ]]))
    level = r.options.exec_level
    cmd = {t["name"]: t.get("command") for t in doc.get("task", [])}
    has_cmd = any(cmd.values())
    headers = ["task", "level", "crit.", "core", "server", "period", "deadline", "offset", "priority", f"PET ({level})", "util.", "WSS"]
    rows = []
    for t in s.tasks:
        pet = t.pet_ns.get(level)
        row = [t.name, t.level or "—", t.criticality, "—" if t.core is None else t.core, t.server or "—", dt(t.period_ns), dt(t.deadline_ns),
               dt(t.offset_ns), "—" if t.priority is None else t.priority, dt(pet), "—" if pet is None else f"{pet / t.period_ns:.3f}",
               size_text(t.wss_bytes)]
        rows.append(row + ([cmd.get(t.name) or "—"] if has_cmd else []))
    out.append(f"<h3>Tasks ({len(s.tasks)})</h3>")
    out.append(table(headers + (["command"] if has_cmd else []), rows, numeric=(2, 5, 6, 7, 8, 9, 10, 11)))
    if s.servers:
        out.append(f"<h3>Servers ({len(s.servers)})</h3>")
        out.append(table(["server", "core", "kind", "period", "budget", "priority", "memory budget (requests per period)"],
                         [[v.name, v.core, v.kind, dt(v.period_ns), dt(v.budget_ns), v.priority,
                           "—" if v.memory_budget is None else f"{v.memory_budget:,}"] for v in s.servers], numeric=(1, 3, 4, 5, 6)))
    reg = doc.get("regulation")
    out.append("<h3>Regulation</h3>")
    if reg:
        out.append(_fields(reg))
    else:
        out.append('<p class="note">The file has no [regulation]: nothing holds the memory traffic.</p>')
    alloc = doc.get("allocation")
    if alloc:
        out.append("<h3>Allocation</h3>")
        out.append(_fields(alloc))
    return "".join(out)


def _analysis(r) -> str:
    out = ["<h2>Analysis</h2>"]
    scheduler = r.simulation.report["scheduler"]
    a = r.analysis
    if a is None:
        out.append(f'<p class="unavailable">No analysis of this file under {esc(scheduler)}: {esc(r.analysis_error)}. '
                   "The simulation below does not depend on it.</p>")
        return "".join(out)
    if a.get("scheduler") == "mc2":
        out.append(_mc2(a))
    else:
        out.append(_classic(a))
    out.append(_json_block("criticore analyze --json", a))
    return "".join(out)


def _classic(a: dict) -> str:
    out = [f'<p>Test: {esc(a["test"])}. Verdict: {verdict(a["schedulable"])}.</p>']
    if not a["tasks"]:
        out.append('<p class="note">No task to analyze: nothing is schedulable or not.</p>')
        return "".join(out)
    rows = []
    for t in a["tasks"]:
        b = t["bound_ns"]
        rows.append([t["task"], t["on"], dt(t["pet_ns"]), dt(t["period_ns"]), dt(t["deadline_ns"]), dt(b),
                     "—" if b is None else dt(t["deadline_ns"] - b), verdict(t["schedulable"], "not decided"), t["note"] or ""])
    out.append("<h3>Per task: worst-case response-time bound</h3>")
    out.append(table(["task", "on", "PET", "period", "deadline", "bound", "slack", "verdict", "terms and notes"], rows, numeric=(2, 3, 4, 5, 6)))
    out.append("<h3>Per core or server</h3>")
    out.append(table(["name", "utilization", "verdict", "note"],
                     [[g["name"], f"{g['utilization']:.4f}", verdict(g["schedulable"], "not decided"), g["note"] or ""] for g in a["groups"]], numeric=(1,)))
    if a["notes"]:
        out.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in a["notes"]) + "</ul>")
    return "".join(out)


def _mc2(a: dict) -> str:
    out = [f'<p>MC² analysis on {a["cores"]} cores (mc2-hardware-management). Overall (configuration (i)): {verdict(a["schedulable"])}.</p>']
    for level, pet in (("A", "Level-A PETs"), ("B", "Level-B PETs")):
        out.append(f"<h3>Level {level} (per core, {pet})</h3>")
        out.append(table(["core", "tasks", "utilization", "verdict"],
                         [[c["core"], ", ".join(c["tasks"]) or "—", f"{c['utilization']:.4f}", verdict(c["schedulable"])]
                          for c in a["levels"][level]["per_core"]], numeric=(0, 2)))
    c = a["levels"]["C"]
    m = a["cores"]
    out.append("<h3>Level C (global EDF, Level-C PETs)</h3>")
    out.append(table(["core", "capacity û A, B leave", "supply delay σ"],
                     [[s["core"], f"{s['capacity']:.4f}", dt(s["supply_delay_ns"])] for s in c["per_core"]], numeric=(0, 1, 2)))
    rhs = (m - 1) * c["max_task_utilization"] + c["largest_utilization_sum"]
    out.append(f"<p>U<sub>C</sub> = {c['total_utilization']:.4f} ≤ Σû = {c['supply']:.4f}: {'yes' if c['capacity_condition'] else 'no'}; "
               f"Σû &gt; (m−1)·u<sub>max</sub> + U<sub>L</sub>(m−1) = {rhs:.4f}: {'yes' if c['tardiness_condition'] else 'no'}. "
               f"Level C: {verdict(c['schedulable'])}.</p>")
    if c["tardiness_bounds"]:
        out.append(f"<p>Tardiness bounds (x = {esc(dt(c.get('x_ns')))}):</p>")
        out.append(table(["task", "tardiness bound"], [[b["task"], dt(b["bound_ns"])] for b in c["tardiness_bounds"]], numeric=(1,)))
    out.append("<h3>Configurations (mc2-hardware-management §4.3)</h3>")
    rows = []
    for cfg in a["configurations"].values():
        if not cfg["available"]:
            rows.append([cfg["label"], "—", "", "", "", Raw(f'<span class="na">n/a: {esc(cfg["reason"])}</span>')])
        else:
            lv = cfg["levels"]
            rows.append([cfg["label"], f"{cfg['total_utilization']:.4f}", *("✓" if lv[k] else "✗" for k in "ABC"), verdict(cfg["schedulable"])])
    out.append(table(["configuration", "total utilization", "A", "B", "C", "verdict"], rows, numeric=(1,)))
    tables = []
    for lat in a["level_a_tables"]:
        slots = lat["slots"]
        if slots is None:
            tables.append([lat["core"], "—", f"none: {lat['note']}"])
        elif slots:
            tables.append([lat["core"], dt(lat["hyperperiod_ns"]),
                           ", ".join(f"{s['task']} {dt(s['start_ns'])}–{dt(s['start_ns'] + s['length_ns'])}" for s in slots)])
    if tables:
        out.append("<h3>Level-A tables</h3>")
        out.append(table(["core", "hyperperiod", "slots"], tables, numeric=(0, 1)))
    if a.get("best_effort"):
        out.append(f'<p class="note">Level D (best effort, not analyzed): {esc(", ".join(a["best_effort"]))}</p>')
    return "".join(out)


def _bounds(a: dict | None) -> dict[str, int | None]:
    """Per task the analysis' response-time bound (the classic tests'; MC² gives none per task)."""
    if not a or a.get("scheduler") == "mc2":
        return {}
    return {t["task"]: t["bound_ns"] for t in a["tasks"]}


def _tardiness(a: dict | None) -> dict[str, int | None]:
    if not a or a.get("scheduler") != "mc2":
        return {}
    return {b["task"]: b["bound_ns"] for b in a["levels"]["C"]["tardiness_bounds"]}


def _responses(r) -> str:
    s = r.system
    jobs = r.simulation.jobs
    per_task = {t["task"]: t for t in r.simulation.report["per_task"]}
    response = (jobs["finish_ns"] - jobs["release_ns"]).astype(np.int64)
    bounds, tardiness = _bounds(r.analysis), _tardiness(r.analysis)
    measured = r.measured
    box_rows, rows = [], []
    for i, t in enumerate(s.tasks):
        sim = response[jobs["task"] == i]
        sim_box = svg.Box.of(sim)
        m_box, m_cells = None, []
        if measured is not None:
            mj = measured.jobs.get(t.name)
            if mj is None:
                m_cells = ["—", "—", "—", "—"]
            else:
                done = finished(mj, measured.end_clock_ns)
                resp = (np.asarray(mj["finish_ns"], dtype=np.int64) - np.asarray(mj["release_ns"], dtype=np.int64))[done]
                late = int((np.asarray(mj["finish_ns"], dtype=np.int64)[done] > np.asarray(mj["deadline_ns"], dtype=np.int64)[done]).sum())
                m_box = svg.Box.of(resp)
                m_cells = [len(resp), late, dt(m_box.median if m_box else None), dt(m_box.high if m_box else None)]
        box_rows.append(svg.BoxRow(t.name, sim_box, m_box, t.deadline_ns, bounds.get(t.name)))
        x = per_task[t.name]
        row = [t.name, f"{x['completed']:,}/{x['released']:,}", x["deadline_misses"], dt(sim_box.low if sim_box else None),
               dt(sim_box.median if sim_box else None), dt(float(np.percentile(sim, 99)) if len(sim) else None),
               dt(sim_box.high if sim_box else None), dt(t.deadline_ns)]
        row += [dt(tardiness.get(t.name))] if tardiness else [dt(bounds.get(t.name))]
        rows.append(row + m_cells)
    out = ["<h2>Response times</h2>",
           f'<p class="caption">Per task, the response times (finish − release) of the jobs that finished in the '
           f"{esc(dt(r.simulation.report['duration_ns']))} simulated"
           + (" and, beneath, of the jobs the real run's periodic tasks finished within it (job records of "
              "<code>criticore load --file F --task T</code>; tasks that are no such program have none)" if measured else "")
           + ". Whiskers at the least and the greatest, the box from the first to the third quartile, a line at the median; "
             "red: the deadline; dashed: the analysis' response-time bound. Each row has its own time scale.</p>"]
    out.append(svg.boxes(box_rows, measured is not None, "response-time distributions per task"))
    headers = ["task", "finished/released", "misses", "least", "median", "99th pct.", "greatest", "deadline",
               "tardiness bound" if tardiness else "analysis bound"]
    if measured is not None:
        headers += ["measured: jobs", "misses", "median", "greatest"]
    out.append(table(headers, rows, numeric=tuple(range(1, len(headers)))))
    return "".join(out)


def _entity(state: str, index: int, r) -> str:
    """A regulator's entity: the core, or the MRS server for "depleted" (docs/memory-model.md)."""
    if state == "depleted" and index < len(r.system.servers):
        return f"server {r.system.servers[index].name}"
    return f"core {index}"


def _in(mask: np.ndarray, *columns: np.ndarray) -> list:
    """The rows of ``columns`` where ``mask`` holds, as Python values (the
    window's few of a run's many: filtered by numpy before any Python loop)."""
    return list(zip(*(c[mask].tolist() for c in columns)))


def _gantt(r) -> str:
    s = r.system
    seg = r.simulation.segments
    jobs = r.simulation.jobs
    w = r.window_ns
    end = r.simulation.report["duration_ns"]
    names = [t.name for t in s.tasks]
    rows = [f"server {v.name}" for v in s.servers] + names
    task_row = {i: len(s.servers) + i for i in range(len(names))}
    # The regulator's rows: every entity it held at some time of the run, in order.
    states, held = seg["interval_state"], seg["interval_core"]
    depleted = states == "depleted"
    entities = sorted({(bool(d), int(c)) for d, c in np.unique(np.stack([depleted.astype(np.int64), held.astype(np.int64)]), axis=1).T}) if len(held) else []
    held_row = {}
    for is_depleted, idx in entities:
        held_row[(is_depleted, idx)] = len(rows)
        rows.append(f"{_entity('depleted' if is_depleted else 'stalled', idx, r)}: regulator")
    bars: list[svg.Bar] = []
    for sv, a, b in _in(seg["server_start_ns"] < w, seg["server"], seg["server_start_ns"], seg["server_end_ns"]):
        bars.append(svg.Bar(sv, a, min(b, w), "server", svg.SERVER_COLOR, f"server {s.servers[sv].name} holds its core {dt(a)} – {dt(b)}"))
    for c, t, j, a, b in _in(seg["start_ns"] < w, seg["core"], seg["task"], seg["job"], seg["start_ns"], seg["end_ns"]):
        bars.append(svg.Bar(task_row[t], a, min(b, w), "job", svg.color(c), f"{names[t]} job {j} on core {c}: {dt(a)} – {dt(b)}"))
    shown_states = seg["interval_start_ns"] < w
    for state, idx, a, b in _in(shown_states, states, held, seg["interval_start_ns"], seg["interval_end_ns"]):
        bars.append(svg.Bar(held_row[(state == "depleted", idx)], a, min(b, w), f"interval {state}", svg.STATE_COLORS.get(state, "#444"),
                            f"{_entity(state, idx, r)} {state} {dt(a)} – {dt(b)}"))
    marks: list[svg.Mark] = []
    no_finish = np.full(len(jobs["unfinished_task"]), -1, dtype=np.int64)
    every = [(jobs["task"], jobs["job"], jobs["release_ns"], jobs["deadline_ns"], jobs["finish_ns"].astype(np.int64)),
             (jobs["unfinished_task"], jobs["unfinished_job"], jobs["unfinished_release_ns"], jobs["unfinished_deadline_ns"], no_finish)]
    for tasks, numbers, releases, deadlines, finishes in every:
        for t, n, rel, d, f in _in((releases < w) | (deadlines <= w), tasks, numbers, releases, deadlines, finishes):
            row, name = task_row[t], f"{names[t]} job {n}"
            if rel < w:
                marks.append(svg.Mark(row, rel, "release", f"{name} released at {dt(rel)}"))
            if d <= w:
                marks.append(svg.Mark(row, d, "deadline", f"{name}: deadline {dt(d)}"))
                # Missed: finished after it, or unfinished at the end with it passed.
                if f > d or (f < 0 and d <= end):
                    how = f"finished at {dt(f)}" if f >= 0 else "unfinished at the end"
                    marks.append(svg.Mark(row, d, "miss", f"{name} missed its deadline {dt(d)} ({how})"))
    kinds, counts = np.unique(states[shown_states], return_counts=True) if shown_states.any() else ([], [])
    legend = [(svg.color(c), f"core {c}") for c in range(s.platform.cores)]
    legend += [(svg.SERVER_COLOR, "server holds its core")] if s.servers else []
    legend += [(svg.STATE_COLORS.get(x, "#444"), x) for x in sorted({str(x) for x in np.unique(states)})] if len(states) else []
    shown = ", ".join(f"{int(n):,} {x}" for x, n in zip(kinds, counts)) or "none"
    caption = (f'<p class="caption">The first {esc(dt(w))} of the {esc(dt(end))} simulated: a row per server (when it holds its core), '
               "per task (where its jobs run, coloured by core) and per core or server the regulator held (its intervals: "
               "MemGuard and MCTI <i>stalled</i>, MCTI <i>overload</i>, the monitor's <i>suspended</i>, an MRS server's "
               f"<i>depleted</i>; here {esc(shown)}). Arrows: releases; red ticks: deadlines; red crosses: deadline misses. "
               "Hover a mark for its times.</p>")
    return "<h2>Gantt chart</h2>" + caption + svg.gantt(rows, bars, marks, w, legend, "Gantt chart with regulator intervals and deadlines")


def _bandwidth(r) -> str:
    sim = r.simulation
    end = sim.report["duration_ns"]
    mb_s = sim.bandwidth_mb_s(r.system.platform.line_bytes)
    bins = mb_s.shape[1]
    start = np.arange(bins, dtype=np.int64) * sim.bin_ns
    out = ["<h2>Memory bandwidth per core</h2>",
           f'<p class="caption">MB/s each core issued to memory, per {esc(dt(sim.bin_ns))} bin, over the whole run '
           "(the shaded part is the Gantt chart's window).</p>"]
    if not np.any(mb_s > 0):
        out.append('<p class="note">No memory traffic in this run (no task has a memory profile).</p>')
        return "".join(out)
    lines = [(f"core {c}", mb_s[c], svg.color(c)) for c in range(mb_s.shape[0])]
    out.append(svg.series(start, sim.bin_ns, lines, end, "MB/s", "memory bandwidth per core", shade_ns=r.window_ns))
    return "".join(out)


def state_shares(starts: np.ndarray, ends: np.ndarray, bin_ns: int, bins: int) -> np.ndarray:
    """The share of each bin covered by the spans [starts, ends) (disjoint):
    time covered up to t is Σ over spans of clip(t − start, 0, end − start)."""
    s = np.sort(starts.astype(np.float64))
    e = np.sort(ends.astype(np.float64))
    cs, ce = np.concatenate([[0.0], np.cumsum(s)]), np.concatenate([[0.0], np.cumsum(e)])
    edges = np.arange(bins + 1, dtype=np.float64) * bin_ns
    ks, ke = np.searchsorted(s, edges, side="left"), np.searchsorted(e, edges, side="left")
    covered = (ks * edges - cs[ks]) - (ke * edges - ce[ke])
    return np.clip(np.diff(covered) / bin_ns, 0.0, 1.0)


def _entity_names(r, count: int) -> list[str]:
    """The regulated entities as `regulation.entities` numbers them (docs/memory-model.md):
    MemGuard's groups in file order, else its cores; MCTI's cores; MRS's servers."""
    reg = r.system.to_dict().get("regulation") or {}
    if reg.get("kind") == "mrs":
        names = [f"server {v.name}" for v in r.system.servers]
    elif reg.get("kind") == "memguard" and reg.get("group"):
        names = [f"group {g.get('name', k)}" for k, g in enumerate(reg["group"])]
    else:
        names = [f"core {k}" for k in range(count)]
    return names + [str(k) for k in range(len(names), count)]


def _states(r) -> str:
    sim = r.simulation
    reg = sim.report.get("regulation")
    out = ["<h2>Regulation over time</h2>"]
    if not reg:
        out.append('<p class="note">No regulator in this run: the file has no [regulation].</p>')
        return "".join(out)
    seg = sim.segments
    states = seg["interval_state"]
    end = sim.report["duration_ns"]
    bins = -(-end // sim.bin_ns)
    rows = []
    for x in reg["states"]:
        if not x["intervals"]:
            continue
        sel = (states == x["state"]) & (seg["interval_core"] == x["index"])
        share = state_shares(seg["interval_start_ns"][sel], seg["interval_end_ns"][sel], sim.bin_ns, bins)
        rows.append((f"{_entity(x['state'], x['index'], r)} {x['state']}", share, svg.STATE_COLORS.get(x["state"], "#444")))
    if rows:
        out.append(f'<p class="caption">Per core (or MRS server) and state, the share of each {esc(dt(sim.bin_ns))} bin it spent '
                   "in that state: the darker, the longer. The line marks the end of the Gantt chart's window.</p>")
        out.append(svg.shares(rows, sim.bin_ns, end, "regulation states over time", shade_ns=r.window_ns))
        out.append(table(["state", "core/server", "intervals", "total time", "share of the run"],
                         [[x["state"], _entity(x["state"], x["index"], r), f"{x['intervals']:,}", dt(x["total_ns"]),
                           f"{100 * x['total_ns'] / end:.1f}%"] for x in reg["states"] if x["intervals"]], numeric=(2, 3, 4)))
    else:
        out.append('<p class="note">The regulator held no core or server in this run.</p>')
    ent = reg.get("entities") or []
    if ent:
        names = _entity_names(r, len(ent))
        out.append("<h3>Budgets per regulated entity (simulated)</h3>")
        out.append(table(["entity", "whole periods", "exhausted", "requests used", "time held"],
                         [[names[k], e["periods"], e["exhausted_periods"], f"{e['used']:,.0f}", dt(e["stopped_ns"])] for k, e in enumerate(ent)],
                         numeric=(1, 2, 3, 4)))
    details = reg.get("details")
    if details and details.get("parallelism"):
        par = details["parallelism"]
        out.append(f'<p>Monitor: {details["jobs"]} real-time jobs, {details["suspensions"]} suspensions, best-effort parallelism '
                   f"min {min(par):.2f} / mean {sum(par) / len(par):.2f}.</p>")
    return "".join(out)


def _measured(r) -> str:
    m = r.measured
    if m is None:
        return ""
    s = m.summary
    out = ["<h2>The real run (--run)</h2>",
           f"<p>{esc(s['mode'])} on real processes for {esc(dt(s['elapsed_ns']))} (ended by {esc(s.get('end', '—'))}); "
           f"counter: {esc(s['counter'])}; throttle: {esc(s['throttle'])}; regulator CPU {esc(dt(s.get('cpu_ns')))}. "
           f"Job records from {len(m.jobs)} of {len(r.system.tasks)} tasks.</p>"]
    notes = list(s.get("notices") or []) + list(s.get("warnings") or [])
    if notes:
        out.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    if m.per_group:
        out.append(table(["group", "budget", "whole periods", "used per period", "of budget", "exhausted periods", "stopped"],
                         [[g["name"], f"{g['budget']:,}", g["periods"], f"{g['used_per_period']:,.0f}",
                           "—" if g["ratio"] != g["ratio"] else f"{100 * g['ratio']:.1f}%", g["exhausted_periods"], dt(g["throttled_ns"])]
                          for g in m.per_group], numeric=(1, 2, 3, 4, 5, 6)))
    out.append(_json_block("criticore regulate summary", s))
    return "".join(out)


def render(r) -> str:
    """The page."""
    name = str(r.system.path) if r.system.path is not None else r.system.name
    body = [_header(r), _outline(r), _analysis(r), _responses(r), _gantt(r), _bandwidth(r), _states(r), _measured(r),
            "<h2>Data</h2>", _json_block("criticore simulate --json", r.simulation.report)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>criticore report: {esc(name)}</title><style>{CSS}</style></head><body>"
            + "".join(body) + "</body></html>\n")
