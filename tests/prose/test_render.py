"""kb.prose.render: what a template shows (value, unit, provenance) or why it cannot."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from kb.model import KnowledgeBase, Record
from kb.prose.render import Broken, Shown, decimal_text, engine_claims, record_shown, show
from kb.prose.scan import templates
from tests.equations.helpers import HARDWARE, NUMERIC, flop, knowledge_base

GPU = {
    **HARDWARE,
    "memory": {
        "bandwidth": {"value": 3350, "unit": "GB/s", "basis": "vendor-spec", "source": "sources/d"},
        "capacity": {"value": 80, "unit": "GB", "basis": "vendor-spec", "source": "sources/d"},
    },
    "links": [{"count": 18, "per_link": {"value": 25, "unit": "GB/s", "basis": "derived"}}],
    "vendor": "Someone",
}


def base(tmp_path: Path) -> KnowledgeBase:
    claim = NUMERIC.replace("EXPECTED", "3318")
    return knowledge_base(str(tmp_path), ("hardware/gpu", GPU), ("flops/x", flop(claim)))


def shown(kb: KnowledgeBase, text: str, owner: str = "flops/x", computed: bool = False) -> object:
    (template,) = templates(text)
    record = kb.get(owner)
    assert isinstance(record, Record)
    return show(kb, record, template, engine_claims(kb) if computed else None)


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("{hardware/gpu#memory.bandwidth}", "3350", "GB/s"),
        ("{hardware/gpu#memory.bandwidth|TB/s}", "3.35", "TB/s"),
        ("{hardware/gpu#memory.bandwidth|Tbit/s}", "26.8", "Tbit/s"),
        ("{hardware/gpu#memory.bandwidth|GiB/s}", "≈3120", "GiB/s"),
        ("{hardware/gpu#links.0.per_link|GiB/s}", "≈23.28", "GiB/s"),
        ("{hardware/gpu#links.0.count}", "18", ""),
        ("{hardware/gpu#memory.capacity|MB}", "80000", "MB"),
    ],
)
def test_a_figure_is_shown_as_authored_or_converted_exactly(
    tmp_path: Path, text: str, value: str, unit: str
) -> None:
    found = shown(base(tmp_path), text)
    assert isinstance(found, Shown), found
    assert (found.value, found.unit) == (value, unit)


def test_a_figure_carries_its_record_field_basis_and_source(tmp_path: Path) -> None:
    found = shown(base(tmp_path), "{#memory.bandwidth|TB/s}", owner="hardware/gpu")
    assert isinstance(found, Shown)
    assert (found.record_id, found.anchor, found.basis, found.source) == (
        "hardware/gpu",
        "memory.bandwidth",
        "vendor-spec",
        "sources/d",
    )
    assert found.text == "3.35 TB/s"


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ("{hardware/gpu#memory.bandwith}", "PR001", "has no field 'memory.bandwith'"),
        ("{hardware/gpu#vendor}", "PR001", "not a quantity"),
        ("{hardware/gpu#memory}", "PR001", "mapping, not a quantity"),
        ("{hardware/gone#memory.bandwidth}", "RF001", "no record"),
        ("{hardware/gpu#memory.bandwidth|TB}", "PR002", "cannot show GB/s"),
        ("{hardware/gpu#memory.bandwidth|GBps}", "PR002", "ambiguous"),
        ("{hardware/gpu#memory.bandwidth|furlongs}", "PR002", "unknown unit"),
        ("{claim:no-such}", "PR001", "has no claim 'no-such'"),
        ("{flops/x#claim:b-star|s}", "PR002", "cannot show 1"),
        ("{memory.bandwidth#}", "PR001", "malformed"),
    ],
)
def test_a_broken_template_says_why_with_its_code(
    tmp_path: Path, text: str, code: str, words: str
) -> None:
    found = shown(base(tmp_path), text)
    assert isinstance(found, Broken), found
    assert found.code == code and words in found.message, found


def test_a_claim_shows_what_kb_computed_else_what_it_expects(tmp_path: Path) -> None:
    kb = base(tmp_path)
    claimed = shown(kb, "{claim:b-star}")
    computed = shown(kb, "{claim:b-star}", computed=True)
    assert isinstance(claimed, Shown) and isinstance(computed, Shown)
    assert (claimed.value, claimed.basis) == ("3318", "claimed (not recomputed here)")
    # P_layer*BW_link/(2*d*BW_hbm) = 202375168*450/(2*4096*3350) = 3318.3..., printed rounded
    assert computed.basis.startswith("computed by kb: ")
    assert Fraction(computed.value) == pytest.approx(202375168 * 450 / (2 * 4096 * 3350), rel=1e-3)


def test_a_claim_of_another_record_is_found_by_id(tmp_path: Path) -> None:
    found = shown(base(tmp_path), "{flops/x#claim:b-star}", owner="hardware/gpu")
    assert isinstance(found, Shown) and found.record_id == "flops/x"
    assert found.anchor == "claim:b-star"


def test_only_numeric_claims_are_shown(tmp_path: Path) -> None:
    data = flop(NUMERIC.replace("EXPECTED", "3318").replace("kind: numeric", "kind: scaling"))
    kb = knowledge_base(str(tmp_path), ("hardware/gpu", GPU), ("flops/x", data))
    found = shown(kb, "{claim:b-star}")
    assert isinstance(found, Broken) and "not numeric" in found.message


def test_every_template_of_a_record_in_document_order(tmp_path: Path) -> None:
    data = {
        "summary": "{#memory.capacity} at {#memory.bandwidth|TB/s}",
        **GPU,
        "memory": {
            **GPU["memory"],
            "capacity": {**GPU["memory"]["capacity"], "note": "{hardware/gone#x}"},
        },
    }
    kb = knowledge_base(str(tmp_path), ("hardware/gpu", data))
    rows = [(p, s.template.raw) for p, s in record_shown(kb, kb.records["hardware/gpu"])]
    assert rows == [
        ("/summary", "{#memory.capacity}"),
        ("/summary", "{#memory.bandwidth|TB/s}"),
        ("/memory/capacity/note", "{hardware/gone#x}"),
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(67, 20), "3.35"),
        (Fraction(3350), "3350"),
        (Fraction(1, 3), "≈0.3333"),
        (Fraction(10**15), "≈1e+15"),
        (Fraction(-5, 2), "-2.5"),
        (Fraction(0), "0"),
    ],
)
def test_decimal_text_is_exact_or_marked(value: Fraction, text: str) -> None:
    assert decimal_text(value) == text
