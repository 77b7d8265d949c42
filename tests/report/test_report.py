"""`criticore report` (issue 25, Build item 8: "The loop made visible").

Every example the simulator runs gets a page; every page opens in headless
Chromium with no console error and draws something (a screenshot of more
than one colour), and fetches nothing (no script, link, image or url()). On
the examples with a regulator, the Gantt chart has one element per interval
of the regulator's state in its window and one mark per deadline, counted
independently: intervals from a separate simulation as long as the window
(its summary's `regulation.states`), deadlines and releases from the file's
periods, deadlines and offsets. Bad options are one line and exit 2.

The CLI runs as a user runs it (tests/cli_run.py); Chromium is Debian's
`chromium` (`make test` installs it); where it cannot start, the Chromium
tests are skipped with the reason, never passed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import criticore
from criticore.errors import InputError
from criticore.report.page import state_shares
from cli_run import EXAMPLES, one_line_error, run

#: As tools/example_outputs.py picks them: every task-system file under examples/.
EXAMPLE_FILES = sorted(EXAMPLES.rglob("*.toml"))
MS = 1_000_000
SVG_NS = "{http://www.w3.org/2000/svg}"


def _id(path: Path) -> str:
    return str(path.relative_to(EXAMPLES))


def _refusal(path: Path) -> InputError | None:
    """Why the simulator refuses the file (an overhead table, a file to optimize first), or None."""
    try:
        criticore.simulate(path, "1ms")
    except InputError as e:
        return e
    return None


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[Path, tuple[subprocess.CompletedProcess, Path]]:
    """`criticore report EXAMPLE -o PAGE --duration 100ms` for every example, two at a time."""
    out = tmp_path_factory.mktemp("pages")

    def one(example: Path):
        page = out / (_id(example).replace("/", "__").removesuffix(".toml") + ".html")
        return example, (run("report", example, "-o", page, "--duration", "100ms"), page)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, EXAMPLE_FILES))


# --------------------------------------------------------------------------- what a page holds

FETCHES = re.compile(r"<(script|link|iframe|img|object|embed|audio|video|source)\b|\b(src|href)\s*=|url\(|@import", re.IGNORECASE)


def svgs(text: str) -> dict[str, ET.Element]:
    """Every inline chart, parsed as XML (so each is well formed), by its aria-label."""
    found = {}
    for m in re.finditer(r"<svg\b.*?</svg>", text, re.DOTALL):
        root = ET.fromstring(m.group(0))
        found[root.get("aria-label")] = root
    return found


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("class") == cls]


def test_svgs_and_by_class_find_what_they_are_given():
    text = ('<p>x</p><svg xmlns="http://www.w3.org/2000/svg" aria-label="a"><rect class="interval stalled"/>'
            '<rect class="interval stalled"/><path class="deadline"/></svg><svg xmlns="http://www.w3.org/2000/svg" aria-label="b"></svg>')
    found = svgs(text)
    assert list(found) == ["a", "b"]
    assert len(by_class(found["a"], "interval stalled")) == 2 and len(by_class(found["a"], "deadline")) == 1
    assert FETCHES.search('<link rel="stylesheet" href="x.css">') and FETCHES.search("background: url(x.png)")
    assert not FETCHES.search('<svg xmlns="http://www.w3.org/2000/svg">')


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=_id)
def test_every_example_gets_a_page_or_the_simulators_one_line_error(pages, example: Path):
    p, page = pages[example]
    refused = _refusal(example)
    if refused is not None:
        # The page needs the simulation: the simulator's own line, nothing written.
        one_line_error(p, refused.field, refused.reason)
        assert not page.exists()
        return
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"wrote {page}"), p.stdout
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert not FETCHES.search(text), FETCHES.search(text).group(0)
    charts = svgs(text)
    for label in ("response-time distributions per task", "Gantt chart with regulator intervals and deadlines"):
        assert label in charts, list(charts)
    for section in ("<h2>System</h2>", "<h2>Analysis</h2>", "<h2>Response times</h2>", "<h2>Gantt chart</h2>",
                    "<h2>Memory bandwidth per core</h2>", "<h2>Regulation over time</h2>"):
        assert section in text
    # One row of boxes per task of the file.
    system = criticore.TaskSystem.load(example)
    assert len(by_class(charts["response-time distributions per task"], "box-row")) == len(system.tasks)


def test_most_examples_are_simulated():
    assert sum(_refusal(f) is None for f in EXAMPLE_FILES) >= 15


# --------------------------------------------------------------------------- in Chromium


def chromium_binary() -> str:
    """Debian's chromium, or a skip with the reason (counted, never a pass)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (make test installs Debian's package `chromium`)")
    return found


def browse(binary: str, page: Path, png: Path, profile: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Open ``page`` headless, screenshot it to ``png``; the console's lines
    (chromium logs each console message and uncaught error as a CONSOLE line
    with --enable-logging=stderr) and failed loads."""
    p = subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
         "--disable-extensions", f"--user-data-dir={profile}", "--window-size=1100,1600", f"--screenshot={png}",
         "--enable-logging=stderr", "--v=0", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line or "net::ERR" in line]
    return p, console


def colours(png: Path) -> int:
    """How many colours the image has (2 means at least two)."""
    from PIL import Image

    with Image.open(png) as im:
        return 1 if im.convert("RGB").getcolors(1) is not None else 2


@pytest.fixture(scope="module")
def chromium(tmp_path_factory) -> str:
    """The binary, once it has shown a trivial page; else a skip with its last words."""
    binary = chromium_binary()
    d = tmp_path_factory.mktemp("chromium")
    page = d / "trivial.html"
    page.write_text("<!DOCTYPE html><html><body><h1>criticore</h1></body></html>")
    p, _ = browse(binary, page, d / "trivial.png", d / "profile")
    if p.returncode != 0 or not (d / "trivial.png").exists():
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"chromium cannot run here (exit {p.returncode}): {last}")
    return binary


def test_the_console_check_sees_an_error_and_the_colour_check_a_blank(chromium, tmp_path: Path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><p>x</p><script>console.error("report-check"); nope();</script></body></html>')
    _, console = browse(chromium, page, tmp_path / "bad.png", tmp_path / "profile")
    assert any("report-check" in line for line in console) and any("Uncaught" in line for line in console), console
    from PIL import Image

    Image.new("RGB", (40, 30), "white").save(tmp_path / "blank.png")
    assert colours(tmp_path / "blank.png") == 1 and colours(tmp_path / "bad.png") == 2


def test_every_page_opens_in_chromium_without_console_errors(pages, chromium, tmp_path: Path):
    written = [(example, page) for example, (p, page) in pages.items() if p.returncode == 0]
    assert len(written) >= 15

    def one(item):
        example, page = item
        png = tmp_path / (page.stem + ".png")
        p, console = browse(chromium, page, png, tmp_path / f"profile-{page.stem}")
        problems = []
        if p.returncode != 0:
            problems.append(f"exit {p.returncode}")
        if not png.exists() or png.stat().st_size == 0:
            problems.append("no screenshot")
        elif colours(png) == 1:
            problems.append("a screenshot of one colour")
        problems += console
        return _id(example), problems

    with ThreadPoolExecutor(2) as pool:
        failed = {name: problems for name, problems in pool.map(one, written) if problems}
    assert not failed, failed


# --------------------------------------------------------------------------- the Gantt chart's counts

WINDOW_MS = 100


def deadlines_and_releases(system: criticore.TaskSystem, window_ns: int) -> tuple[int, int]:
    """Of periodic tasks, the jobs whose deadline falls in [0, window] and the
    releases in [0, window): the k ≥ 0 with offset + k·T + D ≤ W, and with offset + k·T < W."""
    deadlines = releases = 0
    for t in system.tasks:
        if window_ns >= t.offset_ns + t.deadline_ns:
            deadlines += (window_ns - t.offset_ns - t.deadline_ns) // t.period_ns + 1
        if window_ns > t.offset_ns:
            releases += (window_ns - t.offset_ns - 1) // t.period_ns + 1
    return deadlines, releases


@pytest.mark.parametrize(
    "name, state",
    [("memguard-bombs.toml", "stalled"), ("mcti/McMtC.toml", "overload"), ("monitor/rt-with-loads.toml", "suspended"), ("mrs-memory.toml", "depleted")],
)
def test_the_gantt_chart_has_every_regulator_interval_and_deadline_of_its_window(tmp_path: Path, name: str, state: str):
    example = EXAMPLES / name
    system = criticore.TaskSystem.load(example)
    assert all(t.get("arrival", "periodic") == "periodic" for t in system.to_dict()["task"])  # releases at offset + k·T
    page = tmp_path / "r.html"
    p = run("report", example, "-o", page, "--duration", f"{2 * WINDOW_MS}ms", "--window", f"{WINDOW_MS}ms")
    assert p.returncode == 0, p.stderr
    gantt = svgs(page.read_text(encoding="utf-8"))["Gantt chart with regulator intervals and deadlines"]
    # A separate simulation as long as the window: its summary counts the intervals (an open one closed at its end).
    window = criticore.simulate(example, f"{WINDOW_MS}ms")
    expected = sum(x["intervals"] for x in window.json["regulation"]["states"] if x["state"] == state)
    assert expected > 0
    assert len(by_class(gantt, f"interval {state}")) == expected
    assert all(len(by_class(gantt, f"interval {other}")) == 0 for other in ("stalled", "overload", "suspended", "depleted") if other != state)
    deadlines, releases = deadlines_and_releases(system, WINDOW_MS * MS)
    assert len(by_class(gantt, "deadline")) == deadlines
    assert len(by_class(gantt, "release")) == releases
    # A miss at each deadline in the window that was missed: late by then or unfinished at it.
    assert len(by_class(gantt, "miss")) == window.deadline_misses
    if name == "memguard-bombs.toml":
        # Worked by hand: each bomb streams 63,131 requests per ms against a
        # budget of 3,000 per 1 ms period, so it stalls once in every period:
        # 3 bombs × 100 periods. rt (50 ms) has deadlines at 50 and 100 ms, the
        # bombs (100 ms) one each, which they miss: 100 ms of work cannot finish
        # by then while stalled.
        assert (expected, deadlines, window.deadline_misses) == (300, 5, 3)


def test_state_shares_by_hand():
    # Spans [0, 5) and [12, 20) in bins of 10: half the first bin, 8 tenths of the second.
    shares = state_shares(np.array([0, 12]), np.array([5, 20]), 10, 2)
    assert shares.tolist() == [0.5, 0.8]
    # One span over three bins from 5 to 25: half, whole, half.
    assert state_shares(np.array([5]), np.array([25]), 10, 3).tolist() == [0.5, 1.0, 0.5]


# --------------------------------------------------------------------------- the analysis, a real run


def test_a_file_the_analysis_refuses_gets_a_page_saying_why(tmp_path: Path):
    f = tmp_path / "d.toml"
    f.write_text('[platform]\ncores = 2\n[[task]]\nname = "a"\nlevel = "D"\nperiod = "10ms"\npet = "2ms"\n'
                 '[[task]]\nname = "b"\nlevel = "D"\nperiod = "20ms"\npet = "5ms"\n')
    with pytest.raises(InputError) as refused:
        criticore.analyze(f)
    page = tmp_path / "d.html"
    p = run("report", f, "-o", page, "--duration", "100ms")
    assert p.returncode == 0, p.stderr
    text = page.read_text(encoding="utf-8")
    why = re.search(r'<p class="unavailable">(.*?)</p>', text, re.DOTALL)
    assert why and refused.value.reason in why.group(1), why
    # The simulation is all there: 10 jobs of a and 5 of b in 100 ms.
    assert "15 jobs" in p.stdout


def test_run_sets_measured_response_times_beside_the_simulated(tmp_path: Path):
    # Two periodic `criticore load` tasks under MemGuard: both write job records.
    f = tmp_path / "p.toml"
    text = '[platform]\ncores = 2\nllc = { size = "32MiB", ways = 16, colors = 16, line = "64B" }\n[regulation]\nkind = "memguard"\nperiod = "1ms"\n'
    for i, (name, period, pet) in enumerate((("t0", 100, 5), ("t1", 200, 10))):
        text += (f'[[regulation.group]]\nname = "g{i}"\ntasks = ["{name}"]\nbudget = "2000MB/s"\n'
                 f'[[task]]\nname = "{name}"\ncore = {i}\nperiod = "{period}ms"\npet = "{pet}ms"\n'
                 'memory = { wss = "64MiB", pattern = "stream", read_fraction = 0.5, accesses_per_ms = 2000 }\n'
                 f'command = "criticore load --file {f} --task {name}"\n')
    f.write_text(text)
    page = tmp_path / "p.html"
    p = run("report", f, "-o", page, "--duration", "1s", "--run", timeout=120)
    assert p.returncode == 0, p.stderr
    text = page.read_text(encoding="utf-8")
    boxes = svgs(text)["response-time distributions per task"]
    # Both tasks finished jobs in 1 s of periods of 100 and 200 ms, measured and simulated.
    assert len(by_class(boxes, "box simulated")) == 2
    assert len(by_class(boxes, "box measured")) == 2
    assert "<h2>The real run (--run)</h2>" in text and "Job records from 2 of 2 tasks" in text


# --------------------------------------------------------------------------- bad input


def test_the_page_must_be_html(tmp_path: Path):
    p = run("report", EXAMPLES / "mrs-synthetic.toml", "-o", tmp_path / "r.png", "--duration", "10ms")
    one_line_error(p, "--output", ".png", ".html")
    assert not (tmp_path / "r.png").exists()


def test_the_page_is_never_written_over_its_input_even_with_force(tmp_path: Path):
    f = tmp_path / "s.html"  # a task-system file named like a page (JSON is read by suffix; TOML otherwise)
    shutil.copy(EXAMPLES / "mrs-synthetic.toml", f)
    before = f.read_bytes()
    one_line_error(run("report", f, "-o", f, "--force", "--duration", "10ms"), "--output", "input")
    assert f.read_bytes() == before
    g = tmp_path / "s.toml"
    shutil.copy(EXAMPLES / "mrs-synthetic.toml", g)
    one_line_error(run("report", g, "-o", g, "--force", "--duration", "10ms"), "--output", "input")
    assert g.read_bytes() == before


def test_a_missing_file_is_one_line(tmp_path: Path):
    one_line_error(run("report", tmp_path / "none.toml", "-o", tmp_path / "r.html"), "none.toml", "cannot read")
    assert not (tmp_path / "r.html").exists()


def test_a_window_longer_than_the_run_and_a_run_without_commands_are_one_line(tmp_path: Path):
    f = EXAMPLES / "mrs-synthetic.toml"
    one_line_error(run("report", f, "-o", tmp_path / "r.html", "--duration", "10ms", "--window", "20ms"), "--window", "longer")
    one_line_error(run("report", f, "-o", tmp_path / "r.html", "--duration", "10ms", "--run"), "--run", "command")
    assert not (tmp_path / "r.html").exists()


def test_the_library_refuses_the_same(tmp_path: Path):
    f = tmp_path / "s.toml"
    shutil.copy(EXAMPLES / "memguard-bombs.toml", f)
    report = criticore.make_report(f, duration="20ms")
    with pytest.raises(InputError) as e:
        report.write(f, overwrite=True)
    assert e.value.field == "path" and "input" in e.value.reason
    with pytest.raises(InputError) as e:
        report.write(tmp_path / "r.svg")
    assert ".html" in e.value.reason
    written = report.write(tmp_path / "r.html")
    assert written.read_text(encoding="utf-8") == report.html
    # The same file and options, the same bytes (no date, no random ids).
    assert criticore.make_report(f, duration="20ms").html == report.html
    with pytest.raises(InputError):
        report.write(tmp_path / "r.html")  # exists
