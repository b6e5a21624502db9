"""A100 tensor parallel at 2 and 4 ranks is priced from a measured all-reduce curve.

Before receipts/vidur-a100-dgx-all-reduce-latency, kb had no A100 NVLink 3 all-reduce
curve at 2 or 4 ranks and the link states no latency, so those end-to-end rows were not
evaluable. Now a small-batch decode row is priced, its all-reduces from that receipt.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from kb.ledger.endtoend import NOT_EVALUABLE, evaluate_row
from kb.model import KnowledgeBase

VIDUR = "receipts/vidur-a100-dgx-all-reduce-latency"


@pytest.mark.parametrize(
    ("receipt", "index"),
    [
        ("receipts/gpt-fast-llama-2-70b-a100-tp-sweep-batch1", 0),  # TP2, batch 1
        ("receipts/lmdeploy-llama-2-70b-a100-tp4-static", 0),  # TP4, batch 1 TPOT
    ],
)
def test_a100_tp2_and_tp4_rows_are_priced_from_the_curve(
    shipped: KnowledgeBase, receipt: str, index: int
) -> None:
    record = shipped.get(receipt)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][index]))
    assert row["gpus"] in (2, 4)
    result = evaluate_row(shipped, record, index, row, calibration=False)
    assert result.state != NOT_EVALUABLE, result.reason
    assert result.predicted is not None and result.predicted > 0
    assert result.outcome is not None
    used = " ".join(str(r) for r in result.outcome.rows)
    assert VIDUR in used


def test_the_curve_stops_at_its_largest_size(shipped: KnowledgeBase) -> None:
    """A prefill all-reduce beyond the profiled 64 MiB is not extrapolated from the curve.

    Since interconnects/nvlink-3 states a measured per-step latency, such a row is priced
    at the link's line rate with that latency instead (an estimate, never "measured").
    """
    from kb.kinds import views
    from kb.ledger.curves import curves, price

    receipt = views(shipped).receipt(shipped.get("receipts/vidur-a100-dgx-all-reduce-latency"))
    assert receipt is not None
    four_ranks = [
        points for key, points in curves(receipt, lambda _: Fraction(1)).items() if key[1] == 4
    ]
    assert four_ranks
    largest = max(p.size for p in four_ranks[0])
    assert price(four_ranks[0], largest * 2, receipt.id) is None  # never extrapolated
    record = shipped.get("receipts/lmdeploy-llama-2-70b-a100-tp4-static")
    assert record is not None
    rows = record.data["results"]
    index = next(
        i
        for i, r in enumerate(rows)
        if r.get("batch") == 64 and r.get("input_tokens") == 2048 and r.get("measures") == "ttft"
    )
    result = evaluate_row(shipped, record, index, copy.deepcopy(dict(rows[index])), False)
    assert result.state != NOT_EVALUABLE, result.reason
    assert result.provenance == "estimated"
