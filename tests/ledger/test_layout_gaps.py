"""A row priced under a layout its run did not use says so (end-to-end.json `layout_gaps`).

Declared in session 22 for the TensorRT-LLM v1.0 MoE runs with attention data parallelism,
which kb could not express with tensor-parallel experts; since session 23 they are priced
as run (`moe_tp`, tests/ledger/test_moe_tensor_parallel.py) and no receipt is declared. The
mechanism stays: a declared gap adds its note to the row and changes no price.
"""

from __future__ import annotations

import pytest

from kb.ledger import layout_gaps
from kb.ledger.endtoend import evaluate_row
from kb.model import KnowledgeBase
from kb.resources import ResourceMissing

QWEN3 = "receipts/trtllm-v1.0-qwen3-235b-a22b-throughput-h100-h200-b200"
MAVERICK = "receipts/trtllm-v1.0-llama-4-maverick-throughput-h100-h200-b200"
LLAMA_8B = "receipts/trtllm-v1.0-llama-3.1-8b-throughput-h100-h200"  # dense: no gap


def test_each_covered_row_says_what_kb_priced_and_keeps_its_price(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = shipped.get(QWEN3)
    assert record is not None
    row = record.data["results"][0]
    plain = evaluate_row(shipped, record, 0, row, False)
    gap = layout_gaps.Gap(frozenset({0}), "a layout the run did not use")
    monkeypatch.setattr(layout_gaps, "declared", lambda: {QWEN3: gap})
    noted = evaluate_row(shipped, record, 0, row, False)
    assert layout_gaps.note(QWEN3, 0) == gap.note and gap.note in noted.assumed
    assert layout_gaps.note(QWEN3, 1) is None  # a row the declaration does not name
    assert (plain.predicted, plain.state) == (noted.predicted, noted.state)
    assert len(noted.assumed) == len(plain.assumed) + 1


def test_the_moe_receipts_priced_as_run_are_no_longer_declared() -> None:
    assert QWEN3 not in layout_gaps.declared()
    assert MAVERICK not in layout_gaps.declared()


def test_a_receipt_not_declared_adds_nothing(shipped: KnowledgeBase) -> None:
    record = shipped.get(LLAMA_8B)
    assert record is not None
    result = evaluate_row(shipped, record, 0, record.data["results"][0], False)
    assert layout_gaps.note(LLAMA_8B, 0) is None
    assert not any("attention data parallelism" in a for a in result.assumed)


def test_the_declaration_names_rows_and_needs_its_sources() -> None:
    gap = layout_gaps._read(
        {"receipts": {"receipts/r": {"rows": [1, 3], "note": "n", "sources": ["s"]}}}
    )["receipts/r"]
    assert gap.rows == frozenset({1, 3}) and gap.note == "n"
    with pytest.raises(ValueError, match="needs its note and its sources"):
        layout_gaps._read({"receipts": {"receipts/r": {"rows": "all", "note": "n", "sources": []}}})


def test_a_malformed_section_is_kb_s_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from kb import resources

    monkeypatch.setattr(resources, "_end_to_end_document", lambda: {"layout_gaps": {}})
    layout_gaps.declared.cache_clear()
    try:
        with pytest.raises(ResourceMissing):
            layout_gaps.declared()
    finally:
        layout_gaps.declared.cache_clear()
