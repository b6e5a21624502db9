"""A serving run of N requests at concurrency C, priced step by step (`finite_run`)."""

from __future__ import annotations

from fractions import Fraction as F
from typing import Any

import pytest

from kb.ledger.endtoend import (
    CONTRADICTED,
    NOT_EVALUABLE,
    VALIDATED,
    _finite_run_row,
    evaluate_row,
)
from kb.ledger.finite_run import (
    MAX_GROUP_STEPS,
    decode_step,
    exact_mean,
    group_steps_floor,
)
from kb.ledger.run_by_step import simulate
from kb.model import KnowledgeBase
from tests.sample import full

RECIPE = "receipts/vllm-recipes-llama-3.3-70b-mi355x-tp1-8k1k-conc64"


def test_two_requests_by_hand() -> None:
    # step 1: no decode, both prompts (8 tokens) -> 0.5 + 8 * 1 = 8.5, both first tokens;
    # step 2: two decodes at t_dec(2) = 2 -> 10.5, both finish.
    run = simulate(2, 2, 4, 2, 10, F(1), F(2), F(4), F(1, 2))
    assert run.ttfts == (F(17, 2), F(17, 2))
    assert run.tpots == (F(2), F(2))
    assert run.duration == F(21, 2)
    assert run.steps == 2
    assert run.output_rate == F(4) / F(21, 2)


def test_budget_queues_the_burst() -> None:
    # A budget of 5 tokens holds one 4-token prompt and one token of the next: the later
    # prompts of a burst of three wait for the ones before them.
    run = simulate(3, 3, 4, 1, 5, F(1), F(1), F(4), F(0))
    assert sorted(run.ttfts) == [F(5), F(10), F(12)]  # steps of 5, 5 and 2 prompt tokens
    assert run.tpots == ()
    assert run.statistic(run.ttfts, "median") == F(10)
    assert run.statistic(run.ttfts, "mean") == F(9)


def test_a_later_request_starts_its_clock_on_arrival() -> None:
    # One client, two requests: the second is sent when the first finishes.
    run = simulate(1, 2, 2, 2, 10, F(1), F(1), F(2), F(0))
    assert run.ttfts == (F(2), F(2))
    assert run.latencies == (F(3), F(3))
    assert run.duration == F(6)


def test_decode_step_is_linear_between_its_ends() -> None:
    assert decode_step(1, 64, F(10), F(73)) == F(10)
    assert decode_step(64, 64, F(10), F(73)) == F(73)
    assert decode_step(33, 64, F(10), F(73)) == F(42)
    assert decode_step(1, 1, F(10), F(73)) == F(10)


@pytest.mark.parametrize(
    "args",
    [
        (0, 1, 1, 1, 10),  # no client
        (4, 4, 8, 2, 4),  # a budget no prompt token fits beside the decodes
    ],
)
def test_inputs_the_rule_cannot_run(args: tuple[int, int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        simulate(*args, F(1), F(1), F(1), F(0))


def test_median_of_an_unknown_statistic() -> None:
    run = simulate(1, 1, 1, 2, 4, F(1), F(1), F(1), F(0))
    with pytest.raises(ValueError):
        run.statistic(run.ttfts, "p99")


@pytest.mark.parametrize(
    "values",
    [
        (F(1, 3), F(1, 3), F(2, 7), F(-5, 6), F(4)),  # shared, distinct and whole
        tuple(F(k * k, 1 + k % 5) for k in range(1, 60)),  # a few denominators, many values
        (F(3, 10**15),),
    ],
)
def test_the_mean_by_denominator_is_the_sum_of_fractions(values: tuple[F, ...]) -> None:
    assert exact_mean(values) == sum(values, F(0)) / len(values)


def test_a_runs_means_by_denominator_are_the_sums_of_fractions() -> None:
    # The values the rule gives: times in a run's shared unit, some with reduced denominators.
    run = simulate(5, 23, 9, 6, 17, F(3, 1000), F(9, 1000), F(20, 1000), F(1, 1000))
    for values in (run.ttfts, run.tpots, run.latencies):
        assert len({v.denominator for v in values}) > 1
        assert run.statistic(values, "mean") == sum(values, F(0)) / len(values)


def _row(shipped: KnowledgeBase, index: int, **change: Any) -> Any:
    record = shipped.records[RECIPE]
    row = dict(record.data["results"][index])
    for key, value in change.items():
        if value is None:
            row.pop(key, None)
        else:
            row[key] = value
    return evaluate_row(shipped, record, index, row, False)


def test_the_recipe_burst_is_priced_as_a_run(shipped: KnowledgeBase) -> None:
    # FP8 mean TTFT: the steady state gave one prompt's pass (-96%); the run queues the
    # 64 prompts that arrive together.
    result = _row(shipped, 1)
    assert result.state in (VALIDATED, CONTRADICTED)
    assert any("finite_run" in a and "128 requests" in a for a in result.assumed)
    assert result.error is not None and result.error > F(-1, 2)
    steady = _row(shipped, 1, prompts=None)
    assert not any("finite_run" in a for a in steady.assumed)
    assert steady.predicted is not None and result.predicted is not None
    assert result.predicted > 10 * steady.predicted


def test_a_run_row_without_its_statistic_is_not_evaluable(shipped: KnowledgeBase) -> None:
    result = _row(shipped, 1, statistic=None)
    assert result.state == NOT_EVALUABLE
    assert "statistic" in result.reason


def test_only_a_mixed_scheduler_runs_step_by_step() -> None:
    row = {"prompts": 128, "max_batched_tokens": 32768, "statistic": "mean"}
    assert _finite_run_row(row, "ttft", "engines/vllm")
    assert not _finite_run_row(row, "ttft", "engines/sglang")  # stalled: the steady state
    assert not _finite_run_row(row, "request_latency", "engines/vllm")
    assert not _finite_run_row({"prompts": 128}, "ttft", "engines/vllm")


def test_a_run_too_long_to_simulate_is_refused_by_count_not_by_time() -> None:
    # 10**9 requests of 1,000 tokens at one client would be 10**12 steps: refused at once,
    # by counted group-steps (MAX_GROUP_STEPS), never by a clock.
    with pytest.raises(ValueError, match="group-steps"):
        simulate(1, 10**9, 1, 1000, 4, F(1), F(1), F(1), F(0))
    # A burst of 10**9 identical requests is one group: two steps, no refusal.
    run = simulate(10**6, 10**6, 1, 2, 10**7, F(1), F(1), F(1), F(0))
    assert run.steps == 2 and len(run.ttfts) == 10**6


def test_a_receipt_row_of_a_huge_run_is_not_evaluable_with_the_reason(
    shipped: KnowledgeBase,
) -> None:
    result = _row(shipped, 1, prompts=10**9)
    assert result.state == NOT_EVALUABLE
    assert "group-steps" in result.reason


GRID = [
    (clients, requests, inputs, outputs, budget)
    for clients in (1, 3, 8)
    for requests in (1, 5, 24)
    for inputs in (1, 4, 9)
    for outputs in (1, 2, 7)
    for budget in (clients + 1, 10, 40)
    if budget > clients
]


@pytest.mark.parametrize("run", GRID)
def test_the_group_steps_floor_never_exceeds_the_count(run: tuple[int, ...]) -> None:
    """The premise of the early refusal: the floor is under what `simulate` counts."""
    clients, requests, inputs, outputs, budget = run
    found = simulate(clients, requests, inputs, outputs, budget, F(1), F(2), F(3), F(1, 2))
    assert group_steps_floor(requests, inputs, outputs, budget) <= found.group_steps


def _refused(*args: Any) -> bool:
    try:
        simulate(*args, F(1), F(2), F(3), F(1, 2))
    except ValueError as exc:
        assert "group-steps" in str(exc)
        return True
    return False


def test_a_run_the_floor_refuses_is_refused_by_the_count_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Same verdict as the full path, on a bound lowered so the full count runs in a blink."""
    import kb.ledger.finite_run as fr

    monkeypatch.setattr(fr, "MAX_GROUP_STEPS", 3000)
    run = (16, 256, 100, 40, 120)  # one prompt a step: 256 one-request groups x 39 steps
    assert fr.group_steps_floor(256, 100, 40, 120) > 3000
    assert _refused(*run)
    monkeypatch.setattr(fr, "group_steps_floor", lambda *_: 0)  # the full path alone
    assert _refused(*run)


def test_the_b200_deepseek_run_is_refused_before_it_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TensorRT-LLM's DeepSeek-R1 B200 run per replica (6,144 requests, 384 clients): refused
    by the floor (6.3 M group-steps), at once; with KB_FULL=1 the full count refuses it too
    (about 4 CPU-s)."""
    import kb.ledger.finite_run as fr

    run = (384, 6144, 1024, 2048, 1536)
    assert group_steps_floor(6144, 1024, 2048, 1536) > MAX_GROUP_STEPS
    assert _refused(*run)
    if full():
        monkeypatch.setattr(fr, "group_steps_floor", lambda *_: 0)  # the full path alone
        assert _refused(*run)
