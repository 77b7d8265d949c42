"""Every table the CLI prints is readable in an 80-column terminal (issue 14):
no cell cut with "…" (or cropped), no line past column 80.

The check renders the same output at 80 and at 400 columns: wrapping only
moves text between lines, so apart from white space and box-drawing
characters both must hold the same characters. Anything Rich cut at 80 is
missing there (and an "…" is added)."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

from criticore.cli import app
from criticore.load.command import sweep_table
from criticore.load import generator as gen
from criticore.monitor.experiment import _render as render_experiment
from criticore.load.render import render_load
from criticore.regulate.render import live_table, render_compare, render_run

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
WIDE = 400


def text_chars(text: str) -> Counter:
    """Characters of `text` without white space and box drawing (U+2500–U+257F)."""
    return Counter(c for c in text if not c.isspace() and not 0x2500 <= ord(c) <= 0x257F)


def assert_fits_80(narrow: str, wide: str) -> None:
    long = [line for line in narrow.splitlines() if cell_len(line) > 80]
    assert not long, long
    assert narrow.count("…") == wide.count("…"), narrow
    lost, added = text_chars(wide) - text_chars(narrow), text_chars(narrow) - text_chars(wide)
    assert not lost and not added, (dict(lost), dict(added), narrow)


def cli_at(width: int, *args) -> str:
    r = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": str(width)})
    assert r.exit_code in (0, 1), (r.exit_code, r.output)
    return r.stdout


def rendered(width: int, draw) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    draw(console)
    return console.export_text()


COMMANDS = [
    ("analyze", EX / "mc2-llc-heavy.toml"),
    ("analyze", EX / "mc2-llc-light.toml"),
    ("analyze", EX / "mc2-isolation.toml"),
    ("analyze", EX / "os-isolation.toml"),
    ("analyze", EX / "memguard-bombs.toml"),
    ("analyze", EX / "mrs-memory.toml"),
    ("analyze", EX / "mcti" / "McMt.toml"),
    ("analyze", EX / "mrs-synthetic.toml", "--check-sim", "--duration", "1s"),
    ("analyze", EX / "mrs-synthetic.toml", "--scheduler", "gedf"),
    ("simulate", EX / "mrs-synthetic.toml", "--duration", "10s"),
    ("simulate", EX / "mrs-memory.toml", "--duration", "1s"),
    ("simulate", EX / "mc2-llc-heavy.toml", "--duration", "2s"),
    ("simulate", EX / "memguard-bombs.toml", "--duration", "1s"),
    ("simulate", EX / "mcti" / "McMtC.toml", "--duration", "1s"),
    ("simulate", EX / "regulate" / "mrs-tables.toml", "--duration", "1s"),
    ("simulate", EX / "monitor" / "rt-with-loads.toml", "--duration", "1s"),
    ("optimize", EX / "study-fig15a.toml"),
    ("optimize", EX / "mc2-llc-heavy.toml"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(str(x).replace(str(EX) + "/", "") for x in a))
def test_command_output_fits_80_columns(args):
    assert_fits_80(cli_at(80, *args), cli_at(WIDE, *args))


def test_the_simulate_table_keeps_servers_and_job_counts():
    # The example: "Serve…" and "250/2…" at 80 columns.
    out = cli_at(80, "simulate", EX / "mrs-synthetic.toml", "--duration", "10s")
    assert "Server0" in out and "250/250" in out  # Task1: period 40 ms, 10 s


def test_load_sweep_table_fits_80_columns():
    from criticore.load import sweep as sw
    import numpy as np

    reads = np.repeat(np.array(sw.READS), len(sw.DELAYS))
    delays = np.tile(np.array(sw.DELAYS), len(sw.READS))
    grid = {"reads": reads, "delay": delays, "bytes_per_s": 12.34e9 / (1 + delays / 100) / (1 + reads)}
    draw = lambda c: c.print(sweep_table(grid, 0))  # noqa: E731
    assert_fits_80(rendered(80, draw), rendered(WIDE, draw))


def test_load_summary_fits_80_columns():
    run = gen.run(bandwidth_bytes_per_s=100e6, duration_ns=50_000_000, cpu=0, buffer_bytes=64 << 20)
    draw = lambda c: render_load(c, run, 0)  # noqa: E731
    assert_fits_80(rendered(80, draw), rendered(WIDE, draw))


GROUPS = [
    {"name": name, "budget": 12_500, "used_last_period": 12_731, "events_per_s": 9.8e6, "throttled_ns": 4_321_000_000, "stopped": k % 2 == 0}
    for k, name in enumerate(("core1-bombs", "core2", "core3"))
]


def test_regulate_tables_fit_80_columns():
    snapshot = {"elapsed_ns": 12_300_000_000, "periods": 12_300, "groups": GROUPS}
    per_group = [
        {**g, "used_per_period": 12_480.5, "ratio": 0.9984, "exhausted_periods": 11_999, "periods": 12_300,
         "overshoot_p50": 231.0, "overshoot_p99": 1_204.0, "overshoot_max": 20_311}
        for g in GROUPS
    ]
    summary = {
        "mode": "memguard", "elapsed_ns": 12_300_000_000, "period_ns": 1_000_000, "end": "duration reached",
        "counter": "raw:0x17 (LLC refills) on every CPU", "throttle": "signal (pidfd SIGSTOP/SIGCONT)",
        "notices": [], "warnings": [], "cpu_ns": 123_000_000, "lateness_p50_ns": 4_000, "lateness_p99_ns": 61_000,
        "reaction_p50_ns": 9_000, "reaction_p99_ns": 85_000,
    }
    run = SimpleNamespace(summary=summary, per_group=lambda: per_group, monitor_summary=lambda: None)
    compare = [
        {"kind": kind, "name": name, "what": what, "measured": m, "simulated": s, "replayed": s, "bound": b}
        for kind, name in (("task", "rt-matrix"), ("group", "core1-bombs"))
        for what, m, s, b in (
            ("jobs", 1_230, 1_230, None), ("deadline_misses", 0, 0, None), ("response_ms_mean", 7.123, 6.987, None),
            ("response_ms_max", 9.876, 9.001, 12.345), ("used_of_budget", 1.063, 1.0, None),
            ("exec_ms_median", 4.567, 4.491, None), ("exhausted_share", 0.975, 1.0, None), ("throttled_share", 0.35, 0.33, None),
        )
    ]

    def draw(c: Console) -> None:
        c.print(live_table(snapshot, 1_000_000, 64))
        render_run(c, "examples/regulate/four-loads.toml", run, 64)
        render_compare(c, compare)

    assert_fits_80(rendered(80, draw), rendered(WIDE, draw))


def test_monitor_experiment_summary_fits_80_columns():
    apps = [SimpleNamespace(label="rt-with-loads", file=EX / "monitor" / "rt-with-loads.toml", rt_task="rt", be_cores=[1, 2, 3])]
    rows = [{"application": "rt-with-loads", "threshold": 0.05, "loads": 125, "worst_none": 0.4312, "worst_monitor": 0.0487,
             "above_none": 96, "above_monitor": 0, "parallelism_mean": 0.8123, "parallelism_worst": 0.0512}]
    paths = {"data": Path("monitor-experiment/monitor.parquet"), "fig8": Path("monitor-experiment/fig8-overhead.png"),
             "fig9": Path("monitor-experiment/fig9-parallelism.png")}
    draw = lambda c: render_experiment(c, apps, rows, "quick", "100ms", 12.5, paths)  # noqa: E731
    assert_fits_80(rendered(80, draw), rendered(WIDE, draw))
