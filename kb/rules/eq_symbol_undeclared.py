"""Every name used in an expression is a symbol the record declares.

Why: a symbol carries a meaning and a unit; without the declaration the equation
cannot be dimension-checked and a typo (BW_lnk) silently becomes a new variable.

Bad:

    symbols:
      B: {meaning: batch size, unit: "1"}
    equations:
      payload: {expr: "s = B*d*s_elem"}

Good:

    symbols:
      B: {meaning: batch size, unit: "1"}
      d: {meaning: hidden width, unit: "1"}
      s_elem: {meaning: bytes per element, unit: B}
      s: {meaning: payload per rank, unit: B}
    equations:
      payload: {expr: "s = B*d*s_elem"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.SYMBOL_UNDECLARED
NAME = "symbol-undeclared"
SEVERITY = Severity.ERROR
HINT = "declare the name under symbols: {name: {meaning, unit}}"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
