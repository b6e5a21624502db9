"""A placement option must not claim more overlap than the useful compute that could hide it.

Each transfer's `overlap` is useful compute that runs while the transfer is in flight.
The ledger carves every overlap window out of `Tuseful` (`Tuseful = useful_work /
(parallel * rate)`), so windows that add up to more than `Tuseful` are cut back; this
rule reports the claim so the record can be corrected rather than silently trimmed.

Why: seed 000: a calibration "must not double-count hidden communication". Hiding two
transfers behind the same compute, or behind compute that does not exist, understates
the tax.

Bad:

    useful: {rate: {value: 500, unit: GB/s, basis: unverified}}   # Tuseful = 0.2 s
    transfers:
      - {name: a, ..., overlap: {value: 150, unit: ms, basis: unverified}}
      - {name: b, ..., overlap: {value: 100, unit: ms, basis: unverified}}   # 250 ms > 200 ms

Good:

    transfers:
      - {name: a, ..., overlap: {value: 150, unit: ms, basis: unverified}}
      - {name: b, ..., overlap: {value: 50, unit: ms, basis: unverified}}
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from kb.findings import Finding, Severity, pointer_join
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "ledger"
CODE = "LG005"
NAME = "overlap-exceeds-useful-compute"
SEVERITY = Severity.WARNING
HINT = "reduce the overlaps so that together they fit in Tuseful"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    placements = kb.of_kind("placement")
    if not placements:  # nothing to resolve: the ledger's modules are not even imported
        return
    from kb.ledger.inputs import PlacementSpec, resolve_placement
    from kb.ledger.ledger import useful_row

    for record in placements:
        spec = resolve_placement(record, kb)
        if not isinstance(spec, PlacementSpec) or spec.gaps:
            continue  # LG004 reports what is missing
        for option in spec.options:
            useful = useful_row(spec.envelope, option).value
            claimed = Fraction(0)
            for index, transfer in enumerate(option.transfers):
                claimed += transfer.overlap.value if transfer.overlap else 0
                if claimed > useful:
                    yield found(
                        CODE,
                        SEVERITY,
                        record.path,
                        pointer_join(option.pointer, "transfers", index, "overlap"),
                        f"overlap claimed up to {transfer.name!r} is {float(claimed):g} s "
                        f"but {option.name!r} has only {float(useful):g} s of useful "
                        "compute to hide it",
                        HINT,
                    )
                    break
