"""kb.plan.enumerate: the mappings the devices admit, and why the others are left out."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.plan.enumerate import PlanError, Space, enumerate_placements


def names(space: Space) -> dict[str, int]:
    admitted, _ = enumerate_placements(space)
    return {p.name: p.nodes for p in admitted}


def test_two_nodes_of_eight_admit_the_readers_four_mappings() -> None:
    found = names(Space(16, 2, 80, 64, tp_across_nodes=True, inter_link=True))
    assert found["tp8"] == 1  # one node of the two
    assert found["tp8-pp2"] == 2 and found["tp16"] == 2 and found["dp2-tp8"] == 2
    assert not any("ep" in n for n in found)  # a dense model has no expert parallelism


def test_tp_stays_inside_a_node_when_the_query_says_so() -> None:
    admitted, excluded = enumerate_placements(Space(16, 2, 80, 64, inter_link=True))
    assert "tp16" not in {p.name for p in admitted}
    reason = {e.placement.name: e.reason for e in excluded}["tp16"]
    assert "--tp-within-node" in reason
    assert all(p.tp <= 8 for p in admitted)


def test_crossing_nodes_needs_the_link_between_them() -> None:
    admitted, excluded = enumerate_placements(Space(16, 2, 80, 64))
    reasons = {e.placement.name: e.reason for e in excluded}
    assert "--inter-link" in reasons["tp8-pp2"]
    assert "dp2-tp8" in {p.name for p in admitted}  # replicas exchange nothing in a step


def test_pp_must_split_the_layers_and_dp_the_batch() -> None:
    _, excluded = enumerate_placements(Space(8, 1, 61, 3))
    reasons = {e.placement.name: e.reason for e in excluded}
    assert reasons["pp2"].startswith("61 layers do not split evenly into pp = 2 stages")
    assert reasons["dp2"] == "the batch 3 does not split evenly over dp = 2 replicas"


def test_expert_parallel_only_for_moe_and_dividing_tp_dp() -> None:
    admitted, _ = enumerate_placements(Space(8, 1, 61, 8, experts=256))
    eps = [p for p in admitted if p.ep > 1]
    assert eps and all((p.tp * p.dp) % p.ep == 0 and 256 % p.ep == 0 for p in eps)
    with pytest.raises(PlanError, match="dense"):
        enumerate_placements(Space(8, 1, 80, 8, pinned={"ep": 2}))


def test_a_pin_keeps_only_its_degree() -> None:
    admitted, _ = enumerate_placements(Space(16, 2, 80, 64, pinned={"tp": 8}, inter_link=True))
    assert admitted and all(p.tp == 8 for p in admitted)


@pytest.mark.parametrize(
    ("space", "words"),
    [
        (Space(0, 1, 80, 1), "--count 0"),
        (Space(8, 3, 80, 1), "do not split evenly into --nodes 3"),
        (Space(8, 1, 80, 0), "--batch 0"),
        (Space(8, 1, 80, 1, pinned={"xp": 2}), "not a degree"),
    ],
)
def test_a_query_with_no_devices_is_refused_in_words(space: Space, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        enumerate_placements(space)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 16),
    st.integers(1, 4),
    st.integers(1, 96),
    st.integers(1, 300),
    st.booleans(),
    st.booleans(),
)
def test_every_admitted_mapping_uses_whole_nodes_or_part_of_one(
    per_node: int, nodes: int, layers: int, batch: int, across: bool, link: bool
) -> None:
    space = Space(per_node * nodes, nodes, layers, batch, None, across, {}, link)
    admitted, excluded = enumerate_placements(space)
    seen = set()
    for p in admitted:
        assert p.devices <= space.count and layers % p.pp == 0 and batch % p.dp == 0
        assert p.devices == p.nodes * per_node or (p.nodes == 1 and per_node % p.devices == 0)
        assert across or per_node % p.tp == 0
        assert p not in seen
        seen.add(p)
    assert not seen & {e.placement for e in excluded}
