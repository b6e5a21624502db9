"""A contradiction a record accepts is still contradicted by its measurement.

Why: `accepted: {reason}` lets a record keep a model its measurement
contradicts (shown red, with predicted, measured and error, and counted in the
record's verdict) without failing CI. It is a strict expected failure: when the
prediction comes back inside its band (or a bound holds again), because the
model, the binding or the receipt changed, the acceptance is stale, and
keeping it would hide that the miss is gone. The finding names both files.

Bad (the receipt now measures 42 us; the prediction of 38 us is within 25%):

    claims:
      - id: t-1mib
        kind: prediction
        of: t_ring
        bind: {...}
        measured: receipts/ar#results.0.latency
        band: {rel: 0.25}
        accepted: {reason: "no launch overhead term"}

Good (the acceptance dropped: the prediction is validated):

    claims:
      - id: t-1mib
        ...
        band: {rel: 0.25}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.ACCEPTED_NOT_CONTRADICTED
NAME = "accepted-not-contradicted"
SEVERITY = Severity.ERROR
HINT = "drop `accepted:` (the measurement no longer contradicts the claim) and bump the version"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
