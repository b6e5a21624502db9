"""An equation that `uses` another record's equation must name one that exists there.

`equations: {t_read: {uses: "flops/decode-weight-read#t_read"}}` takes that
record's equation `t_read` (its text, renamed through `map`) and checks it as
this record's own (kb/equations/compose.py). The record named must have an
equation with that id; a record that does not exist at all is RF001
(dangling-reference: `uses` is a reference, and one problem gets one finding).

Why: a composed model that silently lost its part is no model; the finding
lists the used record's equation ids.

Bad:

    equations:
      t_w: {uses: "flops/decode-weight-read#no_such_equation"}

Good:

    equations:
      t_w: {uses: "flops/decode-weight-read#step_bound_params"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.USES_TARGET_UNKNOWN
NAME = "uses-target-unknown"
SEVERITY = Severity.ERROR
HINT = "name an equation id the used record declares"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
