"""A LMDeploy row's TTFT through the benchmark's KV pool (declared: `turbomind_pool`).

kb/data/end-to-end.json `turbomind_pool` lists, per receipt, the pool the benchmark
script set (blocks of block_tokens) and the rounds each thread runs. A TTFT row whose
batch the pool does not hold as whole sequences is priced by kb.ledger.turbomind_run
with kb's composed prefill pass and decode step (a preempted sequence keeping the head
of its blocks, `turbomind_kept_prefix`); every other row keeps the first_token rule.
The decode step is read bilinearly between the composed steps at batch 1 and at the
largest batch the pool holds whole (at most the row's), at contexts input_tokens and
input_tokens + output_tokens: those four corners are ones kb finds fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

from kb.ledger.paged_run import Pool
from kb.ledger.scenario import Outcome, Scenario, ScenarioError, outcome
from kb.ledger.turbomind_run import Prices, simulate_static
from kb.model import KnowledgeBase


@dataclass(frozen=True)
class Declared:
    """One receipt's pool and rounds (`turbomind_pool.receipts`)."""

    pool: Pool
    rounds: int


@lru_cache(maxsize=1)
def declared_pools() -> dict[str, Declared]:
    """kb/data/end-to-end.json `turbomind_pool.receipts`, read once."""
    from kb.resources import end_to_end

    return end_to_end(
        "turbomind_pool",
        lambda entry: {
            receipt: Declared(Pool(int(e["blocks"]), int(e["block_tokens"])), int(e["rounds"]))
            for receipt, e in entry["receipts"].items()
        },
    )


def past_pool(receipt: str, scenario: Scenario) -> Declared | None:
    """The receipt's declared pool when the row's batch does not fit it whole (else None)."""
    found = declared_pools().get(receipt)
    if found is None or scenario.dp != 1:
        return None
    sequence = (scenario.input_tokens or 1) + (scenario.output_tokens or 1)
    if scenario.batch * found.pool.held(sequence) <= found.pool.blocks:
        return None
    return found


def _priced(value: Fraction | None, what: str) -> Fraction:
    if value is None:
        raise ValueError(f"kb cannot price {what}")
    return value


def _decode(
    kb: KnowledgeBase, scenario: Scenario, pool: Pool
) -> Callable[[int], tuple[Fraction, Fraction]]:
    """Batch -> (step at context input_tokens, growth per token), bilinear (module docstring)."""
    inputs, outputs = scenario.input_tokens or 1, scenario.output_tokens or 1
    top = max(1, min(scenario.batch, pool.blocks // pool.held(inputs + outputs)))

    def step(batch: int, context: int) -> Fraction:
        found = outcome(replace(scenario, batch=batch, context=context), kb).tpot
        return _priced(found, f"the decode step at batch {batch}, context {context}")

    low = (step(1, inputs), step(1, inputs + outputs))
    high = (step(top, inputs), step(top, inputs + outputs)) if top > 1 else low
    cache: dict[int, tuple[Fraction, Fraction]] = {}

    def decode(batch: int) -> tuple[Fraction, Fraction]:
        if batch not in cache:
            along = Fraction(batch - 1, top - 1) if top > 1 else Fraction(0)
            start = low[0] + (high[0] - low[0]) * along
            end = low[1] + (high[1] - low[1]) * along
            cache[batch] = (start, (end - start) / outputs)
        return cache[batch]

    return decode


def _prefill(kb: KnowledgeBase, scenario: Scenario) -> Callable[[int, int], Fraction]:
    """A pass of k sequences of t tokens each.

    k new prompts (t = input_tokens - 1) are composed once per k; a readmitted sequence's
    longer pass (k = 1) is read linearly in t between the composed passes of one sequence
    at input_tokens - 1 and input + output - 1 tokens (as offline_throughput.preemption
    reads a recompute; attention's growth makes the chord an upper bound). Feasibility is
    asked at the context the pass leaves (t + 1 tokens a sequence): the engine holds no more.
    """
    inputs, outputs = scenario.input_tokens or 1, scenario.output_tokens or 1
    cache: dict[tuple[int, int], Fraction] = {}

    def composed(sequences: int, tokens: int) -> Fraction:
        if (sequences, tokens) not in cache:
            at = replace(scenario, batch=sequences, input_tokens=tokens, context=tokens + 1)
            found = outcome(at, kb).ttft
            cache[sequences, tokens] = _priced(found, f"a pass of {sequences} x {tokens} tokens")
        return cache[sequences, tokens]

    def prefill(sequences: int, tokens: int) -> Fraction:
        if tokens <= inputs - 1 or sequences > 1:
            return composed(sequences, tokens)
        low, high = max(1, inputs - 1), inputs + outputs - 1
        start, end = composed(1, low), composed(1, high)
        return start + (end - start) * (tokens - low) / (high - low)

    return prefill


def pooled_ttft(kb: KnowledgeBase, scenario: Scenario, found: Declared) -> tuple[Fraction, str]:
    """The row's mean TTFT over the simulated run, and the note that says how.

    ValueError (kb.ledger.turbomind_run's, or a term kb cannot price) when it cannot.
    """
    inputs, outputs = scenario.input_tokens or 1, scenario.output_tokens or 1
    try:
        prices = Prices(_prefill(kb, scenario), _decode(kb, scenario, found.pool))
    except ScenarioError as exc:
        raise ValueError(str(exc)) from exc
    run = simulate_static(scenario.batch, found.rounds, inputs, outputs, found.pool, prices)
    pool = found.pool
    note = (
        f"turbomind_pool: the benchmark's pool of {pool.blocks} blocks x {pool.block} tokens "
        f"holds {pool.blocks // pool.held(inputs + outputs)} of the {scenario.batch} whole "
        f"sequences; {scenario.batch} threads x {found.rounds} rounds simulated under "
        f"TurboMind's block schedule ({run.steps} iterations), a preempted sequence keeping "
        f"the head of its blocks (turbomind_kept_prefix): mean TTFT over {len(run.ttfts)} requests"
    )
    return run.statistic(run.ttfts, "mean"), note


def pooled_outcome(
    kb: KnowledgeBase, scenario: Scenario, result: Outcome, found: Declared
) -> tuple[Outcome, str]:
    """`result` with the simulated TTFT when the engine's pool fits beside the weights, and a note.

    The engine never holds more than its pool, so feasibility is asked of the largest batch
    the pool holds whole at input + output tokens; when kb finds that does not fit, or a
    term cannot be priced, `result` is returned unchanged and the note says why.
    """
    inputs, outputs = scenario.input_tokens or 1, scenario.output_tokens or 1
    whole = max(1, found.pool.blocks // found.pool.held(inputs + outputs))
    try:
        held = outcome(replace(scenario, batch=whole, context=inputs + outputs), kb)
        if not held.fits:
            return result, f"turbomind_pool: kb finds the pool ({whole} sequences) does not fit"
        ttft, note = pooled_ttft(kb, scenario, found)
    except (ScenarioError, ValueError) as exc:
        return result, f"turbomind_pool: not simulated ({exc})"
    return replace(result, fits=True, ttft=ttft), note
