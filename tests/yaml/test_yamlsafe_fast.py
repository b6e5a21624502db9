"""The loader's fast pass (kb.yamlsafe._plain) builds what the full constructor builds.

Every document is loaded twice, with the fast pass and with it turned off
(`plain_depth = 0`: KbLoader's constructors only), and the two outcomes must be
identical: the data with its exact types (1, 1.0 and True are different values
here), the problems in order, or the same error with the same message.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kb.loader import nesting_depth
from kb.yamlsafe import KbLoader, load_record_yaml
from tests.conftest import SHIPPED_RECORDS
from tests.fuzz.test_yaml_text import mutated

EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "150")) * 2


def typed(value: Any, path: tuple[int, ...] = ()) -> Any:
    """`value` with every scalar's type beside it, for an exact comparison.

    An alias can make a node its own descendant (`&a [*a]`): such a back reference is
    `("cycle", k)`, k the depth of the container it returns to.
    """
    if isinstance(value, (dict, list)):
        if id(value) in path:
            return ("cycle", path.index(id(value)))
        inner = (*path, id(value))
        if isinstance(value, dict):
            return ("map", [(typed(k, inner), typed(v, inner)) for k, v in value.items()])
        return ("seq", [typed(v, inner) for v in value])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def outcome(text: str, fast: bool, depth: int = 64) -> tuple[Any, ...]:
    """What loading `text` gives: ("data", typed data, problems, fast?) or ("error", ...)."""
    if fast:
        try:
            data, problems, shallow = load_record_yaml(text, depth)
        except (yaml.YAMLError, RecursionError, ValueError) as exc:
            return ("error", type(exc).__name__, str(exc))
        if shallow:
            assert nesting_depth(data) <= depth  # what the loader relies on to skip its walk
        return ("data", typed(data), problems)
    loader = KbLoader(text)
    loader.plain_depth = 0
    try:
        data = loader.get_single_data()
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        return ("error", type(exc).__name__, str(exc))
    finally:
        loader.dispose()
    assert not loader.built_plain
    return ("data", typed(data), loader.problems)


def assert_same(text: str, depth: int = 64) -> None:
    assert outcome(text, fast=True, depth=depth) == outcome(text, fast=False), text


SHIPPED = sorted(SHIPPED_RECORDS.rglob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_record_loads_the_same_both_ways(path: Any) -> None:
    text = path.read_text(encoding="utf-8")
    assert_same(text)
    assert load_record_yaml(text, 64)[2] or "&" in text  # and the fast pass built it


SCALARS = [
    "yes", "No", "TRUE", "off", "on", "y", "n", "~", "null", "Null", "", "=", "<<",
    "0", "00", "007", "010", "0o10", "0x1F", "0b101", "1_000", "12", "-12", "+12", "-0",
    "1:30", "190:20:30", "1.5", "-1.5", "+1.5", "1.", ".5", "1.0e+9", "1.0e9", "1e9",
    "1.5e+300", "1.0e+301", "1.0e+400", "-1.0e+400", ".inf", "-.inf", "+.Inf", ".nan", ".NaN",
    "1_0.5", "1_.5", "6.8_5", "2026-01-01", "2026-1-1 10:00:00", "GB/s", "a b", "x#y",
    "1" * 301, "9" * 300, "\u0663", "\u00b2", "3\u00b2", "1,5", "- x", "!", "&", "*",
]  # fmt: skip
TAGS = [
    "", "", "", "", "!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!map ", "!!seq ",
    "!!timestamp ", "!!binary ", "!!python/name:os.system ", "!custom ", "! ", "!!set ",
    "!!merge ", "!!value ",
]  # fmt: skip


def scalar_text() -> st.SearchStrategy[str]:
    plain = st.sampled_from(SCALARS).map(lambda s: s if s else "''")
    quoted = st.sampled_from(SCALARS).map(lambda s: "'" + s.replace("'", "''") + "'")
    return st.one_of(plain, plain, quoted)


@st.composite
def flow_node(draw: st.DrawFn, depth: int = 0) -> str:
    """A YAML node in flow style: scalars, tags, anchors and aliases, maps, lists."""
    tag = draw(st.sampled_from(TAGS))
    anchor = draw(st.sampled_from(["", "", "", "", "&a ", "&b "]))
    choice = draw(st.integers(0, 9 if depth < 4 else 5))
    if choice <= 3:
        return anchor + tag + draw(scalar_text())
    if choice <= 5:
        return draw(st.sampled_from(["*a", "*b", anchor + tag + "x"]))
    if choice <= 7:
        items = draw(st.lists(flow_node(depth + 1), max_size=4))
        return anchor + tag + "[" + ", ".join(items) + "]"
    pairs = draw(
        st.lists(st.tuples(st.one_of(scalar_text(), flow_node(depth + 1)), flow_node(depth + 1)),
                 max_size=4)
    )  # fmt: skip
    return anchor + tag + "{" + ", ".join(f"? {k} : {v}" for k, v in pairs) + "}"


@settings(max_examples=EXAMPLES, deadline=None)
@given(body=flow_node())
@example(body="&a [*a]")  # a node its own descendant: found by this test in CI
@example(body="&a {? yes : *a}")
def test_generated_flow_documents_load_the_same_both_ways(body: str) -> None:
    assert_same(body)
    assert_same(f"top: {body}\nother: [1, 2.5, yes]\n")


plain_data = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=60),
        st.sampled_from(SCALARS),
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8) | st.sampled_from(SCALARS), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=plain_data, flow=st.booleans())
def test_dumped_data_loads_the_same_both_ways(data: Any, flow: bool) -> None:
    text = yaml.safe_dump({"doc": data}, default_flow_style=flow, allow_unicode=True)
    assert_same(text)


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=mutated())
def test_mutated_records_load_the_same_both_ways(text: str) -> None:
    assert_same(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # a repeated key: LD005 from the full constructor
        "1: x\n",  # a number as a key
        "a: 1.0e+400\n",  # beyond the range of a float: a problem
        "a: !!int ''\n",  # a constructor that raises: a located error
        "a: !!float abc\n",
        "a: !!bool maybe\n",
        "a: !!python/name:os.system x\n",
        "base: &b {x: 1}\nmore: {<<: *b, y: 2}\n",  # a merge key, through an anchor
        "x: {<<: {a: 1}}\n",  # a merge key without anchors
        "= : 1\n",
        "a: =\n",
        "a: !!str [1]\n",
        "a: !!map text\n",
        "a: 2026-01-01\n",
        "",
        "# only a comment\n",
        "--- a\n--- b\n",
        "a: *nowhere\n",
        "[" * 70 + "]" * 70,  # deeper than the fast pass goes: the full constructor measures it
    ],
)
def test_documents_the_fast_pass_hands_over_load_the_same(text: str) -> None:
    assert_same(text)


def test_nesting_past_the_limit_is_built_in_full() -> None:
    """At the depth limit the fast pass builds; one level past it, it hands over."""
    at_limit = "a: " + "[" * 4 + "1" + "]" * 4 + "\n"  # the mapping and 4 lists: 5 levels
    assert load_record_yaml(at_limit, 5)[2] is True
    assert load_record_yaml(at_limit, 4)[2] is False
    assert_same(at_limit, depth=5)
    assert_same(at_limit, depth=4)
