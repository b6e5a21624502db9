"""An erratum link names a claim of the record that is an erratum.

Why: a statement in prose (a scales_with or workaround item) that kb refutes
points at the erratum claim that quotes it (`erratum: <claim id>`), so the site
and kb show print "the source says X; kb computes Y" beside it. A link to a
claim that does not exist, or is no erratum, shows nothing; so does an
erratum's `corrected_by` that names no claim of the record.

Bad:

    workarounds:
      - {id: rs-ag, text: "... halves B*", erratum: rs-ag-halves}   # no such claim

Good:

    workarounds:
      - {id: rs-ag, text: "... halves B*", erratum: rs-ag-halves-seed}
    claims:
      - {id: rs-ag-halves-seed, kind: effect, ..., factor: 0.5,
         erratum: {source: sources/seed-003-tp-crossover, reason: "...", corrected_by: rs-ag}}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kb.equations import codes
from kb.findings import Finding, Severity, pointer_join
from kb.kinds import EQUATION_KINDS, views
from kb.kinds.flop_class import Claim, EquationSections
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "views"
CODE = codes.ERRATUM_LINK_UNKNOWN
NAME = "erratum-link-unknown"
SEVERITY = Severity.ERROR
HINT = "name the record's erratum claim by its id"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    """A record that fails its schema has no view and is not checked (SC001 reports it)."""
    checked = views(kb)
    for kind in EQUATION_KINDS:
        for record in kb.of_kind(kind):
            sections = checked.equations(record) if kb.in_focus(record) else None
            if sections is not None:
                yield from _findings(record.path, sections)


def _findings(path: str, sections: EquationSections) -> Iterator[Finding]:
    claims = {claim.id: claim for claim in sections.claims}
    for pointer, claim_id in sections.erratum_links:
        claim = claims.get(claim_id)
        if claim is None or claim.erratum is None:
            what = "no claim" if claim is None else "a claim without erratum:"
            message = f"erratum link {claim_id!r} names {what} of this record"
            yield found(CODE, SEVERITY, path, pointer, message, _hint(claims))
    for claim in sections.claims:
        corrected = claim.erratum.corrected_by if claim.erratum is not None else ""
        if corrected and corrected not in claims:
            yield found(
                CODE,
                SEVERITY,
                path,
                pointer_join("/claims", claim.index, "erratum", "corrected_by"),
                f"claim {claim.id}: corrected_by {corrected!r} names no claim of this record",
                "name the claim that holds, by its id",
            )


def _hint(claims: Mapping[str, Claim]) -> str:
    errata = sorted(i for i, c in claims.items() if c.erratum is not None)
    return (
        ("the record's erratum claims: " + ", ".join(errata))
        if errata
        else ("add the erratum claim (with erratum: {source, reason}) that quotes the statement")
    )
