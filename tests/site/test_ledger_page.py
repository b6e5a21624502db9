"""Placement pages show the ledger (feasibility first) and a stacked chart from kb.ledger."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kb.sitegen.build import build
from tests.ledger.ledger_fixtures import fixture_records, make_kb


@pytest.fixture(scope="module")
def ledger_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ledger") / "_site"
    build(make_kb(fixture_records()), out)
    return out


def svg_of(html: str) -> ET.Element:
    start, end = html.index('<svg xmlns="http://www.w3.org/2000/svg"'), html.index("</svg>") + 6
    return ET.fromstring(html[start:end])


def test_a_feasible_placement_shows_rows_total_comparison_and_stacked_bars(
    ledger_site: Path,
) -> None:
    html = (ledger_site / "records/placements/fixture-both-fit.html").read_text()
    assert "T_exposed" in html and "T<sub>total</sub>" in html
    assert "Placement efficiency" in html
    svg = svg_of(html)
    assert svg.get("role") == "img"
    assert svg.find("{http://www.w3.org/2000/svg}title").text.startswith("Placement-tax ledger")
    bars = svg.findall(".//{http://www.w3.org/2000/svg}rect")
    assert len(bars) >= 4  # useful + exposed + sync + orchestration, on two options


def test_an_infeasible_option_is_marked_and_gets_no_ratio(ledger_site: Path) -> None:
    html = (ledger_site / "records/placements/fixture-one-fits.html").read_text()
    assert "Infeasible counterfactual" in html
    assert "no speedup or penalty ratio is reported" in html
    assert "Placement efficiency" not in html
    svg = svg_of(html)
    marks = [
        g
        for g in svg.iter("{http://www.w3.org/2000/svg}g")
        if "mark-infeasible" in (g.get("class") or "")
    ]
    assert len(marks) == 1
