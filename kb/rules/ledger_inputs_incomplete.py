"""A placement must give the ledger every input it needs, each resolvable and in the right unit.

Each transfer needs a link record with a per-direction bandwidth, a link latency (its
own `link_latency` or the link record's `latency`), a message size in bytes; each
option needs devices with a capacity (explicit or from the accelerator record) and a
useful-work rate; bindings must land on quantities with the expected dimension.

Why: a ledger computed from a silently missing input is a made-up number. kb never
assumes a zero latency or a default bandwidth; it says what is missing, and where.

A placement that fails its schema is not computed, and this rule says nothing on it:
its schema findings (SC001, LD009, LD010) already fail the run. When an input sits in
a record kb could not read or that fails its schema (a bound accelerator, the link,
a receipt that might price a transfer), the placement gets one finding naming that
record, not one per input it would have fed (docs/ledger.md).

Bad:

    transfers:
      - {name: tp, pattern: all-reduce, link: interconnects/pcie-4-x16, ranks: 2,
         count: 160, message_size: {value: 16, unit: kB, basis: derived, source: sources/x}}
    # and interconnects/pcie-4-x16 states no latency

Good:

    transfers:
      - {name: tp, pattern: all-reduce, link: interconnects/pcie-4-x16, ranks: 2,
         count: 160, message_size: {value: 16, unit: kB, basis: derived, source: sources/x},
         link_latency: {value: 10, unit: us, basis: unverified, note: "assumed; no receipt"}}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

if TYPE_CHECKING:
    from kb.ledger.inputs import PlacementSpec, Unresolved

READS = "ledger"
CODE = "LG004"
NAME = "ledger-inputs-incomplete"
SEVERITY = Severity.ERROR
HINT = (
    "state the missing input as a quantity with its basis, or bind it to a "
    "record field that has one"
)


def gap_findings(unresolved: PlacementSpec | Unresolved) -> list[Finding]:
    """One finding per gap of a placement (none when resolved; also used by `kb ledger`).

    When an input is in a record kb cannot compute from (the tree has it but kb could
    not read it, or it fails its schema), that record's own finding is the root cause:
    the placement gets one finding naming it, not one per input it would have fed.
    """
    blocked = [gap for gap in unresolved.gaps if gap.blocked_by]
    if blocked:
        first = blocked[0]
        message = (
            f"cannot be priced while {first.blocked_by} {first.cause} (its own finding says why)"
        )
        hint = f"fix {first.blocked_by} first"
        return [found(CODE, SEVERITY, unresolved.path, first.pointer, message, hint)]
    return [
        found(
            CODE,
            SEVERITY,
            unresolved.path,
            gap.pointer,
            gap.message,
            HINT,
        )
        for gap in unresolved.gaps
    ]


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    placements = kb.of_kind("placement")
    if not placements:  # nothing to resolve: the ledger's modules are not even imported
        return
    from kb.kinds import views
    from kb.ledger.inputs import resolve_placement

    checked = views(kb)
    for record in placements:
        if checked.passed(record):  # else not computed: its schema findings say why
            yield from gap_findings(resolve_placement(record, kb))
