"""`criticore import amalthea` and :func:`criticore.import_amalthea` (issue 27,
docs/amalthea.md): the CLI's file and summary line, what it never writes
over, one-line errors; and the WATERS 2017 challenge's per-core utilizations
worked out here a second way, from the XML with xml.etree."""

from __future__ import annotations

import gzip
import json
import shutil
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest

from criticore import InputError, TaskSystem, import_amalthea
from cli_run import ROOT, one_line_error, run

FIXTURES = ROOT / "crates" / "criticore" / "tests" / "amalthea"
V07 = FIXTURES / "v07-small.amxmi"
V2 = FIXTURES / "v2-small.amxmi"
#: The challenge model lives in the shared data folder beside the repository.
WATERS = ROOT.parent / "shared" / "data" / "waters2017-challenge.amxmi.gz"
UPPER = [0.970, 1.336, 1.069, 1.179]
MEAN = [0.715, 0.884, 0.714, 0.772]


def test_cli_writes_the_file_and_prints_the_summary_line(tmp_path):
    out = tmp_path / "s.toml"
    p = run("import", "amalthea", V07, "-o", out)
    assert p.returncode == 0, p.stderr
    line, wrote = p.stdout.strip().splitlines()
    assert line.startswith("imported 3 tasks on 2 cores; not represented yet: 1 label accesses to labels in no memory, 1 labels in no memory,")
    assert wrote == f"wrote {out}"
    system = TaskSystem.load(out)
    periodic = next(t for t in system.tasks if t.name == "T_periodic")
    # 17,000 instructions at 200 MHz, two per cycle (docs/amalthea.md), and
    # implicit communication's copy-in of L1 (a word read and written, a
    # cycle each: 10 ns; docs/format.md "Copies of labels").
    assert (periodic.core, periodic.period_ns, periodic.priority, periodic.pet_ns["A"]) == (0, 10_000_000, 10, 42_500 + 10)
    assert (periodic.communication, periodic.copy_in_ns, periodic.copy_out_ns) == ("implicit", 10, 0)
    # Its runnables in call order, 3,000, 4,000 and 10,000 instructions at 2.5 ns.
    assert periodic.runnables == (("R1", 7_500), ("R2", 10_000), ("R4", 25_000))
    assert line in out.read_text()


def test_scale_multiplies_before_rounding_up(tmp_path):
    out = tmp_path / "s.toml"
    assert run("import", "amalthea", V07, "-o", out, "--scale", "0.333").returncode == 0
    periodic = next(t for t in TaskSystem.load(out).tasks if t.name == "T_periodic")
    assert periodic.pet_ns["A"] - periodic.copy_in_ns == 14_153  # 42,500 ns x 0.333 = 14,152.5 (the copies are not scaled)


def test_an_existing_output_is_kept_unless_force_and_the_model_never(tmp_path):
    out = tmp_path / "s.toml"
    out.write_text("# mine\n")
    one_line_error(run("import", "amalthea", V07, "-o", out), str(out), "--output", "exists; pass --force to overwrite")
    assert out.read_text() == "# mine\n"
    assert run("import", "amalthea", V07, "-o", out, "--force").returncode == 0
    assert out.read_text().startswith("# Imported from")
    model = tmp_path / "m.toml"
    shutil.copy(V07, model)
    one_line_error(run("import", "amalthea", model, "-o", model, "--force"), "--output", "never written over, --force or not")
    assert model.read_bytes() == V07.read_bytes()


def test_bad_input_is_one_line_with_exit_2_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.amxmi"
    bad.write_text(V07.read_text().replace('priority="20"', 'priority="high"'))
    out = tmp_path / "s.toml"
    line = one_line_error(run("import", "amalthea", bad, "-o", out))
    assert line == f'error: {bad}: swModel.tasks[T_sporadic].priority: expected an integer, got "high"'
    assert not out.exists()
    one_line_error(run("import", "amalthea", V07, "-o", out, "--scale", "-1"), "--scale", "must be a positive number")
    one_line_error(run("import", "amalthea", tmp_path / "none.amxmi", "-o", out), "none.amxmi", "cannot read")


def test_the_api_returns_the_system_the_summary_and_the_model():
    imp = import_amalthea(V2, scale=0.7)
    assert [t.name for t in imp.system.tasks] == ["A", "B", "C", "D"]
    # A: 2,500 ticks at 400 MHz = 6,250 ns, x 0.7 = 4,375 ns.
    assert imp.system.tasks[0].pet_ns["A"] == 4_375
    assert (imp.summary["tasks"], imp.summary["cores"]) == (4, 2)
    assert ["non-CPU processing units", 1] in imp.summary["not_represented"]
    assert imp.summary["line"].startswith("imported 4 tasks on 2 cores; not represented yet: ")
    m = imp.model
    assert m["version"] == "2.1.0"
    assert [m["runnables"][r]["name"] for r in m["tasks"][0]["steps"]] == ["Ra", "Rb", "Rd"]
    assert m["tasks"][1]["stimulus"] == {"kind": "relative_periodic", "min_ns": 4_000_000, "max_ns": 6_000_000, "offset_ns": 1_000_000, "distribution": "TimeUniformDistribution"}
    # The task system's spelling (docs/format.md), in the model as read and in the system.
    assert m["tasks"][2]["preemption"] == "non-preemptive"
    assert imp.system.tasks[2].preemption == "non-preemptive"
    # OSEK's activation limits, as the 0.7 fixture's tasks state them.
    assert [t.activation_limit for t in import_amalthea(V07).system.tasks] == [1, 2, None]
    assert m["labels"][0]["memory"] == 0 and m["memories"][0]["name"] == "RAM0"
    assert imp.toml.startswith(f"# Imported from {V2} by `criticore import amalthea`")
    with pytest.raises(InputError) as e:
        import_amalthea(V2, scale="zero")
    assert (e.value.field, e.value.reason) == ("--scale", 'must be a positive number, got "zero"')


def _waters_utilizations(path: Path) -> tuple[list[float], list[float]]:
    """Per-core utilization at the upper bounds and at the means, from the XML
    alone: instructions of every runnable a task calls, at its core's clock
    (quartz frequency x prescaler ratio) and one instruction per cycle, over
    its period (sporadic: the shortest inter-arrival time)."""
    xsi = "{http://www.w3.org/2001/XMLSchema-instance}type"
    root = ET.parse(gzip.open(path)).getroot()
    ref = lambda s: s.split("?")[0]  # noqa: E731
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    needs = {}
    for r in root.iter("runnables"):
        d = r.find("runnableItems/default/deviation")
        needs[r.get("name")] = (float(d.find("upperBound").get("value")), float(d.find("distribution/mean").get("value")))
    period = {}
    for s in root.find("stimuliModel"):
        t = s.find("recurrence") if s.get(xsi) == "am:Periodic" else s.find("stimulusDeviation/lowerBound")
        period[s.get("name")] = float(t.get("value")) * unit[t.get("unit")]
    quartz = {q.get("name"): float(q.find("frequency").get("value")) for q in root.iter("quartzes")}
    clock = {c.get("name"): quartz[ref(c.find("prescaler").get("quartz"))] * float(c.find("prescaler").get("clockRatio")) for c in root.iter("cores")}
    mapping = root.find("mappingModel")
    core_of_scheduler = {ref(a.get("scheduler")): ref(a.get("core")) for a in mapping.iter("coreAllocation")}
    core_of_task = {ref(a.get("task")): core_of_scheduler[ref(a.get("scheduler"))] for a in mapping.iter("taskAllocation")}
    cores = sorted(clock)
    upper, mean = defaultdict(float), defaultdict(float)
    for t in root.find("swModel").iter("tasks"):
        core = core_of_task[t.get("name")]
        calls = [ref(c.get("runnable")) for c in t.iter("calls")]
        p = period[ref(t.get("stimuli"))]
        upper[core] += sum(needs[c][0] for c in calls) / clock[core] / p
        mean[core] += sum(needs[c][1] for c in calls) / clock[core] / p
    return [upper[c] for c in cores], [mean[c] for c in cores]


@pytest.mark.skipif(not WATERS.is_file(), reason=f"the WATERS 2017 model is not at {WATERS}")
def test_waters_2017_per_core_utilizations():
    upper, mean = _waters_utilizations(WATERS)
    assert upper == pytest.approx(UPPER, abs=0.001)
    assert mean == pytest.approx(MEAN, abs=0.001)
    imp = import_amalthea(WATERS)
    from_system = [0.0] * imp.system.platform.cores
    for t in imp.system.tasks:
        # The execution needs: the PET less implicit communication's copies.
        from_system[t.core] += (t.pet_ns["A"] - t.copy_in_ns - t.copy_out_ns) / t.period_ns
    assert from_system == pytest.approx(UPPER, abs=0.001)
    assert from_system == pytest.approx(upper, abs=1e-6)  # whole-ns rounding only


@pytest.mark.skipif(not WATERS.is_file(), reason=f"the WATERS 2017 model is not at {WATERS}")
def test_waters_2017_with_its_label_accesses_bounds_hold_over_10_s(tmp_path):
    """Issue 27 acceptance: imported at --scale 0.7 with its memories, labels
    and label accesses (the crossbar, docs/memory-model.md), every task and
    chain gets a bound under pfp, and none is exceeded in 10 s of simulation
    (`analyze --check-sim`). Angle_Sync's utilization with its accesses'
    latency is over 1 on core 1: its activation limit of one bounds it."""
    f = tmp_path / "w07.toml"
    p = run("import", "amalthea", WATERS, "-o", f, "--scale", "0.7")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "imported 21 tasks on 4 cores"
    p = run("analyze", f, "--check-sim", "--duration", "10s", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert any("waits at the memories' ports per window" in n for n in r["notes"]), r["notes"]
    rows = {x["task"]: x for x in r["check_sim"]}
    assert len(rows) == 21 and all(x["bound_ns"] is not None and x["holds"] for x in rows.values()), rows
    # The accesses cost: each task's simulated worst beyond its CPU-only PET share.
    assert rows["Angle_Sync"]["simulated_max_ns"] > 6_660_000 and rows["Angle_Sync"]["simulated_misses"] > 0
    chains = {c["chain"]: c for c in r["check_sim_chains"]}
    assert set(chains) == {"EffectChain_1", "EffectChain_2", "EffectChain_3"}
    assert all(c["holds"] for c in chains.values()), chains


@pytest.mark.skipif(not WATERS.is_file(), reason=f"the WATERS 2017 model is not at {WATERS}")
def test_waters_2017_label_placement_makes_it_schedulable(tmp_path):
    """Issue 27 Build 7 (the challenge's third question): at --scale 0.7 with
    implicit communication Angle_Sync's bound is past its deadline (worst
    bound / deadline > 1); `criticore optimize` moves labels within the
    memories' sizes until every bound is within its deadline, and the placed
    file's bounds hold over 10 s of simulation with no miss."""
    f, placed = tmp_path / "w07.toml", tmp_path / "placed.toml"
    assert run("import", "amalthea", WATERS, "-o", f, "--scale", "0.7").returncode == 0
    p = run("optimize", f, "-o", placed, "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["before"]["worst"] > 1 > report["after"]["worst"], report
    assert report["moves"] and report["analyses"] <= report["budget"]
    # Within the memories' sizes: the placed file parses (it refuses labels that overflow a memory).
    p = run("analyze", placed, "--check-sim", "--duration", "10s", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["schedulable"] and all(x["holds"] and x["simulated_misses"] == 0 for x in r["check_sim"]), r["check_sim"]
