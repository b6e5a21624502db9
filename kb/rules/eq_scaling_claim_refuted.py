"""Every scaling claim (proportional, inverse, constant, power, affine) holds for its expression.

Why: "linear in B" is checked by the elasticity B*df/dB/f: 1 for proportional,
-1 inverse, 0 constant, k for a power law; affine means a constant slope and a
nonzero intercept. `asymptotic: true` checks the limit as the variable grows.

Bad:

    claims:
      - {id: comm-in-b, kind: scaling, of: t_comm, var: B, law: inverse}

Good:

    claims:
      - {id: comm-in-b, kind: scaling, of: t_comm, var: B, law: proportional}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.SCALING_CLAIM_REFUTED
NAME = "scaling-claim-refuted"
SEVERITY = Severity.ERROR
HINT = "correct the scaling law to what the expression gives"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
