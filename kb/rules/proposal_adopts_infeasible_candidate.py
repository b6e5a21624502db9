"""A proposal must not adopt a placement candidate that cannot hold the state.

Feasibility comes first: the candidate a proposal adopts must fit on its devices
(`state_bytes / state_shards + replicated + reserve <= capacity` on every device
group). An infeasible candidate is a counterfactual, never a plan.

Why: seed 000: "A machine that cannot hold the required state is not a slow
reference; it is an infeasible counterfactual."

Bad:

    placement: placements/coherent-host-vs-two-hosts-70b
    candidate: two-hosts           # 70.55 GB + 12 GB reserve on an 80 GB host

Good:

    placement: placements/coherent-host-vs-two-hosts-8b
    candidate: two-hosts
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "ledger"
CODE = "LG008"
NAME = "proposal-adopts-infeasible-candidate"
SEVERITY = Severity.ERROR
HINT = "adopt a feasible candidate, or change the placement so it fits"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A proposal that fails its schema has no view and is not checked (SC001 reports it)."""
    proposals = kb.of_kind("proposal")
    if not proposals:  # nothing to check: the ledger's modules are not even imported
        return
    from kb.kinds import views
    from kb.ledger.feasibility import feasibility
    from kb.ledger.inputs import PlacementSpec, resolve_placement

    for record in proposals:
        proposal = views(kb).proposal(record)
        placement = kb.get(proposal.placement or "") if proposal else None
        if proposal is None or placement is None or placement.kind != "placement":
            continue
        spec = resolve_placement(placement, kb)
        if not isinstance(spec, PlacementSpec) or spec.gaps:
            continue  # LG004 (or the placement's schema findings) report what is missing
        option = next((c for c in spec.candidates if c.name == proposal.candidate), None)
        if option is None:
            continue
        fit = feasibility(spec.envelope, option)
        if not fit.feasible:
            yield found(
                CODE,
                SEVERITY,
                record.path,
                "/candidate",
                f"candidate {option.name!r} of {placement.id} cannot hold the state: "
                f"{'; '.join(fit.shortfalls())}",
                HINT,
            )
