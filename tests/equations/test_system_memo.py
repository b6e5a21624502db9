"""kb.equations.system's run memo: a memoized system gives exactly what a fresh build gives.

`system_of(kb, data)` builds a record's System once per distinct (symbols, equations)
text and hands each caller its own copy. The planner prices every mapping through
it, so the tests hold the fast path to the slow one: every shipped flop class's
system equals a fresh `build_system`, and a plan priced with the memo warm gives
the same plan.v1 document, byte for byte, as one priced with the memo bypassed
(every system built afresh at every use, as before the memo).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import kb.equations.evalmemo as evalmemo
from kb.api import open_kb, validate
from kb.equations.compose import compose
from kb.equations.system import (
    SYSTEMS,
    System,
    Systems,
    build_system,
    system_key,
    system_of,
)
from kb.model import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2] / "records"


# The shipped records are checked in place: from the claims' stores of the suite's one cold
# check (tests/warm.py `seed_repo`), never cold again whatever ran before on this worker.
pytestmark = pytest.mark.usefixtures("repo_stores")


@cache
def shipped() -> KnowledgeBase:
    """The shipped records checked (typed views: the planner reads them), once per process."""
    return open_kb(ROOT, checked=validate(ROOT, remember=False))


def parts(system: System) -> tuple[Any, ...]:
    return (
        system.symbols,
        system.units,
        {k: (v.source, v.lhs.value, v.rhs.value) for k, v in system.equations.items()},
        system.failed,
        system.issues,
        system.items,
    )


def test_every_flop_class_system_equals_a_fresh_build() -> None:
    kb = shipped()
    classes = sorted(kb.of_kind("flop_class"), key=lambda r: r.id)
    assert len(classes) > 20
    for record in classes:
        data = compose(kb, record).record.data
        first, again = system_of(kb, data), system_of(kb, data)
        assert parts(first) == parts(build_system(data)) == parts(again), record.id
    memo = kb.run.kept(SYSTEMS)
    assert memo is not None and memo.reused >= len(classes)


def test_the_key_is_the_text_not_the_object() -> None:
    kb = open_kb(ROOT)  # its own run, its own memo (no typed view is read: no check first)
    data = {"symbols": {"a": {"unit": "s"}, "b": {"unit": "s"}}, "equations": {"e": "a = 2*b"}}
    same = json.loads(json.dumps(data))  # equal content, another object
    edited = {**data, "equations": {"e": "a = 3*b"}}
    assert system_key(data) == system_key(same) != system_key(edited)
    system_of(kb, data)
    system_of(kb, same)
    changed = system_of(kb, edited)
    memo = kb.run.kept(SYSTEMS)
    assert memo is not None and (memo.built, memo.reused) == (2, 1)
    assert str(changed.equations["e"].rhs.value) == "3*b"


def test_each_caller_gets_its_own_copy() -> None:
    kb = open_kb(ROOT)  # its own run, its own memo (no typed view is read: no check first)
    data = {"symbols": {"a": {"unit": "s"}}, "equations": {"e": "a = 2*a"}}
    first = system_of(kb, data)
    first.items.clear()
    first.failed.add("x")
    first.equations.clear()
    second = system_of(kb, data)
    assert second.items and "x" not in second.failed and "e" in second.equations


def _document(kb: KnowledgeBase) -> str:
    from kb.plan.planner import Query, model_facts, plan
    from kb.plan.render import document

    query = Query(
        model="models/llama-3.1-70b",
        hardware="hardware/nvidia-h100-sxm",
        count=16,
        nodes=2,
        batch=64,
        input_tokens=2048,
        output_tokens=256,
        engine="engines/nemo",
        inter_link="interconnects/infiniband-ndr",
        inter_latency="5 us",
        tp_across_nodes=True,
    )
    facts = model_facts(kb, query, ROOT)
    return json.dumps(document(plan(query, facts, kb)), sort_keys=True)


def test_a_memoized_plan_is_exactly_the_fresh_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    kb = shipped()
    with monkeypatch.context() as patch:  # the slow path: every system built at every use
        patch.setattr(Systems, "of", lambda self, data, key=None: build_system(data))
        slow = _document(kb)
    # The run's evaluation memo (and the batch-free parts it keeps) would answer the warm
    # plans without asking for a system at all: off, so each evaluation asks this memo.
    monkeypatch.setattr(evalmemo, "evaluations", lambda kb: None)
    _document(kb)  # warm: the plan's systems are built once, then kept
    memo = kb.run.kept(SYSTEMS)
    assert memo is not None and memo.reused > 0
    built = memo.built
    fast = _document(kb)
    assert memo.built == built  # the warm plan builds no system: each comes from the memo
    assert fast == slow
    assert '"status": "feasible"' in fast  # it priced something


def test_what_a_system_derived_is_used_only_while_its_equations_hold() -> None:
    kb = open_kb(ROOT)  # its own run, its own memo (no typed view is read: no check first)
    data = {"symbols": {n: {"unit": "s"} for n in "abc"}, "equations": {"e": "a = 2*b"}}
    first = system_of(kb, data)
    a, b = first.symbols["a"], first.symbols["b"]
    assert first.definitions() == {a: 2 * b}
    assert str(first.expand(a)) == "2*b"
    other = build_system({**data, "equations": {"e": "a = 3*c"}})
    second = system_of(kb, data)  # a copy sharing `derived` with `first`
    second.equations["e"] = other.equations["e"]  # a caller changed its copy
    assert str(second.expand(a)) == "3*c"  # derived anew, not the remembered 2*b
    assert str(second.definitions()[a]) == "3*c"
    assert str(system_of(kb, data).expand(a)) == "2*b"  # the memo's own system is untouched
