"""Why the two-node SGLang DeepSeek-R1 rows stay misses (issue 35, sessions 21, 22 and 24).

docs/ledger.md "The two-node SGLang rows, read against their sources".
receipts/tt-sglang-deepseek-r1-16xh100-two-node-batch1 times one request at a time on 16 H100
in two nodes; the layout is unstated and kb prices tp16 and tp16-ep16 over the H100's
reference network (eight NDR ports a node). SGLang disables its custom all-reduce when a
group spans nodes, so the all-reduces are NCCL's. Since session 24 they are priced from a
measured two-node, 16-rank H100 curve of NCCL's defaults
(receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce), not the crossing ring at the
line rate. These tests hold the evidence to the receipts and to kb's composition, and fail if
either changes:

- the prefill all-reduces are the curve's times (its 4-64 MB and 64-512 MB rows at these
  prompts), a bus bandwidth under the ring's eight ports and under kb's tuned two-node
  nccl-tests receipt;
- priced so, kb's tp16 TTFT grows more than twice as fast as the measured TTFT from 2048 to
  8192 prompt tokens, and the prefill all-reduces alone grow faster than the whole measured
  TTFT: what is left of each row falls from ~144 ms at 128 tokens to below zero at 8192, no
  constant; the 4096- and 8192-token rows land in the band under both layouts (undetermined)
  on that slope, the others miss fast;
- the TPOT rows' decode all-reduces are the curve's time at 14336 B, and the 12.6-13.4 ms a
  step kb lacks (11.5-12.4 ms before session 24's hbm_streamed_rate lowered SGLang's t_o) is
  no all-reduce kb can price;
- gpt-oss-120b on four B200 (SGLang, MXFP4): until session 24 the measured decode step was
  shorter than kb's per-layer overhead term alone (t_o 70.8 us, fitted in 2024 on a Llama 3 8B
  step against the H100's datasheet HBM rate); with t_o fitted against the measured rate
  (51.6 us) the term is below the measured step and the row is within the band.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kb.ledger.endtoend import RowResult, evaluate_row
from kb.model import KnowledgeBase
from tests.ledger.two_node_curve import CURVE, curve_time

TT = "receipts/tt-sglang-deepseek-r1-16xh100-two-node-batch1"
NCCL_2NODE = "receipts/azure-nd-h100-v5-2node-nccl-all-reduce"
NDR = "interconnects/infiniband-ndr"
H100 = "hardware/nvidia-h100-sxm"
RANKS = 16
ALL_REDUCES = 2 * 61  # two a layer, 61 layers (the rows' ledger prices these)
SHORT, LONG = 10, 13  # the 2048- and 8192-token TTFT rows
OUTLIER = 9  # the 1024-token row, ~200 ms above both neighbours (4 requests)


def _layouts(kb: KnowledgeBase, index: int) -> dict[str, RowResult]:
    record = kb.get(TT)
    assert record is not None
    row = record.data["results"][index]
    result = evaluate_row(kb, record, index, row, calibration=False)
    return {name: priced for name, priced in result.layouts}


def _row(kb: KnowledgeBase, index: int) -> dict[str, Any]:
    record = kb.get(TT)
    assert record is not None
    row: dict[str, Any] = record.data["results"][index]
    return row


def _seconds(row: dict[str, Any]) -> Fraction:
    value = row["value"]
    assert value["unit"] == "ms"
    return Fraction(str(value["value"])) / 1000


def _prefill_all_reduce(result: RowResult) -> Fraction:
    assert result.outcome is not None and result.outcome.request is not None
    return dict(result.outcome.request.prefill_costs)["tp-prefill-all-reduce"]


def _ring_bytes(tokens: int, kb: KnowledgeBase) -> Fraction:
    """What one rank sends in a ring all-reduce of the prefill's activations (bf16)."""
    model = kb.get("models/deepseek-v3")
    assert model is not None
    d_model = int(model.data["geometry"]["d_model"])
    return Fraction(2 * (RANKS - 1), RANKS) * tokens * d_model * 2


def _port_rate(kb: KnowledgeBase) -> Fraction:
    link = kb.get(NDR)
    assert link is not None
    per_link = link.data["bandwidth"]["per_link"]
    assert per_link["unit"] == "Gbit/s"
    return Fraction(str(per_link["value"])) * 10**9 / 8  # bytes per second


def _ports(kb: KnowledgeBase) -> int:
    hardware = kb.get(H100)
    assert hardware is not None
    return int(hardware.data["reference_node"]["scale_out"]["ports"]["value"])


def _ttft(result: RowResult) -> Fraction:
    assert result.outcome is not None and result.outcome.request is not None
    return result.outcome.request.ttft


def _growth(kb: KnowledgeBase) -> tuple[Fraction, Fraction, Fraction]:
    """Per prompt token from 2048 to 8192: measured TTFT, kb's tp16 TTFT, its all-reduces."""
    tokens = _row(kb, LONG)["input_tokens"] - _row(kb, SHORT)["input_tokens"]
    measured = (_seconds(_row(kb, LONG)) - _seconds(_row(kb, SHORT))) / tokens
    short, long = _layouts(kb, SHORT)["tp16"], _layouts(kb, LONG)["tp16"]
    ttft = (_ttft(long) - _ttft(short)) / tokens
    return measured, ttft, (_prefill_all_reduce(long) - _prefill_all_reduce(short)) / tokens


def test_kbs_tp16_ttft_grows_faster_than_the_measured_ttft(shipped: KnowledgeBase) -> None:
    measured, ttft, all_reduces = _growth(shipped)
    assert Fraction(11, 10**6) < measured < Fraction(13, 10**6)  # ~12 us a token
    # kb grows 29.8 us a token; its prefill all-reduces alone 25.2: more than the measured
    # TTFT's whole growth (the ring at the line rate gave 8.4, session 21)
    assert 2 * measured < all_reduces < ttft < 3 * measured


def test_the_prefill_all_reduces_are_the_curves_under_the_rings_and_nccl_tests_busbw(
    shipped: KnowledgeBase,
) -> None:
    model = shipped.get("models/deepseek-v3")
    assert model is not None
    hidden = int(model.data["geometry"]["d_model"]) * 2  # bf16
    rates = []
    for index in (SHORT, LONG):
        tokens = _row(shipped, index)["input_tokens"]
        each = curve_time(shipped, tokens * hidden)
        for name, priced in _layouts(shipped, index).items():
            assert _prefill_all_reduce(priced) == ALL_REDUCES * each, (index, name)
        rates.append(_ring_bytes(tokens, shipped) / each)  # the bus bandwidth it implies
    receipt = shipped.get(NCCL_2NODE)
    assert receipt is not None and receipt.data["results"][0]["gpus"] == RANKS
    tuned = receipt.data["results"][0]["bus_bandwidth"]
    assert tuned["unit"] == "GB/s"
    rails = _ports(shipped) * _port_rate(shipped)  # 8 x 50 GB/s
    assert all(rate < rails < Fraction(str(tuned["value"])) * 10**9 for rate in rates)


def test_the_ttft_rows_leave_no_constant_and_two_land_in_the_band(
    shipped: KnowledgeBase,
) -> None:
    tp16 = {i: _ttft(_layouts(shipped, i)["tp16"]) for i in range(7, 14)}
    left = {i: _seconds(_row(shipped, i)) - tp16[i] for i in range(7, 14)}
    assert Fraction(130, 1000) < left[7] < Fraction(160, 1000)  # 144 ms at 128 tokens
    assert left[SHORT] > left[11] > left[12] > left[LONG]  # falls as the prompt grows
    assert left[LONG] < 0 < left[12]  # below zero at 8192 tokens
    assert left[OUTLIER] > 2 * left[7]  # the 1024-token row, four requests, stays apart
    record = shipped.get(TT)
    assert record is not None
    for index in range(7, 14):
        priced = evaluate_row(shipped, record, index, _row(shipped, index), calibration=False)
        if index in (12, LONG):  # within the band under both layouts, on a slope kb has wrong
            assert priced.state == "undetermined", index
            assert all(abs(r.error or 1) <= Fraction(1, 4) for _, r in priced.layouts), index
        else:  # a miss, shown as one
            assert priced.state == "contradicted" and priced.error is not None, index
            assert priced.error < Fraction(-1, 4), index


def test_the_decode_all_reduces_are_priced_from_the_two_node_curve(
    shipped: KnowledgeBase,
) -> None:
    each = curve_time(shipped, 14336)  # one token's hidden state, bf16: 53.17 us
    for index in range(7):
        for name, priced in _layouts(shipped, index).items():
            assert priced.outcome is not None and priced.measured is not None
            assert any(p.startswith(f"measured: {CURVE}") for p in priced.outcome.pricing)
            exposed = {row.name: row for row in priced.outcome.rows}["exposed"]
            assert exposed.inputs["tp-all-reduce"] == ALL_REDUCES * each, name
            missing = priced.measured - (priced.predicted or 0)
            assert Fraction(126, 10000) < missing < Fraction(134, 10000), (index, name)


def test_gpt_oss_on_b200_overhead_term_is_below_the_measured_step(shipped: KnowledgeBase) -> None:
    record = shipped.get("receipts/sglang-gpt-oss-120b-b200-h100-batch1")
    assert record is not None
    row = record.data["results"][0]
    assert row["hardware"] == "hardware/nvidia-b200" and row["precision"] == "mxfp4"
    priced = evaluate_row(shipped, record, 0, row, calibration=False)
    assert priced.state == "validated" and priced.outcome is not None  # -22.8% (was -36.9%)
    assert priced.measured is not None and priced.error is not None and priced.error < 0
    overhead = {r.name: r for r in priced.outcome.rows}["overhead"].value
    assert overhead == 36 * Fraction(516, 10**7)  # 36 layers x SGLang's t_o, 51.6 us
    assert overhead < 1 / priced.measured  # 1.86 ms of a measured 2.40 ms step
