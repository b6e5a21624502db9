"""A measured row of a composed placement must agree with the row kb derives, within rel_tol.

A composed placement (an envelope `workload`, docs/ledger.md) derives every ledger
row from the flop classes. An option may replace a derived row (`useful`,
`overhead`, `exposed`) with a measured value under `measured_terms`, backed by its
receipt; the ledger then shows the row as measured and keeps the derived value beside
it. Where the two differ by more than `rel_tol` (default 0.25, the band kb's
predictions use) this rule says so: either the measurement is of other conditions,
or the composition misses something there. Nothing is silently preferred.

Why: a hand-entered term that nobody compares with the model hides the model's
error where it matters most, on the rows a receipt covers.

Bad:

    measured_terms:
      overhead: {time: {value: 20, unit: ms, basis: measured, source: sources/x},
                 receipt: receipts/x}          # kb derives 9.168 ms

Good:

    measured_terms:
      overhead: {time: {value: 9.5, unit: ms, basis: measured, source: sources/x},
                 receipt: receipts/x}
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "ledger"
CODE = "LG010"
NAME = "measured-term-disagrees"
SEVERITY = Severity.WARNING
HINT = (
    "check that the receipt's conditions are the placement's; if they are, the composition "
    "misses something there: say what in the note, or widen rel_tol with a reason"
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """Placements that fail their schema or have gaps are not checked (SC001, LG004 say why)."""
    placements = kb.of_kind("placement")
    if not placements:  # nothing to resolve: the ledger's modules are not even imported
        return
    from kb.ledger.analysis import analyze_spec
    from kb.ledger.inputs import PlacementSpec, resolve_placement

    for record in placements:
        spec = resolve_placement(record, kb)
        if not isinstance(spec, PlacementSpec) or spec.gaps:
            continue
        if not any(option.measured for option in spec.options):
            continue
        for side in analyze_spec(spec).sides:
            if side.ledger is None:
                continue  # infeasible: no ledger to compare with
            for row in side.ledger.rows:
                derived = row.inputs.get("derived")
                if not isinstance(derived, Fraction) or derived <= 0:
                    continue
                tol = row.inputs["rel_tol"]
                if abs(row.value - derived) <= tol * derived:
                    continue
                yield found(
                    CODE,
                    SEVERITY,
                    record.path,
                    str(row.inputs["pointer"]),
                    f"{side.option.name}: measured {row.name} {float(row.value):.6g} s "
                    f"({row.receipts[0]}) differs from the derived {float(derived):.6g} s by "
                    f"{float((row.value - derived) / derived):+.1%} (rel_tol {float(tol):g})",
                    HINT,
                )
