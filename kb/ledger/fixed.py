"""A mapping's batch-independent parts, kept once per mapping for the run.

A planner's pass prices each mapping of a model at every batch of its menus
(kb.sitegen.explorer), and `derive_option` (kb.ledger.workload) derives, for each,
parts the batch never enters: the weights per device, the KV bytes per token and
their read, the per-rank weight read, the per-layer overhead, the energy inputs, the
engine's per-sequence term and the tensor-parallel and stage-send transfers before
they are priced at a batch (kb.ledger.workload `Fixed`). They depend on the
workload, the option's view and its pointer alone, so a frozen knowledge base keeps
them in the run's evaluation memo (kb.equations.evalmemo `Evaluations.derived`,
under the model record) and every batch's derivation takes the same objects.

This module is only that keeping: what is kept, and how it is derived, is
kb.ledger.workload's (so the import runs one way, workload -> fixed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from kb.kinds.placement import Option
    from kb.ledger.reader import InputReader

T = TypeVar("T")


def kept_for_run(
    res: InputReader,
    model_id: str,
    owner: object,
    option: Option,
    pointer: str,
    derive: Callable[[], T | None],
) -> T | None:
    """`derive()` for this owner (the workload object), option and pointer, kept for the run.

    None when the knowledge base is not frozen or the option cannot be a key: the
    caller then derives the parts in order. The question names `owner` itself (kept
    with the answer, so its id stays its own while the answer is kept) and the
    option's view by value.
    """
    from kb.equations.evalmemo import Unkeyable, evaluations, frozen

    memo = evaluations(res.kb)
    record = res.readable(model_id)
    if memo is None or record is None:
        return None
    try:
        question = ("fixed parts", id(owner), pointer, frozen(option))
    except Unkeyable:
        return None
    kept, found = memo.derived(record, question, lambda: (owner, derive()))
    return found if kept is owner else None
