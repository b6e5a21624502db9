"""A template in prose must name a figure or a numeric claim that exists.

Templates write a figure of a record into free text (summary, text, notes,
note, change, meaning, effect, magnitude, entry, reason, description):
`{hardware/nvidia-h100-sxm#memory.bandwidth}` shows the figure at that dotted
path, `{claim:b-star-tp8}` the value of a numeric claim of the same record and
`{flops/x#claim:b-star-tp8}` one of another record. A malformed template, a
field that does not exist or holds no quantity, or a claim id that the record
does not have is this finding (a record that does not exist is RF001).

Why: a number copied into prose goes stale when the figure is corrected; a
template cannot, but only if it resolves.

Bad:

    summary: "HBM at {hardware/nvidia-h100-sxm#memory.bandwith|TB/s}."

Good:

    summary: "HBM at {hardware/nvidia-h100-sxm#memory.bandwidth|TB/s}."
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._prose import template_findings

READS = "bound"
CODE = "PR001"
NAME = "prose-template-unresolved"
SEVERITY = Severity.ERROR
HINT = "name an existing record field or claim in the template"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from template_findings(kb, CODE, SEVERITY)
