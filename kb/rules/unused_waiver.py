"""A waiver must suppress at least one finding.

A record may accept a finding with `waivers: [{code: PV002, reason: ...}]`
(optionally narrowed by `pointer`). When the finding goes away, the waiver
must go too.

Why: a stale waiver would silently hide the next, different problem of the
same code (as ruff's RUF100 does for unused `noqa`).

Bad:

    waivers:
      - {code: PV002, reason: Datasheet not public yet.}   # but every figure has a source

Good: remove the waiver.
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import StageNotRun, found

READS = "findings"
CODE = "WV001"
NAME = "unused-waiver"
SEVERITY = Severity.ERROR
HINT = "remove the waiver"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    used, known = kb.run.waivers_used, kb.run.known_codes
    if used is None or known is None:
        raise StageNotRun(
            f"{CODE} reads the waivers stage, which has not run (kb.checker.run_rules)"
        )
    for record in kb:
        seen: set[tuple[object, object]] = set()
        for index, waiver in enumerate(record.waivers):
            code = waiver.get("code")
            repeat = (code, waiver.get("pointer")) in seen  # ID004 reports the copy
            seen.add((code, waiver.get("pointer")))
            if code in known and (record.id, index) not in used and not repeat:
                message = f"waiver for {code} suppresses no finding"
                yield found(CODE, SEVERITY, record.path, f"/waivers/{index}", message, HINT)
