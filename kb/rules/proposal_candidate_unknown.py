"""A proposal's `candidate` must name one of its placement's candidates.

The candidate is the option the proposal adopts; its ledger and comparison are what the
proposal is judged by. A name the placement does not have (or the reference's name)
leaves the proposal without a ledger.

Why: seed 000 requires a boundary-crossing proposal to carry "the resulting
feasibility and tax ledger"; a misspelled candidate silently points at nothing.

Bad:

    placement: placements/coherent-host-vs-two-hosts-8b
    candidate: two-host            # the placement's candidate is two-hosts

Good:

    placement: placements/coherent-host-vs-two-hosts-8b
    candidate: two-hosts
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "ledger"
CODE = "LG007"
NAME = "proposal-candidate-unknown"
SEVERITY = Severity.ERROR
HINT = "name the placement candidate this proposal adopts"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Records that fail their schema have no view and are not checked (SC001 reports them)."""
    checked = views(kb)
    for record in kb.of_kind("proposal"):
        proposal = checked.proposal(record)
        placement = kb.get(proposal.placement or "") if proposal else None
        if proposal is None or placement is None or placement.kind != "placement":
            continue
        candidate, view = proposal.candidate, checked.placement(placement)
        if candidate is None or view is None:
            continue
        names = [c.name for c in view.candidates]
        if candidate not in names:
            yield found(
                CODE,
                SEVERITY,
                record.path,
                "/candidate",
                f"candidate {candidate!r} is not a candidate of {placement.id} "
                f"(expected one of: {', '.join(names) or 'none'})",
                HINT,
            )
