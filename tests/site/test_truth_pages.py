"""The site says what kb checked: the verdict at the top of a record page, states per item.

Built from tests/fixtures/truth (fixture figures, not measurements).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kb.sitegen.build import build
from tests.site.conftest import load

TRUTH = Path(__file__).resolve().parents[1] / "fixtures" / "truth"


def build_truth(tmp: Path, edit: dict[str, tuple[str, str]] | None = None) -> Path:
    """Build the fixture records (after `edit`: path -> (old, new) text) into tmp/_site."""
    records = tmp / "records"
    shutil.copytree(TRUTH, records)
    for relative, (old, new) in (edit or {}).items():
        path = records / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new), encoding="utf-8")
    kb, findings = load(records)
    out = tmp / "_site"
    build(kb, out, findings=[f for f in findings if f.severity.value != "error"])
    return out


@pytest.fixture
def ring_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    return (build_truth(tmp_path) / "records" / "flops" / "ring.html").read_text()


def _rows(html: str) -> dict[str, str]:
    return dict(re.findall(r'<tr id="claim-([^"]+)"[^>]*>(.*?)</tr>', html, re.S))


def test_the_verdict_stands_in_the_header(ring_page: str) -> None:
    start = ring_page.index('<header class="record-header">')
    header = ring_page[start : ring_page.index("</header>", start)]
    assert re.search(  # one line: what was checked, then how many claims kb checks
        r'<p class="record-verdict tone-erratum" id="verdict">validated against 1 '
        r"measurement; carries 1 erratum \u00b7 kb checks its \d+ claims?</p>",
        header,
    ), header


def test_every_item_shows_what_was_checked(ring_page: str) -> None:
    assert "state-proved" not in ring_page and ">proved<" not in ring_page
    equation = ring_page[ring_page.index('id="eq-t_ring"') :]
    assert 'class="state state-consistent"' in equation[:400]
    assert 'class="state state-derived"' in ring_page
    rows = _rows(ring_page)
    assert set(rows) == {
        "t-1mib",
        "affine-in-s",
        "twice-the-work",
        "t-1mib-measured",
        "seed-t-no-latency",
    }
    assert all(
        'class="state state-recomputed">recomputed<' in row
        for name, row in rows.items()
        if name not in ("t-1mib-measured", "seed-t-no-latency")
    )
    assert 'class="state state-validated">validated<' in rows["t-1mib-measured"]


def _prediction_rows(html: str) -> list[list[str]]:
    table = html[html.index('<table class="predictions">') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr(?: class=\"miss\")?><td>(.*?)</td></tr>", table, re.S)
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.split(r"</td><td[^>]*>", row)]
        for row in rows
    ]


def test_a_flop_class_shows_predicted_against_measured(ring_page: str) -> None:
    assert '<h3 id="predictions">Predicted vs measured</h3>' in ring_page
    assert _prediction_rows(ring_page) == [
        [
            "t-1mib-measured",
            "38.35 us",
            "42.00 us (receipts/ar#results.0.latency)",
            "-8.7%",
            "\u00b125%",
            "validated",
        ]
    ]


def test_an_accepted_contradicted_prediction_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    site = build_truth(
        tmp_path,
        {
            "receipts/ar.yaml": ("latency: {value: 42, unit: us", "latency: {value: 60, unit: us"),
            "flops/ring.yaml": (
                "    band: {rel: 0.25}\n",
                "    band: {rel: 0.25}\n    accepted: {reason: no launch term}\n",
            ),
        },
    )
    html = (site / "records" / "flops" / "ring.html").read_text()
    assert _prediction_rows(html) == [
        [
            "t-1mib-measured",
            "38.35 us",
            "60.00 us (receipts/ar#results.0.latency)",
            "-36.1%",
            "\u00b125%",
            "contradicted accepted: no launch term",
        ]
    ]
    assert "contradicted by 1 measurement (1 accepted); carries 1 erratum" in html
    assert '<p class="record-verdict tone-contradicted"' in html


ERRATUM = "the source says 18.35 us; kb computes 38.350080 (exact 119844/3125) us"


def test_an_erratum_claim_is_red_with_both_values_its_reason_and_its_correction(
    ring_page: str,
) -> None:
    row = re.search(
        r'<tr id="claim-seed-t-no-latency" class="claim-erratum">(.*?)</tr>', ring_page, re.S
    )
    assert row is not None
    cells = row.group(1)
    assert f'<p class="erratum-says">Erratum: {ERRATUM}</p>' in cells
    assert '<p class="erratum">the source leaves out the per-collective latency alpha</p>' in cells
    assert 'corrected by <a href="#claim-t-1mib">t-1mib</a>' in cells
    assert 'class="state state-erratum">erratum<' in cells
    assert "state-recomputed" not in cells  # no success state on a refuted statement


def test_a_statement_linked_to_its_erratum_is_red_where_it_stands(ring_page: str) -> None:
    fields = ring_page[ring_page.index('<section id="fields"') :]
    fields = fields[: fields.index("</section>")]
    shown = (
        '<span class="erratum"><span class="state state-erratum">erratum</span> '
        f'<a href="#claim-seed-t-no-latency">seed-t-no-latency</a>: {ERRATUM}</span>'
    )
    assert fields.count(shown) == 2  # the scales_with item and the workaround


def test_an_erratum_that_holds_has_no_erratum_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_CACHE_DIR", str(tmp_path / "cache"))
    site = build_truth(
        tmp_path,
        {"flops/ring.yaml": ("expect: {value: 18.35, unit: us", "expect: {value: 38.35, unit: us")},
    )
    html = (site / "records" / "flops" / "ring.html").read_text()
    assert "Erratum: the source says" not in html
    assert "recomputed (not an erratum now)" in html
