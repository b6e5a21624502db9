"""Malformed placements, proposals and receipts: explicit findings, never a traceback.

The ledger computes from typed views, which only schema-valid records have
(kb.ledger.inputs). So for junk anywhere in a placement:

- when the junk fails the schema, the schema stage reports it (a code and a
  pointer) and no LG rule says anything on the placement: the ledger is not
  computed, and resolving it says so, one gap per schema finding;
- when the junk is valid there, the LG rules report as usual, each its own code.

A receipt that fails its schema prices nothing: the transfer that pins it is one
LG004 finding naming it.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kb.cli import cli
from kb.findings import Finding
from kb.kinds import views
from kb.ledger.inputs import FAILS_SCHEMA, PlacementSpec, Unresolved, resolve_placement
from kb.model import KnowledgeBase
from kb.rules import RULE_MODULES, rule_module
from tests.ledger.ledger_fixtures import fixture_records, make_kb, write_tree

# Fixed examples (tests/conftest.py's profile derandomizes); `KB_FUZZ_EXAMPLES` sets the count.
EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "0"))

LG_RULES = [rule_module(m) for m in RULE_MODULES if rule_module(m).CODE.startswith("LG")]
SCHEMA_CODES = {"SC001", "LD009", "LD010"}
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
PROPOSAL = "proposals/p"
TARGETS = paths(fixture_records()[PLACEMENT])


def lg_findings(kb: KnowledgeBase) -> list[Finding]:
    """Every LG rule's findings, each checked to carry its rule's code."""
    out = []
    for rule in LG_RULES:
        for finding in rule.check(kb):
            assert finding.code == rule.CODE
            out.append(finding)
    return out


def schema_findings_on(kb: KnowledgeBase, record_id: str) -> list[Finding]:
    record = kb.get(record_id)
    assert record is not None
    found = views(kb).findings(record)
    assert all(f.code in SCHEMA_CODES and f.location.pointer is not None for f in found)
    return found


def assert_not_computed(kb: KnowledgeBase, record_id: str) -> None:
    """A placement that fails its schema: no LG finding, and resolving it says why."""
    path = f"records/{record_id}.yaml"
    assert [f for f in lg_findings(kb) if f.location.path == path] == []
    record = kb.get(record_id)
    assert record is not None
    result = resolve_placement(record, kb)
    assert isinstance(result, Unresolved)
    schema = schema_findings_on(kb, record_id)
    assert [(g.pointer, g.blocked_by, g.cause) for g in result.gaps] == [
        (f.location.pointer, record_id, FAILS_SCHEMA) for f in schema
    ]
    for gap, finding in zip(result.gaps, schema, strict=True):
        assert gap.message.startswith(f"{finding.code} ")
        assert "the ledger is not computed" in gap.message


@settings(max_examples=EXAMPLES or 150, deadline=None)
@given(st.sampled_from(TARGETS), JUNK)
def test_a_placement_with_any_field_replaced_is_reported_or_not_computed(
    path: tuple[Any, ...], junk: Any
) -> None:
    records = fixture_records()
    node = records[PLACEMENT]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = copy.deepcopy(junk)
    records[PROPOSAL] = {
        "kind": "proposal",
        "id": PROPOSAL,
        "title": "p",
        "version": 1,
        "status": "draft",
        "history": copy.deepcopy(fixture_records()[PLACEMENT]["history"]),
        "text": "Two hosts.",
        "crosses": ["host"],
        "placement": PLACEMENT,
        "candidate": "two-hosts",
        "stated_ratios": [{"dimension": "latency", "value": 0.5}],
    }
    kb = make_kb(records)
    assert schema_findings_on(kb, PROPOSAL) == []
    if schema_findings_on(kb, PLACEMENT):
        assert_not_computed(kb, PLACEMENT)
        # the proposal's ratios are about a placement kb does not compute: nothing on it
        assert [f for f in lg_findings(kb) if f.location.path.endswith("proposals/p.yaml")] == []
    else:
        lg_findings(kb)


@settings(max_examples=EXAMPLES or 40, deadline=None)
@given(JUNK, JUNK)
def test_a_junk_proposal_is_its_schema_findings_only(crosses: Any, ratios: Any) -> None:
    records = fixture_records()
    records[PROPOSAL] = {
        "kind": "proposal",
        "id": PROPOSAL,
        "crosses": crosses,
        "placement": PLACEMENT,
        "stated_ratios": ratios,
    }
    kb = make_kb(records)
    assert schema_findings_on(kb, PROPOSAL)  # no title, version, ...: it fails its schema
    on_proposal = [f for f in lg_findings(kb) if f.location.path.endswith("proposals/p.yaml")]
    # only LG002, a record-local rule of the per-file stage, reads the record itself
    assert {f.code for f in on_proposal} <= {"LG002"}


TP = "placements/fixture-tp"
RECEIPT = "receipts/fixture-ar"
TRANSFER_KEYS = ("algorithm", "cuda_graphs", "receipt", "message_size", "ranks", "pattern")
ROW_KEYS = ("algorithm", "cuda_graphs", "gpus", "message_size", "bus_bandwidth", "latency")


@settings(max_examples=EXAMPLES or 80, deadline=None)
@given(st.sampled_from(TRANSFER_KEYS), JUNK, st.sampled_from(ROW_KEYS), JUNK)
@example(
    key="ranks",
    junk=0,
    row_key="gpus",
    row_junk=None,
).via("discovered failure")
def test_junk_curve_conditions_are_reported_or_not_computed(
    key: str, junk: Any, row_key: str, row_junk: Any
) -> None:
    """The fields that choose a receipt curve (kb/ledger/curves.py), junk on both sides."""
    records = fixture_records()
    transfer = records[TP]["reference"]["transfers"][0]
    transfer["receipt"] = RECEIPT
    transfer[key] = copy.deepcopy(junk)
    records[RECEIPT]["results"][0][row_key] = copy.deepcopy(row_junk)
    kb = make_kb(records)
    findings = lg_findings(kb)
    if schema_findings_on(kb, TP):
        assert_not_computed(kb, TP)
    elif schema_findings_on(kb, RECEIPT) and transfer["receipt"] == RECEIPT:
        on_tp = [f for f in findings if f.location.path == f"records/{TP}.yaml"]
        assert [(f.code, f.location.pointer) for f in on_tp] == [
            ("LG004", "/reference/transfers/0/receipt")
        ]
        assert on_tp[0].message == (
            f"cannot be priced while {RECEIPT} fails its schema (its own finding says why)"
        )
    receipt = kb.get(RECEIPT)
    assert receipt is not None
    if not views(kb).passed(receipt):  # a broken receipt is not checked for its curves
        assert [f for f in findings if f.location.path == receipt.path] == []


def test_a_schema_valid_placement_still_resolves() -> None:
    kb = make_kb(fixture_records())
    assert kb.run.schema == []
    record = kb.get(PLACEMENT)
    assert record is not None
    assert isinstance(resolve_placement(record, kb), PlacementSpec)


def test_kb_ledger_on_a_schema_invalid_placement_prints_its_findings(tmp_path: Path) -> None:
    records = fixture_records()
    records[PLACEMENT]["envelope"]["batch"] = 0
    root = write_tree(tmp_path, records) / "records"
    result = CliRunner().invoke(cli, ["ledger", PLACEMENT, "--root", str(root)])
    assert result.exit_code == 1, result.output
    assert "SC001" in result.stdout and "fixture-both-fit.yaml:" in result.stdout
    assert "Traceback" not in result.output
    assert "the ledger is not computed" in result.stderr


def test_kb_ledger_names_a_schema_invalid_link(tmp_path: Path) -> None:
    records = fixture_records()
    records["interconnects/fixture-link"]["topology"] = 3
    root = write_tree(tmp_path, records) / "records"
    result = CliRunner().invoke(cli, ["ledger", PLACEMENT, "--root", str(root)])
    assert result.exit_code == 1, result.output
    assert "LG004" in result.stdout
    assert "cannot be priced while interconnects/fixture-link fails its schema" in result.stdout
    assert "fixture-both-fit.yaml:" in result.stdout  # located on the transfer's link
