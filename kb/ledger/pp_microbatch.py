"""Pipeline micro-batches of a trtllm-bench run (end-to-end.json `pipeline_microbatches`).

TensorRT-LLM's PyTorch executor at pp_size > 1 runs `_executor_loop_pp` with pp_size
micro-batch slots: each turn it schedules a new batch from the active requests not in
flight, starts it on its stage and moves to the next slot, so pp_size micro-batches are in
flight at once, one on each stage in the steady state, each scheduled on its own (at most
trtllm-bench's max_batch_size, which finetune_setting sizes at the requests the cache holds
over pp). kb's composed step passes one batch through the stages in turn (kb.ledger.workload);
this module says which run is priced as pp streams of micro-batches instead and how its
clients split: a replica's C clients over pp streams of floor(C/pp) each, its N requests over
the streams as requests_over_dp splits them over replicas (kb.ledger.uneven_dp), and each
stream's step the composed pipeline step at its own micro-batch (kb.ledger.endtoend._finite).
Pure: no I/O beyond the packaged declaration.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from kb.ledger.pp_stages import describe, even, split, stage_bound

if TYPE_CHECKING:
    from kb.ledger.scenario import Outcome
    from kb.model import KnowledgeBase

# The assumption a priced row carries (the rule's `priced`, in one line).
NOTE = (
    "pp = {pp} micro-batches in flight (TensorRT-LLM's _executor_loop_pp, "
    "pipeline_microbatches): {streams} stream(s) of {clients} sequences, each stepping the "
    "composed pipeline step at its own micro-batch{rest}"
)
REST = "; {left} of the {clients} sequences the cache holds left out (floor(C/pp) per stream)"


@lru_cache(maxsize=1)
def declared() -> bool:
    """Whether end-to-end.json declares the rule (its `applies_to` and `reason` present)."""
    from kb.resources import end_to_end

    return end_to_end("pipeline_microbatches", _declared)


def _declared(entry: Any) -> bool:
    """The declaration's required keys, each a non-empty string."""
    keys = ("applies_to", "priced", "not_counted", "reason")
    if not all(isinstance(entry[k], str) and entry[k] for k in keys):
        raise ValueError("pipeline_microbatches needs applies_to, priced, not_counted, reason")
    return True


def lanes(pp: int, stepped: bool) -> int:
    """The micro-batch streams per replica: pp for a trtllm-bench run (`stepped`), else 1."""
    if pp < 1:
        raise ValueError("pp must be at least 1")
    return pp if stepped and pp > 1 and declared() else 1


def stream_clients(clients: int, dp: int, lanes_per_replica: int) -> int:
    """Each stream's sequences: a replica's clients over its streams, rounded down."""
    if min(clients, dp, lanes_per_replica) < 1:
        raise ValueError("clients, dp and lanes must be at least 1")
    return clients // (dp * lanes_per_replica)


def note(clients: int, dp: int, lanes_per_replica: int) -> str:
    """The row's assumption: the streams, their sequences and what the rounding leaves out."""
    per = stream_clients(clients, dp, lanes_per_replica)
    streams = dp * lanes_per_replica
    left = clients - per * streams
    rest = REST.format(left=left, clients=clients) if left else ""
    return NOTE.format(pp=lanes_per_replica, streams=streams, clients=per, rest=rest)


SEND = "pp-stage-send"  # the decode step's stage sends (kb.ledger.workload._stage_send)


def slowest_stage(at_c: Outcome, kb: KnowledgeBase) -> tuple[Outcome, str]:
    """A stream's step with pp micro-batches in flight: `stage_bound` of the composed pass.

    The pass is the outcome's decode step (`tpot`), the sends its exposed stage sends (the
    ledger's `exposed` row, by transfer). Unchanged, with no note, when the stages are equal.
    """
    s = at_c.scenario
    layers = _layers(kb, s.model)
    counts = split(layers, s.pp, s.engine) if layers and s.pp > 1 else None
    if counts is None or even(counts) or at_c.tpot is None:
        return at_c, ""
    sends = sum(
        (
            Fraction(v)
            for r in at_c.rows
            if r.name == "exposed"
            for n, v in r.inputs.items()
            if n == SEND
        ),
        Fraction(0),
    )
    turn = stage_bound(at_c.tpot, sends, layers, counts)
    note = (
        f"stages of {describe(counts)} ({s.engine}'s split, pipeline_stage_split): a "
        f"micro-batch's turn is max(pass {float(at_c.tpot) * 1e3:.4g} ms, pp x the slowest "
        f"stage {float(turn) * 1e3:.4g} ms)"
        if turn > at_c.tpot
        else f"stages of {describe(counts)} ({s.engine}'s split, pipeline_stage_split): the "
        f"pass {float(at_c.tpot) * 1e3:.4g} ms is longer than pp x the slowest stage"
    )
    return replace(at_c, tpot=turn), note


def _layers(kb: KnowledgeBase, model: str) -> int:
    """The model record's layers (0 when it states none)."""
    record = kb.get(model)
    value = record.get("geometry.layers") if record is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
