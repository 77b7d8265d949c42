"""``criticore simulate --memory transaction``: the request-level memory model
behind the same engine (docs/memory-model.md, "Transaction model")."""

from __future__ import annotations

from test_simulate_cli import EXAMPLES, run, simulate_json

MC2 = EXAMPLES / "mc2-isolation.toml"


def test_transaction_model_runs_an_mc2_example_and_counts_requests():
    report = simulate_json(MC2, "--memory", "transaction", "--duration", "200ms")
    assert report["memory_requests"] > 0
    tasks = {t["task"]: t for t in report["per_task"]}
    # Every task issues requests; the streaming co-runners miss on every line, far more than the µB task.
    assert tasks["ub"]["completed"] == 2 and tasks["ub"]["memory_requests"] > 0
    assert all(tasks[f"co{c}"]["memory_requests"] > 10 * tasks["ub"]["memory_requests"] for c in (1, 2, 3))


def test_fluid_is_the_default_and_no_memory_still_wins():
    default = simulate_json(MC2, "--duration", "100ms")
    fluid = simulate_json(MC2, "--memory", "fluid", "--duration", "100ms")
    assert default == fluid
    off = simulate_json(MC2, "--memory", "transaction", "--no-memory", "--duration", "100ms")
    assert off["memory_requests"] == 0


def test_quantum_option():
    report = simulate_json(MC2, "--memory", "transaction", "--quantum", "50us", "--duration", "50ms")
    assert report["memory_requests"] > 0
    p = run("simulate", MC2, "--quantum", "50us", "--duration", "10ms")
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "--quantum" in p.stderr


def test_unknown_memory_model_is_a_one_line_error_naming_the_option():
    p = run("simulate", MC2, "--memory", "foo", "--duration", "10ms")
    assert p.returncode == 2
    line = p.stderr.strip()
    assert "\n" not in line
    assert "--memory" in line and "foo" in line
    assert p.stdout == ""
