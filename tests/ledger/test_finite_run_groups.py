"""The grouped run simulation equals the per-request rule it replaced (`finite_run`).

kb.ledger.run_by_step.simulate treats requests in one state as a group; `per_request`
below is the rule as first written (session 15), one request at a time. Each push holds
the two exactly equal on a grid of small runs that split groups in every way (bursts a
budget covers in part, closed loops whose later requests arrive in waves); KB_FULL=1
adds larger runs, among them the shipped recipe's 128 prompts at concurrency 64. Both
price a step's prompt tokens as one pass (`step_prompt_pass`), each with a pass that is
not linear in the prompts (`PASS`) as well as the linear one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction as F

import pytest

from kb.ledger.finite_run import RunResult, decode_step
from kb.ledger.run_by_step import simulate
from tests.ledger.same_run import assert_same_run


@dataclass
class _Request:
    arrival: F
    prompt_left: int
    emitted: int = 0
    first: F | None = None
    finish: F | None = None


def per_request(
    clients: int,
    requests: int,
    inputs: int,
    outputs: int,
    budget: int,
    at_one: F,
    at_clients: F,
    stall: F,
    overhead: F,
    passes: Callable[[int], F] | None = None,
) -> RunResult:
    """The per-request rule: each step, decodes first, then prompt tokens in arrival order.

    A step's p prompt tokens take the pass of p/I prompts: `passes` at the whole counts
    around p/I, weighted by how far p/I lies between them (k * stall without `passes`).
    """

    def prompts_time(tokens: int) -> F:
        count = F(tokens, inputs)
        low = count.numerator // count.denominator
        at = (lambda k: k * stall) if passes is None else passes
        at_low = at(low) if low else F(0)
        if count == low:
            return at_low
        return at_low + (count - low) * (at(low + 1) - at_low)

    sent = min(clients, requests)
    live = [_Request(F(0), inputs) for _ in range(sent)]
    done: list[_Request] = []
    now, steps = F(0), 0
    while live:
        decoding = [r for r in live if r.prompt_left == 0]
        room = budget - len(decoding)
        chunks: list[tuple[_Request, int]] = []
        for r in live:
            if r.prompt_left and room:
                take = min(r.prompt_left, room)
                chunks.append((r, take))
                room -= take
        prompt = sum(take for _, take in chunks)
        base = decode_step(len(decoding), clients, at_one, at_clients) if decoding else overhead
        now += base + prompts_time(prompt)
        steps += 1
        for r in decoding:
            r.emitted += 1
        for r, take in chunks:
            r.prompt_left -= take
            if not r.prompt_left:
                r.first, r.emitted = now, 1
        for r in [r for r in live if r.emitted >= outputs]:
            r.finish = now
            live.remove(r)
            done.append(r)
            if sent < requests:
                live.append(_Request(now, inputs))
                sent += 1
    ttfts = tuple(r.first - r.arrival for r in done if r.first is not None)
    tpots = tuple(
        (r.finish - r.first) / (outputs - 1)
        for r in done
        if outputs > 1 and r.finish is not None and r.first is not None
    )
    latencies = tuple(r.finish - r.arrival for r in done if r.finish is not None)
    return RunResult(ttfts, tpots, latencies, now, steps, outputs, requests)


def PASS(prompts: int) -> F:  # noqa: N802 - a constant's role: one pass's fixed part, then per prompt
    """A pass of k prompts: 25 once, 15 a prompt (40 at one prompt, as the stall below)."""
    return F(25) + 15 * prompts


def _same(args: tuple[int, int, int, int, int]) -> None:
    clients, requests, inputs, outputs, budget = args
    times = (F(3), F(11), F(40), F(1, 2))
    for passes in (None, PASS):
        grouped = simulate(clients, requests, inputs, outputs, budget, *times, passes=passes)
        reference = per_request(clients, requests, inputs, outputs, budget, *times, passes)
        assert_same_run(grouped, reference)


SMALL = [
    args
    for args in itertools.product((1, 2, 3, 5), (1, 4, 7), (1, 3, 8), (1, 2, 5), (6, 9, 20))
    if args[4] > args[0]
]


@pytest.mark.parametrize("args", SMALL)
def test_grouped_equals_per_request(args: tuple[int, int, int, int, int]) -> None:
    _same(args)


LARGE = [
    (64, 128, 8192, 1024, 32768),  # the shipped recipe row's run
    (200, 200, 128, 300, 4096),  # a burst the budget takes in many steps
    (37, 301, 700, 50, 2048),  # a closed loop whose requests arrive in waves
]


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="the larger runs: KB_FULL=1")
@pytest.mark.parametrize("args", LARGE)
def test_grouped_equals_per_request_full(args: tuple[int, int, int, int, int]) -> None:
    _same(args)
