"""A record whose content changed since the base revision must carry a new version.

The new version needs a higher `version` and a new history entry.

Checked only with `kb validate --base REV`. "Content" is the parsed record
without `version` and `history`: reformatting, comments and key order do not
count as a change; any changed value does.

Why: readers and other records cite a record at a version; a figure that
changes under the same version silently rewrites what was cited.

Bad (at REV: version 1, bandwidth 3072; now):

    version: 1
    memory:
      bandwidth: {value: 3350, unit: GB/s, basis: vendor-spec, source: sources/x}

Good:

    version: 2
    history:
      - {version: 1, date: "2026-11-30", change: First encoding.}
      - {version: 2, date: "2026-12-01", change: "HBM 3072 -> 3350 GB/s: the datasheet."}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "base"
CODE = "VR003"
NAME = "changed-without-version-bump"
SEVERITY = Severity.ERROR
HINT = "bump version and add a history entry: what changed, why"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record_id, before in sorted((kb.base or {}).items()):
        record = kb.records.get(record_id)
        if record is None or content(record.data) == content(before.data):
            continue
        if record.version <= before.version:
            message = (
                f"content changed since base but version is {record.version}"
                f" (base: {before.version})"
            )
            hint = f"set version: {before.version + 1} and add a history entry: what changed, why"
            yield found(CODE, SEVERITY, record.path, "/version", message, hint)
        elif len(record.history) <= len(before.history):
            message = (
                f"version went {before.version} -> {record.version} but history gained no entry"
            )
            yield found(
                CODE,
                SEVERITY,
                record.path,
                "/history",
                message,
                "add a history entry for the new version",
            )


def content(data: Any) -> Any:
    """The record without its version bookkeeping."""
    return {k: v for k, v in data.items() if k not in ("version", "history")}
