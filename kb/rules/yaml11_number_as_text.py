"""A number must be written so that YAML reads it as a number.

Why: YAML 1.1 (PyYAML) reads `1e9` and `4.8e12` as strings because its float pattern
needs a dot and a signed exponent; the schema then sees text where it expects a figure.

Bad:

    bandwidth: {value: 4.8e12, unit: B/s}

Good:

    bandwidth: {value: 4.8e+12, unit: B/s}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import reported_by_stage

READS = "stage"
CODE = "LD009"
NAME = "yaml11-number-as-text"
SEVERITY = Severity.ERROR
HINT = "YAML 1.1 reads 1e9 as text: write 1.0e+9 or 1000000000"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    return reported_by_stage(kb, CODE)
