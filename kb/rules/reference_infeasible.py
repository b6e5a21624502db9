"""A placement's explicit reference must be feasible: it must hold the envelope's state.

Feasibility comes first (seed 000): state per device, `state_bytes / state_shards +
replicated`, plus each device's reserve must fit in its capacity. A candidate may be
infeasible (it is reported as a counterfactual), but the reference is what every
candidate is measured against, so an infeasible reference leaves nothing to compare.

Why: "A machine that cannot hold the required state is not a slow reference; it is an
infeasible counterfactual, so no speedup or penalty ratio is emitted."

Bad:

    envelope: {state_bytes: {value: 141, unit: GB, ...}, ...}
    reference:
      name: one-gpu
      devices: [{name: gpu, hardware: hardware/nvidia-h100-sxm}]   # 80 GB
      state_shards: 1

Good:

    reference:
      name: two-gpus
      devices: [{name: gpu, hardware: hardware/nvidia-h100-sxm, count: 2}]
      state_shards: 2                                              # 70.5 GB each
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "ledger"
CODE = "LG003"
NAME = "reference-infeasible"
SEVERITY = Severity.ERROR
HINT = (
    "choose a reference that holds the state; keep the infeasible machine "
    "as a candidate (an infeasible counterfactual)"
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    placements = kb.of_kind("placement")
    if not placements:  # nothing to resolve: the ledger's modules are not even imported
        return
    from kb.ledger.feasibility import feasibility
    from kb.ledger.inputs import PlacementSpec, resolve_placement

    for record in placements:
        spec = resolve_placement(record, kb)
        if not isinstance(spec, PlacementSpec) or spec.gaps:
            continue  # LG004 reports what is missing
        fit = feasibility(spec.envelope, spec.reference)
        if not fit.feasible:
            yield found(
                CODE,
                SEVERITY,
                record.path,
                "/reference",
                f"reference {spec.reference.name!r} cannot hold the state: "
                f"{'; '.join(fit.shortfalls())}",
                HINT,
            )
