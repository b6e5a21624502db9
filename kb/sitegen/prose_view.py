"""Prose on the site: templates shown as value + unit linked to their figure, quotations marked.

A string is cut into parts: `text`; `figure` (a template: the value and unit it
shows, a link to the record and field it comes from, the figure's basis and
source); `broken` (a template that does not resolve: shown as written, flagged);
`quote` (a verbatim quotation, kept character for character). Nothing here
produces markup: the `prose` macro of _macros.html escapes and renders it.
"""

from __future__ import annotations

from typing import Any

from kb.model import QUANTITY_BASES, KnowledgeBase, Record
from kb.prose.render import Broken, ClaimValues, engine_claims, show
from kb.prose.scan import protected, templates
from kb.sitegen import urls


def has_markup(text: str) -> bool:
    """True when `text` may hold a template or a quotation (the fast path skips the rest)."""
    return "{" in text or '"' in text or "“" in text


def prose_parts(text: str, kb: KnowledgeBase, owner: Record) -> list[dict[str, Any]]:
    """The parts of `text`, a prose field of `owner`, in order."""
    by_start = {t.start: t for t in templates(text)}
    computed = _claim_values(kb)
    parts: list[dict[str, Any]] = []
    at = 0
    for start, end, kind in _outermost(protected(text)):
        if kind not in ("template", "quote") or (kind == "template" and start not in by_start):
            continue
        if start > at:
            parts.append({"kind": "text", "text": text[at:start]})
        if kind == "quote":
            parts.append({"kind": "quote", "text": text[start:end]})
        else:
            parts.append(_figure(show(kb, owner, by_start[start], computed)))
        at = end
    if at < len(text):
        parts.append({"kind": "text", "text": text[at:]})
    return parts


def _outermost(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Drop spans inside an earlier one (a template written inside a quotation stays text)."""
    kept: list[tuple[int, int, str]] = []
    for span in spans:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _figure(shown: Any) -> dict[str, Any]:
    if isinstance(shown, Broken):
        return {"kind": "broken", "text": shown.template.raw, "title": shown.message}
    url = urls.record_page(shown.record_id) + f"#{urls.field_anchor(shown.anchor)}"
    if shown.anchor.startswith("claim:"):  # the claim's row (kb.sitegen.equations_view)
        url = urls.record_page(shown.record_id) + "#claim-" + shown.anchor.removeprefix("claim:")
    source = None
    if shown.source:
        source = {"text": shown.source, "url": urls.record_page(shown.source)}
    return {
        "kind": "figure",
        "value": shown.value,
        "unit": shown.unit,
        "url": url,
        "title": f"{shown.record_id} {shown.anchor}",
        "basis": shown.basis,
        "basis_class": shown.basis if shown.basis in QUANTITY_BASES else "derived",
        "source": source,
    }


def _claim_values(kb: KnowledgeBase) -> ClaimValues:
    found = kb.memo.get("prose_claims")
    if found is None:
        found = kb.memo["prose_claims"] = engine_claims(kb)
    return found
