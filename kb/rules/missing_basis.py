"""Every figure must say where it comes from: a `basis`.

A figure is any mapping with `value` and `unit` (a quantity). Its basis is one
of vendor-spec, measured, derived, estimated, assumed (a scenario input the author
chose, with a note), unverified.

Why: readers decide whether to shard a model from these numbers; a figure
with no basis cannot be told apart from a guess.

Bad:

    bandwidth: {value: 3350, unit: GB/s}

Good:

    bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec,
                source: sources/stas00-ml-engineering-accelerators}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.findings import Finding, Severity
from kb.model import QUANTITY_BASES, KnowledgeBase
from kb.rules._base import found
from kb.rules._walk import located

READS = "record"
CODE = "PV001"
NAME = "missing-basis"
SEVERITY = Severity.ERROR
HINT = "add basis: " + " | ".join(QUANTITY_BASES)


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        for pointer, quantity in located(kb, record, _without_basis):
            value = f"{quantity.get('value')} {quantity.get('unit')}"
            message = f"figure {value} has no basis"
            yield found(CODE, SEVERITY, record.path, pointer, message, HINT)


def _without_basis(node: Mapping[str, Any]) -> bool:
    return "value" in node and "unit" in node and "basis" not in node
