"""Every symbolic check ends within its steps, before kb's last-resort wall-clock guard.

Why: a check's budget is counted in steps (EQ014 reports one that ran out), so its
verdict does not depend on how busy the machine is. A few kinds of work are not
counted (one long C-level computation), so each check also runs under a generous
wall-clock guard ($KB_EQ_BUDGET, 60 s). A check stopped there is unverified, and
this finding says so: it is an internal limit of kb, not a verdict on the record,
and on a quiet machine the same check may end in time. Report it if it recurs.

Bad:

    # with KB_EQ_BUDGET=0.001 (a guard far below what the check needs)
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
CODE = codes.CHECK_INTERNAL_LIMIT
NAME = "check-internal-limit"
SEVERITY = Severity.WARNING
HINT = "re-run on a less busy machine; if it recurs, report the record to kb's maintainers"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
