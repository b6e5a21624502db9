"""The parts of a composed option that read no batch, derived once per mapping for the run.

A planner's pass prices each mapping of a model at every batch of its menus
(kb.sitegen.explorer), and `derive_option` (kb.ledger.workload) derives, for each,
parts the batch never enters: the weights per device, the KV bytes per token and
their read, the per-rank weight read, the per-layer overhead, the energy inputs, the
engine's per-sequence term and the tensor-parallel and stage-send transfers before
they are priced at a batch. They depend on the workload, the option's view and its
pointer alone, so a frozen knowledge base keeps them in the run's evaluation memo
(kb.equations.evalmemo `Evaluations.derived`, under the model record) and every
batch's derivation takes the same objects.

Only parts that a fresh reader derives without a gap are kept: a mapping that
records one derives them again in `derive_option`'s own order, so each gap lands
where it did and `_gap_once`'s one-finding-per-cause still holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kb.findings import pointer_join

if TYPE_CHECKING:
    from kb.kinds.placement import Option, Transfer
    from kb.ledger.parts import Part
    from kb.ledger.reader import InputReader
    from kb.ledger.workload import Power, StepModel, Workload


@dataclass(frozen=True)
class Fixed:
    """One mapping's batch-independent parts (kb.ledger.workload's names for them)."""

    weights: Part  # bytes per device
    kv: Part  # KV bytes per cached token per device
    t_w: Part  # the per-rank weight read
    t_kv: Part  # the per-sequence KV read at the context, over the stages in turn
    overhead: Part | None  # L*t_o
    energy: tuple[StepModel | None, Power | None, str]  # _energy_inputs
    per_sequence: Part | None  # L*t_s
    tp: Transfer | None  # the per-layer all-reduces, when tp > 1
    send: Transfer | None  # the stage sends, when pp > 1


def fixed_parts(res: InputReader, work: Workload, option: Option, pointer: str) -> Fixed | None:
    """The option's parts that read no batch, kept for the run; None: derive them in order.

    None too when the knowledge base is not frozen or the option cannot be a key.
    The question names the workload object itself (kept with the answer, so its id
    stays its own while the answer is kept) and the option's view by value.
    """
    from kb.equations.evalmemo import Unkeyable, evaluations, frozen

    memo = evaluations(res.kb)
    record = res.readable(work.model.id)
    if memo is None or record is None:
        return None
    try:
        question = ("fixed parts", id(work), pointer, frozen(option))
    except Unkeyable:
        return None
    kept, found = memo.derived(
        record, question, lambda: (work, _derived(res, work, option, pointer))
    )
    return found if kept is work else None


def _derived(res: InputReader, work: Workload, option: Option, pointer: str) -> Fixed | None:
    """Every fixed part, asked of a fresh reader; None when one is missing or records a gap."""
    from kb.ledger.reader import InputReader
    from kb.ledger.workload import (
        _energy_inputs,
        _kv_per_token,
        _kv_read,
        _overhead,
        _per_sequence_part,
        _stage_send,
        _tp_transfer,
        _weight_read,
        _weights,
    )

    deg = option.degrees
    assert deg is not None
    fresh = InputReader(res.kb)
    kv = _kv_per_token(fresh, work, deg, pointer_join(pointer, "degrees"))
    t_w = _weight_read(fresh, work, option, pointer)
    t_kv = _kv_read(fresh, work, option, kv, pointer) if kv is not None else None
    energy = _energy_inputs(fresh, work, option, pointer)
    tp = _tp_transfer(fresh, work, option, pointer) if deg.tp > 1 else None
    send = _stage_send(fresh, work, option, pointer) if deg.pp > 1 else None
    missing = (deg.tp > 1 and tp is None) or (deg.pp > 1 and send is None)
    if fresh.gaps or kv is None or t_w is None or t_kv is None or missing:
        return None
    overhead, per_sequence = _overhead(work), _per_sequence_part(work, option)
    return Fixed(_weights(work, deg), kv, t_w, t_kv, overhead, energy, per_sequence, tp, send)
