"""Each shipped record with equations run alone, once per worker: shared by the equivalence tests.

tests/equations/test_shared.py (a run's shared work == each record alone) and
tests/equations/test_plan.py (the plan path == the symbolic path) both start from the
same cold run of every shipped record on its own (engine.run_record, nothing shared):
its RecordResult JSON and the plan it leaves. Made once per process and used by both
(`SHIPPED` keeps their shipped-records tests on one pytest-xdist worker); every other
run those tests compare it with is their own.
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

SHIPPED = pytest.mark.xdist_group("shipped-equations")  # one worker: one alone-run of the tree


def result_json(result: engine.RecordResult) -> str:
    return json.dumps(engine._to_json(result), sort_keys=True)


def resolver(kb: KnowledgeBase) -> Callable[[Any], Any]:
    return lambda spec: resolve(kb, spec)


def alone_runs(kb: KnowledgeBase) -> dict[str, tuple[str, str | None]]:
    """{record id: (RecordResult JSON, plan JSON or None)} of each record with equations alone."""
    runs: dict[str, tuple[str, str | None]] = {}
    for record in kb:
        if engine.has_equations(record):
            record = compose(kb, record).record  # `uses` resolved, as analyse() does
            result, plan = engine.run_record(record, resolver(kb))
            text = None if plan is None else json.dumps(plan)  # its order kept, as cached
            runs[record.id] = (result_json(result), text)
    return runs


@functools.cache
def shipped_alone_runs() -> dict[str, tuple[str, str | None]]:
    """`alone_runs` of the shipped records (loaded here), made once per process."""
    from kb.loader import load_knowledge_base
    from tests.conftest import SHIPPED_RECORDS

    kb, _ = load_knowledge_base(SHIPPED_RECORDS)
    return alone_runs(kb)


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


def forms(record: Record, plan: str | None) -> set[str]:
    """What kinds of maths a record with equations exercises: its kind, its sections, every
    expression node type of its equations (a power by its exponent), every claim kind and claim
    field, and whether its cold run left a plan."""
    found = {f"kind:{record.kind}", "plan" if plan is not None else "no plan"}
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


def sample(kb: KnowledgeBase, runs: dict[str, tuple[str, str | None]]) -> set[str]:
    """Ids of records with equations that together show every form (`forms`) the tree shows.

    Greedy (the record adding most unseen forms first, ties by id): the same records for the
    same tree. With KB_FULL=1 every record with equations.
    """
    each = {r.id: forms(r, runs[r.id][1]) for r in kb if r.id in runs}
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


def sharing_sample(kb: KnowledgeBase, runs: dict[str, tuple[str, str | None]]) -> set[str]:
    """`sample` with every record that shares its maths with another record of `kb`.

    A run shares work between records only under keys made of the text of what is shared
    (kb/equations/shared.py: a system by its (symbols, equations), a derivation or claim
    within that system): a record's result in a whole run can differ from its run alone
    only through records whose (symbols, equations) text equals its own. Every such record
    is added with all records it shares that text with, so what the whole tree shares the
    sample shares too. With KB_FULL=1 every record with equations.
    """
    texts: dict[str, set[str]] = {}
    for record in kb:
        if record.id in runs:
            data = compose(kb, record).record.data  # `uses` resolved, as analyse() does
            key = repr((data.get("symbols"), data.get("equations")))
            texts.setdefault(key, set()).add(record.id)
    return sample(kb, runs) | {rid for ids in texts.values() if len(ids) > 1 for rid in ids}


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
    from kb.loader import load_knowledge_base
    from tests.conftest import SHIPPED_RECORDS

    kb, _ = load_knowledge_base(SHIPPED_RECORDS)
    runs = shipped_alone_runs()
    every = {f for r in kb if r.id in runs for f in forms(r, runs[r.id][1])}
    picked = sample(kb, runs)
    return every, {f for r in kb if r.id in picked for f in forms(r, runs[r.id][1])}
