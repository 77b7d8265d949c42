"""Cause-effect chains through the CLI and the Python front (issue 27,
Build 6; docs/format.md ``[[chain]]``): examples/chains.toml's bounds worked
out by hand from its response bounds, and every simulated latency within them."""

from __future__ import annotations

import json

import criticore
from cli_run import ROOT, run

EXAMPLE = ROOT / "examples" / "chains.toml"
MS = 1_000_000


def test_the_example_s_bounds_by_hand_and_the_run_within_them():
    a = criticore.analyze(EXAMPLE)
    bounds = {c.name: c for c in a.chains}
    # Response bounds: sensor 1 (5 ms period), control 6 + 2 x 1 = 8 (20 ms),
    # filter 3 (10 ms), actuate 2 + 3 = 5 (20 ms, LET: written at the end of its period).
    r = {t.task: t.bound_ns for t in a.tasks}
    assert r == {"sensor": 1 * MS, "control": 8 * MS, "filter": 3 * MS, "actuate": 5 * MS}
    # Reaction (5 + 1) + (10 + 3) + (20 + 8) + (20 + 20) = 87 ms; data age 6 + 13 + 28 + 20 = 67 ms.
    assert (bounds["sense-to-act"].reaction_ns, bounds["sense-to-act"].data_age_ns) == (87 * MS, 67 * MS)
    # Sensor to control: (5 + 1) + (20 + 8) = 34 ms; data age 6 + 8 = 14 ms.
    assert (bounds["sense-to-control"].reaction_ns, bounds["sense-to-control"].data_age_ns) == (34 * MS, 14 * MS)
    assert bounds["sense-to-act"].tasks == ("sensor", "filter", "control", "actuate")
    sim = criticore.simulate(EXAMPLE, "2s")
    for c in sim.chains:
        assert c.reactions > 0 and c.outputs > 0
        assert c.max_reaction_ns <= bounds[c.chain].reaction_ns
        assert c.max_data_age_ns <= bounds[c.chain].data_age_ns
        assert c.mean_reaction_ns <= c.p99_reaction_ns <= c.max_reaction_ns


def test_the_cli_shows_and_writes_the_chains(tmp_path):
    p = run("simulate", EXAMPLE, "--duration", "1s")
    assert p.returncode == 0, p.stderr
    assert "Cause-effect chains (simulated)" in p.stdout and "sense-to-act" in p.stdout
    # Each hop of a chain is a flow arrow in the trace: a start and an end per id.
    trace = tmp_path / "t.json"
    assert run("simulate", EXAMPLE, "--duration", "200ms", "--trace", trace).returncode == 0
    flows = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "chain"]
    starts = sorted(e["id"] for e in flows if e["ph"] == "s")
    assert starts and starts == sorted(e["id"] for e in flows if e["ph"] == "f")
    assert {e["name"] for e in flows} == {"sense-to-act", "sense-to-control"}
    p = run("analyze", EXAMPLE, "--json")
    assert p.returncode == 0, p.stderr
    chains = json.loads(p.stdout)["chains"]
    assert [c["name"] for c in chains] == ["sense-to-act", "sense-to-control"]
    # A file without chains writes no "chains" key.
    q = run("analyze", ROOT / "examples" / "mrs-synthetic.toml", "--json")
    assert "chains" not in json.loads(q.stdout)
