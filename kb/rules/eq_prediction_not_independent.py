"""A prediction is checked against a measurement it was not fitted to.

Why: a receipt used to calibrate a parameter (a fitted latency, an overhead
term) cannot also validate it, and a prediction that takes a measured result
from the very receipt it is compared with only restates it. So a prediction
must not name, as `measured`, a receipt listed under the record's
`calibration:`; and must not bind an input from its own measured receipt other
than the conditions of the measurement (gpus, message_size, batch, tp, pp, ep,
input_tokens, output_tokens, concurrency).

Bad:

    calibration: [receipts/ar]
    claims:
      - id: t-1mib
        kind: prediction
        bind: {W: receipts/ar#results.0.bus_bandwidth, ...}
        measured: receipts/ar#results.0.latency

Good:

    calibration: [receipts/vidur-profile]
    claims:
      - id: t-1mib
        kind: prediction
        bind: {N: receipts/ar#results.0.gpus, S: receipts/ar#results.0.message_size, ...}
        measured: receipts/ar#results.0.latency
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.equations import codes
from kb.findings import Finding, Severity, pointer_join
from kb.model import KnowledgeBase, Record, split_binding
from kb.rules._base import found

READS = "record"
CODE = codes.PREDICTION_NOT_INDEPENDENT
NAME = "prediction-not-independent"
SEVERITY = Severity.ERROR
HINT = "compare with an independent receipt"
# Fields of a receipt's result row that are conditions of the measurement, not its results.
CONDITIONS = frozenset(
    {
        "gpus",
        "message_size",
        "batch",
        "tp",
        "pp",
        "ep",
        "input_tokens",
        "output_tokens",
        "concurrency",
    }
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        claims = record.data.get("claims")
        for index, claim in enumerate(claims if isinstance(claims, list) else []):
            if isinstance(claim, Mapping) and claim.get("kind") == "prediction":
                yield from _check_prediction(record, claim, pointer_join("/claims", index))


def _check_prediction(record: Record, claim: Mapping[str, Any], pointer: str) -> Iterator[Finding]:
    measured = claim.get("measured")
    if not isinstance(measured, str) or "#" not in measured:
        return  # the engine reports a measured figure that is not id#field
    receipt = split_binding(measured)[0]
    name = claim.get("id", pointer)
    calibration = record.data.get("calibration")
    if isinstance(calibration, list) and receipt in calibration:
        yield found(
            CODE,
            SEVERITY,
            record.path,
            pointer_join(pointer, "measured"),
            f"prediction {name} is measured against {receipt}, which this record "
            "lists under calibration: a receipt a parameter was fitted to cannot "
            "validate it",
            "compare with an independent receipt",
        )
    bind = claim.get("bind")
    for symbol, spec in bind.items() if isinstance(bind, Mapping) else ():
        if not isinstance(spec, str) or "#" not in spec:
            continue
        bound, path = split_binding(spec)
        if bound == receipt and path.rsplit(".", 1)[-1] not in CONDITIONS:
            yield found(
                CODE,
                SEVERITY,
                record.path,
                pointer_join(pointer, "bind", symbol),
                f"prediction {name} binds {symbol} to {spec}, a result of the receipt "
                "it is measured against: it would only restate the measurement",
                "bind only the measurement's conditions (gpus, message_size, batch, "
                "tp, ...) from that receipt; take the input from another record",
            )
