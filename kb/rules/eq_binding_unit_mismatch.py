"""A bound value's unit matches its symbol's unit, and a claim's unit matches its result.

Why: binding a capacity (GB) where a bandwidth (GB/s) is declared gives a number
with no meaning; units of the same dimension convert exactly (TB/s to GB/s).

Bad:

    symbols: {BW_hbm: {meaning: HBM bandwidth, unit: GB/s}}
    claims:
      - {kind: numeric, ..., bind: {BW_hbm: hardware/nvidia-h100-sxm#memory.capacity}}

Good:

    symbols: {BW_hbm: {meaning: HBM bandwidth, unit: GB/s}}
    claims:
      - {kind: numeric, ..., bind: {BW_hbm: hardware/nvidia-h100-sxm#memory.bandwidth}}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.BINDING_UNIT_MISMATCH
NAME = "binding-unit-mismatch"
SEVERITY = Severity.ERROR
HINT = "bind a value in the symbol's unit's dimension"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
