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

from collections.abc import Iterator, Mapping

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "references"
CODE = "LG007"
NAME = "proposal-candidate-unknown"
SEVERITY = Severity.ERROR
HINT = "name the placement candidate this proposal adopts"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb.of_kind("proposal"):
        placement = kb.get(str(record.data.get("placement", "")))
        candidate = record.data.get("candidate")
        if placement is None or placement.kind != "placement" or candidate is None:
            continue
        cands = placement.data.get("candidates")
        names = (
            [str(c.get("name")) for c in cands if isinstance(c, Mapping)]
            if isinstance(cands, list)
            else []
        )
        if str(candidate) not in names:
            yield found(
                CODE,
                SEVERITY,
                record.path,
                "/candidate",
                f"candidate {candidate!r} is not a candidate of {placement.id} "
                f"(expected one of: {', '.join(names) or 'none'})",
                HINT,
            )
