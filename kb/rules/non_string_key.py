"""A mapping key must be text.

Why: YAML reads an unquoted `null`, `3` or `true` key as null, a number or a
boolean. Records are JSON-like documents whose keys are names: a key that is not
text has no meaning in a schema or a reference, and sorting it against the other
keys of its mapping is undefined. The record is not checked further until the key
is fixed (one finding, not a cascade).

Bad:

    equations:
      3:
        expr: "W = P*b_w"

Good:

    equations:
      weight_bytes:
        expr: "W = P*b_w"
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD013"
NAME = "non-string-key"
SEVERITY = Severity.ERROR
HINT = 'quote the key ("3", "null") or give it a name'


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
