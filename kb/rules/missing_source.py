"""A figure whose basis is not `unverified` or `assumed` must name its source record.

This applies to quantities and to blocks that carry provenance once for many
counts (a model's `geometry`) or a `basis` of their own (a flop class's
hardware-parameter rows). The source must be a record under sources/ (the
reference rules check that it exists).

Why: "vendor-spec" or "measured" without a citation is an unverifiable claim;
kb never lets a number look more certain than its evidence.

Bad:

    bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec}

Good:

    bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec,
                source: sources/stas00-ml-engineering-accelerators}
    # or, when nothing backs it yet:
    bandwidth: {value: 3350, unit: GB/s, basis: unverified}
    # a scenario input the author chose is `assumed`, with a note (PV003):
    batch: {value: 64, unit: "1", basis: assumed, note: "a continuous-batching decode batch"}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kb.findings import Finding, Severity
from kb.model import UNSOURCED_BASES, KnowledgeBase
from kb.rules._base import found
from kb.rules._walk import located

READS = "record"
CODE = "PV002"
NAME = "missing-source"
SEVERITY = Severity.ERROR
HINT = "add source: sources/<id>, or set basis: unverified"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        for pointer, block in located(kb, record, _sourced_basis_without_source):
            message = f"basis is {block.get('basis')!r} but no source is named"
            yield found(CODE, SEVERITY, record.path, pointer, message, HINT)


def _sourced_basis_without_source(node: Mapping[str, Any]) -> bool:
    basis = node.get("basis")
    if "source" in node and node["source"] is None:
        return False  # `source: ~`, a placeholder left unfilled: the schema reports it (SC001)
    return isinstance(basis, str) and basis not in UNSOURCED_BASES and not node.get("source")
