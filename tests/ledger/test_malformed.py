"""Malformed placements and proposals give findings (or nothing), never a traceback."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kb.rules import RULE_MODULES, rule_module
from tests.ledger.ledger_fixtures import fixture_records, make_kb

LG_RULES = [rule_module(m) for m in RULE_MODULES if rule_module(m).CODE.startswith("LG")]
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += paths(value, (*prefix, index))
    return out


PLACEMENT = "placements/fixture-both-fit"
TARGETS = paths(fixture_records()[PLACEMENT])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TARGETS), JUNK)
def test_lg_rules_survive_any_replaced_field(path: tuple[Any, ...], junk: Any) -> None:
    records = fixture_records()
    node = records[PLACEMENT]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = copy.deepcopy(junk)
    records["proposals/p"] = {
        "kind": "proposal",
        "id": "proposals/p",
        "crosses": ["host"],
        "placement": PLACEMENT,
        "candidate": "two-hosts",
        "stated_ratios": [{"dimension": "latency", "value": 0.5}],
    }
    kb = make_kb(records)
    for rule in LG_RULES:
        for finding in rule.check(kb):
            assert finding.code == rule.CODE


@settings(max_examples=100, deadline=None)
@given(JUNK, JUNK)
def test_lg_rules_survive_junk_proposals(crosses: Any, ratios: Any) -> None:
    records = fixture_records()
    records["proposals/p"] = {
        "kind": "proposal",
        "id": "proposals/p",
        "crosses": crosses,
        "placement": PLACEMENT,
        "stated_ratios": ratios,
    }
    kb = make_kb(records)
    for rule in LG_RULES:
        list(rule.check(kb))


TP = "placements/fixture-tp"
TRANSFER_KEYS = ("algorithm", "cuda_graphs", "receipt", "message_size", "ranks", "pattern")
ROW_KEYS = ("algorithm", "cuda_graphs", "gpus", "message_size", "bus_bandwidth", "latency")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TRANSFER_KEYS), JUNK, st.sampled_from(ROW_KEYS), JUNK)
@example(
    key="ranks",
    junk=0,
    row_key="gpus",
    row_junk=None,
).via("discovered failure")
def test_lg_rules_survive_junk_curve_conditions(
    key: str, junk: Any, row_key: str, row_junk: Any
) -> None:
    """The fields that choose a receipt curve (kb/ledger/curves.py), junk on both sides."""
    records = fixture_records()
    transfer = records[TP]["reference"]["transfers"][0]
    transfer["receipt"] = "receipts/fixture-ar"
    transfer[key] = copy.deepcopy(junk)
    records["receipts/fixture-ar"]["results"][0][row_key] = copy.deepcopy(row_junk)
    kb = make_kb(records)
    for rule in LG_RULES:
        for finding in rule.check(kb):
            assert finding.code == rule.CODE
