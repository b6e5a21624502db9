"""Every chart is drawn in its axes' units: series, marks and claims, checked against kb.

The flop-class line charts carry what they drew (`units`: the axis symbols and
units, each series' bindings and points, each mark's binding, each claim's point);
every value is recomputed here by kb itself (kb calc's evaluate, the binding
resolver, the unit table) and must equal the drawn one in the axis unit. The
placement bar charts are checked against the ledger's rows.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pytest

from kb.equations.bind import Bound, quantity, resolve
from kb.equations.evaluate import evaluate
from kb.quantities import parse_unit
from kb.sitegen.charts import LABEL_GAP, PLOT

RELATIVE = 1e-6  # the x grid is a float; every other value is exact


@pytest.fixture(scope="module")
def charted(
    repo_kb: Any, shipped_charts: list[tuple[Any, list[dict[str, Any]]]]
) -> list[tuple[Any, Any, list[dict[str, Any]]]]:
    """(kb, record, charts) for every charted page of the shipped records: conftest.py's
    `shipped_charts`, made once a process after `schema_stage`, as kb.sitegen.build does
    (pages and the ledger read typed views)."""
    return [(repo_kb, record, charts) for record, charts in shipped_charts]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RELATIVE * max(abs(a), abs(b))


def test_every_line_chart_series_mark_and_claim_is_in_its_axis_unit(charted) -> None:
    lines = [(kb, r, c) for kb, r, charts in charted for c in charts if "units" in c]
    assert len(lines) >= 4
    for kb, record, chart in lines:
        units = chart["units"]
        x_name, x_unit, y_unit = units["x"]["name"], units["x"]["unit"], units["y"]["unit"]
        x_factor, y_factor = parse_unit(x_unit).factor, parse_unit(y_unit).factor
        for series in units["series"]:
            for x, y in series["points"][:: max(1, len(series["points"]) // 4)]:
                given = {**series["bind"], x_name: {"value": x, "unit": x_unit}}
                result = evaluate(kb, record, units["of"], given)
                want = float(result.value * parse_unit(result.unit).factor / y_factor)
                assert _close(y, want), (record.id, series["name"], x, y, want)
        for mark in units["marks"]:
            bound = resolve(kb, mark["spec"])
            assert isinstance(bound, Bound)
            assert _close(mark["x"], float(bound.value / x_factor)), (record.id, mark)
        claims = {c["id"]: c for c in record.data["claims"]}
        for erratum in units["errata"]:  # the source's figure where it is, kb's value beside it
            claim = claims[erratum["id"]]
            assert "erratum" in claim, (record.id, erratum)
            expect = quantity(claim["expect"], "expect")
            assert isinstance(expect, Bound)
            assert _close(erratum["y"], float(expect.value / y_factor)), (record.id, erratum)
            result = evaluate(kb, record, units["of"], dict(claim["bind"]))
            computed = float(result.value * parse_unit(result.unit).factor / y_factor)
            assert _close(erratum["kb"], computed), (record.id, erratum)
        for point in units["claims"]:
            claim = claims[point["id"]]
            assert "erratum" not in claim, (record.id, point)  # never drawn as kb's own point
            expect = quantity(claim["expect"], "expect")
            assert isinstance(expect, Bound)
            assert _close(point["y"], float(expect.value / y_factor)), (record.id, point)
            assert _close(point["x"], float(resolve(kb, claim["bind"][x_name]).value / x_factor))
        for label, unit in ((chart["x_label"], x_unit), (chart["y_label"], y_unit)):
            assert label.endswith(f"({unit})") if unit != "1" else label.endswith(")"), label
        assert x_name != chart["x_label"] and not chart["y_label"].startswith(units["y"]["name"])


def test_every_bar_chart_segment_is_the_ledger_row_in_the_axis_unit(charted) -> None:
    from kb.ledger.analysis import analyze_placement
    from kb.ledger.render import ROW_LABELS

    bars = [(kb, r, c) for kb, r, charts in charted for c in charts if "units" not in c]
    assert len(bars) >= 3
    for kb, record, chart in bars:
        unit = re.search(r"\(([^()]+)\)$", chart["y_label"]).group(1)
        factor = parse_unit(unit).factor
        drawn = {r["title"] for s in chart["series"] for r in s["bars"]}
        for side in analyze_placement(record, kb).sides:  # type: ignore[union-attr]
            for row in side.ledger.rows if side.ledger else ():
                if row.value > 0:
                    shown = float(Fraction(row.value) / factor)
                    label = ROW_LABELS.get(row.name, row.name)
                    assert f"{side.option.name}: {label} = {shown:.6g}" in drawn, record.id


def test_rules_are_labelled_on_the_chart_and_ticks_stay_legible(charted) -> None:
    for _kb, record, charts in charted:
        for chart in charts:
            rules = sorted((m for m in chart["marks"] if m["line"]), key=lambda m: m["x"])
            for index, mark in enumerate(rules):
                shared = index > 0 and mark["x"] - rules[index - 1]["x"] < LABEL_GAP
                assert mark["label"] or shared, (record.id, mark)
                if mark["label"]:
                    assert not mark["label"].isdigit(), (record.id, mark)  # a name, not a number
            for axis in ("x_ticks", "y_ticks"):
                assert len(chart[axis]) <= 12, (record.id, axis, len(chart[axis]))
                assert all(PLOT["left"] - 1 <= t["pos"] <= PLOT["right"] + 1 or axis == "y_ticks"
                           for t in chart[axis])  # fmt: skip
