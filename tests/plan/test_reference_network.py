"""The network between nodes kb plan assumes (the accelerator's reference node), and TP across.

A question that spans nodes and names no --inter-link is planned over the network of the
reference system the accelerator ships in (`reference_node` in its record), and the plan
says it assumed it; an accelerator whose record states none leaves the crossing mappings
out with the reason. A tensor-parallel group of whole nodes is a mapping of its own,
marked (`Placement.tp_across_nodes`) in the text and the JSON.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from kb.api import open_kb, validate
from kb.plan.enumerate import Placement
from kb.plan.planner import ModelFacts, Query, plan, reference_network
from kb.plan.render import text, to_json
from tests.plan.fakes import pricing

ROOT = Path(__file__).resolve().parents[2] / "records"
MS = Fraction(1, 1000)
H100 = "hardware/nvidia-h100-sxm"
FACTS = ModelFacts(layers=80, experts=None)
PRICE = pricing(
    {
        "tp8": lambda b: 12 * MS,
        "tp8-pp2": lambda b: 13 * MS,
        "tp16": lambda b: 90 * MS,
        "dp2-tp8": lambda b: 10 * MS,
    }
)


@pytest.fixture(scope="module")
def kb() -> Any:
    return open_kb(ROOT, checked=validate(ROOT))


@pytest.mark.parametrize(
    ("placement", "across"),
    [
        (Placement(tp=16, nodes=2), True),
        (Placement(tp=8, pp=2, nodes=2), False),
        (Placement(tp=8, dp=2, nodes=2), False),
        (Placement(tp=8, nodes=1), False),
        (Placement(tp=4, pp=2, dp=4, nodes=4), False),
        (Placement(tp=16, dp=2, nodes=4), True),
    ],
)
def test_tp_across_nodes_is_a_group_larger_than_a_node(placement: Placement, across: bool) -> None:
    assert placement.tp_across_nodes is across


def test_the_h100_ships_in_a_dgx_with_one_ndr_port_per_gpu(kb: Any) -> None:
    found = reference_network(kb, H100)
    assert found is not None
    link, words = found
    assert link == "interconnects/infiniband-ndr"
    assert "8 ports per node of 8 devices" in words and "NVIDIA DGX H100" in words
    assert words.startswith("assumed: ") and "name --inter-link to change" in words


def test_nodes_of_another_size_than_the_reference_node_are_said(kb: Any) -> None:
    found = reference_network(kb, H100, per_node=4)
    assert found is not None
    assert found[1].endswith("the question's nodes hold 4 devices, the reference node 8")
    same = reference_network(kb, H100, per_node=8)
    assert same is not None and "the question's nodes" not in same[1]


def test_an_accelerator_with_no_reference_node_assumes_nothing(kb: Any) -> None:
    assert reference_network(kb, "hardware/nvidia-l40s") is None


def test_two_nodes_with_no_link_named_are_planned_over_the_reference_network(kb: Any) -> None:
    query = Query("models/llama-3.1-70b", H100, count=16, nodes=2, batch=64, context=2048)
    result = plan(query, FACTS, kb, PRICE)
    assert result.query.inter_link == "interconnects/infiniband-ndr"
    assert any(n.startswith("assumed: interconnects/infiniband-ndr") for n in result.notes)
    names = {o.name for o in result.of("feasible")}
    assert {"tp8", "tp8-pp2", "tp16", "dp2-tp8"} <= names
    assert not result.excluded  # nothing left out: the link is known, TP across is priced
    out = text(result)
    assert "note: assumed: interconnects/infiniband-ndr between nodes" in out
    row = next(line for line in out.splitlines() if line.startswith("  tp16 "))
    assert "2 TP across" in row
    options = {o["name"]: o for o in json.loads(to_json(result))["options"]}
    assert options["tp16"]["tp_across_nodes"] and not options["dp2-tp8"]["tp_across_nodes"]


def test_a_named_link_is_used_and_nothing_is_said_assumed(kb: Any) -> None:
    query = Query(
        "models/llama-3.1-70b",
        H100,
        count=16,
        nodes=2,
        batch=64,
        context=2048,
        inter_link="interconnects/ethernet-400g-roce",
    )
    result = plan(query, FACTS, kb, PRICE)
    assert result.query.inter_link == "interconnects/ethernet-400g-roce"
    assert not any("assumed" in n for n in result.notes)


def test_one_node_assumes_no_network(kb: Any) -> None:
    query = Query("models/llama-3.1-70b", H100, count=8, nodes=1, batch=64, context=2048)
    result = plan(query, FACTS, kb, PRICE)
    assert result.query.inter_link is None and not result.notes


def test_within_node_leaves_the_tp_of_whole_nodes_out(kb: Any) -> None:
    query = Query(
        "models/llama-3.1-70b",
        H100,
        count=16,
        nodes=2,
        batch=64,
        context=2048,
        tp_across_nodes=False,
    )
    result = plan(query, FACTS, kb, PRICE)
    reasons = {e.placement.name: e.reason for e in result.excluded}
    assert "tp16" not in {o.name for o in result.options}
    assert reasons["tp16"] == "tp = 16 crosses the 8-device nodes (--tp-within-node leaves it out)"
