"""What `uses` names must be a usable equation: one well-formed `lhs = rhs`, not a `uses`.

Refused: a `uses` text that is not `<record id>#<equation id>`; an entry of the
used record that itself `uses` another (compose from the original: chains
would hide where the text comes from and could loop); and a used equation
whose text is not one `lhs = rhs` of safe expressions (the used record reports
the details; this record says it could not use it).

Why: the composed equation must be checked exactly as written in its origin.

Bad:

    equations:
      t_w: {uses: "flops/tp-decode-allreduce-time#weight_read"}   # itself a uses

Good:

    equations:
      t_w: {uses: "flops/decode-weight-read#step_bound_params"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.USES_TARGET_NOT_EQUATION
NAME = "uses-target-not-an-equation"
SEVERITY = Severity.ERROR
HINT = "use an equation of the form lhs = rhs"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
