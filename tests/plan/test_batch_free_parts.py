"""A mapping's batch-free parts, kept for the run, change no outcome and no gap.

A frozen knowledge base keeps a scenario's workload (kb.ledger.inputs `_workload`)
and the parts of each option that read no batch (kb.ledger.fixed) in the run's
evaluation memo, so the batches of one mapping share them. Here each scenario is
priced twice on one frozen knowledge base (the second time from the memo) and must
equal, field by field, what the same scenario gives with the memo switched off
(`evaluations` None: everything derived afresh), on a tree whose one model record
lost the fields two of those parts read, so that the workload and the fixed parts
each record a gap, and the memo must give the same gaps, in the same order.
tests/plan/test_fast_path.py holds the same of whole reports on the shipped tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kb.equations.evalmemo as evalmemo
from kb.api import open_kb, validate
from kb.ledger.scenario import Outcome, Scenario, evaluate
from kb.model import KnowledgeBase, Record

ROOT = Path(__file__).resolve().parents[2] / "records"
H100, H200, VLLM = "hardware/nvidia-h100-sxm", "hardware/nvidia-h200-sxm", "engines/vllm"
DENSE, MLA, BROKEN = "models/llama-3.1-70b", "models/deepseek-v3", "models/llama-3.1-8b"


def _scenarios() -> list[Scenario]:
    found = []
    for batch in (8, 64):  # one mapping at two batches: the second takes the kept parts
        for model, hw, tp, pp, ep, dp in (
            (DENSE, H100, 4, 2, 1, 1),
            (DENSE, H100, 2, 1, 1, 4),
            (MLA, H200, 8, 1, 8, 1),  # its KV per token: the MLA latent the copy lacks
            (BROKEN, H100, 8, 1, 1, 1),  # no kv_heads in the copy: the workload's gap
        ):
            found.append(
                Scenario(model, hw, tp * pp * dp, 1, tp, pp, ep, dp, batch, 2048, 256, None, VLLM)
            )
    return found


def _without(record: Record, dotted: str) -> Record:
    """A copy of `record` without the field at `dotted` (`derived.kv_elements_per_token`)."""
    head, _, leaf = dotted.partition(".")
    section = {k: v for k, v in record.data[head].items() if k != leaf}
    return Record(record.id, record.kind, record.path, {**record.data, head: section})


@pytest.fixture(scope="module")
def edited() -> KnowledgeBase:
    """The shipped records, two model records short of a field; schema stage of the shipped."""
    shipped = open_kb(ROOT, checked=validate(ROOT, remember=False))
    records = dict(shipped.records)
    records[MLA] = _without(records[MLA], "derived.kv_elements_per_token")
    records[BROKEN] = _without(records[BROKEN], "geometry.kv_heads")
    kb = KnowledgeBase(shipped.root, records)
    kb.run.schema = shipped.run.schema  # the copies stand where the shipped files passed
    kb.run.file_schema = shipped.run.file_schema
    kb.freeze()
    return kb


def _fields(outcome: Outcome) -> tuple[Any, ...]:
    return tuple(getattr(outcome, f) for f in outcome.__dataclass_fields__ if f != "scenario")


def test_kept_parts_price_as_derived_afresh(
    edited: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios = _scenarios()
    kept = [evaluate([s], edited)[0] for s in scenarios]
    again = [evaluate([s], edited)[0] for s in scenarios]  # every part from the memo now
    asked = {question[0] for question in _derived_keys(edited.run.kept(evalmemo.EVALUATIONS))}
    assert {"fixed parts", "workload"} <= asked  # the kept path was taken
    with monkeypatch.context() as patch:
        patch.setattr(evalmemo, "evaluations", lambda kb: None)
        fresh = [evaluate([s], edited)[0] for s in scenarios]
    for s, a, b, c in zip(scenarios, kept, again, fresh, strict=True):
        assert _fields(a) == _fields(c), s
        assert _fields(b) == _fields(c), s


def test_the_edited_records_make_the_gaps_the_memo_must_replay(edited: KnowledgeBase) -> None:
    problems: dict[str, list[str]] = {}
    priced = set()
    for s in _scenarios():
        found = evaluate([s], edited)[0]
        problems.setdefault(s.model, []).extend(found.problems)
        if found.tpot is not None:
            priced.add(s.model)
    assert DENSE in priced  # the kept path itself prices
    assert any("kv_elements_per_token" in p for p in problems[MLA])
    assert any("geometry.kv_heads" in p for p in problems[BROKEN])


def _derived_keys(memo: evalmemo.Evaluations | None) -> list[tuple[Any, ...]]:
    """The keys of what `Evaluations.derived` keeps: ("derived", id, id(record), question)."""
    assert memo is not None
    return [key[3] for key in memo.known if isinstance(key, tuple) and key[0] == "derived"]
