"""vLLM's offline benchmark_throughput, priced as a run in the KV pool (issue 35, sessions 17-18).

kb/data/end-to-end.json `offline_throughput` declares the rule: benchmark_throughput
adds all N requests to the engine at once (llm.generate over every prompt) with
--max-num-seqs N, so the run is kb.ledger.finite_run's with C = N clients; its
'Throughput (tokens/s)' is read as the total (input + output) tokens over the run's
duration. Since session 18 (`offline_throughput.preemption`) the run is simulated in the
engine's KV pool, with the V1 scheduler's preemption by recompute (kb.ledger.paged_run):
a run whose pool holds every whole sequence never preempts and is the finite run
unchanged. This module holds what the rule adds to the finite run: which rows it applies
to, the pool and whether it holds every sequence, and the prefill of a readmitted
request (a prompt of its prompt + outputs, linear in length between two composed passes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.ledger.paged_run import Pool
from kb.ledger.scenario import Scenario, ScenarioError

if TYPE_CHECKING:
    from kb.model import KnowledgeBase


def offline_row(row: Mapping[str, Any]) -> bool:
    """A row of an offline run: every one of its `prompts` sent at once (`concurrency`)."""
    prompts, clients = row.get("prompts"), row.get("concurrency")
    return isinstance(prompts, int) and not isinstance(prompts, bool) and prompts == clients


def _blocks(tokens: int, block: int) -> int:
    return -(-tokens // block)


def replica_pool(kb: KnowledgeBase, scenario: Scenario) -> Pool | str:
    """The engine's KV pool of one replica, in whole blocks (a string: why there is none).

    The composed feasibility's (kb.ledger.capacity): capacity - reserve - weights -
    workspace, per replica, in whole blocks of the engine.
    """
    from kb.ledger.capacity import capacity

    try:
        found = capacity(scenario, kb)
    except ScenarioError as exc:
        return str(exc)
    return Pool(found.cached_tokens // found.block_tokens, found.block_tokens)


def unheld(pool: Pool, scenario: Scenario) -> str | None:
    """How the pool falls short of every whole sequence of the run (None: it holds them).

    Each of the batch/dp requests of a replica needs ceil((input + output)/block) blocks
    by its last token; a run short of that is where vLLM preempts.
    """
    sequence = (scenario.input_tokens or 0) + (scenario.output_tokens or 0)
    per_replica = scenario.batch // scenario.dp
    each = _blocks(sequence, pool.block)
    if per_replica * each <= pool.blocks:
        return None
    return (
        f"the engine's KV pool holds {pool.blocks * pool.block:,} tokens per replica "
        f"({pool.blocks:,} blocks of {pool.block}): {pool.blocks // each:,} of the "
        f"{per_replica:,} whole {sequence}-token sequences"
    )


def prefill_stall(
    kb: KnowledgeBase, scenario: Scenario, at_prompt: Fraction
) -> Callable[[int], Fraction]:
    """d_s(k): a prefill of k tokens, as the declared `preemption.recompute_time` prices it.

    `at_prompt` is d_s at the prompt's length (finite_run's: the composed pass of one
    prompt per replica less L*t_o). A longer prefill (a readmitted request's prompt +
    outputs) is read linearly in k up to the pass of one input + output - 1 token
    sequence, priced the first time a run needs it; ValueError when kb cannot price it.
    """
    from kb.ledger.scenario import outcome

    inputs, outputs = scenario.input_tokens or 0, scenario.output_tokens or 0
    longest = inputs + outputs - 1
    found: list[Fraction] = []

    def stall(k: int) -> Fraction:
        if k == inputs:
            return at_prompt
        if not found:
            try:
                long = outcome(replace(scenario, batch=scenario.dp, input_tokens=longest), kb)
            except ScenarioError as exc:
                raise ValueError(f"a {longest}-token prefill: {exc}") from None
            if long.ttft is None:
                raise ValueError(f"no prefill pass of {longest} tokens: {'; '.join(long.problems)}")
            overhead = next((Fraction(r.value) for r in long.rows if r.name == "overhead"), 0)
            found.append(long.ttft - overhead)
        return at_prompt + (found[0] - at_prompt) * (k - inputs) / (longest - inputs)

    return stall
