"""run_by_step.simulate is finite_run.simulate's rule exactly (kb/ledger/run_by_step.py).

Each push holds the two equal (duration, steps, and the TTFTs, TPOTs and latencies in
any order) on a grid of small runs: budgets that cover a prompt in part or several at
once, one- and many-token outputs, closed loops with later waves. KB_FULL=1 adds runs
of the size trtllm-bench's maximum-load rows price (a budget under two prompts beside
hundreds of decodes), as large as finite_run can still simulate within its bound.
"""

from __future__ import annotations

import itertools
import os
from fractions import Fraction as F

import pytest

from kb.ledger import finite_run, run_by_step
from tests.ledger.same_run import assert_same_run

TIMES = (F(3, 1000), F(9, 1000), F(20, 1000), F(1, 1000))  # at one, at C, prompt, overhead

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
    assert_same_run(run_by_step.simulate(*args), finite_run.simulate(*args))


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="KB_FULL=1 runs the large runs")
@pytest.mark.parametrize(
    ("clients", "requests", "inputs", "outputs", "budget"),
    [(120, 300, 256, 64, 384), (200, 450, 100, 200, 2048), (64, 400, 2048, 32, 2560)],
)
def test_the_stepped_run_is_the_grouped_run_at_bench_sizes(
    clients: int, requests: int, inputs: int, outputs: int, budget: int
) -> None:
    args = (clients, requests, inputs, outputs, budget, *TIMES)
    assert_same_run(run_by_step.simulate(*args), finite_run.simulate(*args))


def test_it_refuses_what_finite_run_refuses() -> None:
    for bad in ((0, 1, 1, 1, 2), (2, 1, 1, 1, 2)):
        with pytest.raises(ValueError):
            run_by_step.simulate(*bad, *TIMES)
        with pytest.raises(ValueError):
            finite_run.simulate(*bad, *TIMES)
    with pytest.raises(ValueError, match="non-negative"):
        run_by_step.simulate(1, 1, 1, 1, 2, F(-1), F(0), F(0), F(0))
