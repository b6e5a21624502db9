"""A record file must be readable.

Why: kb cannot check what it cannot read; an unreadable file would otherwise vanish
silently from the knowledge base.

Bad:

    a file without read permission, or a broken symlink

Good:

    a readable regular file
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD001"
NAME = "file-unreadable"
SEVERITY = Severity.ERROR
HINT = "check the file exists and is readable"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
