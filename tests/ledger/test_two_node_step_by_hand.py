"""The two-node TP16 decode steps worked by hand from the records (issue 35, session 24).

docs/ledger.md "The two-node SGLang rows, read against their sources", session 24. A measured
two-node, 16-rank H100 NCCL all-reduce curve (receipts/jingchaozhang-nd-h100-v5-2node-torch-
nccl-all-reduce: NCCL's defaults through torch.distributed, eager, 4 KB to 8 GB) prices the
TP16 rows' cross-node all-reduces. These tests hold how, and fail if a record or the
composition changes without the other:

- kb's existing curve lookup uses it for a 16-rank all-reduce over NDR on H100 at 14336 B
  (the SGLang rows) and 16384 B (the vLLM row), linear in time between its 4 KB and 256 KB
  rows, and the rows say so, naming it;
- one TPOT row's step (SGLang, DeepSeek-R1, tp16) and the vLLM TP16 row's token time are the
  ledger's weight and KV read, L per-layer overheads and 2*L all-reduces at the curve's time
  worked by hand, exactly;
- a size outside the curve (below its 4 KB row) is still never extrapolated: it falls to the
  crossing ring at the line rate, and says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb.ledger.endtoend import RowResult, evaluate_row
from kb.ledger.transfers import Conditions, priced_by_receipts, receipts_on
from kb.model import KnowledgeBase
from tests.ledger.two_node_curve import CURVE, curve_time, points

TT = "receipts/tt-sglang-deepseek-r1-16xh100-two-node-batch1"
VLLM = "receipts/jingchaozhang-qwen2.5-72b-2xh100-vllm-batch1-pp2"
NDR = "interconnects/infiniband-ndr"
H100 = "hardware/nvidia-h100-sxm"
RANKS = 16
BF16 = 2  # bytes an activation element: the all-reduce's message is one token's hidden state


def _data(kb: KnowledgeBase, record_id: str) -> Mapping[str, Any]:
    record = kb.get(record_id)
    assert record is not None, record_id
    return record.data


def _hidden_bytes(kb: KnowledgeBase, model: str) -> int:
    return int(_data(kb, model)["geometry"]["d_model"]) * BF16


def _layers(kb: KnowledgeBase, model: str) -> int:
    return int(_data(kb, model)["geometry"]["layers"])


def _rows(priced: RowResult) -> Mapping[str, Any]:
    assert priced.outcome is not None
    return {row.name: row for row in priced.outcome.rows}


def _tt_tp16(kb: KnowledgeBase, index: int) -> RowResult:
    record = kb.get(TT)
    assert record is not None
    row = record.data["results"][index]
    layouts = dict(evaluate_row(kb, record, index, row, calibration=False).layouts)
    return layouts["tp16"]


def _vllm_tp16(kb: KnowledgeBase) -> RowResult:
    record = kb.get(VLLM)
    assert record is not None
    row = record.data["results"][1]
    assert (row["tp"], row["nodes"], row["cuda_graphs"]) == (16, 2, True)
    return evaluate_row(kb, record, 1, row, calibration=False)


def test_the_curve_is_sixteen_ranks_on_two_h100_nodes_outside_graphs(
    shipped: KnowledgeBase,
) -> None:
    data = _data(shipped, CURVE)
    assert (data["pattern"], data["interconnect"], data["hardware"]) == ("all-reduce", NDR, [H100])
    for row in data["results"]:
        assert (row["gpus"], row["nodes"], row["cuda_graphs"]) == (RANKS, 2, False)
        assert "algorithm" not in row  # NCCL's own choice: it serves only stock transfers
    sizes = [size for size, _ in points(shipped)]
    assert (sizes[0], sizes[1], sizes[-1]) == (4096, 262144, 8 * 2**30)


def test_the_decode_all_reduces_are_priced_from_the_curve_and_say_so(
    shipped: KnowledgeBase,
) -> None:
    for priced, size in ((_tt_tp16(shipped, 0), 14336), (_vllm_tp16(shipped), 16384)):
        assert priced.outcome is not None
        bracket = "linear in time between rows 0 (S = 4096 B) and 1 (S = 262144 B)"
        assert f"measured: {CURVE}: {bracket}" in priced.outcome.pricing
        assert not any("(cross_node_rails)" in p for p in priced.outcome.pricing)
        (said,) = [a for a in priced.assumed if "cross_node_rails unused" in a]
        assert CURVE in said and NDR in said
        assert size == 14336 or "under graphs priced by stock curves" in " ".join(priced.assumed)


def test_a_tpot_rows_step_is_the_ledgers_reads_overheads_and_hand_worked_all_reduces(
    shipped: KnowledgeBase,
) -> None:
    model = "models/deepseek-v3"
    size, layers = _hidden_bytes(shipped, model), _layers(shipped, model)
    assert (size, layers) == (14336, 61)
    each = curve_time(shipped, size)
    assert each == Fraction(5, 10**5) + Fraction(8, 10**5) * Fraction(10240, 258048)  # 53.17 us
    by_hand = 2 * layers * each  # 6.487 ms
    priced = _tt_tp16(shipped, 0)
    rows = _rows(priced)
    assert rows["exposed"].inputs == {"tp-all-reduce": by_hand}
    overhead = layers * rows["overhead"].inputs["t_o"]
    assert rows["overhead"].value == overhead
    assert priced.predicted == rows["useful"].value + overhead + by_hand  # 11.51 ms
    assert priced.measured is not None and priced.state == "contradicted"
    assert priced.predicted < priced.measured / 2  # -50%: kb is faster still, a miss


def test_the_vllm_tp16_token_is_the_same_sum(shipped: KnowledgeBase) -> None:
    model = "models/qwen2.5-72b"
    size, layers = _hidden_bytes(shipped, model), _layers(shipped, model)
    assert (size, layers) == (16384, 80)
    by_hand = 2 * layers * curve_time(shipped, size)
    priced = _vllm_tp16(shipped)
    rows = _rows(priced)
    assert rows["exposed"].inputs == {"tp-all-reduce": by_hand}
    overhead = layers * rows["overhead"].inputs["t_o"]
    assert priced.outcome is not None and priced.outcome.request is not None
    assert priced.outcome.request.tpot == rows["useful"].value + overhead + by_hand


def test_a_size_below_the_curve_is_never_extrapolated(shipped: KnowledgeBase) -> None:
    receipts = receipts_on(shipped, NDR, "all-reduce")
    when = Conditions("all-reduce", RANKS, frozenset({H100}))
    measured, why = priced_by_receipts(receipts, NDR, Fraction(4096), when)
    assert measured is not None and measured.receipt == CURVE  # its smallest row, exactly
    measured, why = priced_by_receipts(receipts, NDR, Fraction(2048), when)
    assert measured is None
    assert f"{CURVE} (4096 B to 8589934592 B)" in why and why.endswith("(never extrapolated)")
