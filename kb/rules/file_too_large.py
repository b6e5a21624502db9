"""A record file must stay under the size limit (2 MiB).

Why: Records are small documents; a huge file is a mistake or an attack, and parsing it
would cost memory for nothing.

Bad:

    a 50 MB dump pasted into records/receipts/

Good:

    the raw artifact stored elsewhere and linked from `provenance.raw_artifact`
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD003"
NAME = "file-too-large"
SEVERITY = Severity.ERROR
HINT = "split the record; records are small documents"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
