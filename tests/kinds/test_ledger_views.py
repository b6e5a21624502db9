"""The views the ledger reads: placement, interconnect, receipt and proposal (kb/kinds/).

Each view of a shipped record says what its data says; a record that fails its
schema has no view (the ledger is then not computed from it: kb.ledger.inputs).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.kinds import views
from kb.model import KnowledgeBase
from tests.kinds.helpers import RECORDS, checked_kb, shipped


def _ids(folder: str) -> list[str]:
    return sorted(f"{folder}/{p.stem}" for p in (RECORDS / folder).glob("*.yaml"))


PLACEMENTS, INTERCONNECTS = _ids("placements"), _ids("interconnects")
RECEIPTS, PROPOSALS = _ids("receipts"), _ids("proposals")


def _checked(ids: list[str]) -> tuple[dict[str, dict[str, Any]], KnowledgeBase]:
    """The shipped records of `ids` (data by id) and their knowledge base, all schema-valid."""
    assert ids
    data = {record_id: shipped(record_id) for record_id in ids}
    kb = checked_kb(data)
    assert kb.run.schema == []
    return data, kb


def test_every_shipped_placement_has_a_view_that_says_what_its_data_says() -> None:
    data, kb = _checked(PLACEMENTS)
    for record in kb:
        view = views(kb).placement(record)
        assert view is not None, record.id
        raw = data[record.id]
        assert view.envelope.batch == raw["envelope"]["batch"]
        assert view.envelope.state_bytes == raw["envelope"].get("state_bytes")
        assert view.envelope.slo == raw["envelope"].get("slo")
        workload = raw["envelope"].get("workload")
        assert (view.envelope.workload is None) == (workload is None)
        if view.envelope.workload is not None:
            assert view.envelope.workload.context == workload["context"]
            assert list(view.envelope.workload.composed_from) == workload["composed_from"]
        options = [raw["reference"], *raw["candidates"]]
        assert [o.name for o in view.options] == [o["name"] for o in options]
        for option, node in zip(view.options, options, strict=True):
            assert option.rate == node["useful"]["rate"]
            assert [d.name for d in option.devices] == [d["name"] for d in node["devices"]]
            assert [d.capacity for d in option.devices] == [
                d.get("capacity") for d in node["devices"]
            ]
            transfers = node.get("transfers", [])
            assert [(t.link, t.ranks, t.receipt) for t in option.transfers] == [
                (t["link"], t["ranks"], t.get("receipt")) for t in transfers
            ]
            assert [name for name, _ in option.overheads] == list(node.get("overheads", {}))
            degrees = node.get("degrees")
            assert (option.degrees is None) == (degrees is None)
            if option.degrees is not None:
                assert (option.degrees.tp, option.degrees.pp, option.degrees.dp) == (
                    degrees.get("tp", 1),
                    degrees.get("pp", 1),
                    degrees.get("dp", 1),
                )
            assert [r.value for r in option.stated_ratios] == [
                r["value"] for r in node.get("stated_ratios", [])
            ]


def test_every_shipped_interconnect_has_its_line_rate_and_latency() -> None:
    data, kb = _checked(INTERCONNECTS)
    for record in kb:
        view = views(kb).interconnect(record)
        assert view is not None, record.id
        bandwidth = data[record.id]["bandwidth"]
        assert view.per_device == bandwidth.get("per_device")
        assert view.per_link == bandwidth.get("per_link")
        assert view.latency == data[record.id].get("latency")
        rate = view.line_rate()
        key = "per_device" if "per_device" in bandwidth else "per_link"
        assert rate == ((key, bandwidth[key]) if key in bandwidth else None)


def test_every_shipped_receipt_has_its_rows_in_order() -> None:
    data, kb = _checked(RECEIPTS)
    for record in kb:
        view = views(kb).receipt(record)
        assert view is not None, record.id
        raw = data[record.id]
        assert (view.pattern, view.interconnect) == (raw["pattern"], raw.get("interconnect"))
        assert list(view.hardware) == raw.get("hardware", [])
        assert [row.index for row in view.rows] == list(range(len(raw["results"])))
        assert [(r.gpus, r.algorithm, r.message_size) for r in view.rows] == [
            (r.get("gpus"), r.get("algorithm"), r.get("message_size")) for r in raw["results"]
        ]


def test_every_shipped_proposal_names_its_placement_and_candidate() -> None:
    data, kb = _checked(PROPOSALS)
    for record in kb:
        view = views(kb).proposal(record)
        assert view is not None, record.id
        raw = data[record.id]
        assert view.placement == raw.get("placement")
        assert view.candidate == raw.get("candidate")
        assert list(view.crosses) == raw["crosses"]


PLACEMENT = "placements/coherent-host-vs-two-hosts-8b"
FIELDS = (
    "envelope",
    "envelope.batch",
    "envelope.state_bytes",
    "reference",
    "reference.devices",
    "reference.devices.0",
    "reference.useful",
    "candidates",
    "candidates.0.transfers",
    "candidates.0.name",
)
JUNK = st.one_of(
    st.none(), st.integers(-2, 2), st.text(max_size=3), st.lists(st.integers(), max_size=2)
)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(FIELDS), JUNK)
def test_a_placement_has_a_view_exactly_when_the_schema_passes(field: str, junk: Any) -> None:
    data = copy.deepcopy(shipped(PLACEMENT))
    node = data
    *parents, last = field.split(".")
    for key in parents:
        node = node[int(key) if key.isdigit() else key]
    node[int(last) if last.isdigit() else last] = junk
    kb = checked_kb({PLACEMENT: data})
    record = kb.get(PLACEMENT)
    assert record is not None
    view = views(kb).placement(record)
    if kb.run.schema:
        assert view is None
        assert views(kb).findings(record) == kb.run.schema
    else:  # junk that is valid there (`transfers: []`): the view says what the data says
        assert view is not None
        assert len(view.candidates) == len(data["candidates"])


def test_a_schema_invalid_interconnect_receipt_or_proposal_has_no_view() -> None:
    link, receipt, proposal = INTERCONNECTS[0], RECEIPTS[0], PROPOSALS[0]
    broken = {
        record_id: copy.deepcopy(shipped(record_id)) for record_id in (link, receipt, proposal)
    }
    broken[link]["bandwidth"] = "fast"
    broken[receipt]["results"] = []
    broken[proposal]["crosses"] = ["hyperspace"]
    kb = checked_kb(broken)
    assert {f.location.path for f in kb.run.schema} == {r.path for r in kb}
    checked = views(kb)
    for record in kb:
        assert not checked.passed(record)
        view = {
            "interconnect": checked.interconnect,
            "receipt": checked.receipt,
            "proposal": checked.proposal,
        }[record.kind](record)
        assert view is None
