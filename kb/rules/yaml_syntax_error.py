"""A record file must be valid YAML.

Why: A syntax error hides the whole record; the finding gives the parser's position.

Bad:

    title: [unclosed

Good:

    title: closed
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD004"
NAME = "yaml-syntax-error"
SEVERITY = Severity.ERROR
HINT = "fix the YAML syntax at the position shown"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
