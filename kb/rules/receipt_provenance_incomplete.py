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
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "record"
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
    for record in kb.of_kind("receipt"):
        block = record.data.get("provenance")
        block = block if isinstance(block, dict) else {}
        # `field: ~` is a placeholder left unfilled: the schema reports it at its line
        missing = [f for f in FIELDS if f not in block or block[f] == "" or block[f] == " "]
        missing = [f for f in missing if block.get(f) is not None or f not in block]
        if missing:
            message = f"provenance lacks {', '.join(missing)}"
            yield found(CODE, SEVERITY, record.path, "/provenance", message, HINT)
