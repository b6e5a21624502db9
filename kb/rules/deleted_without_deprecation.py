"""A record may be deleted only after it was deprecated at the base revision.

Checked only with `kb validate --base REV`. Policy: first set
`status: deprecated` (and `superseded_by:` where a replacement exists) in one
change; delete the file in a later one. A rename is a deletion plus an addition,
so it follows the same path.

Why: records have permanent addresses that other records, the site and
readers' notes cite; a deprecation makes the removal visible before it breaks
anything.

Bad: deleting records/hardware/x.yaml while its status at REV is `reviewed`.

Good: a change that sets `status: deprecated`, then a later one that deletes it.
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "base"
CODE = "VR004"
NAME = "deleted-without-deprecation"
SEVERITY = Severity.ERROR
HINT = "restore it, set status: deprecated (and superseded_by), delete it later"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record_id, before in sorted(kb.deleted.items()):
        if before.status != "deprecated":
            message = (
                f"record {record_id!r} was deleted but its status at base was {before.status!r}"
            )
            yield found(CODE, SEVERITY, before.path, "", message, HINT)
