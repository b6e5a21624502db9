"""A row whose stated batch does not fit: its step priced at the batch the engine holds.

kb/data/end-to-end.json `assumed.over_capacity`: when kb's composed feasibility finds the
stated batch (or concurrency) does not fit, the TPOT (and 1/TPOT) of the row is priced at
the largest batch the same feasibility admits at the row's context (at the whole
sequence, input + output, for an engine declared in `whole_sequence`); TTFT, latency and
throughput rows keep the stated batch (and stay "does not fit").
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kb.ledger.endtoend import (
    CONTRADICTED,
    OVER_CAPACITY_MEASURES,
    conditions,
    evaluate_row,
    whole_sequence_engines,
)
from kb.ledger.scenario import outcome
from kb.model import KnowledgeBase

LMDEPLOY_13B = "receipts/lmdeploy-llama-2-13b-a100-tp1-static"
TPOT_ROW, TTFT_ROW = 38, 39  # batch 64, 2048/2048: kb finds 64 sequences do not fit


def test_the_rule_is_declared_with_its_measures() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["assumed"]["over_capacity"]
    assert tuple(entry["measures"]) == OVER_CAPACITY_MEASURES
    assert "Declared before any row was priced" in entry["reason"] and entry["sources"]


def test_a_tpot_row_over_capacity_is_priced_at_the_largest_batch_that_fits(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][TPOT_ROW]
    scenario, measures, _ = conditions(shipped, record, row)
    assert measures == "tpot" and scenario.batch == 64
    assert not outcome(scenario, shipped).fits  # the stated batch does not fit
    held = outcome(replace(scenario, batch=1), shipped).max_batch
    assert held is not None and 1 <= held < 64
    assert outcome(replace(scenario, batch=held), shipped).fits
    assert not outcome(replace(scenario, batch=held + 1), shipped).fits  # the largest
    result = evaluate_row(shipped, record, TPOT_ROW, row, False)
    assert result.predicted == outcome(replace(scenario, batch=held), shipped).tpot
    assert any(f"in flight: {held} of the stated 64" in a for a in result.assumed)


def test_a_ttft_row_over_capacity_still_does_not_fit(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without its receipt's declared pool (end-to-end.json `turbomind_pool`, which prices
    # this row by the engine's own pool: tests/ledger/test_endtoend_turbomind_pool.py),
    # over_capacity leaves a TTFT row at its stated batch.
    monkeypatch.setattr("kb.ledger.endtoend.past_pool", lambda receipt, scenario: None)
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][TTFT_ROW]
    result = evaluate_row(shipped, record, TTFT_ROW, row, False)
    assert result.predicted is None and result.state == CONTRADICTED
    assert "does not fit" in result.reason


NIM = "receipts/nim-1.8-llama-3.3-70b-h100-tp2-fp8-concurrency"
NIM_ITL_ROW = 5  # concurrency 150, 5000/500 on TensorRT-LLM: kb finds 150 do not fit


def test_the_whole_sequence_engines_are_declared_with_sources() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["assumed"]["over_capacity"]["whole_sequence"]
    assert frozenset(entry["engines"]) == whole_sequence_engines() == {"engines/tensorrt-llm"}
    assert "GUARANTEED_NO_EVICT" in entry["reason"] and entry["sources"]


def test_a_tensorrt_llm_row_is_capped_at_its_whole_sequence(shipped: KnowledgeBase) -> None:
    record = shipped.get(NIM)
    assert record is not None
    row = record.data["results"][NIM_ITL_ROW]
    scenario, measures, _ = conditions(shipped, record, row)
    assert scenario.engine == "engines/tensorrt-llm" and measures == "tpot"
    assert scenario.input_tokens is not None and scenario.output_tokens is not None
    whole = scenario.input_tokens + scenario.output_tokens
    assert scenario.context is not None and scenario.context < whole  # priced at the mean
    held = outcome(replace(scenario, batch=1, context=whole), shipped).max_batch
    at_mean = outcome(replace(scenario, batch=1), shipped).max_batch
    assert held is not None and at_mean is not None and held < at_mean  # the rule bites
    result = evaluate_row(shipped, record, NIM_ITL_ROW, row, False)
    # the cap from the whole sequence (the step then runs at the serving steady state of
    # that many requests, at the mean context: tests/ledger/test_serving_steady_state.py)
    assert any(
        f"in flight: {held} of the stated {scenario.batch}" in a and "whole sequence" in a
        for a in result.assumed
    )


def test_an_engine_not_declared_keeps_the_cap_at_the_row_context(
    shipped: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kb.ledger.endtoend.whole_sequence_engines", lambda: frozenset())
    record = shipped.get(NIM)
    assert record is not None
    row = record.data["results"][NIM_ITL_ROW]
    scenario, _, _ = conditions(shipped, record, row)
    at_mean = outcome(replace(scenario, batch=1), shipped).max_batch
    assert at_mean is not None
    result = evaluate_row(shipped, record, NIM_ITL_ROW, row, False)
    assert any(f"in flight: {at_mean} of the stated" in a for a in result.assumed)
    assert not any("whole sequence" in a for a in result.assumed)
