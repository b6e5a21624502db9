"""Two records must not share an id.

Why: an id is a permanent address; two records under one id make every
reference to it ambiguous. (Paths are unique, so this happens when records
are validated from several trees or a file's `id` copies another's.)

Bad:

    # records/hardware/a.yaml and records/hardware/b.yaml both say
    id: hardware/a

Good:

    # each file's id is its own path
    id: hardware/b
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Location, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "claimants"
CODE = "ID003"
NAME = "duplicate-id"
SEVERITY = Severity.ERROR
HINT = "give each record its own id"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    claimed: dict[str, list[tuple[str, str]]] = {}
    for record in (*kb, *kb.duplicates):
        value = record.data.get("id")
        if isinstance(value, str):
            claimed.setdefault(value, []).append((record.path, record.id))
    for value, owners in sorted(claimed.items()):
        if len(owners) < 2:
            continue
        first_path = owners[0][0]
        for path, _ in owners[1:]:
            message = f"id {value!r} is also claimed by {first_path}"
            related = (Location(first_path, 0, 0, "/id"),)
            yield found(CODE, SEVERITY, path, "/id", message, HINT, related)
