"""Every binding names an existing record and field, and every symbol of a numeric claim is bound.

Why: a claim evaluated with a missing input proves nothing. Bindings are
`record-id#dotted.path` or a literal `{value, unit}`.

Bad:

    bind: {BW_hbm: hardware/nvidia-h100#memory.bandwidth}

Good:

    bind: {BW_hbm: hardware/nvidia-h100-sxm#memory.bandwidth}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.BINDING_UNRESOLVED
NAME = "binding-unresolved"
SEVERITY = Severity.ERROR
HINT = "bind an existing record and field: records/<id>#<field>"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
