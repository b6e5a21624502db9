"""The equation-sections view of flop classes and strategies (kb/kinds/flop_class.py)."""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kb.kinds import views
from kb.kinds.flop_class import EquationSections
from tests.kinds.helpers import RECORDS, checked_kb, shipped

EQUATION_RECORDS = sorted(
    f"{p.parent.name}/{p.stem}"
    for folder in ("flops", "strategies")
    for p in (RECORDS / folder).glob("*.yaml")
)
SECTIONS = ("symbols", "equations", "derivations", "claims", "evidence")
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


def assert_view_matches(view: EquationSections, data: dict[str, Any]) -> None:
    """Every section of the view says what the record's data says, in authored order."""
    symbols = data.get("symbols", {})
    assert [s.name for s in view.symbols] == list(symbols)
    assert [(s.meaning, s.unit) for s in view.symbols] == [
        (spec["meaning"], spec["unit"]) for spec in symbols.values()
    ]
    equations = data.get("equations", {})
    assert [e.id for e in view.equations] == list(equations)
    assert [e.expr for e in view.equations] == [s.get("expr", "") for s in equations.values()]
    derivations = data.get("derivations", [])
    assert [d.id for d in view.derivations] == [d["id"] for d in derivations]
    assert [len(d.steps) for d in view.derivations] == [len(d["steps"]) for d in derivations]
    claims = data.get("claims", [])
    assert [(c.index, c.id, c.kind) for c in view.claims] == [
        (i, c["id"], c["kind"]) for i, c in enumerate(claims)
    ]
    assert [dict(c.bind) for c in view.claims] == [c.get("bind", {}) for c in claims]
    assert [c.erratum is not None for c in view.claims] == ["erratum" in c for c in claims]
    assert [(e.receipt, e.verdict, e.note) for e in view.evidence] == [
        (e["receipt"], e["verdict"], e.get("note", "")) for e in data.get("evidence", [])
    ]


def test_every_shipped_flop_class_and_strategy_has_a_matching_view() -> None:
    records = {record_id: shipped(record_id) for record_id in EQUATION_RECORDS}
    kb = checked_kb(records)
    assert kb.run.schema == []
    for record in kb:
        view = views(kb).equations(record)
        assert view is not None, record.id
        assert_view_matches(view, records[record.id])


def test_a_step_from_one_equation_or_a_list_is_a_tuple() -> None:
    data = shipped("flops/decode-weight-read")
    kb = checked_kb({"flops/decode-weight-read": data})
    record = kb.get("flops/decode-weight-read")
    assert record is not None
    view = views(kb).equations(record)
    assert view is not None
    steps = [s for d in view.derivations for s in d.steps]
    written = [s.get("from") for d in data.get("derivations", []) for s in d["steps"]]
    assert steps and [list(s.sources) for s in steps] == [
        [w] if isinstance(w, str) else list(w or []) for w in written
    ]


def _paths(node: Any, prefix: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*prefix, index))
    return out


TARGET = "flops/sched-tensor-parallel-crossover"
TARGETS = [p for s in SECTIONS for p in _paths(shipped(TARGET).get(s), (s,))]


# Per push 20 fixed examples (~0.25 CPU-s each: a schema stage of the seed record); a long
# run sets KB_FUZZ_EXAMPLES.
@settings(max_examples=int(os.environ.get("KB_FUZZ_EXAMPLES", "0")) or 20, deadline=None)
@given(st.sampled_from(TARGETS), JUNK)
def test_a_view_exists_exactly_when_the_schema_passes(path: tuple[Any, ...], junk: Any) -> None:
    """Junk anywhere in the sections: either a schema finding and no view, or a true view."""
    data = copy.deepcopy(shipped(TARGET))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = junk
    kb = checked_kb({TARGET: data})
    record = kb.get(TARGET)
    assert record is not None
    view = views(kb).equations(record)
    if kb.run.schema:
        assert view is None
    else:  # the junk happened to be valid there (a text in a note, say): the view says so
        assert view is not None
        assert_view_matches(view, data)
