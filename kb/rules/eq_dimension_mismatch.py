"""Both sides of every equation, and every sum, max and min, have one dimension.

Why: adding bytes to seconds, or equating a time with a byte count, means a factor
is missing (often bytes per element or a bandwidth). The check runs on the
expression as authored, before any simplification could hide a mismatch.

Bad:

    equations:
      t_comm: {expr: "T_comm = 4*B*d + BW_link"}

Good:

    equations:
      t_comm: {expr: "T_comm = 2*B*d*s_elem/BW_link"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.DIMENSION_MISMATCH
NAME = "dimension-mismatch"
SEVERITY = Severity.ERROR
HINT = "make both sides (and every term of a sum, max or min) the same dimension"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
