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


def _page_text(html: str) -> str:
    import html as html_lib
    import re

    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_placement_page_shows_everything_kb_ledger_prints(
    ledger_site: Path, tmp_path: Path
) -> None:
    """Feasibility lines, ledger rows, each transfer's arithmetic and pricing, the comparison
    cells and the break-even with the interconnects on each side: the CLI's own text."""
    from click.testing import CliRunner

    from kb.cli import cli
    from tests.ledger.ledger_fixtures import write_tree

    root = write_tree(tmp_path, fixture_records()) / "records"
    out = CliRunner().invoke(cli, ["ledger", "placements/fixture-both-fit", "--root", str(root)])
    assert out.exit_code == 0, out.output
    page = _page_text((ledger_site / "records/placements/fixture-both-fit.html").read_text())
    lines = [" ".join(line.split()) for line in out.output.splitlines()]
    section = ""
    expected: list[str] = []
    for line in lines:
        if line[:2] in ("1.", "2.", "3.", "4."):
            section = line[0]
            expected.append(line.partition(" (")[0])
        elif section == "1" and ": feasible" not in line:
            expected.append(line)  # device lines and strategies/links
        elif section == "2" and line.startswith("T_"):
            name, value, basis = line.split()[0], " ".join(line.split()[1:3]), line.split()[3]
            expected += [name.replace("T_total", "sum of the rows"), value, basis.rstrip(";")]
        elif section == "2" and line.startswith(("transfer ", "priced by ")):
            expected.append(line)
        elif section == "3" and "against" in line:
            expected.append(line.rstrip(":"))
        elif section == "3" and line.startswith("latency placement efficiency"):
            expected.append(line.rpartition(" = ")[2])
        elif section == "4" and ": " in line:
            expected.append(
                line.partition(": ")[2]
                if line.startswith(("candidate", "tie", "reference"))
                else line
            )
    assert len(expected) > 30
    missing = [text for text in expected if text not in page]
    assert not missing, missing
    assert "tie at 312.7 µs" in page and "interconnects/fixture-fast (100 GB/s)" in page


def test_the_comparison_shows_readable_units_not_base_units(ledger_site: Path) -> None:
    page = _page_text((ledger_site / "records/placements/fixture-both-fit.html").read_text())
    assert "-98.47 ms" in page and "-50 GB" in page and "4.849 items/s" in page
    assert "-0.09847" not in page and "-50000000000" not in page


GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("name", ["fixture-both-fit", "fixture-one-fits", "fixture-tp"])
def test_the_ledger_section_matches_its_golden_file(ledger_site: Path, name: str) -> None:
    """Regenerate after an intended change and review the diff:
    KB_REGEN_GOLDEN=1 python -m pytest tests/site/test_ledger_page.py"""
    import os

    html = (ledger_site / f"records/placements/{name}.html").read_text(encoding="utf-8")
    start = html.index('<section id="ledger"')
    section = html[start : html.index("</section>", start) + len("</section>")] + "\n"
    golden = GOLDEN / f"{name}-ledger.html"
    if os.environ.get("KB_REGEN_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(section, encoding="utf-8")
    assert section == golden.read_text(encoding="utf-8")


def test_option_and_transfer_names_are_escaped(tmp_path: Path) -> None:
    """Names a placement author writes reach the feasibility list, the rows, the transfer
    arithmetic, the comparison title, the break-even and the key results: all escaped.

    An option's name is held to `^[a-z0-9][a-z0-9._-]*$` by the schema, and a
    placement that fails its schema is not computed (kb.ledger.inputs); device and
    transfer names are free text and reach the computed ledger."""
    records = fixture_records()
    placement = records["placements/fixture-both-fit"]
    placement["candidates"][0]["devices"][0]["name"] = "<script>alert(7)</script>"
    placement["candidates"][0]["transfers"][0]["name"] = '"><img src=x onerror=alert(8)>'
    out = tmp_path / "_site"
    build(make_kb(records), out)
    html = (out / "records/placements/fixture-both-fit.html").read_text(encoding="utf-8")
    assert "<script>alert(7)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(7)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(8)&gt;" in html


def test_an_unresolved_placement_builds_a_page_that_says_why(tmp_path: Path) -> None:
    """build() called directly (kb build stops on the LG004 finding first) renders the note."""
    records = fixture_records()
    option = records["placements/fixture-both-fit"]["candidates"][0]
    option["transfers"][0]["link"] = "interconnects/missing"
    out = tmp_path / "_site"
    build(make_kb(records), out)
    html = (out / "records/placements/fixture-both-fit.html").read_text()
    assert "The ledger is incomplete, so nothing is computed" in html
    assert "interconnects/missing" in html
    assert "Held fixed on every side" not in html


def test_a_ledger_not_computed_has_every_key_of_a_computed_one() -> None:
    from kb.ledger.analysis import analyze_placement
    from kb.sitegen.ledger_view import ledger_sections, not_computed

    kb = make_kb(fixture_records())
    record = kb.get("placements/fixture-both-fit")
    assert record is not None
    analysis = analyze_placement(record, kb, with_break_even=True)
    assert not_computed("why").keys() == ledger_sections(analysis).keys()
