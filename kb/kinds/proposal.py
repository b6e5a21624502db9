"""A schema-valid proposal, typed: the placement it adopts a candidate of, and its ratios.

Built only for a record the schema stage passed (kb.kinds.views).
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.kinds.placement import StatedRatio, stated_ratios
from kb.model import Record


@dataclass(frozen=True)
class Proposal:
    id: str
    crosses: tuple[str, ...]  # memory, device, host, network
    placement: str | None
    candidate: str | None
    stated_ratios: tuple[StatedRatio, ...]

    def ratio_candidate(self, ratio: StatedRatio) -> str:
        """The candidate a stated ratio is about: its own `candidate`, else the proposal's."""
        return ratio.candidate or self.candidate or ""


def proposal(record: Record) -> Proposal:
    """The view of a schema-valid proposal record (kb.kinds.views builds it)."""
    data = record.data
    return Proposal(
        id=record.id,
        crosses=tuple(str(c) for c in data["crosses"]),
        placement=data.get("placement"),
        candidate=data.get("candidate"),
        stated_ratios=stated_ratios(data.get("stated_ratios", ())),
    )
