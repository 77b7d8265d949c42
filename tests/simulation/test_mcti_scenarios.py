"""The eight MCTI scenarios of mcti-task-isolation §7.2, Tables 2-3
(examples/mcti/ScSt.toml ... McMtC.toml) and the paper's qualitative results:

- Obs. 4: ScStC has the lowest response time;
- Obs. 5 / §8: with a non-critical co-runner on its CPU, a critical TUA (ScMtC)
  stays close to running alone (ScSt) and never above the no-MCTI case (ScMt);
- Obs. 6-7 / §8: the same with memory bombs on the other CPUs (McStC, McMtC).

docs/examples-mcti.md has the measured response times.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from criticore.simulation import SimRun, simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mcti"
SCENARIOS = ["ScSt", "ScStC", "ScMt", "ScMtC", "McSt", "McStC", "McMt", "McMtC"]
MS = 1_000_000
# Longer than the slowest scenario (ScMt, about 3.4 s).
DURATION_NS = 6_000 * MS
PET_MS, U0 = 500.0, 0.5

# ScMtC/McMtC "close to" ScSt/McSt: at most 10% above. The paper reports ScMtC
# "equivalent" to ScSt, with "marginal increases" only at 5% CBS utilization
# (Obs. 5), and McMtC "between McSt (our target) and McStC (the best case)"
# (Obs. 7). One-sided: under the §4 rules a critical TUA is never stalled by its
# CPU's budget (rule 5), whoever spent it, so with a co-runner it approaches
# ScStC, below ScSt. The paper's hardware sits nearer ScSt for reasons the
# simulator does not model (hypervisor/OS period misalignment, §7.2.1, §8).
CLOSE = 1.10

_runs: dict[tuple[str, str | None], SimRun] = {}


def run(name: str, regulator: str | None = None) -> SimRun:
    """The scenario under the file's MCTI regulation, or under `regulator`."""
    key = (name, regulator)
    if key not in _runs:
        _runs[key] = simulate(EXAMPLES / f"{name}.toml", DURATION_NS, jobs=True, regulator=regulator)
    return _runs[key]


def tua_response_ms(r: SimRun) -> float:
    """Response time of the TUA's one job (task 0), inf if unfinished in the run."""
    assert r.report["per_task"][0]["task"] == "tua"
    jobs = r.jobs
    mine = jobs["task"] == 0
    if not mine.any():
        return math.inf
    assert mine.sum() == 1
    return float((jobs["finish_ns"][mine] - jobs["release_ns"][mine])[0]) / MS


@pytest.fixture(scope="module")
def rt() -> dict[str, float]:
    """TUA response time (ms) per scenario, under MCTI."""
    return {name: tua_response_ms(run(name)) for name in SCENARIOS}


def finished(rt: dict[str, float], *names: str) -> None:
    """A comparison needs the response times it compares: inf < inf proves nothing."""
    unfinished = [n for n in names if math.isinf(rt[n])]
    assert not unfinished, f"TUA unfinished after {DURATION_NS // MS} ms in {unfinished}: {rt}"


def test_every_tua_finishes(rt):
    finished(rt, *SCENARIOS)


def test_scstc_runs_at_its_reservation_rate(rt):
    # Alone on the platform and critical: rule 5 never stalls it and nothing else
    # loads the bus, so it works U0 ms per ms: PET / U0 (within 2%). This also
    # catches a cache reload charged on each of its 1,000 CBS resumptions.
    finished(rt, "ScStC")
    assert rt["ScStC"] == pytest.approx(PET_MS / U0, rel=0.02), rt


def test_scstc_has_the_lowest_response_time(rt):
    # Obs. 4; strictly below ScSt because the budget binds in phases 1 and 3.
    finished(rt, *SCENARIOS)
    assert rt["ScStC"] < rt["ScSt"], rt
    assert rt["ScStC"] == min(rt.values()), rt


def test_the_corunner_is_the_worst_case_without_mcti(rt):
    # §8: ScMt (McMt) is the worst case. Makes the "never above" checks below bite.
    finished(rt, *SCENARIOS)
    assert rt["ScMt"] == max(rt[n] for n in SCENARIOS if n.startswith("Sc")), rt
    assert rt["McMt"] == max(rt[n] for n in SCENARIOS if n.startswith("Mc")), rt
    assert rt["ScMt"] > 1.5 * rt["ScSt"] and rt["McMt"] > 1.5 * rt["McSt"], rt


def test_single_core_critical_task_is_shielded_from_its_corunner(rt):
    # Obs. 5: ScMtC never above ScMt, close to ScSt (see CLOSE), not below ScStC.
    finished(rt, "ScSt", "ScStC", "ScMt", "ScMtC")
    assert rt["ScMtC"] <= rt["ScMt"], rt
    assert rt["ScMtC"] <= CLOSE * rt["ScSt"], rt
    assert rt["ScMtC"] >= rt["ScStC"], rt


def test_multi_core_critical_task_is_shielded_from_corunner_and_bombs(rt):
    # Obs. 6-7, §8 with memory bombs on CPU1-3.
    finished(rt, "McSt", "McStC", "McMt", "McMtC")
    assert rt["McStC"] <= rt["McSt"], rt
    assert rt["McMtC"] <= rt["McMt"], rt
    assert rt["McMtC"] <= CLOSE * rt["McSt"], rt


@pytest.mark.parametrize("base", ["ScSt", "ScMt", "McSt", "McMt"])
def test_criticality_only_matters_under_mcti(base):
    # Plain MemGuard (rules 1-4) ignores criticality: the critical scenario run
    # without MCTI is the non-critical one, job for job.
    critical = run(base + "C", "memguard")
    plain = run(base, "memguard")
    assert tua_response_ms(critical) < math.inf
    assert critical.report == plain.report
    assert critical.jobs.keys() == plain.jobs.keys()
    for column in critical.jobs:
        np.testing.assert_array_equal(critical.jobs[column], plain.jobs[column], err_msg=column)
    # And MCTI with only non-critical tasks behaves as MemGuard (rules 1-4 only).
    assert run(base).report["per_task"] == plain.report["per_task"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_overload_intervals_only_in_critical_scenarios(name):
    states = run(name).report["regulation"]["states"]
    overload = [s for s in states if s["state"] == "overload"]
    if name.endswith("C"):
        # Rule 5 fires on CPU0, the TUA's CPU, and only there.
        assert overload and {s["index"] for s in overload} == {0}, states
    else:
        assert not overload, states
    # The bombs' large budgets (§7.2) never stall CPU1-3.
    assert all(s["index"] == 0 for s in states), states
