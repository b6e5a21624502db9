"""A stated ratio must agree with the ratio kb computes from the placement's ledger.

`stated_ratios` on a placement candidate or on a proposal are checked, not trusted:
kb recomputes the candidate/reference ratio of the named dimension (latency,
throughput, cost, energy, headroom, slo_slack; `efficiency` is T_r/T_c) and compares it
with the stated value under `rel_tol` (default 1%). A ratio kb cannot compute because
an input is missing (no cost rate, no power) is reported too. Ratios against an
infeasible side are LG001's business.

Why: a quantitative statement in a record is a claim; kb re-derives every claim it can.

Bad:

    candidates:
      - name: two-hosts            # kb computes latency ratio 0.5643
        stated_ratios: [{dimension: latency, value: 0.5}]

Good:

    candidates:
      - name: two-hosts
        stated_ratios: [{dimension: latency, value: 0.5643}]
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.model import KnowledgeBase, Record
from kb.rules._base import found
from kb.rules._stated import Stated, placement_ratios, proposal_ratios

if TYPE_CHECKING:  # types only: a run without placements does not import their module
    from kb.kinds.placement import StatedRatio

READS = "ledger"
CODE = "LG006"
NAME = "stated-ratio-mismatch"
SEVERITY = Severity.ERROR
HINT = "state the computed ratio, or fix the placement's inputs"
DEFAULT_REL_TOL = Fraction(1, 100)


def computed_ratios(record: Record, kb: KnowledgeBase) -> dict[str, dict[str, Any]] | None:
    """Candidate name -> dimension -> computed ratio (None: not computable), feasible only."""
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import PlacementSpec, resolve_placement

    spec = resolve_placement(record, kb)
    if not isinstance(spec, PlacementSpec) or spec.gaps:
        return None
    out: dict[str, dict[str, Any]] = {}
    for comparison in analyze_spec(spec).comparisons:
        if not comparison.withheld:
            ratios = {d.name: d.ratio for d in comparison.dimensions}
            out[comparison.candidate] = ratios | {"efficiency": comparison.efficiency}
    return out


def _mismatch(stated: StatedRatio, ratios: dict[str, Any]) -> str:
    """Describe the disagreement, or '' when the stated ratio holds."""
    from kb.ledger.quantities import QuantityError, exact

    computed = ratios.get(stated.dimension)
    if computed is None:
        return f"{stated.dimension} ratio cannot be computed: an input of that dimension is missing"
    try:
        value = exact(stated.value)
        tol = DEFAULT_REL_TOL if stated.rel_tol is None else exact(stated.rel_tol)
    except QuantityError:
        return ""  # a non-finite number, which the schema's `number` lets through (LD rules)
    if abs(value - computed) <= tol * abs(computed):
        return ""
    return (
        f"{stated.dimension} ratio stated as {float(value):g} but the ledger gives "
        f"{float(computed):.6g} (rel_tol {float(tol):g})"
    )


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Records that fail their schema have no view and are not checked (SC001 reports them)."""
    checked = views(kb)
    for record in kb.of_kind("placement"):
        view = checked.placement(record)
        stated = list(placement_ratios(view)) if view else []
        computed = computed_ratios(record, kb) if stated else None
        yield from _findings(record, stated, computed or {}, "")
    for record in kb.of_kind("proposal"):
        proposal = checked.proposal(record)
        placement = kb.get(proposal.placement or "") if proposal else None
        if proposal is None or placement is None or placement.kind != "placement":
            continue
        stated = list(proposal_ratios(proposal))
        if not stated or not checked.passed(placement):
            continue
        computed = computed_ratios(placement, kb) or {}
        yield from _findings(record, stated, computed, f" (placement {placement.id})")


def _findings(
    record: Record, stated: list[Stated], computed: dict[str, dict[str, Any]], where: str
) -> Iterator[Finding]:
    for pointer, candidate, ratio in stated:
        if candidate not in computed:
            continue  # infeasible (LG001), unknown, or inputs incomplete (LG004)
        message = _mismatch(ratio, computed[candidate])
        if message:
            yield found(
                CODE,
                SEVERITY,
                record.path,
                pointer,
                f"{message}{where}, candidate {candidate}",
                HINT,
            )
