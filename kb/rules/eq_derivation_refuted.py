"""Every derivation step's result follows from its inputs by its named rule.

Why: a closed form copied with a wrong factor propagates into every number derived
from it. kb re-derives each step (back-substitution for solve_for, residuals for
substitute/rewrite/scale, the worst relative error for approximate) and reports
the residual or counterexample, and the form the inputs really give.

Bad:

    derivations:
      - id: b-star
        steps:
          # b_star_wrong: B_star = P_layer*BW_link/(4*d*BW_hbm)
          - {rule: solve_for, from: crossover, var: B, result: b_star_wrong}

Good:

    derivations:
      - id: b-star
        steps:
          # b_star: B_star = P_layer*BW_link/(2*d*BW_hbm)
          - {rule: solve_for, from: crossover, var: B, result: b_star}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.DERIVATION_REFUTED
NAME = "derivation-refuted"
SEVERITY = Severity.ERROR
HINT = "correct the result equation (the computed form is in the message)"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
