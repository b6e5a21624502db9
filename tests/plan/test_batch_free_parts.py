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

The scenario's synthesized placement keeps its batch-free part per mapping too
(kb.ledger.scenario `_mapping_data`), and a scenario kb cannot price (its links state
no latency) computes only the feasibility of its probe: both are held here to the
fresh build and to the probe's whole analysis.
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
MI300X = "hardware/amd-instinct-mi300x"
DENSE, MLA, BROKEN = "models/llama-3.1-70b", "models/deepseek-v3", "models/llama-3.1-8b"


def _scenarios() -> list[Scenario]:
    found = []
    for batch in (8, 64):  # one mapping at two batches: the second takes the kept parts
        for model, hw, tp, pp, ep, dp in (
            (DENSE, H100, 4, 2, 1, 1),
            (DENSE, H100, 2, 1, 1, 4),
            (MLA, H200, 8, 1, 8, 1),  # its KV per token: the MLA latent the copy lacks
            (BROKEN, H100, 8, 1, 1, 1),  # no kv_heads in the copy: the workload's gap
            (DENSE, MI300X, 4, 2, 1, 1),  # its links state no latency: unpriced, feasibility only
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
    assert {"fixed parts", "workload", "scenario mapping"} <= asked  # the kept path was taken
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


def test_the_batches_of_a_mapping_share_its_batch_free_data(
    edited: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb.ledger.scenario import placement_data

    at = {b: Scenario(DENSE, H100, 8, 1, 4, 2, 1, 1, b, 2048, 256, None, VLLM) for b in (8, 64)}
    kept = {b: placement_data(s, edited) for b, s in at.items()}
    with monkeypatch.context() as patch:
        patch.setattr(evalmemo, "evaluations", lambda kb: None)
        fresh = {b: placement_data(s, edited) for b, s in at.items()}
    assert kept == fresh  # equal, key order included
    assert [list(d) for d in kept.values()] == [list(d) for d in fresh.values()]
    assert list(kept[8]["envelope"]) == list(fresh[8]["envelope"])
    assert kept[8]["reference"] is kept[64]["reference"]  # one mapping: its data made once
    assert kept[8]["envelope"]["workload"] is kept[64]["envelope"]["workload"]
    assert fresh[8]["reference"] is not fresh[64]["reference"]
    differ = {k for k in kept[8] if kept[8][k] != kept[64][k]}
    assert differ == {"id", "envelope"}
    assert kept[8]["envelope"]["batch"] == 8 and kept[64]["envelope"]["batch"] == 64


def test_an_unpriced_scenario_fits_as_its_probe_analysed_whole(edited: KnowledgeBase) -> None:
    from kb.kinds.placement import placement
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import PlacementSpec, resolve_view
    from kb.ledger.scenario import _feasibility_probe, scenario_record

    states = set()
    for batch in (1, 64, 256):
        for model, tp, pp in ((DENSE, 4, 2), (DENSE, 2, 1), ("models/llama-3.1-405b", 8, 1)):
            s = Scenario(model, MI300X, tp * pp, 1, tp, pp, 1, 1, batch, 2048, 2048, None, VLLM)
            found = evaluate([s], edited)[0]
            assert found.tpot is None and found.rows == ()
            assert any("link latency" in p for p in found.problems), found.problems
            probe = _feasibility_probe(scenario_record(s, edited))
            spec = resolve_view(placement(probe), probe, edited)
            assert isinstance(spec, PlacementSpec) and not spec.gaps
            fit = analyze_spec(spec).sides[0].feasibility  # the whole analysis, as before
            assert found.fits == fit.feasible
            assert found.need_per_device == max(d.state + d.reserve for d in fit.devices)
            assert found.have_per_device == min(d.capacity for d in fit.devices)
            if fit.feasible:
                assert found.max_batch == min(d.max_batch for d in fit.devices)
                assert found.max_context == min(d.max_context for d in fit.devices)
            else:
                assert found.max_batch is None and found.max_context is None
                assert all(p in found.problems for p in fit.shortfalls())
            states.add(fit.feasible)
    assert states == {True, False}  # the sample holds both: a fit and a shortfall
