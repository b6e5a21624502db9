"""SC002's fast walk gives what following each template on its own gives (the walk it replaced).

kb.dimensions follows a kind's declaring templates through a record at once (the trie
of kb.references.follow_all), and rule SC002 first walks without pointers (`wrong`,
`declared_figures`), building pointers only for a record that has a wrong figure. Here
the plain definition (`followed`: each template on its own, in template order, as
kb.dimensions did) is held to both walks on every shipped record (the walk is cheap:
no sample needed) and on generated documents shaped like each kind's templates
(mappings that are not dicts, keys with `~` and `/`, lists where mappings stand).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.dimensions import Declared, declared_figures, dimension_templates, figures
from kb.model import KIND_BY_FOLDER
from kb.rules.figure_dimension_mismatch import _problem, wrong
from tests.conftest import SHIPPED_RECORDS

KINDS = sorted(set(KIND_BY_FOLDER.values()))
# Generated documents per kind: a fixed seed (tests/conftest.py's profile) and 25 a push;
# `KB_FUZZ_EXAMPLES` raises it as it raises the fuzzers' (tests/fuzz), here / 6.
EXAMPLES_PER_KIND = max(25, int(os.environ.get("KB_FUZZ_EXAMPLES", "150")) // 6)


def followed(kind: str, data: Any) -> list[tuple[str, Mapping[str, Any], Declared]]:
    """The plain definition: each declaring template followed on its own, in template order."""
    out = []
    for path, want in dimension_templates(kind):
        for pointer, node in _follow(data, path, ""):
            if isinstance(node, Mapping) and "value" in node and "unit" in node:
                out.append((pointer, node, want))
    return out


def _follow(node: Any, path: tuple[str, ...], pointer: str) -> Iterator[tuple[str, Any]]:
    if not path:
        yield pointer, node
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(node, Mapping):
            for key, child in node.items():
                yield from _follow(child, rest, _joined(pointer, key))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                yield from _follow(child, rest, f"{pointer}/{index}")
    elif isinstance(node, Mapping) and head in node:
        yield from _follow(node[head], rest, _joined(pointer, head))


def _joined(pointer: str, key: Any) -> str:
    return f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _agree(kind: str, data: Any) -> None:
    expected = followed(kind, data)
    assert list(figures(kind, data)) == expected
    assert declared_figures(kind, data) == [(node, want) for _, node, want in expected]
    for pointer, node, want in expected:
        assert wrong(node, want) == (_problem(pointer, node, want) is not None), node


def _shipped() -> list[tuple[str, Any]]:
    found = []
    for path in sorted(SHIPPED_RECORDS.rglob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        if isinstance(data, dict) and isinstance(data.get("kind"), str):
            found.append((data["kind"], data))
    return found


def test_the_walks_agree_on_every_shipped_record() -> None:
    records = _shipped()
    assert len({kind for kind, _ in records}) >= 6
    assert sum(len(followed(kind, data)) for kind, data in records) > 100
    for kind, data in records:
        _agree(kind, data)


UNITS = st.sampled_from(["GiB", "TB/s", "W", "J", "s", "us", "1", "GBps", "", 7, None])
QUANTITY = st.fixed_dictionaries({"value": st.integers(0, 9), "unit": UNITS})


def _documents(kind: str) -> st.SearchStrategy[Any]:
    steps = sorted({step for path, _ in dimension_templates(kind) for step in path} - {"*"})
    keys = st.sampled_from([*steps, "a/b", "t~1", "0"])
    leaves = QUANTITY | st.integers() | st.text(max_size=2) | st.none()
    tree = st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(keys, children, max_size=4)
            | st.dictionaries(keys, children, max_size=3).map(MappingProxyType)
        ),
        max_leaves=25,
    )
    return st.dictionaries(keys, tree, max_size=5)


@pytest.mark.parametrize("kind", [k for k in KINDS if dimension_templates(k)])
@settings(max_examples=EXAMPLES_PER_KIND)
@given(data=st.data())
def test_the_walks_agree_on_documents_shaped_like_the_templates(kind: str, data: Any) -> None:
    _agree(kind, data.draw(_documents(kind)))
