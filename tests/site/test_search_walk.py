"""The search index's one walk gives exactly what its two separate walks gave.

`kb.sitegen.search.figures_and_quantities` walks a record once for the entry's
`figures` and `quantities`, which two walks made before (session 20: the second walk
was +1.2 CPU-s of a cold build at 10,000 records). The two walks are kept here as
they were, the reference: the one walk must give the same lists on every shipped
record, on a synthetic corpus (300 records per push, 10,000 with KB_FULL=1), and on
generated trees with the edge cases the two walks treat apart (a key with a dot
whose last part is a skipped name, empty keys, keys that are not strings, skipped
names, booleans and non-numbers as values), 60 per push, `KB_FUZZ_EXAMPLES=N` N.
One change since: a figure past the float range (`1e400`) is left out of the quantities
where both walks raised OverflowError (session 21; the reference here does the same).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.model import KnowledgeBase
from kb.sitegen.search import (
    SKIPPED,
    _figure_forms,
    _unit_scale,
    figures_and_quantities,
)

REPO = Path(__file__).resolve().parents[2]


# --- the two walks as they were (kb/sitegen/search.py before session 20) -----------------


def figure_texts(node: Any, key: str = "") -> list[str]:
    found: list[str] = []
    _figures_into(found, node, key)
    return found


def _figures_into(found: list[str], node: Any, key: str) -> None:
    if key in SKIPPED:
        return
    if isinstance(node, Mapping):
        if "value" in node and "unit" in node:
            found.extend(_quantity_texts(node.get("value"), str(node.get("unit"))))
            return
        for child_key, child in node.items():
            _figures_into(found, child, str(child_key))
    elif isinstance(node, list):
        for child in node:
            _figures_into(found, child, "")


def _quantity_texts(value: Any, unit: str) -> tuple[str, ...]:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return ()
    return _figure_forms(str(value), unit)


def quantities(node: Any, path: str = "") -> list[list[Any]]:
    found: list[list[Any]] = []
    _quantities_into(found, node, path)
    return found


def _quantities_into(found: list[list[Any]], node: Any, path: str) -> None:
    if path.rpartition(".")[2] in SKIPPED:
        return
    if isinstance(node, Mapping):
        if "value" in node and "unit" in node:
            item = _quantity_item(path, node.get("value"), str(node.get("unit")))
            if item is not None:
                found.append(item)
            return
        for key, child in node.items():
            _quantities_into(found, child, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            _quantities_into(found, child, f"{path}.{index}" if path else str(index))


def _quantity_item(path: str, value: Any, unit: str) -> list[Any] | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    scale = _unit_scale(unit)
    try:
        exact = Fraction(str(value)) * (scale[0] if scale is not None else 1)
    except (ValueError, ZeroDivisionError):
        return None
    dim = scale[1] if scale is not None else unit
    try:
        number = float(exact)
    except OverflowError:  # the one change since session 20: left out, not raised (session 21)
        return None
    return [path, number, dim, _figure_forms(str(value), unit)[-1]]


# --- the checks -----------------------------------------------------------------------------


def _same(data: Any) -> None:
    expected = quantities(data)
    figures, found = figures_and_quantities(data)
    assert figures == figure_texts(data)
    assert found == expected
    assert [repr(item) for item in found] == [repr(item) for item in expected]  # -0.0, types


def test_one_walk_on_every_shipped_record(repo_kb: KnowledgeBase) -> None:
    records = list(repo_kb)
    assert len(records) > 100
    assert sum(bool(quantities(r.data)) for r in records) > 50  # the premise: figures to find
    for record in records:
        _same(record.data)


def test_one_walk_on_a_synthetic_corpus(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    import make_corpus

    n = 10_000 if os.environ.get("KB_FULL") == "1" else 300
    make_corpus.write_corpus(n, tmp_path)
    files = sorted((tmp_path / "records").rglob("*.yaml"))
    assert len(files) == n
    for path in files:
        _same(yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader))


NAMES = st.sampled_from(
    ["a", "b", "", "id", "x.id", "history", "a.b", "value", "unit", "0", "notes.x", "k.notes"]
)
VALUES = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["1.5", "2e3", "x", "", "1/0", "1e400", True, False, None, "-0.0"]),
)
UNITS = st.sampled_from(["GB/s", "TB/s", "B", "GiB", "s", "us", "1", "no-such-unit", "FLOP/s"])
QUANTITY = st.fixed_dictionaries({"value": VALUES, "unit": UNITS})
TREES = st.recursive(
    st.one_of(QUANTITY, st.text(max_size=3), st.integers(0, 9)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(NAMES, st.integers(0, 3)), inner, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or 60, deadline=None)
@given(TREES)
def test_one_walk_on_generated_trees(tree: Any) -> None:
    _same(tree)
    _same({"x.id": tree, "y": [tree], "": {"history": tree, "z": tree}})


def test_the_walks_differ_where_the_one_walk_keeps_them_apart() -> None:
    """The premise of the generated trees: a dotted key's last part skips quantities only."""
    data = {"m.id": {"value": 3, "unit": "GB/s"}, "": [{"value": 1, "unit": "s"}]}
    figures, found = figures_and_quantities(data)
    assert figures == figure_texts(data) and figures[0] == "3 GB/s"
    assert found == quantities(data) == [["0", 1.0, "s", "1 s"]]


@pytest.mark.parametrize("value", [1, 1.0, "1.00", -0.0])
def test_a_figure_cached_by_its_text(value: Any) -> None:
    _same({"x": {"value": value, "unit": "GB/s"}, "y": {"value": 1, "unit": "GB/s"}})
