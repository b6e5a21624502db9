"""Every derivation step can be decided: derived or refuted.

Why: some identities (max/min, logs, roots) are not decided by simplification and
agree at every sampled point without a proof. Such a step is shown as unverified
on the site; split it, or state a regime that removes the max/min.

Bad:

    steps:
      - {rule: rewrite, from: step_time, result: step_time_approx}   # involves max(...)

Good:

    steps:
      - {rule: regime, from: step_time, condition: "T_comp <= T_comm", result: step_time_comm}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.DERIVATION_UNVERIFIED
NAME = "derivation-unverified"
SEVERITY = Severity.WARNING
HINT = "add a regime or split the step so it can be derived"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
