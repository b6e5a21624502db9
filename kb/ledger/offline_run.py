"""vLLM's offline benchmark_throughput, priced as a finite run (issue 35, session 17).

kb/data/end-to-end.json `offline_throughput` declares the rule: benchmark_throughput
adds all N requests to the engine at once (llm.generate over every prompt) with
--max-num-seqs N, so the run is kb.ledger.finite_run's with C = N clients; its
'Throughput (tokens/s)' is read as the total (input + output) tokens over the run's
duration. The V1 scheduler preempts and recomputes a request when the KV blocks run
out, which kb does not simulate: a run is priced only when the engine's pool holds
every request's whole sequence. This module holds the two pieces the rule adds to the
finite run: which rows it applies to, and that capacity check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kb.ledger.scenario import Scenario, ScenarioError

if TYPE_CHECKING:
    from kb.model import KnowledgeBase


def offline_row(row: Mapping[str, Any]) -> bool:
    """A row of an offline run: every one of its `prompts` sent at once (`concurrency`)."""
    prompts, clients = row.get("prompts"), row.get("concurrency")
    return isinstance(prompts, int) and not isinstance(prompts, bool) and prompts == clients


def _blocks(tokens: int, block: int) -> int:
    return -(-tokens // block)


def unheld(kb: KnowledgeBase, scenario: Scenario) -> str | None:
    """Why the pool cannot hold every whole sequence of the run (None: it can).

    The pool is the composed feasibility's (kb.ledger.capacity): per replica, in whole
    blocks of the engine; each of the batch/dp requests of a replica needs
    ceil((input + output)/block) blocks by its last token.
    """
    from kb.ledger.capacity import capacity

    try:
        found = capacity(scenario, kb)
    except ScenarioError as exc:
        return str(exc)
    block = found.block_tokens
    sequence = (scenario.input_tokens or 0) + (scenario.output_tokens or 0)
    per_replica = scenario.batch // scenario.dp
    needed = per_replica * _blocks(sequence, block)
    have = found.cached_tokens // block
    if needed <= have:
        return None
    return (
        f"the engine's KV pool holds {found.cached_tokens:,} tokens per replica "
        f"({have:,} blocks of {block}): {have // _blocks(sequence, block):,} of the "
        f"{per_replica:,} whole {sequence}-token sequences; vLLM then preempts and recomputes "
        "requests, which kb does not simulate (offline_throughput.capacity)"
    )
