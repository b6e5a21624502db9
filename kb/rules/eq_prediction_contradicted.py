"""Every prediction lies within its band of the measurement it names.

Why: consistency is not truth. A prediction (`kind: prediction`) evaluates a
record's equation at the conditions of a measured receipt and compares it with
the receipt's figure (`measured: receipts/<id>#results.0.latency`): outside
`band: {rel}` the model is contradicted by that measurement. The finding names
both files (the receipt's figure is the related location). A known, stated
shortcoming is `limitation: {reason}`: the prediction is then shown as a
limitation, not an error.

Bad (predicts 38 us, the receipt measured 60 us: error -36%):

    claims:
      - id: t-1mib
        kind: prediction
        of: t_ring
        bind: {N: receipts/ar#results.0.gpus, S: receipts/ar#results.0.message_size, ...}
        measured: receipts/ar#results.0.latency
        band: {rel: 0.25}

Good (within the band, or the shortcoming stated):

    claims:
      - id: t-1mib
        ...
        band: {rel: 0.25}
        limitation: {reason: "no per-layer overhead term yet"}
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
HINT = "correct the model, or state the limitation the measurement shows"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
