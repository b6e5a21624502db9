"""Every binding lands on a quantity ({value, unit}) or, for a count, a plain number.

Why: binding to a block, a string or a list has no value to compute with; a value
written `1e9` is text to YAML 1.1.

Bad:

    bind: {BW_hbm: hardware/nvidia-h100-sxm#memory}

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
CODE = codes.BINDING_NOT_A_QUANTITY
NAME = "binding-not-a-quantity"
SEVERITY = Severity.ERROR
HINT = "bind a quantity {value, unit} or a plain number"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
