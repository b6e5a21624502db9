r"""A record file must be UTF-8 text, under a UTF-8 file name.

Why: Records are text in git; a binary or mis-encoded file is an accident, and
guessing an encoding corrupts names and units. A file name that is not UTF-8
cannot become a record id; kb prints it with the bad bytes escaped (`\xff`) and
does not read the file.

Bad:

    title: Caf\xe9 (Latin-1 byte 0xe9)

Good:

    title: Café (saved as UTF-8)
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD002"
NAME = "invalid-utf8"
SEVERITY = Severity.ERROR
HINT = "save the file as UTF-8"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
