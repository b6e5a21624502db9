"""Every prediction lies within its band of the measurement it names; every bound holds.

Why: consistency is not truth. A prediction (`kind: prediction`) evaluates a
record's equation at the conditions of a measured receipt and compares it with
the receipt's figure (`measured: receipts/<id>#results.0.latency`): outside
`band: {rel}` the model is contradicted by that measurement. A bound
(`kind: bound`, `bound: upper | lower`) is contradicted when the measurement
lies beyond it. The finding names both files (the receipt's figure is the
related location). A miss the record knows and keeps is `accepted: {reason}`:
the claim stays contradicted, red on the site with predicted, measured and
error, and sets the record's verdict, but is no error; if the measurement stops
contradicting it, EQ028 says so. There is no other way to publish a miss.

Bad (predicts 38 us, the receipt measured 60 us: error -36%):

    claims:
      - id: t-1mib
        kind: prediction
        of: t_ring
        bind: {N: receipts/ar#results.0.gpus, S: receipts/ar#results.0.message_size, ...}
        measured: receipts/ar#results.0.latency
        band: {rel: 0.25}

Good (within the band; or a bound, if the model is one; or the miss accepted):

    claims:
      - id: t-1mib
        ...
        band: {rel: 0.25}
        accepted: {reason: "no per-layer overhead term yet"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.PREDICTION_CONTRADICTED
NAME = "prediction-contradicted"
SEVERITY = Severity.ERROR
HINT = "correct the model or the receipt's figure, or accept the known miss with its reason"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
