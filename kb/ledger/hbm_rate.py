"""The one place kb chooses the rate of an HBM stream (`hbm_streamed_rate`).

Declared in kb/data/end-to-end.json (issue 35, session 24): every stream a step reads from
HBM (the weight read, the KV-cache read, the MoE expert read, the unsharded weights' read)
is priced at the accelerator's measured achievable bandwidth, `memory.bandwidth_achieved`
(STREAM-type Triad with its receipt), where its record states one, else at the datasheet
`memory.bandwidth`, and the row says so. kb.ledger.scenario binds the option's useful rate
to the pointer `streamed_rate` returns, and kb.ledger.unsharded reads the same one, so no
reader picks its own.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.model import KnowledgeBase

SECTION = "hbm_streamed_rate"


@lru_cache(maxsize=1)
def declared() -> tuple[str, str, str]:
    """(measured field, datasheet field, the note said when the datasheet is used)."""
    from kb.resources import end_to_end

    return end_to_end(
        SECTION, lambda entry: (str(entry["field"]), str(entry["fallback"]), entry["fallback_note"])
    )


def streamed_rate(kb: KnowledgeBase, hardware: str) -> tuple[str, str]:
    """The HBM rate of `hardware` as an `id#field` pointer, and the note to say ('' if measured).

    The measured field where the record holds it as a quantity, else the datasheet field
    with the declared note; an unknown record gets the datasheet pointer (the evaluator
    then reports it unresolved, as before).
    """
    measured, datasheet, note = declared()
    record = kb.get(hardware)
    if record is not None and isinstance(record.get(measured), dict):
        return f"{hardware}#{measured}", ""
    return f"{hardware}#{datasheet}", note
