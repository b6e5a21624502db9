"""A record must not state a speedup or penalty ratio against an infeasible placement.

A stated ratio (`stated_ratios` on a placement candidate or on a proposal) compares a
candidate with the placement's reference. When either side cannot hold the state, the
comparison is an infeasible counterfactual and no ratio exists.

Why: seed 000: "A machine that cannot hold the required state is not a slow reference;
it is an infeasible counterfactual, so no speedup or penalty ratio is emitted."

Bad:

    candidates:
      - name: two-hosts            # each host is short of memory
        stated_ratios: [{dimension: latency, value: 0.6}]

Good:

    candidates:
      - name: two-hosts            # infeasible: state it, and state no ratio
        note: "does not fit: 85 GB + 20 GB reserve on a 100 GB host"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.model import KnowledgeBase, Record
from kb.rules._base import found
from kb.rules._stated import Stated, placement_ratios, proposal_ratios

if TYPE_CHECKING:  # types only: a run without placements does not import their module
    from kb.kinds.placement import Placement

READS = "ledger"
CODE = "LG001"
NAME = "ratio-against-infeasible-placement"
SEVERITY = Severity.ERROR
HINT = "remove the ratio; report the infeasible side as a counterfactual with what does not fit"


def _infeasible(record: Record, kb: KnowledgeBase) -> dict[str, str] | None:
    """Infeasible option names -> shortfall text, or None when the inputs are incomplete."""
    from kb.ledger.feasibility import feasibility
    from kb.ledger.inputs import PlacementSpec, resolve_placement

    spec = resolve_placement(record, kb)
    if not isinstance(spec, PlacementSpec) or spec.gaps:
        return None
    fits = [feasibility(spec.envelope, option) for option in spec.options]
    return {f.option: "; ".join(f.shortfalls()) for f in fits if not f.feasible}


def _blocking(bad: dict[str, str], reference: str, candidate: str) -> str:
    names = [n for n in (reference, candidate) if n in bad]
    return ", ".join(f"{n} ({bad[n]})" for n in names)


def _placement_findings(record: Record, view: Placement, kb: KnowledgeBase) -> Iterator[Finding]:
    stated = list(placement_ratios(view))
    bad = _infeasible(record, kb) if stated else None
    if not bad:
        return
    yield from _ratio_findings(record, view, stated, bad, "")


def _proposal_findings(record: Record, kb: KnowledgeBase) -> Iterator[Finding]:
    checked = views(kb)
    proposal = checked.proposal(record)
    placement = kb.get(proposal.placement or "") if proposal else None
    if proposal is None or placement is None or placement.kind != "placement":
        return
    view = checked.placement(placement)
    stated = list(proposal_ratios(proposal))
    if view is None or not stated:
        return
    bad = _infeasible(placement, kb)
    if not bad:
        return
    yield from _ratio_findings(record, view, stated, bad, f" in {placement.id}")


def _ratio_findings(
    record: Record, placement: Placement, stated: list[Stated], bad: dict[str, str], where: str
) -> Iterator[Finding]:
    """One finding per stated ratio whose reference or candidate cannot hold the state."""
    for pointer, candidate, _ in stated:
        blocking = _blocking(bad, placement.reference.name, candidate)
        if blocking:
            message = f"ratio stated against an infeasible placement{where}: {blocking}"
            yield found(CODE, SEVERITY, record.path, pointer, message, HINT)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Records that fail their schema have no view and are not checked (SC001 reports them)."""
    checked = views(kb)
    for record in kb.of_kind("placement"):
        view = checked.placement(record)
        if view is not None:
            yield from _placement_findings(record, view, kb)
    for record in kb.of_kind("proposal"):
        yield from _proposal_findings(record, kb)
