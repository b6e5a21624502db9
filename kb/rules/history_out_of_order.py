"""History entries must go forward: versions increase by one and dates never go back.

Why: the history is read as a timeline; an entry dated before its predecessor,
a skipped or repeated version, or an entry for a version the record has not
reached yet means the record was edited by hand in a way no one can audit.

Bad:

    version: 2
    history:
      - {version: 1, date: "2026-11-30", change: First encoding.}
      - {version: 2, date: "2026-10-01", change: Fixed a unit.}

Good:

    version: 2
    history:
      - {version: 1, date: "2026-11-30", change: First encoding.}
      - {version: 2, date: "2026-12-01", change: Fixed a unit.}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase, Record
from kb.rules._base import found

READS = "record"
CODE = "VR002"
NAME = "history-out-of-order"
SEVERITY = Severity.ERROR
HINT = "number entries 1, 2, 3, ..., with dates that never go backwards"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        yield from _check_record(record)


def _check_record(record: Record) -> Iterator[Finding]:
    previous_version, previous_date = 0, ""
    for index, entry in enumerate(record.history):
        version, date = entry.get("version"), entry.get("date")
        pointer = f"/history/{index}"
        if isinstance(version, int) and version != previous_version + 1:
            message = f"history entry is version {version}, expected {previous_version + 1}"
            yield found(
                CODE,
                SEVERITY,
                record.path,
                pointer + "/version",
                message,
                "number entries 1, 2, 3, ...",
            )
        if isinstance(version, int) and record.version and version > record.version:
            message = f"history has version {version} but the record is at version {record.version}"
            yield found(
                CODE, SEVERITY, record.path, pointer + "/version", message, "bump `version` too"
            )
        if isinstance(date, str) and previous_date and date < previous_date:
            message = f"date {date} is before the previous entry's {previous_date}"
            yield found(
                CODE, SEVERITY, record.path, pointer + "/date", message, "dates never go backwards"
            )
        if isinstance(version, int):
            previous_version = version
        if isinstance(date, str):
            previous_date = max(previous_date, date)
