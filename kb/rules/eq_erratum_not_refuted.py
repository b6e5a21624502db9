"""An erratum claim stays refuted: the source's error it keeps is still an error.

Why: an erratum (`erratum: {source, reason}` on a numeric, effect or scaling
claim) keeps what a source said and kb refutes, so the reader sees "the source
says X; kb computes Y" where the statement appears. While kb refutes it, that
is the erratum's state and no finding. If the claim ever holds (the record, or
a figure it binds, changed so kb now computes what the source says), the
erratum would outlive the error: kb reports it, naming the value it computes.

Bad (the source's 3,318 now holds, so it is no erratum):

    claims:
      - id: seed-b-star
        kind: numeric
        of: b_star
        bind: {...}
        expect: {value: 3318, unit: "1", round: 1}
        erratum: {source: sources/seed-003-tp-crossover, reason: "..."}

Good (refuted: kb computes 237 for the source's 3,318):

    claims:
      - id: seed-b-star
        kind: numeric
        of: b_star_per_rank
        bind: {...}
        expect: {value: 3318, unit: "1", round: 1}
        erratum: {source: sources/seed-003-tp-crossover, reason: "...", corrected_by: b-star}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.ERRATUM_NOT_REFUTED
NAME = "erratum-not-refuted"
SEVERITY = Severity.ERROR
HINT = "the source's statement holds after all: make it a numeric claim"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
