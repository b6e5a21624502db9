"""A record file must hold one YAML mapping.

Why: Every record is a mapping of fields; an empty file, a list or a bare string is not
a record.

Bad:

    - just
    - a list

Good:

    kind: source
    id: sources/x
    ...
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD011"
NAME = "not-a-mapping"
SEVERITY = Severity.ERROR
HINT = "a record file holds one YAML mapping"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
