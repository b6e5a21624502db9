"""kb.references: a record's references, the templates walked together as a trie.

Held to the definition spelled out: each template followed on its own, in template
order, each one's matches in document order.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.findings import pointer_join
from kb.loader import load_knowledge_base
from kb.model import KINDS, Record, Reference
from kb.prose.fields import record_templates
from kb.references import record_references, reference_templates
from tests.conftest import SHIPPED_RECORDS

# Generated documents per kind: a fixed seed (tests/conftest.py's profile) and 25 a push
# (was 60); `KB_FUZZ_EXAMPLES` raises it as it raises the fuzzers' (tests/fuzz), here / 6.
EXAMPLES_PER_KIND = max(25, int(os.environ.get("KB_FUZZ_EXAMPLES", "150")) // 6)


def _follow(node: Any, template: tuple[str, ...], pointer: str) -> Iterator[tuple[str, Any]]:
    if not template:
        yield pointer, node
        return
    head, rest = template[0], template[1:]
    if head == "*":
        items: Any = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in items:
            yield from _follow(child, rest, pointer_join(pointer, key))
    elif isinstance(node, dict) and head in node:
        yield from _follow(node[head], rest, pointer_join(pointer, head))


def plain_references(record: Record) -> list[Reference]:
    found = [
        Reference(record.id, pointer, value, kind)
        for template, kind in reference_templates(record.kind)
        for pointer, value in _follow(record.data, template, "")
        if isinstance(value, str)
    ]
    found += [
        Reference(record.id, pointer, written.target, "*")
        for pointer, written in record_templates(record.data)
        if written.target
    ]
    return found


def test_the_shipped_records_references_are_the_plain_walks() -> None:
    kb, _ = load_knowledge_base(SHIPPED_RECORDS)
    assert len(kb) > 50
    for record in kb:
        assert list(record_references(record)) == plain_references(record), record.id


def _steps(kind: str) -> list[str]:
    return sorted({step for template, _ in reference_templates(kind) for step in template})


@st.composite
def documents(draw: st.DrawFn, kind: str) -> Any:
    """Documents whose keys are the steps of `kind`'s templates (and odd ones)."""
    keys = st.sampled_from([*_steps(kind), "*", "a/b", "x~y", "0"])
    leaves = st.one_of(st.sampled_from(["hardware/x", "sources/y", ""]), st.integers(), st.none())
    tree = st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=40,
    )
    return draw(st.dictionaries(keys, tree, max_size=6))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=EXAMPLES_PER_KIND, deadline=None)
@given(data=st.data())
def test_generated_documents_give_the_plain_walks_references(kind: str, data: Any) -> None:
    record = Record(f"x/{kind}", kind, "records/x.yaml", data.draw(documents(kind)))
    assert list(record_references(record)) == plain_references(record)


def test_a_record_of_no_kind_has_only_its_prose_references() -> None:
    record = Record("x/y", "", "x.yaml", {"summary": "see {hardware/h#memory.bandwidth}"})
    assert [(r.pointer, r.expected_kind) for r in record_references(record)] == [("/summary", "*")]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab0./-_~A", max_size=12))
def test_an_id_is_what_its_pattern_matches_with_no_dot_segment(text: str) -> None:
    """is_valid_id asks ID_RE alone: no text it matches has a `.`, `..` or dotted segment."""
    from kb.model import ID_RE, is_valid_id

    segments_ok = all(s not in (".", "..") and not s.startswith(".") for s in text.split("/"))
    assert is_valid_id(text) == (ID_RE.fullmatch(text) is not None and segments_ok)
