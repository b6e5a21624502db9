"""kb.sitegen.json_text writes exactly what json.dumps(indent=2, ensure_ascii=False) writes."""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.sitegen.json_text import indented
from kb.sitegen.record_pages import record_json

from .conftest import load


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.dates()
    | st.datetimes()
)
KEYS = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(KEYS, inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_generated_values_give_json_dumps_bytes(value: Any) -> None:
    assert indented(value) == _dumps(value)


def test_edge_values() -> None:
    for value in (
        {},
        [],
        {"a": {}, "b": [], "c": [{}], "d": [[]]},
        {
            3: "int key",
            2.5: "float key",
            True: "t",
            False: "f",
            None: "n",
            "q\"<&'\n\u2028": "\x00\x1f\u00e9",
        },
        [math.nan, math.inf, -math.inf, -0.0, 1e300, 5e-324, 10**40],
        {"when": datetime.date(2026, 12, 1), "at": datetime.datetime(2026, 12, 1, 23, 0)},
        "top-level string",
        7,
    ):
        assert indented(value) == _dumps(value)


def test_refused_values_fail_as_json_dumps_fails() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    for value in ({(1, 2): "tuple key"}, cycle):
        try:
            _dumps(value)
        except (TypeError, ValueError) as expected:
            try:
                indented(value)
            except type(expected) as got:
                assert str(got) == str(expected)
            else:
                raise AssertionError("indented accepted what json.dumps refuses")
        else:
            raise AssertionError("json.dumps accepted the probe")


def test_every_shipped_record_json_is_json_dumps_bytes(repo_copy: Any) -> None:
    kb, _ = load(repo_copy / "records")
    checked = 0
    for record in kb:
        assert record_json(record.data) == _dumps(record.data) + "\n", record.id
        checked += 1
    assert checked > 200
