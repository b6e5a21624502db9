"""The memory side of a scenario: what its feasibility counts, per device, as figures.

kb.ledger.feasibility decides whether a composed option fits; this module hands the
same figures to the end-to-end rows that measure memory rather than time (issue 35
item 6, kb.ledger.endtoend): the weights per device, the KV bytes per cached token per
device, the device's capacity, the engine's reserve and workspace, and the data-parallel
replicas. Nothing is computed twice: the figures are those of the scenario's own
synthesized placement (kb.ledger.scenario), resolved by kb.ledger.inputs, read off the
option's `derived` state exactly as `_composed_fit` reads them.

From them:

- `pool`: the bytes each device keeps for the KV cache, `capacity - reserve - weights
  - workspace` (with an engine that states its `memory`, vLLM's "Available KV cache");
- `cached_tokens`: the tokens that pool holds, in whole blocks of the engine
  (`floor(pool / (kv_per_token * block)) * block`; a token's cache is split over the
  tensor-parallel ranks, so every device holds its share of every token);
- `max_concurrency(context)`: sequences of `context` tokens the pool holds, as vLLM's
  start-up line "Maximum concurrency for N tokens per request" reports it (the quotient
  `cached_tokens / context`, times the data-parallel replicas);
- `max_load_batch(...)`: the batch an offline maximum-load run reaches (the declared
  `assumed.max_load_batch` of kb/data/end-to-end.json: a share of the memory left after
  the weights, whole sequences admitted, capped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from kb.ledger.scenario import Scenario, ScenarioError, scenario_record

if TYPE_CHECKING:
    from kb.model import KnowledgeBase


@dataclass(frozen=True)
class Capacity:
    """One device of a scenario, as its feasibility counts it (bytes)."""

    weights: Fraction  # per device
    kv_per_token: Fraction  # KV bytes per cached token per device
    capacity: Fraction  # as the device reports it
    reserve: Fraction  # the device's stated reserve, or the engine's if larger
    workspace: Fraction  # the engine's activations and buffers (0: not counted)
    block_tokens: int  # tokens per KV block (1: no paging stated)
    dp: int  # data-parallel replicas
    paging: str  # the engine whose paging was used, '' if none

    @property
    def pool(self) -> Fraction:
        """Bytes per device left for the KV cache (negative: the weights do not fit)."""
        return self.capacity - self.reserve - self.weights - self.workspace

    @property
    def cached_tokens(self) -> int:
        """Tokens the pool holds, in whole blocks (0 when nothing fits)."""
        if self.pool <= 0 or self.kv_per_token <= 0:
            return 0
        blocks = math.floor(self.pool / (self.kv_per_token * self.block_tokens))
        return blocks * self.block_tokens

    def max_concurrency(self, context: int) -> Fraction:
        """Sequences of `context` tokens the pools of all replicas hold (a quotient)."""
        return Fraction(self.cached_tokens * self.dp, context)

    def max_load_batch(self, sequence_tokens: int, fraction: Fraction, cap: int) -> int:
        """The batch of an offline maximum-load run: whole sequences in a share of the memory.

        `fraction` of each device's memory left after the weights holds the KV cache;
        a request is admitted only with room for all its `sequence_tokens`; the batch is
        that many sequences per replica times the replicas, at most `cap`.
        """
        free = fraction * (self.capacity - self.weights)
        per_sequence = self.kv_per_token * sequence_tokens
        if free <= 0 or per_sequence <= 0:
            return 0
        return min(math.floor(free / per_sequence), cap // self.dp) * self.dp


def capacity(scenario: Scenario, kb: KnowledgeBase) -> Capacity:
    """The scenario's device figures (ScenarioError when its placement does not resolve)."""
    from kb.kinds.placement import placement
    from kb.ledger.inputs import Unresolved, resolve_view
    from kb.ledger.scenario import _feasibility_probe

    # feasibility reads no link: the probe gives every link a latency no time is read from
    record = _feasibility_probe(scenario_record(scenario, kb))
    spec = resolve_view(placement(record), record, kb)
    if isinstance(spec, Unresolved):
        raise ScenarioError("the scenario's placement does not resolve")
    option = spec.options[0]
    derived = option.derived
    if derived is None:
        raise ScenarioError("the scenario derives no state (no workload)")
    work = spec.envelope.workload
    paging = work.paging if work is not None else None
    devices = option.devices
    if not devices:
        raise ScenarioError("the scenario has no devices")
    group = devices[0]
    have = group.capacity.value
    reserve = group.reserve.value if group.reserve else Fraction(0)
    if paging is not None:
        reserve = max(reserve, paging.reserve(have))
    return Capacity(
        weights=Fraction(derived.weights.value),
        kv_per_token=Fraction(derived.kv_per_token.value),
        capacity=Fraction(have),
        reserve=Fraction(reserve),
        workspace=Fraction(paging.workspace) if paging is not None else Fraction(0),
        block_tokens=paging.block_tokens if paging is not None else 1,
        dp=derived.degrees.dp,
        paging=paging.describe() if paging is not None else "",
    )


# What an end-to-end row measures about memory (its `measures`) -> the figure's unit.
MEMORY_MEASURES = {
    "weight_memory_per_device": "B",
    "kv_pool_per_device": "B",
    "kv_pool_tokens": "1",
    "max_concurrency": "1",
}


def memory_prediction(measures: str, found: Capacity, context: int | None) -> Fraction | None:
    """The figure a memory row measures, from the scenario's device (None: not this kind).

    `max_concurrency` needs the context a request is sized for (the row's input tokens:
    vLLM's "Maximum concurrency for N tokens per request"); without one, None.
    """
    if measures == "weight_memory_per_device":
        return found.weights
    if measures == "kv_pool_per_device":
        return found.pool
    if measures == "kv_pool_tokens":
        return Fraction(found.cached_tokens)
    if measures == "max_concurrency" and context:
        return found.max_concurrency(context)
    return None
