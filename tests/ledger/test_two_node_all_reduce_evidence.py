"""A small all-reduce across two Hopper nodes, measured, against kb's crossing ring (issue 35, s22).

docs/ledger.md "The two-node SGLang rows, read against their sources". kb prices an all-reduce
whose tensor-parallel group spans nodes, where no curve prices its size, as a ring of 2*(N-1)
steps each at the network's measured per-message latency (interconnects/infiniband-ndr,
cross_node_rails). interconnects/infiniband-ndr v6 called that ring a floor of NCCL's time.
NCCL's own latency model charges the network only on the 2*(nNodes-1) steps that cross nodes
(sources/nccl-src-v2.26.2), and a measured small all-reduce of 16 Hopper GPUs over two NDR
nodes (receipts/nccl-h20-2node-nvlstree-small-all-reduce) is faster than the ring. These tests
hold that evidence and what it means for the two-node SGLang TPOT rows, and fail if either the
records or kb's composition changes:

- every measured two-node row is below kb's crossing ring of the same rank count, so the ring
  is an estimate above the measured regime, not a floor;
- the new receipt prices nothing kb prices (its NVLSTree rows serve no stock transfer);
- what the TPOT rows leave unpriced, spread over their all-reduces, asks each all-reduce to take
  more than three times the measured two-node all-reduce: no all-reduce kb could price from a
  measured curve closes the gap, which stays a miss (since session 24 the decode all-reduces
  are priced from the measured two-node H100 curve, receipts/jingchaozhang-nd-h100-v5-2node-
  torch-nccl-all-reduce, 53.17 us each; the ask does not depend on how kb prices them);
- the other two-node TP16 row kb holds (vLLM, Qwen2.5-72B, CUDA graphs, the same H100 nodes
  over NDR) asks nearly the same of each of its all-reduces: an observation, not a rule (that
  run used Ray without async scheduling, which kb does not price either).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb.ledger.endtoend import RowResult, evaluate_row
from kb.model import KnowledgeBase
from tests.ledger.two_node_curve import curve_time

H20_2NODE = "receipts/nccl-h20-2node-nvlstree-small-all-reduce"
TT = "receipts/tt-sglang-deepseek-r1-16xh100-two-node-batch1"
NDR = "interconnects/infiniband-ndr"
TPOT_ROWS = range(7)
ALL_REDUCES = 2 * 61  # two a layer, 61 layers: what the TPOT rows' ledger prices
VLLM_TP16 = "receipts/jingchaozhang-qwen2.5-72b-2xh100-vllm-batch1-pp2"
VLLM_ROW, VLLM_ALL_REDUCES = 1, 2 * 80  # TP16 over two nodes; Qwen2.5-72B's 80 layers


def _data(kb: KnowledgeBase, record_id: str) -> Mapping[str, Any]:
    record = kb.get(record_id)
    assert record is not None, record_id
    return record.data


def _seconds(node: Mapping[str, Any]) -> Fraction:
    scale = {"us": Fraction(1, 10**6), "ms": Fraction(1, 1000)}[node["unit"]]
    return Fraction(str(node["value"])) * scale


def _measured_two_node(kb: KnowledgeBase) -> list[Fraction]:
    rows = _data(kb, H20_2NODE)["results"]
    assert rows and all(r["gpus"] == 16 and r["nodes"] == 2 for r in rows)
    return [_seconds(r["latency"]) for r in rows]


def _crossing_ring(kb: KnowledgeBase, ranks: int) -> Fraction:
    """kb's latency term of a ring whose group spans nodes: 2*(N-1) steps at the network's."""
    return 2 * (ranks - 1) * _seconds(_data(kb, NDR)["latency"])


def _layouts(kb: KnowledgeBase, index: int) -> dict[str, RowResult]:
    record = kb.get(TT)
    assert record is not None
    row = record.data["results"][index]
    result = evaluate_row(kb, record, index, row, calibration=False)
    return dict(result.layouts)


def test_the_receipt_is_two_nodes_of_hopper_over_the_ndr_link(shipped: KnowledgeBase) -> None:
    data = _data(shipped, H20_2NODE)
    assert data["interconnect"] == NDR and data["pattern"] == "all-reduce"
    assert data["hardware"] == ["hardware/nvidia-h20"]
    sizes = [r["message_size"] for r in data["results"]]
    assert all(s["unit"] == "B" and s["value"] <= 512 for s in sizes)


def test_every_measured_two_node_row_is_below_kbs_crossing_ring(shipped: KnowledgeBase) -> None:
    measured = _measured_two_node(shipped)
    ring = _crossing_ring(shipped, 16)
    assert max(measured) < ring  # no floor: the ring is above every measured row
    assert ring < 2 * max(measured)  # and within a factor of two of them


def test_the_receipt_prices_nothing_kb_prices(shipped: KnowledgeBase) -> None:
    rows = _data(shipped, H20_2NODE)["results"]
    assert {r["algorithm"] for r in rows} == {"nvls"}  # never a stock or ring transfer
    for name, priced in _layouts(shipped, 0).items():
        assert priced.outcome is not None, name
        assert not any(H20_2NODE in p for p in priced.outcome.pricing), name


def _asked(kb: KnowledgeBase) -> list[Fraction]:
    """Per TPOT row and layout: kb's all-reduce plus the step kb lacks, spread over them."""
    each, found = curve_time(kb, 14336), []  # since session 24 the two-node H100 curve's
    for index in TPOT_ROWS:
        for name, priced in _layouts(kb, index).items():
            assert priced.outcome is not None and priced.predicted is not None, (index, name)
            assert priced.measured is not None and priced.state == "contradicted", (index, name)
            exposed = {row.name: row for row in priced.outcome.rows}["exposed"]
            per_collective = exposed.inputs["tp-all-reduce"] / ALL_REDUCES
            assert per_collective == each, (index, name)
            found.append(per_collective + (priced.measured - priced.predicted) / ALL_REDUCES)
    return found


def test_the_tpot_gap_asks_more_than_three_measured_all_reduces_each(
    shipped: KnowledgeBase,
) -> None:
    measured = max(_measured_two_node(shipped))
    assert all(asked > 3 * measured for asked in _asked(shipped))


def test_the_two_node_vllm_tp16_row_asks_nearly_the_same(shipped: KnowledgeBase) -> None:
    record = shipped.get(VLLM_TP16)
    assert record is not None
    row = record.data["results"][VLLM_ROW]
    assert (row["tp"], row["nodes"], row["cuda_graphs"]) == (16, 2, True)
    priced = evaluate_row(shipped, record, VLLM_ROW, row, calibration=False)
    assert priced.state == "contradicted" and priced.outcome is not None
    request = priced.outcome.request
    assert request is not None and priced.measured is not None
    assert priced.predicted is not None  # one request's output rate (printed rounded):
    outputs = row["output_tokens"]  # its tokens over its latency, TTFT + (O - 1) x TPOT
    assert abs(priced.predicted * request.latency / outputs - 1) < Fraction(1, 1000)
    assert abs(priced.predicted * request.tpot - 1) < Fraction(1, 100)  # ~1 / TPOT
    exposed = {r.name: r for r in priced.outcome.rows}["exposed"].inputs["tp-all-reduce"]
    asked = (exposed + 1 / priced.measured - request.tpot) / VLLM_ALL_REDUCES
    sglang = _asked(shipped)
    assert min(sglang) * Fraction(9, 10) < asked < max(sglang)
