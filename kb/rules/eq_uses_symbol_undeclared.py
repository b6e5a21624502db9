"""Every name of a used equation must land, through `map`, on a symbol declared here.

A name the used equation has and `map` does not list keeps its name, so this
record must declare it; a name `map` lists must be one of the used equation's
names (a map entry for a name it does not have is a typo that would otherwise
pass unnoticed).

Why: the used equation is checked in this record's symbols; an undeclared one
has no unit and no meaning here.

Bad:

    symbols: {t_w: {meaning: weight read, unit: ms}}
    equations:
      t_w_eq: {uses: "flops/decode-weight-read#step_bound_params", map: {t_step: t_w}}

Good (P, b_w, N and BW_hbm declared too, with the same units as there):

    equations:
      t_w_eq: {uses: "flops/decode-weight-read#step_bound_params", map: {t_step: t_w}}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.USES_SYMBOL_UNDECLARED
NAME = "uses-symbol-undeclared"
SEVERITY = Severity.ERROR
HINT = "map the used equation's names onto symbols declared here"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
