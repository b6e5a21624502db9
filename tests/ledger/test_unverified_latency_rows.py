"""A ledger row fed by an unverified figure says unverified, in `kb ledger` and on the site.

No shipped placement types an unverified per-message latency any more (issue 39, session 15:
the PCIe 5.0 candidate of placements/tp-llama-3.1-70b-nvswitch-vs-pcie now takes
interconnects/pcie-5-x16's estimate). The behaviour the shipped tests used to exercise is held
here on an edited copy of that record, in memory, whose PCIe 5.0 transfer types its old figure
back with `basis: unverified`: the transfer's pricing and provenance, the T_exposed row it feeds
(in the text and the JSON `kb ledger` prints) and the site's ledger data must all say
unverified, and the untouched PCIe 4.0 side must not.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb.api import open_kb, validate
from kb.cli import cli
from kb.kinds.placement import placement
from kb.ledger import render
from kb.ledger.analysis import PlacementAnalysis, analyze_spec, break_even_figures
from kb.ledger.inputs import resolve_view
from kb.model import KnowledgeBase, Record
from kb.sitegen.ledger_view import ledger_sections

ROOT = Path(__file__).resolve().parents[2] / "records"
TP_70B = "placements/tp-llama-3.1-70b-nvswitch-vs-pcie"
TYPED = {
    "value": 3,
    "unit": "us",
    "basis": "unverified",
    "note": "A stand-in for a latency nobody could source (this test's copy only).",
}


@pytest.fixture(scope="module")
def shipped() -> KnowledgeBase:
    return open_kb(ROOT, checked=validate(ROOT))


@pytest.fixture(scope="module")
def typed(shipped: KnowledgeBase) -> PlacementAnalysis:
    """The placement analysed with its PCIe 5.0 all-reduce typing an unverified 3 us."""
    record = shipped.get(TP_70B)
    assert record is not None
    data: dict[str, Any] = copy.deepcopy(dict(record.data))
    transfer = data["candidates"][0]["transfers"][0]
    assert transfer["link"] == "interconnects/pcie-5-x16" and "link_latency" not in transfer
    transfer["link_latency"] = dict(TYPED)
    edited = Record(record.id, record.kind, record.path, data, record.digest)
    spec = resolve_view(placement(edited), edited, shipped)
    assert not getattr(spec, "gaps", ()), spec
    return analyze_spec(spec, True, break_even_figures(shipped))  # type: ignore[arg-type]


def test_the_typed_unverified_latency_reaches_the_transfer_and_its_row(
    typed: PlacementAnalysis,
) -> None:
    doc = json.loads(render.to_json(typed))
    pcie5, pcie4 = doc["ledgers"][1:]
    transfer = pcie5["transfers"][0]
    assert transfer["pricing"].endswith("its latency figure is unverified")
    assert transfer["provenance"] == "unverified"
    assert next(r for r in pcie5["rows"] if r["row"] == "exposed")["provenance"] == "unverified"
    # the PCIe 4.0 side still takes its link record's estimate
    assert pcie4["transfers"][0]["provenance"] == "estimated"
    assert "unverified" not in pcie4["transfers"][0]["pricing"]


def test_the_text_ledger_says_unverified_on_one_exposed_row(typed: PlacementAnalysis) -> None:
    out = render.text(typed)
    exposed = [line for line in out.splitlines() if "T_exposed" in line]
    assert sum("unverified" in line for line in exposed) == 1, exposed
    assert "(line rate, unverified)" in out


def test_the_sites_ledger_data_marks_the_row_unverified(typed: PlacementAnalysis) -> None:
    """The site's ledger template writes each row's `basis` as its badge class
    (`basis-unverified`), so the page data must carry it."""
    section = ledger_sections(typed)
    by_anchor = {side["anchor"]: side for side in section["candidates"]}
    rows = {r["component"]: r["basis"] for r in by_anchor["option-pcie-5-point-to-point"]["rows"]}
    assert rows["T_exposed"] == "unverified"
    other = {r["component"]: r["basis"] for r in by_anchor["option-pcie-4-point-to-point"]["rows"]}
    assert other["T_exposed"] == "estimated"


def test_the_shipped_placement_has_no_unverified_row() -> None:
    """`kb ledger` on the shipped records: no transfer or row says unverified."""
    result = CliRunner().invoke(cli, ["ledger", TP_70B, "--format", "json", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    for side in json.loads(result.output)["ledgers"]:
        assert all(t["provenance"] != "unverified" for t in side["transfers"])
        assert all(r["provenance"] != "unverified" for r in side["rows"])
