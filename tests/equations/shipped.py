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
from collections.abc import Callable
from typing import Any

import pytest

from kb.equations import engine
from kb.equations.bind import resolve
from kb.equations.compose import compose
from kb.model import KnowledgeBase

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
