"""Every symbolic check finishes within its budget of steps.

Why: a short expression can make simplification run for minutes; kb stops it at
its budget, counted in steps (3,000,000 Python calls, KB_EQ_WORK) so that the
verdict is the same on any machine at any load, and reports the check as
unverified (timeout) rather than hanging validation.

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
