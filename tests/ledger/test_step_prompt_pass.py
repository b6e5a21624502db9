"""A step's prompt tokens as one composed pass (kb/data/end-to-end.json `step_prompt_pass`).

The rule (session 26): a step of b decodes and p prompt tokens takes t_dec(b) + D(p), D at
k whole prompts the composed pass of k prompts per replica less L*t_o, linear between
whole prompts. These tests hold the declaration, one step by hand (32 prompts of 128
tokens: one pass of 4,096 tokens), and one shipped TP8 128/128 row's pass of 32 prompts
against the composed request's own parts: the weights read once, the all-reduces once on
4,096 tokens, less than 32 one-prompt passes. The simulators' equality with their
oracles under the rule is held by test_run_by_step, test_finite_run_groups and
test_paged_run.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction as F

from kb.ledger.endtoend import evaluate_row
from kb.ledger.finite_run import prompt_time
from kb.ledger.prompt_passes import PromptPasses
from kb.ledger.run_by_step import simulate
from kb.ledger.scenario import outcome
from kb.model import KnowledgeBase
from kb.resources import end_to_end

ROW = ("receipts/trtllm-v1.0-llama-3.1-405b-throughput-h100-h200", 4)  # 8 x H200 TP8 128/128


def test_the_rule_is_declared_with_its_sources_rows_and_expectation() -> None:
    entry = end_to_end("step_prompt_pass", lambda e: e)
    for key in ("applies_to", "step", "counted_once_per_step", "approximations", "rows"):
        assert entry[key]
    assert "189 rows" in entry["rows"] and "shorter or equal" in entry["expected"]
    assert any("gpu_model_runner.py" in s for s in entry["sources"])
    assert any("model_engine.py" in s for s in entry["sources"])


def test_d_is_linear_between_whole_prompts_and_zero_at_none() -> None:
    def passes(k: int) -> F:
        return F(10) + 3 * k

    assert prompt_time(0, 128, passes) == 0
    assert prompt_time(64, 128, passes) == F(13, 2)  # half of D(1) = 13
    assert prompt_time(128 * 32, 128, passes) == 106  # one pass: 10 once, 3 a prompt
    assert prompt_time(128 * 32 + 32, 128, passes) == 106 + F(3, 4)


def test_a_step_of_32_prompts_of_128_tokens_by_hand() -> None:
    """32 prompts arrive at once, budget 4,096 + 32: the first step is one pass of 4,096 tokens."""
    overhead, at_one, at_c = F(1, 1000), F(20, 1000), F(30, 1000)
    fixed, per_prompt = F(15, 1000), F(2, 1000)  # a pass: 15 ms once (weights), 2 ms a prompt

    def passes(k: int) -> F:
        return fixed + per_prompt * k - overhead

    run = simulate(32, 32, 128, 2, 4096 + 32, at_one, at_c, passes(1), overhead, passes=passes)
    first = overhead + fixed + 32 * per_prompt - overhead  # L*t_o + D(4096): 79 ms
    assert first == F(79, 1000)
    assert run.statistic(run.ttfts, "mean") == first
    assert run.duration == first + at_c  # then one decode step of the 32
    old = simulate(32, 32, 128, 2, 4096 + 32, at_one, at_c, passes(1), overhead)
    assert old.statistic(old.ttfts, "mean") == overhead + 32 * passes(1)  # 32 one-prompt passes


def test_a_tp8_rows_pass_of_32_prompts_reads_the_weights_once(shipped: KnowledgeBase) -> None:
    record = shipped.get(ROW[0])
    assert record is not None
    result = evaluate_row(shipped, record, ROW[1], record.data["results"][ROW[1]], False)
    assert result.outcome is not None
    s = result.outcome.scenario
    assert (s.tp, s.dp, s.input_tokens) == (8, 1, 128)
    one = outcome(replace(s, batch=1), shipped)
    many = outcome(replace(s, batch=32), shipped)
    assert one.request is not None and many.request is not None
    overhead = next(F(r.value) for r in one.rows if r.name == "overhead")
    d32 = PromptPasses(shipped, s, overhead)(32)
    a, b = one.request, many.request
    # by hand, from the composed request's parts at 32 prompts: one pass over 4,096 tokens
    parts = b.prefill_read + b.prefill_kernels + b.prefill_overhead + b.prefill_collectives
    assert d32 == parts - overhead
    assert b.prefill_overhead == a.prefill_overhead  # L*t_o once
    assert a.prefill_read <= b.prefill_read < 32 * a.prefill_read  # the weights read once
    assert b.prefill_collectives < 32 * a.prefill_collectives  # each all-reduce once, 4,096 tokens
    assert one.ttft is not None
    assert d32 < 32 * (one.ttft - overhead)  # the old rule: 32 one-prompt passes
