"""Every numeric claim equals the value its expression gives with the bound inputs.

Why: a figure in prose (B* = 3,318) is only as good as its inputs. kb evaluates the
expression with symbols bound to literal quantities or to other records' fields
(exact unit conversion) and compares under the stated rounding or tolerance, so
changing a hardware record re-checks every claim that binds it; the finding names
both files.

Bad:

    claims:
      - id: b-star-nvlink
        kind: numeric
        of: b_star
        bind: {BW_link: interconnects/nvlink-4#bandwidth.per_device, ...}
        expect: {value: 3000, unit: "1", round: 1}

Good:

    claims:
      - id: b-star-nvlink
        kind: numeric
        of: b_star
        bind: {BW_link: interconnects/nvlink-4#bandwidth.per_device, ...}
        expect: {value: 3318, unit: "1", round: 1}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.NUMERIC_CLAIM_REFUTED
NAME = "numeric-claim-refuted"
SEVERITY = Severity.ERROR
HINT = "correct the claim (or the record it binds) so the numbers agree"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
