"""The simulation options through the library (issue 24): one SimOptions
object from the library (and the CLI) to the engine; durations take unit
strings or integers like the file; any other value is an InputError naming
the argument, never an OverflowError or a TypeError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import criticore
from criticore.simulation import SimOptions
from criticore.simulation.batch import simulate_many as batch_simulate_many
from criticore.simulation.run import simulate as run_simulate

ROOT = Path(__file__).resolve().parents[2]
MRS = ROOT / "examples" / "mrs-synthetic.toml"
BOMBS = ROOT / "examples" / "memguard-bombs.toml"


def test_durations_take_unit_strings_like_the_file():
    by_text = criticore.simulate(MRS, "10ms", bin_ns="1ms")
    by_ns = criticore.simulate(MRS, 10_000_000, bin_ns=1_000_000)
    assert by_text.duration_ns == 10_000_000
    # 10 ms in bins of 1 ms on the file's 2 cores: 20 rows, the same either way.
    assert by_text.bandwidth.num_rows == 2 * 10
    assert by_text.bandwidth.equals(by_ns.bandwidth)
    assert by_text.completed == by_ns.completed


def test_the_transaction_quantum_takes_a_unit_string():
    a = criticore.simulate(BOMBS, "2ms", memory_model="transaction", quantum_ns="20us")
    b = criticore.simulate(BOMBS, "2ms", memory_model="transaction", quantum_ns=20_000)
    assert a.memory_requests > 0
    assert (a.completed, a.memory_requests, a.memory_stall_ns) == (b.completed, b.memory_requests, b.memory_stall_ns)


def test_the_streaming_run_and_the_batch_take_unit_strings():
    run = run_simulate(MRS, "10ms", bin_ns="1ms")
    assert run.report["duration_ns"] == 10_000_000 and run.bin_ns == 1_000_000
    rows = batch_simulate_many([MRS, MRS], "10ms", seed=3)
    assert rows.column("duration_ns").to_pylist() == [10_000_000, 10_000_000]


BAD = [
    ((2**70,), {}, "duration", "must be at most 2^64 − 1"),
    ((-1,), {}, "duration", "must be positive"),
    ((2.5,), {}, "duration", "expected ns (int) or a string with a unit"),
    (("10ms",), {"bin_ns": -5}, "bin_ns", "must be positive"),
    (("10ms",), {"bin_ns": 2**70}, "bin_ns", "must be at most 2^64 − 1"),
    (("10ms",), {"quantum_ns": 0, "memory_model": "transaction"}, "quantum_ns", "must be positive"),
    (("10ms",), {"seed": -1}, "seed", "must be between 0 and 2^64 − 1"),
    (("10ms",), {"seed": 2**70}, "seed", "must be between 0 and 2^64 − 1"),
    (("10ms",), {"seed": "7"}, "seed", "expected an integer"),
    (("10ms",), {"exec_level": 3}, "exec_level", "expected a name (a string), got int"),
    (("10ms",), {"jobs": "yes"}, "jobs", "expected True or False, got str"),
    (("10ms",), {"best_case_fraction": "half"}, "best_case_fraction", "expected a number, got str"),
]


@pytest.mark.parametrize(("args", "kwargs", "field", "reason"), BAD)
def test_a_bad_option_is_an_input_error_naming_it(args, kwargs, field, reason):
    for simulate in (criticore.simulate, run_simulate):
        with pytest.raises(criticore.InputError) as e:
            simulate(MRS, *args, **kwargs)
        assert (e.value.file, e.value.field, e.value.reason) == (str(MRS), field, reason)
        assert "\n" not in str(e.value)


def test_a_unit_string_the_parser_refuses_names_the_argument():
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate(MRS, "10ms", bin_ns="1 parsec")
    assert e.value.field == "bin_ns"


@pytest.mark.parametrize(("kwargs", "field"), [({"seed": -1}, "seed"), ({"seed": 2**70}, "seed"), ({"quantum_ns": -5}, "quantum_ns")])
def test_many_systems_check_their_options_too(kwargs, field):
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate_many([MRS, MRS], "10ms", **kwargs)
    assert (e.value.file, e.value.field) == (str(MRS), field)
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate_many([MRS], 2**70)
    assert e.value.field == "duration"


def test_many_systems_refuse_per_system_records():
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate_many([MRS, MRS], "10ms", jobs=True)
    assert (e.value.field, e.value.reason) == ("jobs", "a batch keeps one summary row per system; simulate one system for its records")


def test_optimize_refuses_a_seed_out_of_range():
    for seed in (-1, 2**70):
        with pytest.raises(criticore.InputError) as e:
            criticore.optimize(ROOT / "examples" / "study-fig15a.toml", seed=seed)
        assert (e.value.field, e.value.reason) == ("seed", "must be between 0 and 2^64 − 1")


def test_one_options_object_carries_every_option_to_the_engine():
    options = SimOptions.of("x", "1s", scheduler="pfp", seed=7, exec_level="B", best_case_fraction=0.5, regulator="none",
                            memory=False, memory_model="transaction", quantum_ns="40us", bin_ns="2ms", jobs=True, segments=True, trace=True)
    assert options == SimOptions(
        duration_ns=1_000_000_000, scheduler="pfp", seed=7, exec_level="B", best_case_fraction=0.5, regulator="none",
        memory=False, memory_model="transaction", quantum_ns=40_000, bin_ns=2_000_000, jobs=True, segments=True, trace=True,
    )
    with pytest.raises(AttributeError):
        options.seed = 8  # frozen: one value from the caller to the engine
    # The seed reaches the engine: the same seed gives the same run, another seed may not.
    jitter = criticore.simulate(MRS, "50ms", seed=7, best_case_fraction=0.2, jobs=True)
    again = criticore.simulate(MRS, "50ms", seed=7, best_case_fraction=0.2, jobs=True)
    assert jitter.jobs.equals(again.jobs)
    others = [criticore.simulate(MRS, "50ms", seed=s, best_case_fraction=0.2, jobs=True).jobs for s in (1, 2, 3)]
    assert any(not o.equals(jitter.jobs) for o in others)


@pytest.mark.parametrize("command", [["simulate", str(MRS), "-d", "10ms"], ["plot", "gantt", str(MRS), "-o", "g.png"]])
def test_the_cli_refuses_a_seed_the_engine_cannot_hold(command, tmp_path):
    for seed in (2**64, -1):
        reason = "must be between 0 and 2^64 − 1"
        done = subprocess.run([sys.executable, "-m", "criticore", *command, "--seed", str(seed)], capture_output=True, text=True, cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {MRS}: --seed: {reason}\n")
    assert not (tmp_path / "g.png").exists()


def test_a_bandwidth_series_too_fine_for_memory_is_refused_by_the_library():
    # 10 s in 1 ns bins: 10^10 bins per core, beyond MAX_BINS (10^7): refused before running.
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate(MRS, "10s", bin_ns=1)
    assert e.value.field == "bin_ns" and "10,000,000,000 bins" in str(e.value)
    # 10 ms in 1 µs bins: 10^4 bins, well within.
    assert criticore.simulate(MRS, "10ms", bin_ns="1us").bandwidth.num_rows == 2 * 10_000


@pytest.mark.parametrize("threads", [0, -1, 2**70, 1.5, True])
def test_batch_threads_out_of_range_are_input_errors(threads):
    with pytest.raises(criticore.InputError) as e:
        criticore.simulate_many([MRS], "10ms", threads=threads)
    assert e.value.field == "threads"
