"""Every equation id a derivation step or claim names exists in the record.

Why: a step that points at a missing equation checks nothing.

Bad:

    steps:
      - {rule: solve_for, from: crosover, var: B, result: b_star}

Good:

    steps:
      - {rule: solve_for, from: crossover, var: B, result: b_star}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.REFERENCE_UNKNOWN
NAME = "equation-reference-unknown"
SEVERITY = Severity.ERROR
HINT = "name an equation listed under equations:"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
