"""The fast document walks agree with the plain definition (`nodes`, here) on any JSON-like data."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kb.findings import pointer_join
from kb.rules._walk import containers, mappings, quantities

KEYS = st.sampled_from(["value", "unit", "basis", "a/b", "t~1", "x", "0", "note"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=30,
)
DOCUMENTS = st.dictionaries(KEYS, JSON, max_size=5)  # a record is always a mapping


def nodes(data: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """The plain definition: every (pointer, value) of a document, depth first."""
    yield pointer, data
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from nodes(value, pointer_join(pointer, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from nodes(value, pointer_join(pointer, index))


@given(DOCUMENTS)
def test_containers_are_the_nodes_that_are_mappings_or_lists(data: Any) -> None:
    expected = [(p, n) for p, n in nodes(data) if isinstance(n, (Mapping, list))]
    assert list(containers(data)) == expected


@given(DOCUMENTS)
def test_mappings_and_quantities_follow_nodes(data: Any) -> None:
    expected = [(p, n) for p, n in nodes(data) if isinstance(n, Mapping)]
    assert mappings(data) == expected
    assert list(quantities(data)) == [(p, n) for p, n in expected if "value" in n and "unit" in n]


@given(DOCUMENTS)
def test_located_is_provenance_nodes_filtered_in_document_order(data: Any) -> None:
    from kb.model import KnowledgeBase, Record
    from kb.rules._walk import _provenance_nodes, located, provenance

    kb = KnowledgeBase(root="records")
    record = Record("sources/x", "source", "records/sources/x.yaml", data)
    kb.add(record)
    picked = [n for _, n in mappings(data) if provenance(n)]
    assert sorted(map(id, _provenance_nodes(data))) == sorted(map(id, picked))
    for wanted in (lambda n: "basis" in n, lambda n: "value" in n and "unit" in n, bool):
        expected = [(p, n) for p, n in mappings(data) if provenance(n) and wanted(n)]
        assert located(kb, record, wanted) == expected
