"""A symbol a used equation is mapped onto must have exactly the unit it has there.

`GB` against `GiB`, `GB/s` against `Gbit/s`, `ms` against `us`: the used
equation was written and dimension-checked in its record's units, and kb
compares units exactly (the same dimension and the same scale), so a used
equation never changes meaning by being moved.

Why: a composed model that mixes the scale of its parts is wrong by a factor.

Bad:

    symbols: {t_w: {meaning: weight read, unit: us}}     # t_step is in ms there
    equations:
      read: {uses: "flops/decode-weight-read#step_bound_params", map: {t_step: t_w}}

Good:

    symbols: {t_w: {meaning: weight read, unit: ms}}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.USES_UNIT_MISMATCH
NAME = "uses-unit-mismatch"
SEVERITY = Severity.ERROR
HINT = "declare the same unit, or map to a symbol that has it"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
