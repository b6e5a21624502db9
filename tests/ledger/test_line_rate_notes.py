"""A row whose collectives no measured curve prices says so (endtoend.line_rate_notes).

kb prices a collective at its interconnect's line rate, labelled an estimate, when no
receipt's curve covers it (kb/ledger/transfers.py). The end-to-end row then names each
such link and why, beside the curves it looked for, so the reader of a row that says
"all-reduces on the stock library's curves" sees which collectives no curve priced.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kb.ledger.endtoend import evaluate_row, line_rate_notes
from kb.ledger.transfers import LINE_RATE
from kb.model import KnowledgeBase

L40S = "receipts/trtllm-v0.9-l40s-peak-throughput"
L40S_TP2 = 8  # LLaMA 70B, batch 256, TP2: no curve of the L40S's PCIe link
A100_TP4 = "receipts/lmdeploy-llama-2-70b-a100-tp4-static"


def test_a_row_priced_at_the_line_rate_says_which_link_and_why(shipped: KnowledgeBase) -> None:
    record = shipped.get(L40S)
    assert record is not None
    result = evaluate_row(shipped, record, L40S_TP2, record.data["results"][L40S_TP2], False)
    assert result.outcome is not None
    assert any(p.startswith(LINE_RATE) for p in result.outcome.pricing)
    notes = [a for a in result.assumed if "line rate of interconnects/pcie-4-x16" in a]
    assert notes == [
        "a collective at the line rate of interconnects/pcie-4-x16: no matching receipt curve"
    ]


def test_a_row_priced_by_measured_curves_only_adds_nothing(shipped: KnowledgeBase) -> None:
    record = shipped.get(A100_TP4)
    assert record is not None
    result = evaluate_row(shipped, record, 4, record.data["results"][4], False)
    assert result.outcome is not None and result.outcome.pricing
    assert all(p.startswith("measured") for p in result.outcome.pricing)
    assert not any("line rate" in a for a in result.assumed)


@given(
    st.lists(st.sampled_from(["measured: r row 1", "line rate of i/a: x", "line rate of i/b: y"]))
)
def test_each_line_rate_pricing_is_named_once_in_order(pricing: list[str]) -> None:
    notes = line_rate_notes(tuple(pricing))
    expected = list(dict.fromkeys(p for p in pricing if p.startswith(LINE_RATE)))
    assert [n.removeprefix("a collective at the ") for n in notes] == expected
