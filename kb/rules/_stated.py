"""Stated ratios of placements and proposals, from their typed views.

Shared by LG001 and LG006: each yields `(pointer, candidate name, ratio)`. Only a
record the schema stage passed has a view (kb.kinds); one that fails its schema
states nothing these rules check (its schema findings fail the run).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kb.findings import pointer_join

if TYPE_CHECKING:  # types only: a run without placements does not import their module
    from kb.kinds.placement import Placement, StatedRatio
    from kb.kinds.proposal import Proposal

Stated = tuple[str, str, "StatedRatio"]


def placement_ratios(placement: Placement) -> Iterator[Stated]:
    """Every stated ratio of a placement's candidates."""
    for i, cand in enumerate(placement.candidates):
        for j, ratio in enumerate(cand.stated_ratios):
            yield pointer_join("/candidates", i, "stated_ratios", j), cand.name, ratio


def proposal_ratios(proposal: Proposal) -> Iterator[Stated]:
    """Every stated ratio of a proposal, with the candidate it names (or the proposal's)."""
    for j, ratio in enumerate(proposal.stated_ratios):
        yield pointer_join("/stated_ratios", j), proposal.ratio_candidate(ratio), ratio
