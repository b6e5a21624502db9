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
from typing import Any

from kb.equations import codes
from kb.equations.verdict import erratum_links
from kb.findings import Finding, Severity, pointer_join
from kb.model import KnowledgeBase
from kb.rules._base import found

READS = "record"
CODE = codes.ERRATUM_LINK_UNKNOWN
NAME = "erratum-link-unknown"
SEVERITY = Severity.ERROR
HINT = "name the record's erratum claim by its id"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    for record in kb:
        claims = _claims(record.data)
        for pointer, claim_id in erratum_links(record.data):
            claim = claims.get(claim_id)
            if claim is None or not isinstance(claim.get("erratum"), Mapping):
                what = "no claim" if claim is None else "a claim without erratum:"
                yield found(
                    CODE,
                    SEVERITY,
                    record.path,
                    pointer,
                    f"erratum link {claim_id!r} names {what} of this record",
                    _hint(claims),
                )
        listed = record.data.get("claims")
        for index, claim in enumerate(listed if isinstance(listed, list) else []):
            erratum = claim.get("erratum") if isinstance(claim, Mapping) else None
            corrected = erratum.get("corrected_by") if isinstance(erratum, Mapping) else None
            if isinstance(corrected, str) and corrected not in claims:
                pointer = pointer_join("/claims", index, "erratum", "corrected_by")
                yield found(
                    CODE,
                    SEVERITY,
                    record.path,
                    pointer,
                    f"claim {claim.get('id', index)}: corrected_by {corrected!r} names "
                    "no claim of this record",
                    "name the claim that holds, by its id",
                )


def _claims(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    claims = data.get("claims")
    return {
        str(c["id"]): c
        for c in (claims if isinstance(claims, list) else [])
        if isinstance(c, Mapping) and "id" in c
    }


def _hint(claims: Mapping[str, Mapping[str, Any]]) -> str:
    errata = sorted(i for i, c in claims.items() if isinstance(c.get("erratum"), Mapping))
    return (
        ("the record's erratum claims: " + ", ".join(errata))
        if errata
        else ("add the erratum claim (with erratum: {source, reason}) that quotes the statement")
    )
