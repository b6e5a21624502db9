"""A record must not hold more than 200,000 nodes, its anchors and aliases expanded.

Why: A few lines of nested aliases ("billion laughs") expand to billions of nodes in
anything that walks the document; and a file under the size limit written as one
flow list of 500,000 numbers would cost every later stage seconds and hundreds of
megabytes (and a finding per value). Such a record is not checked further.

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

READS = "stage"
CODE = "LD008"
NAME = "alias-expansion-over-budget"
SEVERITY = Severity.ERROR
HINT = "write the values out instead of repeating anchors and aliases"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
