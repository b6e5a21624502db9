"""A row spanning two nodes is priced over the inter-node link its source states.

`conditions()` reads the row's `inter_link`, else (for a row spanning nodes) the
receipt's `interconnect` when that is a network port; an NVLink named there is never
read as the link between nodes, and with none stated the row stays not evaluable.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kb.ledger.endtoend import NOT_EVALUABLE, RowResult, evaluate_row
from kb.model import KnowledgeBase, Record

QWEN_2X = "receipts/jingchaozhang-qwen2.5-72b-2xh100-vllm-batch1-pp2"


def _evaluate(
    kb: KnowledgeBase, index: int, receipt_link: Any = "keep", **patch: object
) -> RowResult:
    record = kb.get(QWEN_2X)
    assert record is not None
    data = copy.deepcopy(dict(record.data))
    if receipt_link != "keep":
        data.pop("interconnect", None)
        if receipt_link is not None:
            data["interconnect"] = receipt_link
    row = dict(data["results"][index])
    row.update(patch)
    twin = Record(id=record.id, kind=record.kind, path=record.path, data=data)
    return evaluate_row(kb, twin, index, row, False)


@pytest.mark.parametrize("index", [0, 1])  # TP8 x PP2 and TP16 on two nodes
def test_the_receipts_infiniband_prices_both_two_node_rows(
    shipped: KnowledgeBase, index: int
) -> None:
    result = _evaluate(shipped, index)
    assert result.predicted is not None, result.reason
    assert result.conditions["nodes"] == 2
    assert result.conditions["inter_link"] == "interconnects/infiniband-ndr"
    assert any("inter-node link interconnects/infiniband-ndr" in a for a in result.assumed)


def test_without_a_stated_link_the_row_is_not_evaluable(shipped: KnowledgeBase) -> None:
    result = _evaluate(shipped, 1, receipt_link=None)
    assert result.state == NOT_EVALUABLE
    assert "inter_link" in result.reason


def test_an_nvlink_named_by_the_receipt_is_not_the_link_between_nodes(
    shipped: KnowledgeBase,
) -> None:
    result = _evaluate(shipped, 1, receipt_link="interconnects/nvlink-4")
    assert result.state == NOT_EVALUABLE
    assert "inter_link" in result.reason


def test_a_rows_own_inter_link_wins(shipped: KnowledgeBase) -> None:
    result = _evaluate(shipped, 1, receipt_link=None, inter_link="interconnects/ethernet-400g-roce")
    assert result.conditions["inter_link"] == "interconnects/ethernet-400g-roce"
    assert not any("receipt's interconnect" in a for a in result.assumed)
