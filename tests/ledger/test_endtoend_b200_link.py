"""NVLink 5's per-ring-step latency is derived from a measured all-reduce, and prices B200 rows.

interconnects/nvlink-5 v4 states `latency = S/(N*busbw)` from the 8 KiB row of Azure's
4 x GB200 ring all-reduce (receipts/azure-nd-gb200-v6-nccl-all-reduce), the way
interconnects/nvlink-3 v6 does for A100: 8192 B / (4 x 0.76 GB/s) = 2.6947 us by hand.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from kb.ledger.endtoend import NOT_EVALUABLE, evaluate_row
from kb.ledger.quantities import figure
from kb.model import KnowledgeBase

SGLANG = "receipts/sglang-gpt-oss-120b-b200-h100-batch1"


def test_the_latency_is_the_measured_8_kib_all_reduce_per_ring_step(
    shipped: KnowledgeBase,
) -> None:
    link = shipped.get("interconnects/nvlink-5")
    receipt = shipped.get("receipts/azure-nd-gb200-v6-nccl-all-reduce")
    assert link is not None and receipt is not None
    row = receipt.data["results"][0]
    size = figure(row["message_size"], "").value  # bytes
    busbw = figure(row["bus_bandwidth"], "").value  # bytes/s
    derived = size / (row["gpus"] * busbw)
    assert abs(derived - Fraction(26947, 10**10)) < Fraction(1, 10**10)  # 2.6947 us by hand
    stated = figure(link.data["latency"], "").value
    assert abs(stated - derived) / derived < Fraction(1, 1000)  # rounded to 2.695 us


@pytest.mark.parametrize("index", [0, 1])  # the B200 TP4 rows, MXFP4 and BF16
def test_the_b200_rows_are_priced(shipped: KnowledgeBase, index: int) -> None:
    record = shipped.get(SGLANG)
    assert record is not None
    row = copy.deepcopy(dict(record.data["results"][index]))
    assert row["hardware"] == "hardware/nvidia-b200"
    result = evaluate_row(shipped, record, index, row, False)
    assert result.state != NOT_EVALUABLE, result.reason
    assert result.predicted is not None
