"""A frozen knowledge base keeps a scenario's Outcome in the run's evaluation memo.

kb.ledger.scenario.outcome asks kb.equations.evalmemo `derived` under the scenario's
model record: rows of `kb list --end-to-end` that ask the same scenario share one
Outcome. The kept answer must be the one a fresh computation gives, for scenarios that
fit, do not fit and cannot be priced; and a scenario differing in one field is not
given another's answer.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kb.ledger import scenario as sc
from kb.ledger.scenario import Scenario
from kb.model import KnowledgeBase

H100 = "hardware/nvidia-h100-sxm"
SCENARIOS = [
    Scenario(model="models/llama-3.1-70b", hardware=H100, count=4, tp=4, batch=8,
             input_tokens=1024, output_tokens=128, engine="engines/vllm"),
    Scenario(model="models/llama-3.1-70b", hardware=H100, count=1, context=4096),  # no fit
    Scenario(model="models/llama-2-7b", hardware="hardware/nvidia-l40s", count=1,
             weight_precision="fp8", batch=4, input_tokens=512),
]  # fmt: skip


@pytest.mark.parametrize("question", SCENARIOS)
def test_the_kept_outcome_is_the_fresh_one(shipped: KnowledgeBase, question: Scenario) -> None:
    assert shipped.frozen
    first = sc.outcome(question, shipped)
    assert sc.outcome(question, shipped) is first  # kept
    assert first == sc._outcome(question, shipped)  # and what a computation gives


def test_a_refused_scenario_is_refused_again(shipped: KnowledgeBase) -> None:
    question = replace(SCENARIOS[1], context=None)
    for _ in range(2):  # an error is not kept: raised by each computation
        with pytest.raises(sc.ScenarioError, match="no context"):
            sc.outcome(question, shipped)


def test_a_scenario_differing_in_one_field_is_priced_anew(shipped: KnowledgeBase) -> None:
    question = SCENARIOS[0]
    other = replace(question, batch=16)
    kept, priced = sc.outcome(question, shipped), sc.outcome(other, shipped)
    assert priced.scenario == other and priced != kept
    assert priced == sc._outcome(other, shipped)
