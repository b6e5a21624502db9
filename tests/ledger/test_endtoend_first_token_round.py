"""lmdeploy v0.1.0a1's first token at a static batch B > 1 (end-to-end.json `first_token.round`).

The engine, idle at the start of a benchmark round, wakes on the first request and runs an
iteration with it alone (prefill of its prompt but the last token, one decode step at batch
1); the other B - 1 requests are prefilled together in the next iteration, whose decode
step runs at batch B. The row's average TTFT is T_1 + (B - 1)/B x T_rest, every term from
the one composition. At batch 1 the rule is the single iteration it was before.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from kb.ledger.endtoend import conditions, evaluate_row
from kb.ledger.scenario import Scenario, outcome
from kb.model import KnowledgeBase

LMDEPLOY_13B = "receipts/lmdeploy-llama-2-13b-a100-tp1-static"


def _iteration(kb: KnowledgeBase, scenario: Scenario, prefilled: int) -> Fraction:
    """Prefill of `prefilled` sequences x (input - 1) tokens plus one decode step (by hand)."""
    inputs = scenario.input_tokens or 1
    step = outcome(replace(scenario, context=inputs), kb).tpot
    assert step is not None
    if inputs == 1:
        return step
    prefill = outcome(replace(scenario, batch=prefilled, input_tokens=inputs - 1), kb).ttft
    assert prefill is not None
    return prefill + step


def test_the_round_is_declared_from_the_source() -> None:
    data = json.loads(
        (Path(__file__).resolve().parents[2] / "kb" / "data" / "end-to-end.json").read_text()
    )
    entry = data["first_token"]["round"]
    assert "before the rule was composed" in entry["reason"]
    assert "estimated by hand" in entry["reason"]  # the disclosure stays with the rule
    assert any("Request.h" in s for s in entry["sources"])
    assert any("InternalThreadEntry" in s for s in entry["sources"])


def test_a_one_token_prompt_at_batch_16_waits_for_the_first_requests_iteration(
    shipped: KnowledgeBase,
) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][11]  # batch 16, 1/128, average first-token latency
    scenario, measures, _ = conditions(shipped, record, row)
    assert measures == "ttft" and scenario.batch == 16 and scenario.input_tokens == 1
    alone = _iteration(shipped, replace(scenario, batch=1), 1)
    joined = _iteration(shipped, scenario, 15)
    result = evaluate_row(shipped, record, 11, row, False)
    assert result.predicted == alone + Fraction(15, 16) * joined
    # not the single iteration of the whole batch the rule gave before
    assert result.predicted != _iteration(shipped, scenario, 16)
    assert any("the other 15 join the next" in a for a in result.assumed)


def test_a_128_token_prompt_prefills_the_first_request_alone(shipped: KnowledgeBase) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][23]  # batch 32, 128/128, average first-token latency
    scenario, _, _ = conditions(shipped, record, row)
    assert scenario.batch == 32 and scenario.input_tokens == 128
    alone = _iteration(shipped, replace(scenario, batch=1), 1)
    joined = _iteration(shipped, scenario, 31)
    result = evaluate_row(shipped, record, 23, row, False)
    assert result.predicted == alone + Fraction(31, 32) * joined


def test_batch_one_keeps_the_single_iteration(shipped: KnowledgeBase) -> None:
    record = shipped.get(LMDEPLOY_13B)
    assert record is not None
    row = record.data["results"][3]  # batch 1, 128/128
    scenario, _, _ = conditions(shipped, record, row)
    result = evaluate_row(shipped, record, 3, row, False)
    assert result.predicted == _iteration(shipped, scenario, 1)
    assert not any("join the next" in a for a in result.assumed)
