"""A row the composition does not predict is named by what it measures, never as 'None'.

A row may time one kernel in `latency` with no `metric` (receipts/sglang-deepseek-v3-
h100-wide-ep's dispatch row): its reason then names the row's label. Since session 18 that
shipped row shows the reason kb/data/end-to-end.json `unpriced` declares for it; the
label is still what a row without a declared reason is named by.
"""

from __future__ import annotations

from kb.ledger.endtoend import NOT_EVALUABLE, evaluate_row, unpriced_reasons
from kb.model import KnowledgeBase
from tests.shipped_outputs import ONE_WORKER, end_to_end_results

pytestmark = ONE_WORKER


def test_every_unpredicted_row_names_what_it_measures() -> None:
    """On every shipped row (`evaluate_all`, priced once per worker: tests/shipped_outputs.py)."""
    rows = [r for r in end_to_end_results() if r.state == NOT_EVALUABLE]
    unnamed = [(r.receipt, r.index) for r in rows if "'None'" in r.reason]
    assert unnamed == []
    dispatch = next(
        r for r in rows if r.receipt == "receipts/sglang-deepseek-v3-h100-wide-ep" and r.index == 3
    )
    declared = unpriced_reasons()["receipts/sglang-deepseek-v3-h100-wide-ep#results.3"]
    assert dispatch.reason == declared


def test_a_row_without_metric_or_declared_reason_is_named_by_its_label(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.records["receipts/sglang-deepseek-v3-h100-wide-ep"]
    row = record.data["results"][3]
    assert "metric" not in row
    result = evaluate_row(shipped, record, 99, row, False)  # an index no reason is declared for
    assert result.state == NOT_EVALUABLE
    assert result.reason.startswith("measures 'decode dispatch per MoE layer")
