"""kb.ledger.expert: the network share of an EP dispatch/combine at the link's achieved rate.

A copy to another node leaves HBM, crosses the GPU's PCIe link to its own NIC and the NIC's
port; the NIC and its PCIe link are the slowest stage, the same parts beside an H100, H200 or
H800. So the composed ledger prices the network path of DeepSeek-V3's dispatch and combine
across two H200 nodes at interconnects/infiniband-ndr's measured `bandwidth.achieved`
(GPUDirect RDMA through one NDR port, receipts/azure-nd-h100-v5-gdr-ib-write-bw), and says so;
a link that states no achieved rate is still priced at its line rate, and says that.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from kb.equations.evaluate import evaluate
from kb.kinds.placement import placement
from kb.ledger.expert import COMBINE, DISPATCH, EP_CLASS, PREFILL_DISPATCH
from kb.ledger.inputs import resolve_view
from kb.ledger.scenario import Scenario, scenario_record
from kb.model import KnowledgeBase, Record
from kb.schema import validate_record

DEEPSEEK = "models/deepseek-v3"
H200 = "hardware/nvidia-h200-sxm"
NDR = "interconnects/infiniband-ndr"
XDR = "interconnects/infiniband-xdr"
RECEIPT = "receipts/azure-nd-h100-v5-gdr-ib-write-bw"


def _two_h200_nodes(inter_link: str) -> Scenario:
    return Scenario(
        DEEPSEEK,
        H200,
        16,
        nodes=2,
        dp=16,
        ep=16,
        batch=64,
        input_tokens=2048,
        output_tokens=256,
        weight_precision="fp8",
        kv_precision="fp8",
        inter_link=inter_link,
    )


def _transfers(s: Scenario, shipped: KnowledgeBase) -> dict[str, Any]:
    record = scenario_record(s, shipped)
    spec = resolve_view(placement(record), record, shipped)
    assert not getattr(spec, "gaps", ()), spec
    option = spec.reference  # type: ignore[union-attr]
    return {t.name: t for t in (*option.transfers, *option.prefill)}


def test_the_achieved_rate_is_the_receipts_lowest_port(shipped: KnowledgeBase) -> None:
    link = shipped.get(NDR)
    receipt = shipped.get(RECEIPT)
    assert link is not None and receipt is not None
    achieved = link.data["bandwidth"]["achieved"]
    assert link.data["bandwidth"]["achieved_receipt"] == RECEIPT
    assert achieved["basis"] == "measured" and achieved["direction"] == "per-direction"
    rows = [r["algorithm_bandwidth"] for r in receipt.data["results"]]
    lowest = min(rows, key=lambda q: Fraction(str(q["value"])))
    assert (achieved["value"], achieved["unit"]) == (lowest["value"], lowest["unit"])
    line = link.data["bandwidth"]["per_link"]
    assert line["unit"] == achieved["unit"] and achieved["value"] < line["value"]


def test_two_h200_nodes_price_the_network_path_at_the_achieved_rate(
    shipped: KnowledgeBase,
) -> None:
    by_name = _transfers(_two_h200_nodes(NDR), shipped)
    assert {DISPATCH, COMBINE, PREFILL_DISPATCH} <= set(by_name)
    dispatch = by_name[DISPATCH]
    assert dispatch.link == NDR and dispatch.ranks == 16
    tokens = Fraction(64, 16)
    volume = dispatch.message_size.value
    achieved = Fraction(3925, 10) * 10**9 / 8  # 392.5 Gbit/s in B/s
    nvlink = 450 * 10**9  # interconnects/nvlink-4#bandwidth.per_device
    again = evaluate(
        shipped,
        shipped.get(EP_CLASS),  # type: ignore[arg-type]
        "ll_time_tail",
        {
            "N": {"value": 16, "unit": "1"},
            "G": {"value": 8, "unit": "1"},
            "T": {"value": tokens.numerator, "unit": "1"},
            "k": {"value": 8, "unit": "1"},
            "V": {"value": volume.numerator, "unit": "B"},
            "BW_nvl": {"value": nvlink, "unit": "B/s"},
            "BW_net": {"value": achieved.numerator, "unit": "B/s"},
        },
    )
    assert tokens.denominator == 1 and volume.denominator == 1
    one = volume / dispatch.bandwidth.value
    assert abs(one - Fraction(again.value) / 10**6) <= Fraction(1, 10**12) * one
    for name in (DISPATCH, COMBINE, PREFILL_DISPATCH):
        priced = by_name[name]
        assert f"achieved, {RECEIPT}" in priced.pricing, priced.pricing
        assert priced.latency.value == 0 and priced.latency.basis != "unverified"


def test_every_cross_node_transfer_has_no_unverified_latency(shipped: KnowledgeBase) -> None:
    for transfer in _transfers(_two_h200_nodes(NDR), shipped).values():
        if transfer.link == NDR:
            assert transfer.latency.basis != "unverified", transfer.name
            assert "unverified" not in transfer.pricing, transfer.pricing


def test_the_achieved_rate_is_slower_than_line_rate_so_the_copies_take_longer(
    shipped: KnowledgeBase,
) -> None:
    """Same inputs at XDR, which states no achieved rate: priced at its line rate, said so."""
    ndr = _transfers(_two_h200_nodes(NDR), shipped)[DISPATCH]
    xdr = _transfers(_two_h200_nodes(XDR), shipped)[DISPATCH]
    assert "line rate" in xdr.pricing and "achieved" not in xdr.pricing
    assert xdr.message_size.value == ndr.message_size.value
    assert xdr.bandwidth.value > ndr.bandwidth.value


def test_an_achieved_rate_without_its_receipt_is_a_schema_problem(shipped: KnowledgeBase) -> None:
    link = shipped.get(NDR)
    assert link is not None
    data = copy.deepcopy(dict(link.data))
    del data["bandwidth"]["achieved_receipt"]
    broken = Record(id=NDR, kind="interconnect", path=link.path, data=data)
    problems = list(validate_record(broken))
    assert problems and all(p.code == "SC001" for p in problems)
    assert any("achieved_receipt" in p.message for p in problems)
