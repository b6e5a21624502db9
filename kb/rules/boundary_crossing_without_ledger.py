"""A proposal that crosses a memory, device, host or network boundary must name its placement.

The placement carries what such a change must be judged by: feasibility of every
option, the tax ledger, the comparison against an explicit reference and the
break-even envelope (`kb ledger <placement>` prints them).

Why: seed 000: "require tuning proposals that cross a memory/device/host boundary to
include the resulting feasibility and tax ledger". Aggregate bytes or FLOPS across
a boundary do not imply equivalence; the tax has to be on the record.

Bad:

    kind: proposal
    crosses: [host]
    text: Shard the 70B model across two hosts over 400GbE.

Good:

    kind: proposal
    crosses: [host]
    placement: placements/coherent-host-vs-two-hosts-70b
    candidate: two-hosts
    text: Shard the 70B model across two hosts over 400GbE.
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "views"
CODE = "LG002"
NAME = "boundary-crossing-without-ledger"
SEVERITY = Severity.ERROR
HINT = (
    "write the placement (envelope, reference, candidates) and reference "
    "it with `placement:`; check it with `kb ledger`"
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A proposal that fails its schema has no view and is not checked (SC001 reports it)."""
    checked = views(kb)
    for record in kb.of_kind("proposal"):
        proposal = checked.proposal(record) if kb.in_focus(record) else None
        if proposal is None or not proposal.crosses or proposal.placement:
            continue
        yield found(
            CODE,
            SEVERITY,
            record.path,
            "/crosses",
            f"proposal crosses {', '.join(proposal.crosses)} boundaries but names "
            "no placement (expected placement: placements/<id>)",
            HINT,
        )
