"""Chart geometry for hand-written, deterministic SVG (the markup: kb.sitegen.html_chart).

Two chart types: lines over a log-log plane (a derived quantity over its main
input, with records marked), and stacked bars (ledger components per placement
option, infeasible options marked). Every coordinate is rounded to two decimals
and every label is plain text, so two builds give the same bytes and the
template's autoescaping covers every string.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kb.sitegen import inline_code

WIDTH, HEIGHT = 680, 380
PLOT = {"left": 70.0, "right": 660.0, "top": 20.0, "bottom": 330.0}


@dataclass(frozen=True)
class Series:
    name: str
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Mark:
    """A record placed on the x axis (a vertical rule), optionally with a point on a line."""

    x: float
    label: str
    title: str
    y: float | None = None
    line: bool = True
    erratum: bool = False  # a figure the source states and kb refutes: a cross, never a circle


@dataclass(frozen=True)
class Bar:
    name: str
    parts: tuple[tuple[str, float], ...]
    infeasible: str = ""


@dataclass
class Chart:
    anchor: str
    title: str
    desc: str
    x_label: str
    y_label: str
    caption: str = ""
    table: dict[str, Any] = field(default_factory=dict)
    tables: list[dict[str, Any]] = field(default_factory=list)  # more data behind the chart


def _r(value: float) -> float:
    return round(value, 2)


def nice_ticks(low: float, high: float, log: bool) -> list[float]:
    """Ticks at 1-2-5 steps (per decade on a log axis) covering [low, high]."""
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        decades = last - first
        # 1-2-5 over a few decades; decades only over more; every other one past eight.
        steps = (1, 2, 5) if decades <= 3 else (1,)
        stride = 1 if decades <= 8 else math.ceil(decades / 8)
        ticks: list[float] = []
        for exponent in range(first, last + 1, stride):
            ticks.extend(m * 10.0**exponent for m in steps)
        return [t for t in ticks if low <= t <= high]
    base = 10 ** math.floor(math.log10(max(high - low, 1e-12))) / 10
    step = next(base * f for f in (1, 2, 5, 10, 20, 50, 100) if (high - low) / (base * f) <= 6)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def tick_label(value: float) -> str:
    """Short, exact-looking tick text: 2000 -> 2k, 0.5 -> 0.5, 1e-6 -> 1e-06."""
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        return f"{value:.0e}"
    if abs(value) >= 1000 and value % 1000 == 0:
        return f"{value / 1000:g}k"
    return f"{value:g}"


class Axis:
    """Maps data values to pixels on a linear or log scale."""

    def __init__(self, low: float, high: float, start: float, end: float, log: bool) -> None:
        self.log = log and low > 0
        self.low, self.high = (math.log10(low), math.log10(high)) if self.log else (low, high)
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else value
        span = (self.high - self.low) or 1.0
        return _r(self.start + (v - self.low) / span * (self.end - self.start))


def _padded(values: list[float], log: bool) -> tuple[float, float]:
    """The axis range: fitted to the data at the nearest 1-2-5 steps (a log axis), not decades."""
    low, high = min(values), max(values)
    if log:
        return _step_below(low), _step_above(high)
    return min(0.0, low), high * 1.1 if high > 0 else 1.0


STEPS = (1.0, 2.0, 5.0)


def _step_below(value: float) -> float:
    """The largest 1, 2 or 5 times a power of ten at or below `value` (> 0)."""
    exponent = math.floor(math.log10(value))
    return max(m * 10.0**e for e in (exponent - 1, exponent) for m in STEPS if m * 10.0**e <= value)


def _step_above(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above `value` (> 0)."""
    exponent = math.floor(math.log10(value))
    return min(m * 10.0**e for e in (exponent, exponent + 1) for m in STEPS if m * 10.0**e >= value)


def line_chart(chart: Chart, series: list[Series], marks: list[Mark]) -> dict[str, Any]:
    """Lay out a log-log line chart (positive values) with vertical marks for records."""
    xs = [x for s in series for x, _ in s.points] + [m.x for m in marks]
    ys = [y for s in series for _, y in s.points] + [m.y for m in marks if m.y is not None]
    log = min(xs + ys) > 0
    x_axis = Axis(*_padded(xs, log), PLOT["left"], PLOT["right"], log)
    y_axis = Axis(*_padded(ys, log), PLOT["bottom"], PLOT["top"], log)
    x_range, y_range = _padded(xs, log), _padded(ys, log)
    # The y tick at the axis' foot would sit on the x axis' first label (the corner): no label.
    y_ticks = [t for t in nice_ticks(*y_range, log) if t > y_range[0]]
    return {
        **_frame(chart),
        "x_ticks": [{"pos": x_axis(t), "label": tick_label(t)} for t in nice_ticks(*x_range, log)],
        "y_ticks": [{"pos": y_axis(t), "label": tick_label(t)} for t in y_ticks],
        "series": [{"name": s.name, "path": _path(s, x_axis, y_axis), "bars": []} for s in series],
        "legend": [s.name for s in series],
        "marks": _clear_errata(
            _join_labels(
                [_mark(m, i, x_axis, y_axis) for i, m in enumerate(sorted(marks, key=_mark_key))]
            )
        ),
    }


LABEL_GAP = 16.0  # px: rules closer than a rotated label's height (and a gap) share one label
LABEL_CHARS = 52  # what fits up a rule in the plot's height


def _join_labels(marks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give rules that (nearly) coincide one label, `A / B`, on the first of them."""
    rules = [m for m in marks if m["line"] and m["label"]]
    groups: list[list[dict[str, Any]]] = []
    for mark in rules:
        if groups and mark["x"] - groups[-1][-1]["x"] < LABEL_GAP:
            groups[-1].append(mark)
        else:
            groups.append([mark])
    for group in groups:
        names = list(dict.fromkeys(m["label"] for m in group))
        text = " / ".join(names)
        if len(text) > LABEL_CHARS:
            text = f"{names[0]} (+{len(names) - 1} more)"
        for index, mark in enumerate(group):
            mark["label"] = text if index == 0 else ""
    return marks


CHAR_WIDTH = 7.0  # px per character of a chart label (its font), for the overlap test below
LABEL_HEIGHT = 14.0


def _clear_errata(marks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop an erratum's label where it would overprint a rule's label (the legend names it)."""
    rules = [m for m in marks if m["line"] and m["label"]]
    for mark in marks:
        if not (mark["erratum"] and mark["label"] and "anchor" in mark):
            continue
        width = len(mark["label"]) * CHAR_WIDTH
        left = mark["label_x"] - width if mark["anchor"] == "end" else mark["label_x"]
        top, bottom = mark["label_y"] - LABEL_HEIGHT, mark["label_y"] + 4
        for rule in rules:
            x, y0 = rule["label_x"], rule["label_y"]
            y1 = y0 + len(rule["label"]) * CHAR_WIDTH
            if left - 2 <= x <= left + width + LABEL_HEIGHT and top <= y1 and bottom >= y0:
                mark["label"] = ""
                break
    return marks


def _mark_key(mark: Mark) -> tuple[float, str]:
    return (mark.x, mark.label)


def _frame(chart: Chart) -> dict[str, Any]:
    return {
        "anchor": chart.anchor,
        "title": chart.title,
        "desc": inline_code.plain(chart.desc),  # an SVG <desc> is text: no markup
        "x_label": chart.x_label,
        "y_label": chart.y_label,
        "caption": chart.caption,
        "table": chart.table,
        "tables": [t for t in ([chart.table] if chart.table else []) + chart.tables if t["rows"]],
        "width": WIDTH,
        "height": HEIGHT,
        "plot": PLOT,
    }


def _path(series: Series, x_axis: Axis, y_axis: Axis) -> str:
    points = sorted(series.points)
    return " ".join(
        f"{'M' if i == 0 else 'L'}{x_axis(x)},{y_axis(y)}" for i, (x, y) in enumerate(points)
    )


def _mark(mark: Mark, index: int, x_axis: Axis, y_axis: Axis) -> dict[str, Any]:
    # A rule's label runs up along it (rotated), so neighbouring rules do not overprint.
    x = x_axis(mark.x)
    y = None if mark.y is None else y_axis(mark.y)
    shown = {
        "x": x,
        "y": y,
        "label": mark.label,
        "title": mark.title,
        "line": mark.line,
        "infeasible": False,
        "label_y": _r(PLOT["top"] + 4),
        "label_x": _r(x - 3),
        "rotate": mark.line,
        "erratum": mark.erratum,
    }
    if mark.erratum and y is not None:  # a cross, its label beside it (left of it on the right)
        size = 5.0
        shown["cross"] = (
            f"M{_r(x - size)},{_r(y - size)}L{_r(x + size)},{_r(y + size)}"
            f"M{_r(x - size)},{_r(y + size)}L{_r(x + size)},{_r(y - size)}"
        )
        right = x > (PLOT["left"] + PLOT["right"]) / 2
        shown["label_x"] = _r(x - 8 if right else x + 8)
        shown["label_y"] = _r(max(y - 8, PLOT["top"] + 10))
        shown["anchor"] = "end" if right else "start"
    return shown


def stacked_bars(chart: Chart, bars: list[Bar]) -> dict[str, Any]:
    """Components stacked per bar (linear y from 0); infeasible bars are a labelled gap."""
    totals = [sum(v for _, v in b.parts) for b in bars if not b.infeasible] or [1.0]
    y_axis = Axis(0.0, max(totals) * 1.1 or 1.0, PLOT["bottom"], PLOT["top"], False)
    components = list(dict.fromkeys(name for b in bars for name, v in b.parts if v > 0))
    slot = (PLOT["right"] - PLOT["left"]) / max(len(bars), 1)
    series = [{"name": c, "path": "", "bars": []} for c in components]
    marks = []
    for index, bar in enumerate(bars):
        left = PLOT["left"] + slot * index + slot * 0.2
        if bar.infeasible:
            marks.append(_infeasible_mark(bar, left, slot))
            continue
        _stack(bar, left, slot * 0.6, y_axis, series, components)
    return {
        **_frame(chart),
        "x_ticks": [
            {"pos": _r(PLOT["left"] + slot * (i + 0.5)), "label": b.name}
            for i, b in enumerate(bars)
        ],
        "y_ticks": [
            {"pos": y_axis(t), "label": tick_label(t)}
            for t in nice_ticks(0.0, max(totals) * 1.1, False)
        ],
        "series": series,
        "legend": components,
        "marks": marks,
    }


def _stack(
    bar: Bar,
    left: float,
    width: float,
    y_axis: Axis,
    series: list[dict[str, Any]],
    components: list[str],
) -> None:
    base = 0.0
    for name, value in bar.parts:
        if value <= 0:
            continue
        top = base + value
        series[components.index(name)]["bars"].append(
            {
                "x": _r(left),
                "y": y_axis(top),
                "w": _r(width),
                "h": _r(y_axis(base) - y_axis(top)),
                "title": f"{bar.name}: {name} = {value:.6g}",
            }
        )
        base = top


def _infeasible_mark(bar: Bar, left: float, slot: float) -> dict[str, Any]:
    return {
        "x": _r(left),
        "y": None,
        "label": "infeasible",
        "title": bar.infeasible,
        "line": False,
        "infeasible": True,
        "label_y": _r(PLOT["bottom"] - 8),
        "rotate": False,
    }
