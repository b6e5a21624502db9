"""What every rule module shares: the Rule protocol and a finding constructor."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from kb.findings import Finding, Location, Severity
from kb.model import KnowledgeBase


class Rule(Protocol):
    """A rule module: CODE, NAME, SEVERITY, a docstring that is its documentation, check().

    READS declares what its findings on a record depend on (kb.reads: "record",
    "claimants", "references", "ledger", "all-ids", "base" or "findings");
    tests/test_reads.py holds every rule to its declaration. The checker keeps the
    findings of a "record" rule per file, and kb.incremental re-checks what a change
    can reach through the declarations.
    """

    READS: str

    CODE: str
    NAME: str
    SEVERITY: Severity
    __doc__: str | None

    def check(self, kb: KnowledgeBase) -> Iterable[Finding]: ...


def found(
    code: str,
    severity: Severity,
    path: str,
    pointer: str,
    message: str,
    hint: str = "",
    related: tuple[Location, ...] = (),
) -> Finding:
    """A finding at a JSON pointer of a file; the checker resolves line:col later."""
    return Finding(code, severity, Location(path, 0, 0, pointer), message, hint, related)


def reported_by_stage(kb: KnowledgeBase, code: str) -> Iterator[Finding]:
    """Findings of `code` that the loader or the schema stage produced for this run."""
    from kb.schema import schema_findings  # local: jsonschema loads only when checking

    for finding in (*kb.load_findings, *schema_findings(kb)):
        if finding.code == code:
            yield finding
