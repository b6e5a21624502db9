"""Every effect claim's factor is what the equation gives for the stated change.

Why: workarounds are sold by their effect ("halves the payload and therefore halves
B*"). kb applies the change to the equation and recomputes the factor on the
derived quantity, exactly, at an operating point when one is bound.

Bad:

    claims:
      - {id: halve-payload, kind: effect, of: b_star_k, change: {k_vol: "k_vol/2"}, factor: 0.5}

Good:

    claims:
      - {id: halve-payload, kind: effect, of: b_star_k, change: {k_vol: "k_vol/2"}, factor: 2}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.EFFECT_CLAIM_REFUTED
NAME = "effect-claim-refuted"
SEVERITY = Severity.ERROR
HINT = "correct the factor to what the equation gives for the change"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
