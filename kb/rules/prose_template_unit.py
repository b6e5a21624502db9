"""A template's unit must be one kb knows, of the figure's dimension.

`{hardware/nvidia-h100-sxm#memory.bandwidth|TB/s}` shows 3350 GB/s as 3.35 TB/s,
converted exactly (kb.quantities, the one unit table). A unit kb
does not know, or one of another dimension, is this finding.

Why: a conversion that cannot be done would print a number that means nothing.

Bad:

    summary: "HBM at {hardware/nvidia-h100-sxm#memory.bandwidth|TB}."

Good:

    summary: "HBM at {hardware/nvidia-h100-sxm#memory.bandwidth|TB/s}."
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._prose import template_findings

READS = "bound"
CODE = "PR002"
NAME = "prose-template-unit"
SEVERITY = Severity.ERROR
HINT = "write the template's unit as one the figure converts to"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from template_findings(kb, CODE, SEVERITY)
