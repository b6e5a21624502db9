"""The current version must have a history entry.

Every record carries `version` (an integer from 1) and `history`, one entry per
version with its date and what changed and why.

Why: a record is never silently edited; the history is how a reader learns
what a figure used to say and why it changed.

Bad:

    version: 2
    history:
      - {version: 1, date: "2026-11-30", change: First encoding.}

Good:

    version: 2
    history:
      - {version: 1, date: "2026-11-30", change: First encoding.}
      - {version: 2, date: "2026-12-01", change: "HBM 3072 -> 3350 GB/s (datasheet)."}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "record"
CODE = "VR001"
NAME = "missing-history-entry"
SEVERITY = Severity.ERROR
HINT = "add a history entry for the version: date, and what changed and why"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        version = record.version
        if version < 1:
            continue  # the schema reports a missing or invalid version
        versions = [h.get("version") for h in record.history]
        if version not in versions:
            listed = ", ".join(str(v) for v in versions) or "none"
            message = f"version is {version} but history has entries for {listed}"
            hint = f"add a history entry for version {version}: date, and what changed and why"
            yield found(CODE, SEVERITY, record.path, "/version", message, hint)
