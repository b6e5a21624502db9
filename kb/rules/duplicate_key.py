"""A mapping must not repeat a key.

Why: YAML loaders keep the last value silently, so a duplicated key hides a figure: the
author sees one value, kb would use the other.

Bad:

    memory:
      bandwidth: {value: 3350, unit: GB/s}
      bandwidth: {value: 3072, unit: GB/s}

Good:

    memory:
      bandwidth: {value: 3350, unit: GB/s}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD005"
NAME = "duplicate-key"
SEVERITY = Severity.ERROR
HINT = "remove or rename one of the two keys"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
