"""Every claim can be decided: recomputed (it holds) or refuted.

Why: an effect or scaling claim on an expression with max/min holds only in a regime;
without an operating point (`bind`) kb can neither prove nor refute it.

Bad:

    claims:
      - {kind: effect, of: step_time, change: {P_layer: "P_layer/2"}, factor: 0.5}

Good:

    claims:
      - {kind: effect, of: step_time, change: {P_layer: "P_layer/2"}, factor: 0.5,
         bind: {B: {value: 8, unit: "1"}, ...}}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.CLAIM_UNVERIFIED
NAME = "claim-unverified"
SEVERITY = Severity.WARNING
HINT = "bind every input the claim needs, or state why it cannot be checked"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
