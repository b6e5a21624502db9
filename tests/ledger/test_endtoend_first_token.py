"""TTFT as lmdeploy v0.1.0a1 makes its first token (kb/data/end-to-end.json `first_token`).

TurboMind at that tag prefills a sequence without its last prompt token and leaves that
token to the first decode step, so its first token costs the prefill of input_tokens - 1
tokens per sequence plus one decode step of the batch at a context of input_tokens.
Another engine, or another version, keeps TTFT as the prefill pass.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from kb.ledger.endtoend import _first_token_rule, conditions, evaluate_row
from kb.ledger.scenario import outcome
from kb.model import KnowledgeBase, Record

LMDEPLOY_13B = "receipts/lmdeploy-llama-2-13b-a100-tp1-static"
TRTLLM_TTFT = "receipts/trtllm-v0.9-first-token-latency-batch1"


def test_the_rule_is_declared_from_the_engine_source() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["first_token"]
    assert entry["engines/lmdeploy"]["versions"] == ["v0.1.0a1"]
    assert "Declared before any row was priced" in entry["reason"]
    assert any("LlamaBatch.cc" in s for s in entry["sources"])


def test_ttft_is_the_prefill_of_all_but_one_token_plus_a_decode_step(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][3]  # batch 1, 128/128, average first-token latency
    scenario, measures, _ = conditions(shipped, record, row)
    assert measures == "ttft" and scenario.input_tokens == 128
    prefill = outcome(replace(scenario, input_tokens=127), shipped).ttft
    step = outcome(replace(scenario, context=128), shipped).tpot
    assert prefill is not None and step is not None
    result = evaluate_row(shipped, record, 3, row, False)
    assert result.predicted == prefill + step
    assert result.predicted != outcome(scenario, shipped).ttft  # the rule changed it
    assert any("first token: the prefill of 127 tokens" in a for a in result.assumed)


def test_a_one_token_prompt_is_one_decode_step(shipped: KnowledgeBase) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][1]  # batch 1, 1/128
    scenario, _, _ = conditions(shipped, record, row)
    result = evaluate_row(shipped, record, 1, row, False)
    assert result.predicted == outcome(replace(scenario, context=1), shipped).tpot


def test_other_engines_and_versions_keep_the_prefill_pass(shipped: KnowledgeBase) -> None:
    record = shipped.get(TRTLLM_TTFT)
    assert record is not None and not _first_token_rule(record)
    row = record.data["results"][20]
    scenario, _, _ = conditions(shipped, record, row)
    assert evaluate_row(shipped, record, 20, row, False).predicted == (
        outcome(scenario, shipped).ttft
    )
    lmdeploy = shipped.get(LMDEPLOY_13B)
    assert lmdeploy is not None and _first_token_rule(lmdeploy)
    other = dict(lmdeploy.data, engine={**lmdeploy.data["engine"], "version": "v0.2.0"})
    assert not _first_token_rule(Record(lmdeploy.id, "receipt", lmdeploy.path, other))
