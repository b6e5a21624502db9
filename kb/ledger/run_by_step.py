"""finite_run's rule, stepped in time proportional to the steps (kb/ledger/finite_run.py).

finite_run's simulation until session 19 (kept as the tests' oracle,
tests/ledger/grouped_run.py) visited every live request group at every step. A run whose
token budget admits less than one prompt a step (trtllm-bench's max_num_tokens at a
large in-flight batch: kb/data/end-to-end.json `trtllm_bench_run`) makes each request a
group of its own, so that costs requests x steps: past finite_run's bound
(MAX_GROUP_STEPS) for runs of 1,500-3,000 requests of 1,000-2,048 tokens.

This module runs the same rule, step for step, without visiting the decoding groups:
every running request past its prompt emits one token a step, so a group whose prompt
completes at step s finishes at step s + O - 1, and the step needs only the number of
decodes and the prompts still to prefill; with no prompt waiting, the decode-only steps
up to the next group's end are one product. The prompt tokens of a step are chosen by
finite_run's own `_prompt_chunks`, the step's time by its `decode_step`'s formula and its
prompt tokens' one pass (`prompt_time`, kb/data/end-to-end.json `step_prompt_pass`)
counted in integer units of time, and each request's times are differences of those integers,
made a Fraction once (`_result`): the same numbers in the same order, so the result is
finite_run's exactly (tests/ledger/test_run_by_step.py holds the two equal on runs both
can do).
Pure: numbers in, a RunResult out; ValueError as finite_run's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace
from fractions import Fraction

from kb.ledger import finite_run
from kb.ledger.finite_run import Passes, RunResult, _Group, _prompt_chunks, linear_passes
from kb.ledger.scaled import Scaled

MAX_STEPS = 2_000_000  # steps simulated, counted (the refusal never depends on the machine)


def _check(clients: int, requests: int, inputs: int, outputs: int, budget: int) -> None:
    """ValueError on a run the rule cannot run (the rule's own checks)."""
    if clients < 1 or requests < 1 or inputs < 1 or outputs < 1:
        raise ValueError("clients, requests, input and output tokens must be at least 1")
    if budget <= clients:
        raise ValueError(
            f"a token budget of {budget} leaves no prompt token beside {clients} decodes"
        )


def _scale(times: tuple[Fraction, ...], clients: int, inputs: int) -> int:
    """A denominator D that makes every time the run adds an integer count of 1/D seconds.

    A step adds t_dec(b) = at_one + (at_C - at_one)(b - 1)/(C - 1) (finite_run's
    decode_step), the overhead, and the prompt tokens' pass, linear in the tokens between
    whole prompts (`_PromptUnits`): D is the times' common denominator times (C - 1) and I.
    """
    common = math.lcm(*(t.denominator for t in times))
    return common * max(clients - 1, 1) * inputs


def simulate(
    clients: int,
    requests: int,
    input_tokens: int,
    output_tokens: int,
    budget: int,
    step_at_one: Fraction,
    step_at_clients: Fraction,
    prefill_stall: Fraction,
    overhead: Fraction,
    group_bound: bool = True,
    chunked: bool = True,
    passes: Passes | None = None,
    unit: Fraction | None = None,
) -> RunResult:
    """finite_run's rule: a run of `requests` through `clients`, stepped by decode counts.

    Time is counted in integer units of 1/D seconds (`_scale`), so a step costs integer
    additions, and each request's times become fractions once, at the end. The live
    groups summed over the steps are counted as finite_run counts them (`group_steps`);
    `group_bound` refuses a run past finite_run's MAX_GROUP_STEPS with its RunTooLong
    (its floors first, then the count), else the bound is MAX_STEPS steps. `chunked`
    False admits whole prompts only (finite_run's `_prompt_chunks`). `passes(k)` is D at
    k whole prompts (finite_run's `prompt_time`; None: k * prefill_stall, each prompt its
    own pass); every D the run may need (k up to min(C, ceil(budget/I))) is asked before
    it starts, unless `unit` says every D is a multiple of it: then each is asked when a
    step first needs it.
    """
    _check(clients, requests, input_tokens, output_tokens, budget)
    if not chunked and budget < input_tokens:
        whole = f"a whole {input_tokens}-token prompt"
        raise ValueError(f"a budget of {budget} tokens never holds {whole}")
    times = (step_at_one, step_at_clients, prefill_stall, overhead)
    if min(times) < 0:
        raise ValueError("times must be non-negative")
    if group_bound:  # finite_run's refusals before the run starts
        finite_run._within_bound(-(-requests // clients) * output_tokens)
        floor = finite_run.group_steps_floor(requests, input_tokens, output_tokens, budget)
        finite_run._within_bound(floor)
    most = min(clients, -(-budget // input_tokens))  # whole prompts a step's tokens span
    known = _known(passes, most, unit)
    scale = _scale((*times, *known), clients, input_tokens)
    at_one, at_clients, _, idle = (int(t * scale) for t in times)
    slope = (at_clients - at_one) // (clients - 1) if clients > 1 else 0
    prompt_units = _PromptUnits(passes or linear_passes(prefill_stall), scale, input_tokens)
    sent = min(clients, requests)
    waiting = [_Group(sent, 0, input_tokens)]  # prompts not yet prefilled, in order
    ending: dict[int, list[_Group[int]]] = defaultdict(list)  # step -> groups finishing then
    done: list[tuple[_Group[int], int]] = []
    now, steps, decodes, finished = 0, 0, 0, 0
    work, prefilled = 0, 0  # group-steps counted; groups past their prompt, not finished
    while finished < requests:
        base = at_one + slope * (decodes - 1) if decodes else idle
        if not waiting:  # decode-only steps until the next group ends: counted at once
            idle_steps = next(iter(ending)) - steps - 1
            now, steps = now + idle_steps * base, steps + idle_steps
            work += idle_steps * prefilled
        work += len(waiting) + prefilled
        if group_bound:
            finite_run._within_bound(work)
        if steps >= MAX_STEPS:
            raise ValueError(f"the run needs more than {MAX_STEPS:,} steps to simulate")
        chunks = _prompt_chunks(waiting, budget - decodes, chunked)
        prompt = sum(g.count * take for g, take in chunks)
        now += base + prompt_units.of(prompt)
        steps += 1
        for g, take in chunks:
            g.prompt_left -= take
            if not g.prompt_left:
                g.first, g.emitted = now, 1
                ending[steps + output_tokens - 1].append(g)
                decodes += g.count if output_tokens > 1 else 0
                prefilled += 1
        waiting = [g for g in waiting if g.prompt_left]
        ended = ending.pop(steps, [])
        prefilled -= len(ended)
        count = sum(g.count for g in ended)
        decodes -= count if output_tokens > 1 else 0
        finished += count
        done.extend((g, now) for g in ended)
        freed = min(count, requests - sent)
        if freed:
            waiting.append(_Group(freed, now, input_tokens))
            sent += freed
    return replace(_result(done, (now, scale), steps, output_tokens, requests), group_steps=work)


def _known(passes: Passes | None, most: int, unit: Fraction | None) -> tuple[Fraction, ...]:
    """The times besides the four whose denominators the run's unit must divide.

    None (each prompt its own pass): none, k * d_s is a multiple of d_s. With `unit`: the
    unit. Else every D(k*I) for k = 1..`most`, asked now (ValueError on a negative one).
    """
    if passes is None:
        return ()
    if unit is not None:
        return (unit,)
    found = tuple(passes(k) for k in range(1, most + 1))
    if found and min(found) < 0:
        raise ValueError("times must be non-negative")
    return found


class _PromptUnits:
    """D(p) in the run's integer units, each D(k*I) converted once (finite_run.prompt_time)."""

    def __init__(self, passes: Passes, scale: int, inputs: int) -> None:
        self.passes, self.scale, self.inputs = passes, scale, inputs
        self.whole: dict[int, int] = {0: 0}

    def at(self, prompts: int) -> int:
        """D at `prompts` whole prompts, in units (ValueError when it is not a whole count)."""
        if prompts not in self.whole:
            value = self.passes(prompts) * self.scale
            if value < 0 or value.denominator != 1:
                raise ValueError(f"the pass of {prompts} prompts is negative or off the run's unit")
            self.whole[prompts] = value.numerator
        return self.whole[prompts]

    def of(self, tokens: int) -> int:
        """D(tokens): linear between whole prompts (exact: each D is a multiple of I units)."""
        whole, rest = divmod(tokens, self.inputs)
        below = self.at(whole)
        if not rest:
            return below
        return below + (self.at(whole + 1) - below) * rest // self.inputs


def _result(
    done: list[tuple[_Group[int], int]],
    end: tuple[int, int],
    steps: int,
    outputs: int,
    requests: int,
) -> RunResult:
    """The per-request times from times in units of 1/scale s, kept as integers (Scaled).

    `end` is the run's last step's end and the scale (units per second). Each group's
    TTFT, TPOT and latency is an integer difference over the scale (the TPOT's over
    scale x (O - 1)), repeated by the group's count, in the grouped oracle's order.
    """
    now, scale = end
    ttfts: list[int] = []
    tpots: list[int] = []
    latencies: list[int] = []
    for g, finish in done:
        assert g.first is not None  # a group finishes only after its first token
        ttfts += [g.first - g.arrival] * g.count
        if outputs > 1:
            tpots += [finish - g.first] * g.count
        latencies += [finish - g.arrival] * g.count
    return RunResult(
        Scaled(tuple(ttfts), scale),
        Scaled(tuple(tpots), scale * max(outputs - 1, 1)),
        Scaled(tuple(latencies), scale),
        Fraction(now, scale),
        steps,
        outputs,
        requests,
    )
