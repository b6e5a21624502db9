"""The oracle of finite_run's rule: every live request group visited at every step.

This is kb.ledger.finite_run.simulate as it was until session 19, when
kb.ledger.run_by_step (integer time units, decode-only steps counted at once) became the
rule's one simulator. tests/ledger/test_run_by_step.py holds the two equal, the
group-steps they count included; tests/ledger/test_finite_run_groups.py holds the
simulator equal to the per-request rule. Since session 26 it takes the step's prompt
tokens as one pass (`passes`, kb/data/end-to-end.json `step_prompt_pass`), written here
apart from the simulator's: `_one_pass`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

from kb.ledger.finite_run import (
    RunResult,
    _Group,
    _prompt_chunks,
    _within_bound,
    decode_step,
    group_steps_floor,
)


def simulate_grouped(
    clients: int,
    requests: int,
    input_tokens: int,
    output_tokens: int,
    budget: int,
    step_at_one: Fraction,
    step_at_clients: Fraction,
    prefill_stall: Fraction,
    overhead: Fraction,
    passes: Callable[[int], Fraction] | None = None,
) -> RunResult:
    """Run `requests` requests through `clients` clients, every live group at every step.

    Requests in the same state are simulated as one group (`_Group`): every request of a
    group is sent, prefilled, decoded and finished at the same times. `passes(k)`: the
    prompt tokens' time at k whole prompts (None: k * prefill_stall).
    """
    if clients < 1 or requests < 1 or input_tokens < 1 or output_tokens < 1:
        raise ValueError("clients, requests, input and output tokens must be at least 1")
    if budget <= clients:
        raise ValueError(
            f"a token budget of {budget} leaves no prompt token beside {clients} decodes"
        )
    if min(step_at_one, step_at_clients, prefill_stall, overhead) < 0:
        raise ValueError("times must be non-negative")

    def pass_of(prompts: int) -> Fraction:
        return prompts * prefill_stall if passes is None else passes(prompts)

    sent = min(clients, requests)
    # Each client's requests run one after another, each for at least output_tokens steps
    # with a live group: a run past the bound by this count is refused before it starts.
    _within_bound(-(-requests // clients) * output_tokens)
    # ... and so is one whose prefilled groups alone would count past it.
    _within_bound(group_steps_floor(requests, input_tokens, output_tokens, budget))
    live = [_Group(sent, Fraction(0), input_tokens)]
    done: list[tuple[_Group[Fraction], Fraction]] = []
    now, steps, work = Fraction(0), 0, 0
    while live:
        work += len(live)
        _within_bound(work)
        decoding = [g for g in live if g.prompt_left == 0]
        decodes = sum(g.count for g in decoding)
        chunks = _prompt_chunks(live, budget - decodes)
        prompt = sum(g.count * take for g, take in chunks)
        base = decode_step(decodes, clients, step_at_one, step_at_clients) if decodes else overhead
        now += base + _one_pass(prompt, input_tokens, pass_of)
        steps += 1
        for g in decoding:
            g.emitted += 1
        for g, take in chunks:
            g.prompt_left -= take
            if not g.prompt_left:
                g.first, g.emitted = now, 1
        finished = [g for g in live if g.emitted >= output_tokens]
        live = [g for g in live if g.emitted < output_tokens]
        done.extend((g, now) for g in finished)
        freed = min(sum(g.count for g in finished), requests - sent)
        if freed:
            live.append(_Group(freed, now, input_tokens))
            sent += freed
    return replace(_result(done, now, steps, output_tokens, requests), group_steps=work)


def _one_pass(tokens: int, inputs: int, pass_of: Callable[[int], Fraction]) -> Fraction:
    """The step's prompt tokens as one pass: between the whole prompts below and above them."""
    if tokens == 0:
        return Fraction(0)
    low = tokens // inputs
    high = -(-tokens // inputs)
    below = pass_of(low) if low else Fraction(0)
    if high == low:
        return below
    share = Fraction(tokens - low * inputs, inputs)
    return (1 - share) * below + share * pass_of(high)


def _result(
    done: list[tuple[_Group[Fraction], Fraction]],
    now: Fraction,
    steps: int,
    outputs: int,
    requests: int,
) -> RunResult:
    """Per-request times from the finished groups, each repeated by its count."""
    ttfts, tpots, latencies = [], [], []
    for g, finish in done:
        assert g.first is not None  # a group finishes only after its first token
        ttfts += [g.first - g.arrival] * g.count
        if outputs > 1:
            tpots += [(finish - g.first) / (outputs - 1)] * g.count
        latencies += [finish - g.arrival] * g.count
    return RunResult(tuple(ttfts), tuple(tpots), tuple(latencies), now, steps, outputs, requests)
