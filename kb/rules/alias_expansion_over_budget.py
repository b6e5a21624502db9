"""Anchors and aliases must not expand beyond 200,000 nodes.

Why: A few lines of nested aliases ("billion laughs") expand to billions of nodes in
anything that walks the document.

Bad:

    a: &a [x, x, x, x, x, x, x, x, x]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
    ...

Good:

    values written out, without anchors
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "record"
CODE = "LD008"
NAME = "alias-expansion-over-budget"
SEVERITY = Severity.ERROR
HINT = "write the values out instead of repeating anchors and aliases"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
