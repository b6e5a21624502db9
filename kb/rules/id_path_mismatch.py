"""A record's `id` must equal its path under records/ without `.yaml`.

Why: the path is where readers, links and git history find a record; an id
that says something else makes two names for one thing, and a renamed file
would silently keep its old id.

Bad (in records/hardware/nvidia-h100-sxm.yaml):

    id: hardware/h100

Good:

    id: hardware/nvidia-h100-sxm
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "record"
CODE = "ID001"
NAME = "id-path-mismatch"
SEVERITY = Severity.ERROR
HINT = "set id: to the record's path under records/, without .yaml"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in (*kb, *kb.duplicates):
        claimed = record.data.get("id")
        if isinstance(claimed, str) and claimed != record.id:
            message = f"id is {claimed!r} but the file's path says {record.id!r}"
            yield found(CODE, SEVERITY, record.path, "/id", message, f"set id: {record.id}")
