"""The report's charts as inline SVG text, drawn here rather than by
matplotlib: every mark is one element with a class (a job segment, a
regulator interval, a deadline), so a reader's browser, a stylesheet and a
test can find and count them; the page needs no font file or script, and the
same run gives the same bytes.

Every function takes plain values (times in ns, numpy arrays) and returns an
``<svg>`` element as a string. Labels are escaped here."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np

#: matplotlib's tab10, the colours of `criticore plot gantt`: core k is PALETTE[k % 10].
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: A regulator's states (docs/memory-model.md, "Outputs"): what each colours.
#: Not of the palette: a core's colour is never a state's.
STATE_COLORS = {"stalled": "#333333", "overload": "#e6ab02", "suspended": "#5e4fa2", "depleted": "#a6761d"}
SERVER_COLOR = "#b0b0b0"

WIDTH = 1000
LEFT = 170  # room for row labels
RIGHT = 20
PLOT = WIDTH - LEFT - RIGHT
FONT = 11


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def color(k: int) -> str:
    return PALETTE[int(k) % len(PALETTE)]


def _num(x: float) -> str:
    """A coordinate: two decimals at most, no exponent."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def nice_step(span: float, count: int = 6) -> float:
    """A 1-2-5 step that cuts ``span`` into about ``count`` intervals."""
    if span <= 0:
        return 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw * (1 - 1e-9):
            return m * power
    return 10 * power


def ticks(hi: float, count: int = 6) -> list[float]:
    """Tick values 0, step, 2·step … up to ``hi``."""
    step = nice_step(hi, count)
    n = int(math.floor(hi / step + 1e-9))
    return [i * step for i in range(n + 1)]


def tick_text(v: float) -> str:
    """A tick label: up to 4 significant digits, no exponent, thousands separated."""
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}" if abs(v) >= 1e-3 else f"{v:.6f}".rstrip("0")


def time_unit(end_ns: float) -> tuple[str, float]:
    """The unit a time axis up to ``end_ns`` is labelled in, and ns per unit."""
    if end_ns >= 10e9:
        return "s", 1e9
    if end_ns >= 10e6:
        return "ms", 1e6
    if end_ns >= 10e3:
        return "µs", 1e3
    return "ns", 1.0


@dataclass(frozen=True)
class TimeAxis:
    """Maps [0, end_ns] to the plot's pixels."""

    end_ns: int
    left: float = LEFT
    width: float = PLOT

    def x(self, t_ns: float) -> float:
        return self.left + self.width * min(max(t_ns, 0), self.end_ns) / self.end_ns

    def draw(self, top: float, bottom: float) -> list[str]:
        """Vertical grid lines from ``top`` to ``bottom`` and labels under it."""
        unit, scale = time_unit(self.end_ns)
        out = [f'<g class="axis time-axis">']
        for v in ticks(self.end_ns / scale, 8):
            x = _num(self.x(v * scale))
            out.append(f'<line class="grid" x1="{x}" y1="{_num(top)}" x2="{x}" y2="{_num(bottom)}"/>')
            out.append(f'<text x="{x}" y="{_num(bottom + 13)}" text-anchor="middle">{tick_text(v)}</text>')
        out.append(f'<text x="{_num(self.left + self.width)}" y="{_num(bottom + 27)}" text-anchor="end">time ({unit})</text>')
        out.append("</g>")
        return out


def _svg(height: float, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{esc(label)}" class="chart" '
            f'width="{WIDTH}" height="{_num(height)}" viewBox="0 0 {WIDTH} {_num(height)}" font-size="{FONT}">'
            + "".join(body) + "</svg>")


def _legend(items: Sequence[tuple[str, str]], y: float) -> list[str]:
    """Swatches left to right: (colour, label)."""
    out, x = ['<g class="legend">'], LEFT
    for fill, label in items:
        out.append(f'<rect x="{_num(x)}" y="{_num(y - 9)}" width="10" height="10" fill="{fill}"/>')
        out.append(f'<text x="{_num(x + 14)}" y="{_num(y)}">{esc(label)}</text>')
        x += 24 + 6.5 * len(label)
    out.append("</g>")
    return out


# --------------------------------------------------------------------------- Gantt


@dataclass(frozen=True)
class Bar:
    """A span on a row: a job segment, a server holding its core, a regulator state."""

    row: int
    start_ns: int
    end_ns: int
    cls: str
    fill: str
    title: str


@dataclass(frozen=True)
class Mark:
    """An instant on a row: "release", "deadline" or "miss"."""

    row: int
    t_ns: int
    cls: str
    title: str


ROW = 22


def gantt(rows: Sequence[str], bars: Sequence[Bar], marks: Sequence[Mark], end_ns: int, legend: Sequence[tuple[str, str]], label: str) -> str:
    """One row per name in ``rows``; each bar and mark as one element of its
    class (bars ``<rect class="CLS">``, marks ``<path class="CLS">``)."""
    top = 24
    bottom = top + ROW * len(rows)
    axis = TimeAxis(end_ns)
    out = _legend(legend, 14)
    for i, name in enumerate(rows):
        y = top + ROW * i
        if i % 2:
            out.append(f'<rect class="band" x="{LEFT}" y="{y}" width="{PLOT}" height="{ROW}"/>')
        out.append(f'<text class="row-label" x="{LEFT - 6}" y="{_num(y + ROW / 2 + 4)}" text-anchor="end">{esc(name)}</text>')
    out += axis.draw(top, bottom)
    for b in bars:
        x0, x1 = axis.x(b.start_ns), axis.x(b.end_ns)
        y = top + ROW * b.row + 4
        out.append(f'<rect class="{b.cls}" x="{_num(x0)}" y="{y}" width="{_num(max(x1 - x0, 0.5))}" height="{ROW - 8}" fill="{b.fill}">'
                   f"<title>{esc(b.title)}</title></rect>")
    for m in marks:
        x = axis.x(m.t_ns)
        y = top + ROW * m.row
        if m.cls == "release":  # an arrow up from the row's foot
            d = f"M{_num(x)} {y + ROW - 2}V{y + 3}M{_num(x - 3)} {y + 7}L{_num(x)} {y + 3}L{_num(x + 3)} {y + 7}"
        elif m.cls == "deadline":  # a tick down to the row's foot, ending in a bar
            d = f"M{_num(x)} {y + 1}V{y + ROW - 1}M{_num(x - 4)} {y + ROW - 1}H{_num(x + 4)}"
        else:  # a miss: a cross at the deadline
            d = f"M{_num(x - 5)} {y + 6}L{_num(x + 5)} {y + ROW - 6}M{_num(x - 5)} {y + ROW - 6}L{_num(x + 5)} {y + 6}"
        out.append(f'<path class="{m.cls}" d="{d}"><title>{esc(m.title)}</title></path>')
    out.append(f'<rect class="frame" x="{LEFT}" y="{top}" width="{PLOT}" height="{bottom - top}"/>')
    return _svg(bottom + 32, out, label)


# --------------------------------------------------------------------------- series over time


def series(start_ns: np.ndarray, bin_ns: int, lines: Sequence[tuple[str, np.ndarray, str]], end_ns: int, y_label: str,
           label: str, shade_ns: int | None = None) -> str:
    """Step lines over time, one per (label, values per bin, colour), each a
    ``<path class="series">``; ``shade_ns`` greys [0, shade_ns] (the Gantt's window)."""
    top, height = 28, 200
    bottom = top + height
    axis = TimeAxis(end_ns)
    peak = max([float(np.max(v)) for _, v, _ in lines if len(v)] + [0.0])
    y_top = peak * 1.08 if peak > 0 else 1.0
    out = _legend([(c, name) for name, _, c in lines], 14)
    if shade_ns is not None and shade_ns < end_ns:
        out.append(f'<rect class="window" x="{LEFT}" y="{top}" width="{_num(axis.x(shade_ns) - LEFT)}" height="{height}"><title>the Gantt chart\'s window</title></rect>')
    for v in ticks(y_top, 5):
        y = bottom - height * v / y_top
        out.append(f'<line class="grid" x1="{LEFT}" y1="{_num(y)}" x2="{LEFT + PLOT}" y2="{_num(y)}"/>')
        out.append(f'<text x="{LEFT - 6}" y="{_num(y + 4)}" text-anchor="end">{tick_text(v)}</text>')
    out.append(f'<text x="{LEFT - 6}" y="{top - 6}" text-anchor="end">{esc(y_label)}</text>')
    out += axis.draw(top, bottom)
    for name, values, c in lines:
        if not len(values):
            continue
        # Bins are contiguous: a step up or down, then along to the bin's end.
        ys = [_num(bottom - height * float(v) / y_top) for v in values]
        ends = [_num(axis.x(float(t) + bin_ns)) for t in start_ns]
        d = f"M{_num(axis.x(float(start_ns[0])))} {ys[0]}H{ends[0]}" + "".join(f"V{y}H{x}" for y, x in zip(ys[1:], ends[1:]))
        out.append(f'<path class="series" stroke="{c}" d="{d}"><title>{esc(name)}</title></path>')
    out.append(f'<rect class="frame" x="{LEFT}" y="{top}" width="{PLOT}" height="{height}"/>')
    return _svg(bottom + 32, out, label)


def shares(rows: Sequence[tuple[str, np.ndarray, str]], bin_ns: int, end_ns: int, label: str, shade_ns: int | None = None) -> str:
    """One strip per (label, share of each bin in [0, 1], colour): a bin's
    cell is as opaque as its share; runs of equal shares are one ``<rect
    class="share">``, zero shares none."""
    top = 24
    bottom = top + ROW * len(rows)
    axis = TimeAxis(end_ns)
    out: list[str] = []
    for i, (name, values, c) in enumerate(rows):
        y = top + ROW * i
        out.append(f'<text class="row-label" x="{LEFT - 6}" y="{_num(y + ROW / 2 + 4)}" text-anchor="end">{esc(name)}</text>')
        k = 0
        while k < len(values):
            j = k
            while j + 1 < len(values) and values[j + 1] == values[k]:
                j += 1
            v = float(values[k])
            if v > 0:
                x0, x1 = axis.x(k * bin_ns), axis.x((j + 1) * bin_ns)
                out.append(f'<rect class="share" x="{_num(x0)}" y="{y + 3}" width="{_num(max(x1 - x0, 0.5))}" height="{ROW - 6}" '
                           f'fill="{c}" fill-opacity="{_num(max(v, 0.04))}"><title>{esc(name)}: {100 * v:.1f}% of {esc(_span(k, j, bin_ns))}</title></rect>')
            k = j + 1
    if shade_ns is not None and shade_ns < end_ns:
        out.append(f'<rect class="window-edge" x="{_num(axis.x(shade_ns))}" y="{top}" width="1" height="{bottom - top}"><title>end of the Gantt chart\'s window</title></rect>')
    out += axis.draw(top, bottom)
    out.append(f'<rect class="frame" x="{LEFT}" y="{top}" width="{PLOT}" height="{bottom - top}"/>')
    return _svg(bottom + 32, out, label)


def _span(k: int, j: int, bin_ns: int) -> str:
    unit, scale = time_unit((j + 1) * bin_ns)
    return f"{tick_text(k * bin_ns / scale)}–{tick_text((j + 1) * bin_ns / scale)} {unit}"


# --------------------------------------------------------------------------- distributions


@dataclass(frozen=True)
class Box:
    """Five numbers of a sample (ns) and its size."""

    low: float
    q1: float
    median: float
    q3: float
    high: float
    count: int

    @classmethod
    def of(cls, values: np.ndarray) -> Box | None:
        if len(values) == 0:
            return None
        q = np.percentile(values.astype(np.float64), [0, 25, 50, 75, 100])
        return cls(*map(float, q), len(values))


@dataclass(frozen=True)
class BoxRow:
    task: str
    simulated: Box | None
    measured: Box | None
    deadline_ns: int
    bound_ns: int | None


def boxes(rows: Sequence[BoxRow], with_measured: bool, label: str) -> str:
    """Per task a box plot of its response times (whiskers at the least and
    the greatest, the box from the first to the third quartile, a line at the
    median), simulated (``<g class="box simulated">``) and, with
    ``with_measured``, measured beneath (``<g class="box measured">``); each
    row on its own time scale from 0 to past its deadline, bound and
    greatest response, with the deadline (``<path class="deadline">``) and
    the analysis bound (``<path class="bound">``) marked."""
    sub = 16
    row_h = sub * (2 if with_measured else 1) + 22
    top = 24
    out = _legend([(PALETTE[0], "simulated")] + ([(PALETTE[1], "measured (--run)")] if with_measured else [])
                  + [("#d62728", "deadline"), ("#000000", "analysis bound")], 14)
    for i, r in enumerate(rows):
        y = top + row_h * i
        hi = max([r.deadline_ns, r.bound_ns or 0] + [b.high for b in (r.simulated, r.measured) if b is not None])
        axis = TimeAxis(int(hi * 1.1) or 1)
        unit, scale = time_unit(axis.end_ns)
        out.append(f'<g class="box-row"><text class="row-label" x="{LEFT - 6}" y="{_num(y + sub)}" text-anchor="end">{esc(r.task)}</text>')
        if i % 2:
            out.append(f'<rect class="band" x="{LEFT}" y="{y}" width="{PLOT}" height="{row_h}"/>')
        for v in ticks(axis.end_ns / scale, 6):
            x = _num(axis.x(v * scale))
            out.append(f'<line class="grid" x1="{x}" y1="{y}" x2="{x}" y2="{y + row_h - 14}"/>')
            out.append(f'<text class="tick" x="{x}" y="{y + row_h - 3}" text-anchor="middle">{tick_text(v)}</text>')
        out.append(f'<text class="tick" x="{LEFT + PLOT + 2}" y="{y + row_h - 3}">{unit}</text>')
        for k, (side, box, fill) in enumerate((("simulated", r.simulated, PALETTE[0]), ("measured", r.measured, PALETTE[1]))):
            if side == "measured" and not with_measured:
                continue
            yy = y + 3 + sub * k
            if box is None:
                out.append(f'<text class="none" x="{LEFT + 4}" y="{yy + 11}">{side}: no finished job</text>')
                continue
            xl, x1, xm, x3, xh = (axis.x(v) for v in (box.low, box.q1, box.median, box.q3, box.high))
            mid = yy + sub / 2 - 1
            title = (f"{side}: {box.count} jobs; least {tick_text(box.low / scale)}, quartiles {tick_text(box.q1 / scale)} / "
                     f"{tick_text(box.median / scale)} / {tick_text(box.q3 / scale)}, greatest {tick_text(box.high / scale)} {unit}")
            out.append(f'<g class="box {side}"><title>{esc(title)}</title>'
                       f'<path class="whisker" d="M{_num(xl)} {_num(mid)}H{_num(xh)}M{_num(xl)} {yy + 3}V{yy + sub - 5}M{_num(xh)} {yy + 3}V{yy + sub - 5}"/>'
                       f'<rect x="{_num(x1)}" y="{yy + 1}" width="{_num(max(x3 - x1, 1))}" height="{sub - 4}" fill="{fill}"/>'
                       f'<path class="median" d="M{_num(xm)} {yy}V{yy + sub - 2}"/></g>')
        bottom = y + row_h - 14
        x = axis.x(r.deadline_ns)
        out.append(f'<path class="deadline" d="M{_num(x)} {y}V{bottom}"><title>deadline {tick_text(r.deadline_ns / scale)} {unit}</title></path>')
        if r.bound_ns is not None:
            x = axis.x(r.bound_ns)
            out.append(f'<path class="bound" d="M{_num(x)} {y}V{bottom}"><title>analysis bound {tick_text(r.bound_ns / scale)} {unit}</title></path>')
        out.append("</g>")
    return _svg(top + row_h * len(rows) + 4, out, label)
