"""kb.prose.fields: which strings are prose, held to a plain path-matching walk."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.findings import pointer_join
from kb.prose.fields import PROSE_KEYS, prose_fields


def _plain(
    node: Any, at: str = "", where: tuple[str, ...] = (), prose: bool = False
) -> Iterator[tuple[str, str]]:
    """The definition, spelled out: a prose key's strings (and its lists'), not claims/*/text."""
    if isinstance(node, str):
        claim_text = len(where) == 3 and where[0] == "claims" and where[2] == "text"
        if prose and not claim_text:
            yield at, node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _plain(
                value, pointer_join(at, key), (*where, str(key)), str(key) in PROSE_KEYS
            )
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _plain(value, pointer_join(at, index), (*where, "*"), prose)


_KEYS = st.sampled_from(["claims", "text", "note", "summary", "value", "a/b", "x~y", "history"])
_LEAVES = st.one_of(st.text(max_size=4), st.integers(), st.none(), st.booleans())
_TREES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _TREES, max_size=5))
def test_prose_fields_equal_the_plain_walk(data: dict[str, Any]) -> None:
    assert list(prose_fields(data)) == list(_plain(data))


def test_a_claims_own_text_is_not_prose_but_its_note_is() -> None:
    data = {
        "summary": "top",
        "claims": [{"text": "the claim", "note": "a note", "sub": {"text": "nested"}}],
        "notes": ["one", {"text": "two"}],
    }
    assert list(prose_fields(data)) == [
        ("/summary", "top"),
        ("/claims/0/note", "a note"),
        ("/claims/0/sub/text", "nested"),
        ("/notes/0", "one"),
        ("/notes/1/text", "two"),
    ]


def test_walked_once_walks_the_document_once_and_only_inside_the_block() -> None:
    from kb.prose import fields

    data = {"summary": "one", "notes": ["two"]}
    with fields.walked_once(data):
        first = list(prose_fields(data))
        data["summary"] = "changed inside"  # a reader never does this; shows the memo is used
        assert list(prose_fields(data)) == first
        assert list(prose_fields({"note": "other"})) == [("/note", "other")]  # another document
    assert list(prose_fields(data)) == [("/summary", "changed inside"), ("/notes/0", "two")]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.dictionaries(_KEYS, _TREES, max_size=5), _TREES))
def test_the_recursive_walk_finds_what_the_iterative_walk_finds(data: Any) -> None:
    from kb.prose.fields import _walk, _walked

    assert _walked(data) == _walk(data) == list(_plain(data))


def test_a_document_deeper_than_the_recursion_takes_the_iterative_walk() -> None:
    from kb.prose import fields

    deep: Any = {"note": "bottom"}
    for _ in range(fields._RECURSION_ROOM + 5):
        deep = {"notes": [deep, "beside"]}
    data = {"summary": "top", "more": deep}
    assert fields._walked(data) == fields._walk(data)
    assert fields._walked(data)[0] == ("/summary", "top")
    assert fields._walked(data)[-1][1] == "beside"
