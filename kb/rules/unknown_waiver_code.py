"""A waiver must name a rule code that exists.

Why: a waiver for a misspelt or retired code suppresses nothing and misleads
the reader into thinking a finding was accepted. `kb rules` lists the codes.

Bad:

    waivers:
      - {code: PV999, reason: ...}

Good:

    waivers:
      - {code: PV002, reason: ...}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import StageNotRun, found

READS = "codes"
CODE = "WV002"
NAME = "unknown-waiver-code"
SEVERITY = Severity.ERROR
HINT = "see `kb rules`"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    known = kb.run.known_codes
    if known is None:
        raise StageNotRun(f"{CODE} reads the rules stage's codes, which it has not set")
    for record in kb:
        for index, waiver in enumerate(record.waivers):
            code = waiver.get("code")
            if isinstance(code, str) and code not in known:
                from kb.suggest import did_you_mean

                message = f"waiver names {code!r}, which is not a rule code"
                hint = did_you_mean(code, known, "see `kb rules`")
                yield found(CODE, SEVERITY, record.path, f"/waivers/{index}/code", message, hint)
