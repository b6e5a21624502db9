"""kb.sitegen.html_nodes writes exactly what the Jinja macros it replaced wrote.

The macros as they were (fixtures/macros_before.html, the theme's _macros.html
before they moved to Python) are rendered by Jinja beside the Python functions:
on every node, link and prose text of the records' pages (the probe record's
hostile title and summary included), and on generated trees whose texts hold
markup, quotes and ampersands.

The macros and the functions branch on a node's type, a part's kind and a claim's
state, not on a record's id, so per push the pages are those of the rebuild sample
(tests/site/sample_site.py: 173 shipped records) and one flop class with a contradicted
prediction; `SHOWN`, every type, kind and state the shipped pages show, must all appear
there (test_the_pages_show_every_node_type_part_kind_and_state_the_shipped_ones_do).
`KB_FULL=1` uses every shipped record's page, where that test finds `SHOWN` exactly.

The generated inputs are Hypothesis's with the suite's fixed seed (tests/conftest.py's
`kb` profile): per push a third of the examples they had (`_examples`), the same
strategies; `KB_FUZZ_EXAMPLES=N` runs N examples of each.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup, escape

from kb.sitegen import html_nodes
from kb.sitegen.render import make_environment
from tests.sample import full
from tests.site.sample_site import ROOTS as SAMPLE_ROOTS
from tests.site.sample_site import seeded_records

from .conftest import FIXTURES, add_probe, load

ROOTS = ("", "../", "../../")
PER_PUSH = int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or None


def _examples(default: int) -> int:
    """`default` examples per push; `KB_FUZZ_EXAMPLES` sets the count instead."""
    return PER_PUSH or default


def _macro_env() -> jinja2.Environment:
    env = make_environment(Path(__file__).resolve().parents[2] / "kb" / "theme")
    env.loader = jinja2.FileSystemLoader(str(FIXTURES))
    for name in html_nodes.GLOBALS:  # the macros must not call the Python versions
        env.globals.pop(name)
    return env


MACROS = _macro_env()


@functools.cache
def _compiled(call: str) -> jinja2.Template:
    """The template that calls one old macro, compiled once per call text (Jinja's
    from_string never caches: compiling it again for each of ~10,000 nodes was most of
    this file's time)."""
    source = (
        '{% from "macros_before.html" import link, badge, parts, prose, node, state with context %}'
    )
    return MACROS.from_string(source + "{{ " + call + " }}")


def _macro(call: str, root: str, **values: Any) -> str:
    return _compiled(call).render(root=root, **values)


def _check_node(tree: Any, compact: bool, root: str) -> None:
    expected = _macro("node(n, c)", root, n=tree, c=compact)
    assert html_nodes.node(root, tree, compact) == expected


def _nodes(tree: Any) -> list[Any]:
    """`tree` and every node below it."""
    found = [tree]
    if isinstance(tree, dict) and tree.get("type") == "list":
        for item in tree["items"]:
            found += _nodes(item)
    if isinstance(tree, dict) and tree.get("type") == "map":
        for item in tree["items"]:
            found += _nodes(item["node"])
    return found


NODE_ROOTS = (*SAMPLE_ROOTS, "flops/allreduce-latency-floor")  # + a contradicted prediction

# Every node type, part kind and claim state of the shipped records' pages (KB_FULL=1
# measures it again).
SHOWN = {
    *(("type", t) for t in ("erratum", "list", "map", "quantity", "ref", "scalar", "text")),
    ("type", "url"),
    *(("part", k) for k in ("figure", "quote", "text", "url")),
    *(("state", s) for s in ("consistent", "contradicted", "derived", "erratum", "explained")),
    *(("state", s) for s in ("holds", "recomputed", "validated")),
}


@pytest.fixture(scope="session")  # not "module": xdist may come back to a module on a worker
def contexts(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    shipped_stores: Path,
) -> list[dict[str, Any]]:
    """The record pages' contexts: the sample's per push, with the probe (see the docstring)."""
    from kb.sitegen.record_page import record_context

    if full():
        records = request.getfixturevalue("repo_copy") / "records"
    else:
        records = seeded_records(tmp_path_factory.mktemp("nodes"), shipped_stores, NODE_ROOTS)
        add_probe(records)
    kb, _ = load(records)
    return [record_context(record, kb) for record in kb]


def _shown(value: Any) -> set[tuple[str, str]]:
    """The node types and part kinds anywhere in `value` (a page context's data)."""
    found: set[tuple[str, str]] = set()
    if isinstance(value, dict):
        if isinstance(value.get("type"), str):
            found.add(("type", value["type"]))
        parts = value.get("parts")
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                found.add(("part", str(part.get("kind") or "")))
        for item in value.values():
            found |= _shown(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= _shown(item)
    return found


def test_the_pages_show_every_node_type_part_kind_and_state_the_shipped_ones_do(
    contexts: list[dict[str, Any]],
) -> None:
    shown: set[tuple[str, str]] = set()
    for context in contexts:
        trees = _nodes(context["fields"]) + [k["node"] for k in context["key_results"]]
        shown |= _shown([*trees, *(e["note"] for e in context["evidence"]), context["summary"]])
        shown |= {("state", s) for s in _states(context["equations"])}
    if full():  # the shipped pages: SHOWN is still what they show
        assert shown == SHOWN
    else:
        assert SHOWN - shown == set()


def test_every_node_of_the_shipped_pages_matches_its_macro(contexts: list[dict[str, Any]]) -> None:
    checked = 0
    for context in contexts:
        trees = _nodes(context["fields"]) + [k["node"] for k in context["key_results"]]
        trees += [e["note"] for e in context["evidence"]]
        for tree in trees:
            for compact in (False, True):
                _check_node(tree, compact, "../../")
                checked += 1
    assert checked > (5000 if full() else 2000)  # every page's field trees, not a handful


def test_links_and_prose_of_the_shipped_pages_match_their_macros(
    contexts: list[dict[str, Any]],
) -> None:
    for context in contexts:
        for used in context["used_by"]:
            assert html_nodes.link("../", used["link"]) == _macro("link(l)", "../", l=used["link"])
        if context["summary"]:
            summary = context["summary"]
            assert html_nodes.prose("../", summary) == _macro("prose(n)", "../", n=summary)
    probe = next(c for c in contexts if c["record"].id == "flops/xss-probe")
    assert "&lt;img" in html_nodes.prose("", probe["summary"])


HOSTILE = st.text(alphabet=st.sampled_from(list("ab<>&\"' /é—")), max_size=8)
LINK = st.fixed_dictionaries(
    {"url": st.sampled_from(["", "records/x.html", 'a"b.html']), "text": HOSTILE},
    optional={"title": HOSTILE},
)
PROVENANCE = st.fixed_dictionaries(
    {"basis": HOSTILE, "source": st.one_of(st.none(), LINK, st.just(""))}
)
PART = st.one_of(
    st.fixed_dictionaries({"kind": st.just("text"), "text": HOSTILE}),
    st.fixed_dictionaries({"kind": st.just("url"), "href": HOSTILE, "text": HOSTILE}),
    st.fixed_dictionaries({"kind": st.just("broken"), "title": HOSTILE, "text": HOSTILE}),
    st.fixed_dictionaries(
        {
            "kind": st.just("figure"),
            "basis_class": HOSTILE,
            "url": HOSTILE,
            "title": HOSTILE,
            "basis": HOSTILE,
            "source": st.one_of(st.none(), LINK),
            "value": HOSTILE,
            "unit": st.sampled_from(["", "us", "B^-1*s", "GB/s", "<b>"]),
        }
    ),
    st.fixed_dictionaries(
        {"kind": st.just("quote"), "text": HOSTILE},
        optional={
            "parts": st.lists(
                st.one_of(
                    st.fixed_dictionaries({"kind": st.just("text"), "text": HOSTILE}),
                    st.fixed_dictionaries(
                        {"kind": st.just("url"), "href": HOSTILE, "text": HOSTILE}
                    ),
                ),
                max_size=3,
            )
        },
    ),
)
TEXT = st.fixed_dictionaries(
    {"type": st.just("text"), "text": HOSTILE, "long": st.booleans()},
    optional={"parts": st.lists(PART, max_size=3)},
)
LEAF = st.one_of(
    st.none(),
    TEXT,
    st.fixed_dictionaries({"type": st.just("scalar"), "text": HOSTILE}),
    st.fixed_dictionaries({"type": st.just("ref"), "link": LINK}),
    st.fixed_dictionaries({"type": st.just("url"), "href": HOSTILE, "text": HOSTILE}),
    st.fixed_dictionaries(
        {
            "type": st.just("erratum"),
            "state": HOSTILE,
            "anchor": HOSTILE,
            "claim": HOSTILE,
            "text": HOSTILE,
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("quantity"),
            "value": HOSTILE,
            "unit": st.sampled_from(["", "us", "B^-1*s", "<i>"]),
            "provenance": PROVENANCE,
            "extras": st.lists(st.tuples(HOSTILE, st.one_of(HOSTILE, TEXT)), max_size=2),
        }
    ),
    st.fixed_dictionaries({"type": st.just("unknown")}),
)
TREE = st.recursive(
    LEAF,
    lambda children: st.one_of(
        st.fixed_dictionaries({"type": st.just("list"), "items": st.lists(children, max_size=3)}),
        st.fixed_dictionaries(
            {
                "type": st.just("map"),
                "provenance": st.one_of(st.none(), PROVENANCE),
                "items": st.lists(
                    st.fixed_dictionaries({"key": HOSTILE, "anchor": HOSTILE, "node": children}),
                    max_size=3,
                ),
            }
        ),
    ),
    max_leaves=8,
)


@settings(max_examples=_examples(50), deadline=None)
@given(TREE, st.booleans(), st.sampled_from(ROOTS))
def test_generated_trees_match_the_macros(tree: Any, compact: bool, root: str) -> None:
    _check_node(tree, compact, root)


@settings(max_examples=_examples(34), deadline=None)
@given(st.lists(PART, max_size=4), PROVENANCE, st.booleans(), st.sampled_from(ROOTS))
def test_generated_parts_and_badges_match_the_macros(
    items: list[Any], provenance: Any, compact: bool, root: str
) -> None:
    assert html_nodes.parts(root, items) == _macro("parts(ps)", root, ps=items)
    assert html_nodes.badge(root, provenance, compact) == _macro(
        "badge(p, c)", root, p=provenance, c=compact
    )


@settings(max_examples=_examples(34), deadline=None)
@given(st.lists(st.one_of(HOSTILE, st.integers(), st.floats(), HOSTILE.map(Markup)), max_size=12))
def test_escaped_is_markupsafe_escape_kept_or_not(values: list[Any]) -> None:
    """The memo gives markupsafe's text for every value, repeated or not, full or started again."""
    old = html_nodes.ESCAPED_MAX, html_nodes._ESCAPED
    html_nodes.ESCAPED_MAX, html_nodes._ESCAPED = 3, {}
    try:
        for value in values + values:
            assert html_nodes.escaped(value) == str(escape(value))
            assert len(html_nodes._ESCAPED) <= 3
    finally:
        html_nodes.ESCAPED_MAX, html_nodes._ESCAPED = old


def _states(value: Any) -> list[Any]:
    """Every `state` string anywhere in a page context's data."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += [item] if key == "state" and isinstance(item, str) else _states(item)
    elif isinstance(value, list):
        for item in value:
            found += _states(item)
    return found


def test_every_state_of_the_shipped_pages_matches_its_macro(
    contexts: list[dict[str, Any]],
) -> None:
    states = {s for context in contexts for s in _states(context["equations"])}
    assert len(states) >= 3
    for text in states:
        assert html_nodes.state(text) == _macro("state(s)", "", s=text)


@settings(max_examples=_examples(34), deadline=None)
@given(st.one_of(HOSTILE, st.text(alphabet=st.sampled_from(list("a ()<&")), max_size=6)))
def test_generated_states_match_the_macro(text: str) -> None:
    assert html_nodes.state(text) == _macro("state(s)", "", s=text)
    assert html_nodes.state(Markup(text)) == _macro("state(s)", "", s=Markup(text))
