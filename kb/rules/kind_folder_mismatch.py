"""A record's `kind` must match the folder it lives in.

Folders and kinds: flops/ flop_class, hardware/ accelerator, interconnects/
interconnect, models/ model, receipts/ receipt, sources/ source, strategies/
strategy, placements/ placement, proposals/ proposal.

Why: the folder picks the schema and the site section; a record in the wrong
folder would be validated against the wrong contract.

Bad (in records/hardware/x.yaml):

    kind: interconnect

Good:

    kind: accelerator
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.findings import Finding, Severity
from kb.model import FOLDER_BY_KIND, KnowledgeBase
from kb.rules._base import found

READS = "record"
CODE = "ID002"
NAME = "kind-folder-mismatch"
SEVERITY = Severity.ERROR
HINT = "set kind: to the kind of the record's folder, or move the file"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        claimed = record.data.get("kind")
        if not record.kind:
            folder = record.id.split("/")[0]
            known = ", ".join(f"{f}/" for f in sorted(FOLDER_BY_KIND.values()))
            message = f"folder {folder!r} is not a kind folder"
            yield found(
                CODE, SEVERITY, record.path, "", message, f"move the file under one of {known}"
            )
        elif claimed != record.kind:
            message = (
                f"kind is {claimed!r} but files in {record.id.split('/')[0]}/ are {record.kind!r}"
            )
            yield found(CODE, SEVERITY, record.path, "/kind", message, f"set kind: {record.kind}")
