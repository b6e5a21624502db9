"""A placement must give the ledger every input it needs, each resolvable and in the right unit.

Each transfer needs a link record with a per-direction bandwidth, a link latency (its
own `link_latency` or the link record's `latency`), a message size in bytes; each
option needs devices with a capacity (explicit or from the accelerator record) and a
useful-work rate; bindings must land on quantities with the expected dimension.

Why: a ledger computed from a silently missing input is a made-up number. kb never
assumes a zero latency or a default bandwidth; it says what is missing, and where.

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

    When an input is in a record the tree has but kb could not read, that record's
    own finding is the root cause: the placement gets one finding naming it, not one
    per input the missing record would have fed.
    """
    unreadable = [gap for gap in unresolved.gaps if gap.unreadable]
    if unreadable:
        first = unreadable[0]
        message = (
            f"cannot be priced while {first.unreadable} cannot be read (its own finding says why)"
        )
        hint = f"fix {first.unreadable} first"
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
    from kb.ledger.inputs import resolve_placement

    for record in kb.of_kind("placement"):
        result = resolve_placement(record, kb)
        for finding in gap_findings(result):
            if not _placeholder(record.data, finding.location.pointer):
                yield finding


def _placeholder(data: object, pointer: str) -> bool:
    """Whether the input at `pointer` (or a block on the way) holds a `~` placeholder.

    The schema reports a placeholder left unfilled at its line; the gap is the same cause.
    """
    from kb.findings import pointer_parts

    node = data
    for part in pointer_parts(pointer):
        if isinstance(node, dict) and part in node:  # a missing input is a gap, not a `~`
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
        if node is None:
            return True
        if isinstance(node, dict) and any(v is None for v in node.values()):
            return True
    return False
