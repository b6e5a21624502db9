"""run_by_step.simulate is finite_run's rule exactly (kb/ledger/run_by_step.py).

Since session 19 run_by_step is the rule's one simulator (bounded by finite_run's
MAX_GROUP_STEPS unless `group_bound=False`, as trtllm_bench steps its runs);
the group-by-group stepping it replaced is the oracle here (tests/ledger/grouped_run.py).
Each push holds the two equal, with the group-steps they count (duration, steps, and the
TTFTs, TPOTs and latencies in any order), and their refusals at a lowered bound, on a
grid of small runs: budgets that cover a prompt in part or several at once, one- and
many-token outputs, closed loops with later waves. KB_FULL=1 adds runs
of the size trtllm-bench's maximum-load rows price (a budget under two prompts beside
hundreds of decodes), as large as finite_run can still simulate within its bound. Each
comparison runs with the step's prompt tokens as one pass that is not linear in the
prompts (`PASSES`, kb/data/end-to-end.json `step_prompt_pass`) as well as the linear one,
asked all before the run or, with a `unit`, when a step first needs one.
"""

from __future__ import annotations

import itertools
import os
from fractions import Fraction as F
from typing import Any

import pytest

from kb.ledger import finite_run, run_by_step
from tests.ledger.grouped_run import simulate_grouped
from tests.ledger.same_run import assert_same_run

TIMES = (F(3, 1000), F(9, 1000), F(20, 1000), F(1, 1000))  # at one, at C, prompt, overhead


def PASSES(prompts: int) -> F:  # noqa: N802 - a fixed time like TIMES
    """k prompts' pass: 12 ms once, 8 ms a prompt, 1/10 ms x k^2 (20.1 ms at one prompt)."""
    return F(12, 1000) + F(8, 1000) * prompts + F(1, 10000) * prompts * prompts


GRID = [
    (clients, requests, inputs, outputs, budget)
    for clients, requests, inputs, outputs in itertools.product(
        (1, 3, 8), (1, 5, 17), (1, 4, 9), (1, 2, 6)
    )
    for budget in (clients + 1, clients + inputs, clients + 3 * inputs + 2)
]


@pytest.mark.parametrize(("clients", "requests", "inputs", "outputs", "budget"), GRID)
def test_the_stepped_run_is_the_grouped_run(
    clients: int, requests: int, inputs: int, outputs: int, budget: int
) -> None:
    args = (clients, requests, inputs, outputs, budget, *TIMES)
    stepped, grouped = run_by_step.simulate(*args), simulate_grouped(*args)
    assert_same_run(stepped, grouped)
    assert stepped.group_steps == grouped.group_steps
    assert_same_run(run_by_step.simulate(*args, group_bound=False), grouped)
    one_pass = simulate_grouped(*args, passes=PASSES)
    assert_same_run(run_by_step.simulate(*args, passes=PASSES), one_pass)
    lazily = run_by_step.simulate(*args, passes=PASSES, unit=F(1, 10000))
    assert_same_run(lazily, one_pass)


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1 runs the large runs")
@pytest.mark.parametrize(
    ("clients", "requests", "inputs", "outputs", "budget"),
    [(120, 300, 256, 64, 384), (200, 450, 100, 200, 2048), (64, 400, 2048, 32, 2560)],
)
def test_the_stepped_run_is_the_grouped_run_at_bench_sizes(
    clients: int, requests: int, inputs: int, outputs: int, budget: int
) -> None:
    args = (clients, requests, inputs, outputs, budget, *TIMES)
    stepped, grouped = run_by_step.simulate(*args), simulate_grouped(*args)
    assert_same_run(stepped, grouped)
    assert stepped.group_steps == grouped.group_steps
    one_pass = simulate_grouped(*args, passes=PASSES)
    assert_same_run(run_by_step.simulate(*args, passes=PASSES, unit=F(1, 10000)), one_pass)


def test_a_pass_off_the_unit_or_negative_is_refused() -> None:
    args = (2, 4, 3, 2, 9, *TIMES)
    with pytest.raises(ValueError, match="off the run's unit"):
        run_by_step.simulate(*args, passes=PASSES, unit=F(1, 1000))
    with pytest.raises(ValueError, match="non-negative"):
        run_by_step.simulate(*args, passes=lambda k: F(-k))


def test_it_refuses_what_finite_run_refuses() -> None:
    for bad in ((0, 1, 1, 1, 2), (2, 1, 1, 1, 2)):
        with pytest.raises(ValueError):
            run_by_step.simulate(*bad, *TIMES)
        with pytest.raises(ValueError):
            simulate_grouped(*bad, *TIMES)
    with pytest.raises(ValueError, match="non-negative"):
        run_by_step.simulate(1, 1, 1, 1, 2, F(-1), F(0), F(0), F(0))


def _refused(simulate: Any, args: tuple[Any, ...]) -> bool:
    try:
        simulate(*args)
    except finite_run.RunTooLong:
        return True
    return False


def test_the_group_bound_refuses_what_the_grouped_oracle_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """finite_run's bound, lowered so that some grid runs pass it: the same verdict on each."""
    monkeypatch.setattr(finite_run, "MAX_GROUP_STEPS", 40)
    verdicts = [
        _refused(run_by_step.simulate, args) == _refused(simulate_grouped, args)
        for run in GRID
        for args in [(*run, *TIMES)]
    ]
    assert all(verdicts)
    refused = sum(_refused(simulate_grouped, (*run, *TIMES)) for run in GRID)
    assert 0 < refused < len(GRID)  # the bound splits the grid
