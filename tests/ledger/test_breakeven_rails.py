"""A TP ring across nodes: its bandwidth break-even speaks per port (issue 35, rails).

A ring over every NIC of a node is priced at W = min(c_r x port, W_intra) (kb.ledger.rails).
Its break-even varies the port, the figure each interconnect record states: the tie, the
rate "the placement uses" and each record's side are per port, with c_r ports a node
(kb.ledger.breakeven). The fixture is the shipped two-node placement's TP16 against one
node at TP8, with a small, unverified per-message latency so that the bandwidth term can
tie; once with the node's eight NICs (`rails`), once over one port. Each tie is held to the
ledger itself: the InfiniBand record's line rate set to the tie, the placement resolved
and priced again, the two totals are equal, exactly. Since session 24 a measured two-node
H100 curve prices that all-reduce in the shipped records (a measured time has no port rate
to vary); the fixture's records leave that receipt out, so its ring is priced at the line
rate as a placement's is wherever no curve covers it.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from kb.api import open_kb
from kb.ledger.analysis import PlacementAnalysis, analyze_placement
from kb.ledger.breakeven import BreakEven, difference
from kb.ledger.inputs import PlacementSpec, resolve_placement
from kb.ledger.ledger import compute_ledger
from kb.ledger.render import break_even_parts
from kb.model import KnowledgeBase
from tests.conftest import SHIPPED_RECORDS
from tests.ledger.ledger_fixtures import make_kb

SHIPPED = "placements/llama-3.1-70b-16x-h100-two-nodes"
TWO_NODE_CURVE = "receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce"
FIXTURE = "placements/fixture-tp16-over-rails"
IB = "interconnects/infiniband-ndr"
PORT = Fraction(50 * 10**9)  # 400 Gbit/s, the NDR record's line rate
NVLINK_4 = Fraction(450 * 10**9)
LATENCY = {
    "value": 0.1,
    "unit": "us",
    "basis": "unverified",
    "note": "A test fixture's figure: small, so the bandwidth term of the ring can tie.",
}

Records = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def shipped_data() -> Records:
    kb = open_kb(SHIPPED_RECORDS, with_references=False)
    assert kb.get(TWO_NODE_CURVE) is not None  # what the fixture leaves out
    return {r.id: copy.deepcopy(r.data) for r in kb.records.values() if r.id != TWO_NODE_CURVE}


def fixture(shipped_data: Records, rails: bool) -> dict[str, Any]:
    """One node at TP8 against TP16 over two nodes, over eight NICs a node or one port."""
    data = copy.deepcopy(shipped_data[SHIPPED])
    data["id"] = FIXTURE
    (tp16,) = [c for c in data["candidates"] if c["name"] == "tp16"]
    collective = tp16["tp_collective"]
    collective["link_latency"] = LATENCY
    if not rails:
        del collective["rails"]
    data["candidates"] = [tp16]
    data.pop("stated_ratios", None)
    return dict(data)


def analyzed(kb: KnowledgeBase) -> PlacementAnalysis:
    record = kb.get(FIXTURE)
    assert record is not None
    analysis = analyze_placement(record, kb, with_break_even=True)
    assert isinstance(analysis, PlacementAnalysis), analysis
    return analysis


def bandwidth_break_even(analysis: PlacementAnalysis) -> BreakEven:
    (found,) = [b for b in analysis.break_evens if (b.parameter, b.link) == ("bandwidth", IB)]
    assert isinstance(found, BreakEven)
    return found


def spec_of(kb: KnowledgeBase) -> PlacementSpec:
    record = kb.get(FIXTURE)
    assert record is not None
    spec = resolve_placement(record, kb)
    assert isinstance(spec, PlacementSpec), spec
    return spec


def totals_with_port_at(shipped_data: Records, placement: dict[str, Any], rate: Fraction) -> Any:
    """Both totals with the NDR record's line rate set to `rate` (B/s), priced from scratch."""
    link = copy.deepcopy(shipped_data[IB])
    link["bandwidth"]["per_link"] |= {"value": rate, "unit": "B/s"}
    spec = spec_of(make_kb({**shipped_data, IB: link, FIXTURE: placement}))
    ref, (cand,) = spec.reference, spec.candidates
    return (
        compute_ledger(spec.envelope, ref).total,
        compute_ledger(spec.envelope, cand).total,
    )


@pytest.mark.parametrize("rails", [True, False], ids=["eight-nics", "one-port"])
def test_the_tie_is_a_port_rate_and_the_ledger_priced_there_ties(
    shipped_data: Records, rails: bool
) -> None:
    placement = fixture(shipped_data, rails)
    be = bandwidth_break_even(analyzed(make_kb({**shipped_data, FIXTURE: placement})))
    assert be.status == "tie" and len(be.values) == 1, be
    (tie,) = be.values
    assert be.current == PORT  # the port's own rate, as the record states it, not 400 GB/s
    if rails:
        assert be.rings is not None and be.rings.count == 8 and be.rings.intra == NVLINK_4
        assert 8 * tie < NVLINK_4  # on the rings' branch of the min, not the NVLink cap
    else:
        assert be.rings is None
    reference, candidate = totals_with_port_at(shipped_data, placement, tie)
    assert isinstance(candidate, Fraction) and candidate == reference
    slower, faster = (
        totals_with_port_at(shipped_data, placement, tie * Fraction(99, 100))[1],
        (totals_with_port_at(shipped_data, placement, tie * Fraction(101, 100))[1]),
    )
    assert slower > reference > faster  # a tie the ledger crosses, not a flat stretch


def test_eight_rails_tie_at_an_eighth_of_one_ports_rate(shipped_data: Records) -> None:
    """The ring needs the same bus bandwidth to tie; over eight ports each carries an eighth."""
    ties = []
    for rails in (True, False):
        kb = make_kb({**shipped_data, FIXTURE: fixture(shipped_data, rails)})
        ties.append(bandwidth_break_even(analyzed(kb)).values[0])
    assert ties[0] * 8 == ties[1]


def test_each_record_is_placed_by_its_port_rate_over_the_rails(shipped_data: Records) -> None:
    kb = make_kb({**shipped_data, FIXTURE: fixture(shipped_data, True)})
    be = bandwidth_break_even(analyzed(kb))
    spec = spec_of(kb)
    (cand,) = spec.candidates
    assert be.sides and any(p.interconnect == IB and p.value == PORT for p in be.sides)
    for placed in be.sides:
        delta = difference(spec.envelope, spec.reference, cand, "bandwidth", IB, placed.value)
        side = "tie" if delta == 0 else "candidate faster" if delta < 0 else "reference faster"
        assert placed.side == side, placed


def test_the_text_says_per_port_with_the_rings(shipped_data: Records) -> None:
    kb = make_kb({**shipped_data, FIXTURE: fixture(shipped_data, True)})
    headline, sides = break_even_parts(bandwidth_break_even(analyzed(kb)))
    assert f"bandwidth of {IB} per port, with 8 ports a node" in headline
    assert "min(8 x port, 450 GB/s) bus bandwidth" in headline
    assert headline.endswith("(the placement uses 50 GB/s per port)")
    listed = [name for _, names in sides for name in names]
    assert f"{IB} (50 GB/s)" in listed
    one_port = make_kb({**shipped_data, FIXTURE: fixture(shipped_data, False)})
    headline, _ = break_even_parts(bandwidth_break_even(analyzed(one_port)))
    assert "per port" not in headline and headline.endswith("(the placement uses 50 GB/s)")


def test_the_json_says_per_port_with_the_rings(shipped_data: Records) -> None:
    """`kb ledger --format json` carries what the text says: the rate is one port's, c_r ports."""
    from kb.ledger.render import _break_even_json

    kb = make_kb({**shipped_data, FIXTURE: fixture(shipped_data, True)})
    doc = _break_even_json(bandwidth_break_even(analyzed(kb)))
    assert doc["rails"]["per_port"] is True
    assert Fraction(doc["rails"]["ports"]["exact"]) == 8
    assert Fraction(doc["rails"]["intra"]["exact"]) == NVLINK_4
    assert Fraction(doc["current"]["exact"]) == PORT
    one_port = make_kb({**shipped_data, FIXTURE: fixture(shipped_data, False)})
    assert "rails" not in _break_even_json(bandwidth_break_even(analyzed(one_port)))
