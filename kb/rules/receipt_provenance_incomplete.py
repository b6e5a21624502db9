"""A receipt must state every provenance field of seed 000, or say the source is silent.

The fields: hardware_firmware, topology_direction, message_sizes,
model_precision, batch_concurrency, warmup, repetitions, quality_check,
failures_retries, raw_artifact. Write "not reported" where the source says
nothing; an absent or empty field is a finding.

Why: a measurement without its conditions cannot calibrate a ledger: the same
all-reduce is 4-8x apart across message sizes, algorithms and settings.

Bad:

    provenance:
      hardware_firmware: 8x H100 SXM

Good:

    provenance:
      hardware_firmware: 8x H100 SXM, NCCL 2.18.5
      topology_direction: NVSwitch, bus bandwidth per direction
      message_sizes: sweep 8 B - 8 GB
      model_precision: n/a (collective benchmark)
      batch_concurrency: n/a
      warmup: not reported
      repetitions: not reported
      quality_check: not reported
      failures_retries: not reported
      raw_artifact: https://...
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.kinds import views
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "views"
CODE = "EV002"
NAME = "receipt-provenance-incomplete"
SEVERITY = Severity.WARNING
HINT = 'fill each field, or write "not reported" where the source is silent'
FIELDS = (
    "hardware_firmware",
    "topology_direction",
    "message_sizes",
    "model_precision",
    "batch_concurrency",
    "warmup",
    "repetitions",
    "quality_check",
    "failures_retries",
    "raw_artifact",
)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A receipt that fails its schema has no view and is not checked (SC001 reports it).

    An unfilled `field: ~` is such a schema finding, at its line.
    """
    checked = views(kb)
    for record in kb.of_kind("receipt"):
        receipt = checked.receipt(record) if kb.in_focus(record) else None
        if receipt is None:
            continue
        missing = [f for f in FIELDS if receipt.provenance.get(f, "") in ("", " ")]
        if missing:
            message = f"provenance lacks {', '.join(missing)}"
            yield found(CODE, SEVERITY, record.path, "/provenance", message, HINT)
