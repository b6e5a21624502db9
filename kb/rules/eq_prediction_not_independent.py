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

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity, pointer_join
from kb.kinds import EQUATION_KINDS, views
from kb.kinds.flop_class import Claim
from kb.model import KnowledgeBase, split_binding
from kb.rules._base import found

READS = "views"
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
    """A record that fails its schema has no view and is not checked (SC001 reports it)."""
    checked = views(kb)
    for kind in EQUATION_KINDS:
        for record in kb.of_kind(kind):
            sections = checked.equations(record) if kb.in_focus(record) else None
            if sections is None:
                continue
            for claim in sections.claims:
                if claim.kind in codes.MEASURED_KINDS:
                    yield from _check_prediction(record.path, sections.calibration, claim)


def _check_prediction(path: str, calibration: tuple[str, ...], claim: Claim) -> Iterator[Finding]:
    measured, pointer = claim.measured, pointer_join("/claims", claim.index)
    if measured is None:
        return  # the engine reports a prediction without a measured figure
    receipt = split_binding(measured)[0]
    if receipt in calibration:
        yield found(
            CODE,
            SEVERITY,
            path,
            pointer_join(pointer, "measured"),
            f"prediction {claim.id} is measured against {receipt}, which this record "
            "lists under calibration: a receipt a parameter was fitted to cannot "
            "validate it",
            "compare with an independent receipt",
        )
    for symbol, spec in claim.bind.items():
        if not isinstance(spec, str):
            continue  # a literal quantity
        bound, field = split_binding(spec)
        if bound == receipt and field.rsplit(".", 1)[-1] not in CONDITIONS:
            yield found(
                CODE,
                SEVERITY,
                path,
                pointer_join(pointer, "bind", symbol),
                f"prediction {claim.id} binds {symbol} to {spec}, a result of the receipt "
                "it is measured against: it would only restate the measurement",
                "bind only the measurement's conditions (gpus, message_size, batch, "
                "tp, ...) from that receipt; take the input from another record",
            )
