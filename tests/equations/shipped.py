"""The shipped records with equations for the equivalence tests: a per-push sample, all on request.

tests/equations/test_shared.py (a run's shared work == each record alone) and
tests/equations/test_plan.py (the plan path == the symbolic path) both start from a
cold run of each compared record on its own (engine.run_record, nothing shared): its
RecordResult JSON and the plan it leaves. Per push they compare the sample (`sample`,
`sharing_sample`), chosen from the records' text alone, so no record outside it is run;
with KB_FULL=1 every shipped record, whose runs alone are made once per process
(`shipped_alone_runs`; `SHIPPED` keeps those tests on one pytest-xdist worker).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from kb.equations import engine
from kb.equations.bind import resolve
from kb.equations.compose import compose
from kb.equations.system import build_system
from kb.model import KnowledgeBase, Record

# One worker: each record's run alone is made once for the tests that compare with it (of
# the shipped tree, and of the generated corpus: tests/equations/helpers.py generated_alone_runs).
SHIPPED = pytest.mark.xdist_group("shipped-equations")


def result_json(result: engine.RecordResult) -> str:
    return json.dumps(engine._to_json(result), sort_keys=True)


def resolver(kb: KnowledgeBase) -> Callable[[Any], Any]:
    return lambda spec: resolve(kb, spec)


def alone_run(kb: KnowledgeBase, record: Record) -> tuple[str, str | None]:
    """(RecordResult JSON, plan JSON or None) of `record`'s cold run alone on `kb`."""
    record = compose(kb, record).record  # `uses` resolved, as analyse() does
    result, plan = engine.run_record(record, resolver(kb))
    return result_json(result), None if plan is None else json.dumps(plan)  # order kept


def alone_runs(
    kb: KnowledgeBase, only: set[str] | None = None
) -> dict[str, tuple[str, str | None]]:
    """{record id: (RecordResult JSON, plan JSON or None)} of each record with equations alone.

    `only`: the ids of the records run (every record with equations when not given)."""
    return {
        record.id: alone_run(kb, record)
        for record in kb
        if engine.has_equations(record) and (only is None or record.id in only)
    }


@functools.cache
def shipped_alone_run(record_id: str) -> tuple[str, str | None]:
    """`alone_run` of one shipped record on `shipped_kb`, made once per process.

    test_plan.py and test_shared.py both compare against these (same worker: `SHIPPED`),
    so each record's cold run alone is paid once, not once per test."""
    kb = shipped_kb()
    return alone_run(kb, kb.records[record_id])


def shipped_alone_runs(ids: set[str] | None = None) -> dict[str, tuple[str, str | None]]:
    """`shipped_alone_run` of the shipped records `ids` with equations (all when not given)."""
    kb = shipped_kb()
    return {
        r.id: shipped_alone_run(r.id)
        for r in kb
        if engine.has_equations(r) and (ids is None or r.id in ids)
    }


# ---- the per-push sample of the shipped equation records ---------------------------------

FULL = os.environ.get("KB_FULL") == "1"  # every shipped record on request (CONTRIBUTING.md)


def _node_form(node: sp.Basic) -> str:
    if isinstance(node, sp.Number):
        return "number"
    if isinstance(node, sp.Pow):
        exponent = node.exp
        if exponent.is_Integer:
            return "Pow:negative" if exponent < 0 else "Pow:integer"
        return "Pow:rational" if exponent.is_Rational else "Pow:symbolic"
    return type(node).__name__


def forms(record: Record) -> set[str]:
    """What kinds of maths a record with equations exercises, read from its text alone (no
    check runs): its kind, its sections, every expression node type of its equations (a
    power by its exponent), every claim kind and claim field.

    Whether a record's cold run leaves a plan is no form of its own: it follows from these
    (a claim that is not exact arithmetic, such as a rational power, keeps none:
    test_plan.py's `test_a_plan_is_not_kept_for_claims_that_are_not_exact_arithmetic`), and
    the equivalence test on the sample asserts the sample holds records of both outcomes.
    """
    found = {f"kind:{record.kind}"}
    found |= {f"section:{key}" for key in record.data if key in SECTIONS}
    try:
        system = build_system(record.data)
    except Exception as exc:  # noqa: BLE001 - a record the engine refuses is a form of its own
        found.add(f"refused:{type(exc).__name__}")
    else:
        for equation in system.equations.values():
            found |= {_node_form(node) for node in sp.preorder_traversal(equation.rhs.value)}
    for claim in record.data.get("claims") or []:
        if isinstance(claim, dict):
            found.add(f"claim:{claim.get('kind')}")
            found |= {f"claim field:{key}" for key in claim}
    return found


SECTIONS = ("symbols", "equations", "derivations", "claims", "evidence", "calibration")


def record_forms(kb: KnowledgeBase) -> dict[str, frozenset[str]]:
    """{id: `forms`} of every record of `kb` with equations."""
    return {r.id: frozenset(forms(r)) for r in kb if engine.has_equations(r)}


@functools.cache
def shipped_kb() -> KnowledgeBase:
    """The shipped records, loaded once per process (read, never changed, by the tests).

    Loaded at the project folder, whatever the working directory is now: every record's
    path is `records/...`, as in any tree loaded as `records` from its parent (`load_at`),
    so a record's result JSON is the same here and on a copy (`shipped_alone_run`)."""
    from tests.conftest import REPO

    return load_at(REPO)


def load_at(parent: Path) -> KnowledgeBase:
    """The records folder `parent / "records"`, loaded from `parent` (paths `records/...`)."""
    from kb.loader import load_knowledge_base

    before = os.getcwd()
    os.chdir(parent)
    try:
        return load_knowledge_base(Path("records"))[0]
    finally:
        os.chdir(before)


@functools.cache
def shipped_record_forms() -> dict[str, frozenset[str]]:
    """`record_forms` of the shipped records, made once per process."""
    return record_forms(shipped_kb())


def sample(each: dict[str, frozenset[str]]) -> set[str]:
    """Ids of records with equations that together show every form (`forms`) of `each`.

    Greedy (the record adding most unseen forms first, ties by id): the same records for the
    same tree, chosen from the records' text alone (no check is run to choose them). With
    KB_FULL=1 every record with equations.
    """
    if FULL:
        return set(each)
    chosen: set[str] = set()
    seen: set[str] = set()
    while True:
        best = max(sorted(each), key=lambda rid: len(each[rid] - seen))
        if not each[best] - seen:
            return chosen
        chosen.add(best)
        seen |= each[best]


def shipped_sample() -> set[str]:
    """`sample` of the shipped records."""
    return sample(shipped_record_forms())


def sharing_sample(kb: KnowledgeBase) -> set[str]:
    """`sample` of `kb` with every record that shares its maths with another record of `kb`.

    A run shares work between records only under keys made of the text of what is shared
    (kb/equations/shared.py: a system by its (symbols, equations), a derivation or claim
    within that system): a record's result in a whole run can differ from its run alone
    only through records whose (symbols, equations) text equals its own. Every such record
    is added with all records it shares that text with, so what the whole tree shares the
    sample shares too. With KB_FULL=1 every record with equations.
    """
    texts: dict[str, set[str]] = {}
    for record in kb:
        if engine.has_equations(record):
            data = compose(kb, record).record.data  # `uses` resolved, as analyse() does
            key = repr((data.get("symbols"), data.get("equations")))
            texts.setdefault(key, set()).add(record.id)
    each = shipped_record_forms() if kb is shipped_kb() else record_forms(kb)
    return sample(each) | {rid for ids in texts.values() if len(ids) > 1 for rid in ids}


def sample_tree(target: Path, ids: set[str]) -> Path:
    """Copy the shipped records `ids` with every record they reference to `target` (made)."""
    from tests.conftest import SHIPPED_RECORDS
    from tests.small_tree import closure, shipped_file

    for rid in sorted(closure(ids)):
        relative = shipped_file(rid)
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SHIPPED_RECORDS / relative, target / relative)
    return target


def shipped_forms() -> tuple[set[str], set[str]]:
    """(the forms of every shipped record with equations, the forms of the per-push sample)."""
    each = shipped_record_forms()
    picked = sample(each)
    return set().union(*each.values()), set().union(*(each[rid] for rid in picked))
