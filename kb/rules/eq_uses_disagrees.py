"""A record that uses another's equation for a symbol and states its own for it must agree.

The definition (precise, checked by kb/equations/system.py): when an equation
of this record is `X = f` used from another record (`uses`, renamed through
`map`) and another equation of this record is `X = g` for the same symbol X
(both left sides exactly the bare symbol X), f - g must be identically zero for
positive values of the symbols (`cancel(together(f - g)) == 0`, then `simplify`
under the budget). A finding needs a witness: a point where f and g differ,
found by exact evaluation; an identity kb cannot decide either way is not
reported here (derivations and claims that use it stay checked as usual).

Why: the two records then compute the same quantity for the same inputs and
get different values, so kb would contradict itself (the per-rank weight read
one flop class divides by N and another does not). It is an error, not a
warning: a witness proves one of the two equations wrong at some inputs, and
nothing in kb may rest on both. Keep one and cite it.

Bad:

    equations:
      read: {uses: "flops/decode-weight-read#step_bound_params", map: {t_step: t_w}}
      read_own: {expr: "t_w = P*b_w/BW_hbm"}           # forgot the 1/N

Good:

    equations:
      read: {uses: "flops/decode-weight-read#step_bound_params", map: {t_step: t_w}}
      read_own: {expr: "t_w = P*b_w/(BW_hbm*N)"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.USES_DISAGREES
NAME = "uses-disagrees"
SEVERITY = Severity.ERROR
HINT = "state the same equation as the used one, or drop your own"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
