"""The accelerator view: memory, compute peaks, links and host link (kb/kinds/accelerator.py)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.kinds import views
from tests.kinds.helpers import RECORDS, checked_kb, shipped

ACCELERATORS = sorted(f"hardware/{p.stem}" for p in (RECORDS / "hardware").glob("*.yaml"))


def test_every_shipped_accelerator_has_a_view_that_says_what_its_data_says() -> None:
    records = {record_id: shipped(record_id) for record_id in ACCELERATORS}
    kb = checked_kb(records)
    assert kb.run.schema == []
    for record in kb:
        data = records[record.id]
        view = views(kb).accelerator(record)
        assert view is not None, record.id
        assert view.capacity == data["memory"]["capacity"]
        assert view.bandwidth == data["memory"]["bandwidth"]
        assert dict(view.compute) == data.get("compute", {})
        links = [link["interconnect"] for link in data.get("links", [])]
        host = [data["host_link"]["interconnect"]] if "host_link" in data else []
        assert list(view.interconnects()) == links + host
        assert [link.count for link in view.links] == [
            link.get("count") for link in data.get("links", [])
        ]


GPU = "hardware/nvidia-h100-sxm"
FIELDS = ("memory", "links", "host_link", "compute", "memory.capacity", "links.0")


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(FIELDS),
    st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2)),
)
def test_an_accelerator_has_a_view_exactly_when_the_schema_passes(field: str, junk: Any) -> None:
    data = copy.deepcopy(shipped(GPU))
    node = data
    *parents, last = field.split(".")
    for key in parents:
        node = node[key]
    node[int(last) if last.isdigit() else last] = junk
    kb = checked_kb({GPU: data})
    record = kb.get(GPU)
    assert record is not None
    view = views(kb).accelerator(record)
    if kb.run.schema:
        assert view is None
    else:  # junk that is valid there (`links: []`): the view says what the data says
        assert view is not None
        assert len(view.links) == len(data.get("links", []))
