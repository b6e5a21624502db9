"""A word that YAML 1.1 reads as a boolean must be quoted where text is expected.

Why: YAML 1.1 reads yes, no, on, off (any case) as booleans: a country code NO or a
status `on` silently becomes false or true.

Bad:

    status: on

Good:

    status: "on"  # or a valid value: draft | reviewed | deprecated
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD010"
NAME = "yaml11-boolean"
SEVERITY = Severity.ERROR
HINT = "YAML 1.1 reads yes/no/on/off as booleans: quote the value"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
