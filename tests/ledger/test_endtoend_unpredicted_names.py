"""A row the composition does not predict is named by what it measures, never as 'None'.

A row may time one kernel in `latency` with no `metric` (receipts/sglang-deepseek-v3-
h100-wide-ep's dispatch row): its reason then names the row's label.
"""

from __future__ import annotations

from kb.ledger.endtoend import NOT_EVALUABLE
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
    assert dispatch.reason.startswith("measures 'decode dispatch per MoE layer")
