"""A model's published total agrees with what kb counts from its geometry, or says why not.

Why: a geometry typed wrong, or a convention that leaves out a component, shows
as a gap between kb's count and the total the model's authors published. Each
entry of `published` names the derived figures it counts (`compare`, joined by
`+` or `-`: `params_total + params_mtp` for DeepSeek-V3's 685B); kb recomputes them
from the geometry. A gap beyond 0.1% needs an `explanation` (rounding of "141B",
a vision encoder the text-only geometry leaves out, a checkpoint's duplicated
tensors); without one it is this finding. A `compare` that names no figure kb
recomputes is this finding too.

Bad:

    published:
      params_total: {value: 7000000000, unit: "1", basis: vendor-spec,
                     source: sources/x, compare: params_total}

Good:

    published:
      params_total: {value: 7000000000, unit: "1", basis: vendor-spec,
                     source: sources/x, compare: params_total,
                     explanation: '"7B" is the rounded size class; kb counts 6.74B'}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.PUBLISHED_FIGURE_UNEXPLAINED
NAME = "model-published-figure-unexplained"
SEVERITY = Severity.ERROR
HINT = "explain the difference in `explanation`, or correct the geometry"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
