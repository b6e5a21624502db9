"""A record must not nest deeper than 64 levels.

Why: Deep nesting is never needed by a record and can exhaust the parser's stack (a
100,000-deep list crashes libyaml); kb measures depth before parsing.

Bad:

    x: [[[[[[ ... 10,000 levels ... ]]]]]]

Good:

    x: [1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD007"
NAME = "nesting-too-deep"
SEVERITY = Severity.ERROR
HINT = "flatten the structure"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
