"""Every symbolic check finishes within its time budget.

Why: a short expression can make simplification run for minutes; kb stops it at the
budget (2 s, KB_EQ_BUDGET) and reports the check as unverified (timeout) rather
than hanging validation.

Bad:

    equations:
      big: {expr: "y = (a + b + c + d + f)**60 - (a + b + c + d + g)**60"}

Good:

    equations:
      big: {expr: "y = u**60 - v**60"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.CHECK_TIMEOUT
NAME = "check-timeout"
SEVERITY = Severity.WARNING
HINT = "simplify the expression or split the check"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
