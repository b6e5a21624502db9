"""An engine's all-reduce when a tensor-parallel group spans nodes (`cross_node_all_reduce`).

SGLang and vLLM disable their custom all-reduce for a group that is not all in one node
and run NCCL; kb/data/end-to-end.json declares it, kb.ledger.cross_node reads it and
kb.ledger.endtoend.conditions prices such a row's all-reduces by the stock library's
curves, saying so. A TP group inside one node keeps the engine's own curves.
"""

from __future__ import annotations

from typing import Any

from kb.ledger import cross_node
from kb.ledger.endtoend import conditions, evaluate_row
from kb.model import KnowledgeBase
from kb.resources import end_to_end

TT = "receipts/tt-sglang-deepseek-r1-16xh100-two-node-batch1"
QWEN = "receipts/jingchaozhang-qwen2.5-72b-2xh100-vllm-batch1-pp2"
TWO_NODE_CURVE = "receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce"
NDR = "interconnects/infiniband-ndr"
MESSAGE = "Custom allreduce is disabled because this process group spans across nodes."


def test_the_declaration_names_each_engine_with_the_code_it_was_read_from() -> None:
    assert cross_node.engines() == {"engines/sglang", "engines/vllm"}
    section: dict[str, Any] = end_to_end(cross_node.SECTION, lambda e: e)
    assert MESSAGE in section["reason"]
    for node in section["engines"].values():
        assert "custom_all_reduce.py" in node["source"]
        assert node["source"].startswith("https://github.com/")


def test_only_a_declared_engines_group_that_spans_nodes_is_covered() -> None:
    assert cross_node.spans_nodes("engines/sglang", 16, 16, 2)
    assert cross_node.spans_nodes("engines/vllm", 16, 16, 2)
    assert not cross_node.spans_nodes("engines/sglang", 8, 16, 2)  # TP inside a node
    assert not cross_node.spans_nodes("engines/sglang", 8, 8, 1)
    assert not cross_node.spans_nodes("engines/tensorrt-llm", 16, 16, 2)  # not declared


def _stated(kb: KnowledgeBase, receipt: str, index: int, **layout: Any) -> Any:
    record = kb.get(receipt)
    assert record is not None
    row = {**record.data["results"][index], **layout}
    return record, row


def test_a_group_across_nodes_is_priced_by_the_stock_curves(shipped: KnowledgeBase) -> None:
    for receipt, index, layout in (
        (TT, 0, {"tp": 16, "inter_link": NDR}),  # as unstated_layout writes a layout in
        (TT, 13, {"tp": 16, "ep": 16, "inter_link": NDR}),
        (QWEN, 1, {}),
    ):
        record, row = _stated(shipped, receipt, index, **layout)
        scenario, _, assumed = conditions(shipped, record, row)
        assert scenario.stock_collective and cross_node.NOTE in assumed, receipt
        priced = evaluate_row(shipped, record, index, row, calibration=False)
        assert priced.outcome is not None
        # the stock curves over NDR: the two-node curve (no algorithm: it serves only stock
        # transfers) prices every crossing all-reduce of these sizes; none at the line rate
        consulted = [p for p in priced.outcome.pricing if TWO_NODE_CURVE in p]
        assert consulted and all(p.startswith(f"measured: {TWO_NODE_CURVE}") for p in consulted)
        assert not any(p.startswith(f"line rate of {NDR}") for p in priced.outcome.pricing)
        curve = shipped.get(TWO_NODE_CURVE)
        assert curve is not None and not any("algorithm" in r for r in curve.data["results"])


def test_a_group_inside_a_node_keeps_the_engines_own_curves(shipped: KnowledgeBase) -> None:
    record, row = _stated(shipped, QWEN, 0)
    assert row["tp"] * row["nodes"] <= row["gpus"]  # TP8 x PP2: each TP group in one node
    scenario, _, assumed = conditions(shipped, record, row)
    assert not scenario.stock_collective and cross_node.NOTE not in assumed


def test_every_covered_row_of_the_table_says_so(shipped: KnowledgeBase) -> None:
    record = shipped.get(TT)
    assert record is not None
    for index, row in enumerate(record.data["results"]):
        priced = evaluate_row(shipped, record, index, row, calibration=False)
        assert priced.layouts, index
        for name, layout in priced.layouts:
            assert cross_node.NOTE in layout.assumed, (index, name)
