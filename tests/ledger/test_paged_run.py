"""The grouped paged run equals vLLM V1's scheduler run one request at a time (`preemption`).

kb.ledger.paged_run.simulate_paged groups requests in one state; `per_request` below is
kb/data/end-to-end.json `offline_throughput.preemption` written out request by request,
in the scheduler's own shape (vllm/v1/core/sched/scheduler.py at the ROCm image's commit:
the running pass with `self.running.pop()` preemption, the waiting pass under
`if not preempted_reqs`). Each push holds the two exactly equal on a grid of small runs
whose pools force preemption in every way (a decode's new block, a chunk's blocks, the
request being scheduled preempting itself); KB_FULL=1 adds larger runs, among them the
two shipped 405B runs that preempt (about 11 s of CPU together). A pool that
holds every whole sequence gives kb.ledger.finite_run's run unchanged. Each comparison
also runs with a step's prefill tokens as one pass (`step_prompt_pass`: `PASS`, not linear
in the prompts), the oracle's `_one_pass` written apart from paged_run's.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction as F

import pytest

from kb.ledger.finite_run import RunResult, decode_step
from kb.ledger.paged_run import Pool, Times, simulate_paged
from kb.ledger.run_by_step import simulate
from tests.ledger.same_run import assert_same_run


@dataclass(eq=False)
class _Request:
    prompt: int
    num_tokens: int  # prompt + outputs emitted
    computed: int = 0
    decoding: bool = False  # its (re)prefill is done: each step computes one token
    first: F | None = None
    finish: F | None = None

    @property
    def emitted(self) -> int:
        return self.num_tokens - self.prompt


def _blocks(tokens: int, block: int) -> int:
    return -(-tokens // block)


def per_request(
    requests: int, inputs: int, outputs: int, budget: int, pool: Pool, times: Times
) -> tuple[RunResult, int]:
    """The rule one request at a time; also the preemptions counted."""
    waiting = [_Request(inputs, inputs) for _ in range(requests)]
    running: list[_Request] = []
    held: dict[int, int] = {}
    free, now, steps, preemptions = pool.blocks, F(0), 0, 0
    done: list[_Request] = []
    while running or waiting:
        left, scheduled, preempted = budget, [], False
        index = 0
        while index < len(running) and left > 0:
            r = running[index]
            new = min(r.num_tokens - r.computed, left)
            need = _blocks(r.computed + new, pool.block) - held[id(r)]
            stop = False
            while need > free:
                victim = running.pop()
                free += held.pop(id(victim))
                victim.computed, victim.decoding = 0, False
                waiting.insert(0, victim)
                preempted, preemptions = True, preemptions + 1
                if victim is r:
                    stop = True
                    break
            if stop:
                break
            free -= need
            held[id(r)] += need
            scheduled.append((r, new))
            left -= new
            index += 1
        if not preempted:
            while waiting and left > 0 and len(running) < requests:
                r = waiting[0]
                new = min(r.num_tokens, left)
                need = _blocks(new, pool.block)
                if need > free:
                    break
                waiting.pop(0)
                running.append(r)
                held[id(r)] = need
                free -= need
                scheduled.append((r, new))
                left -= new
        decodes = sum(1 for r, _ in scheduled if r.decoding)
        base = (
            decode_step(decodes, requests, times.step_at_one, times.step_at_clients)
            if decodes
            else times.overhead
        )
        now += base + _prefill([(r, new) for r, new in scheduled if not r.decoding], times)
        steps += 1
        for r, new in scheduled:
            r.computed += new
            if r.computed == r.num_tokens:
                r.num_tokens += 1
                r.decoding = True
                r.first = now if r.first is None else r.first
        for r in [r for r in running if r.emitted >= outputs]:
            running.remove(r)
            free += held.pop(id(r))
            r.finish = now
            done.append(r)
    ttfts = tuple(r.first for r in done if r.first is not None)
    tpots = tuple(
        (r.finish - r.first) / (outputs - 1)
        for r in done
        if outputs > 1 and r.finish is not None and r.first is not None
    )
    latencies = tuple(r.finish for r in done if r.finish is not None)
    return RunResult(ttfts, tpots, latencies, now, steps, outputs, requests), preemptions


def _prefill(chunks: list[tuple[_Request, int]], times: Times) -> F:
    """Each chunk its share of its sequence's pass; with `passes`, the step's one pass."""
    if times.passes is None:
        return sum((new * times.stall(r.num_tokens) / r.num_tokens for r, new in chunks), F(0))
    if not chunks:
        return F(0)
    prompt = chunks[0][0].prompt
    own = times.stall(prompt) / prompt
    extra = sum((new * (times.stall(r.num_tokens) / r.num_tokens - own) for r, new in chunks), F(0))
    return _one_pass(sum(new for _, new in chunks), prompt, times.passes) + extra


def _one_pass(tokens: int, prompt: int, passes: Callable[[int], F]) -> F:
    """p tokens as p/I prompts' pass: `passes` at the whole counts around it, weighted."""
    low, part = divmod(tokens, prompt)
    at_low = passes(low) if low else F(0)
    return at_low if not part else at_low + F(part, prompt) * (passes(low + 1) - at_low)


def PASS(prompts: int) -> F:  # noqa: N802 - a fixed time like the stall's
    """k prompts' pass: 28 once, 12 a prompt (40 at one, the stall at the prompt)."""
    return F(28) + 12 * prompts


def _times(inputs: int, outputs: int, passes: Callable[[int], F] | None = None) -> Times:
    def stall(k: int) -> F:  # d_s(k): linear from 40 at the prompt to 100 at the longest
        return F(40) + F(60) * (k - inputs) / max(outputs - 1, 1)

    return Times(F(3), F(11), F(1, 2), stall, passes)


def _same(args: tuple[int, int, int, int, int, int]) -> None:
    requests, inputs, outputs, budget, blocks, block = args
    for passes in (None, PASS):
        pool, times = Pool(blocks, block), _times(inputs, outputs, passes)
        grouped = simulate_paged(requests, inputs, outputs, budget, pool, times)
        reference, preemptions = per_request(requests, inputs, outputs, budget, pool, times)
        assert_same_run(grouped, reference)
        assert grouped.notes[0].startswith(f"{preemptions} preemptions")


SMALL = [
    args
    for args in itertools.product((1, 3, 5, 8), (1, 3, 8), (1, 2, 6), (9, 20), (4, 7, 12), (2, 4))
    if args[3] > args[0] and args[4] >= _blocks(args[1] + args[2] - 1, args[5])
]


@pytest.mark.parametrize("args", SMALL)
def test_grouped_equals_per_request(args: tuple[int, int, int, int, int, int]) -> None:
    _same(args)


def test_the_grid_preempts() -> None:
    """The premise: more than a fifth of the grid preempts (96 of its 416 runs)."""
    counts = []
    for requests, inputs, outputs, budget, blocks, block in SMALL:
        times = _times(inputs, outputs)
        found = simulate_paged(requests, inputs, outputs, budget, Pool(blocks, block), times)
        counts.append(int(found.notes[0].split()[0]))
    assert sum(1 for c in counts if c) > len(SMALL) // 5


LARGE = [
    (300, 128, 400, 8192, 2000, 16),  # the 405B runs' shape, scaled down
    (200, 50, 200, 2048, 700, 16),
    (64, 700, 64, 1024, 2000, 16),  # prompts longer than the budget's share
    # the shipped 405B rows' runs (receipts/rocm-vllm-llama-3.1-405b-mi300x-tp8-max-throughput
    # #results.1 and .2): their requests, lengths, budget and kb's pool of 250,561 blocks
    (1500, 128, 4096, 131072, 250561, 16),
    (2000, 500, 2000, 131072, 250561, 16),
]


@pytest.mark.skipif(not os.environ.get("KB_FULL"), reason="the larger runs: KB_FULL=1")
@pytest.mark.parametrize("args", LARGE)
def test_grouped_equals_per_request_full(args: tuple[int, int, int, int, int, int]) -> None:
    _same(args)


@pytest.mark.parametrize(
    "args", [a for a in SMALL if a[4] >= a[0] * _blocks(a[1] + a[2], a[5])] or [(3, 3, 2, 9, 99, 2)]
)
def test_a_pool_that_holds_every_sequence_is_the_finite_run(
    args: tuple[int, int, int, int, int, int],
) -> None:
    requests, inputs, outputs, budget, blocks, block = args
    for passes in (None, PASS):
        times = _times(inputs, outputs, passes)
        paged = simulate_paged(requests, inputs, outputs, budget, Pool(blocks, block), times)
        plain = simulate(
            requests,
            requests,
            inputs,
            outputs,
            budget,
            times.step_at_one,
            times.step_at_clients,
            times.stall(inputs),
            times.overhead,
            passes=passes,
        )
        assert paged.notes == ("0 preemptions, 0 tokens recomputed",)
        assert (paged.duration, paged.steps) == (plain.duration, plain.steps)
        assert sorted(paged.ttfts) == sorted(plain.ttfts)
        assert sorted(paged.tpots) == sorted(plain.tpots)


def test_refusals() -> None:
    times = _times(8, 4)
    with pytest.raises(ValueError, match="holds no whole sequence"):
        simulate_paged(3, 8, 4, 20, Pool(2, 4), times)
    with pytest.raises(ValueError, match="leaves no prompt token"):
        simulate_paged(3, 8, 4, 3, Pool(99, 4), times)
