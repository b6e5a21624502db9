"""Prose on the site: templates shown as value + unit linked to their figure, quotations marked.

A string is cut into parts: `text`; `figure` (a template: the value and unit it
shows, a link to the record and field it comes from, the figure's basis and
source); `broken` (a template that does not resolve: shown as written, flagged);
`quote` (a verbatim quotation, kept character for character); `url` (an
http(s) URL written in the text or a quotation: a link out, urls.external
deciding what may be one; anything else, `javascript:` or `data:` included,
stays text). Nothing here produces markup: kb.sitegen.html_nodes.prose
escapes and renders it, links with rel="noopener noreferrer".
"""

from __future__ import annotations

import re
from typing import Any

from kb.model import QUANTITY_BASES, KnowledgeBase, Record
from kb.prose.render import Broken, ClaimValues, engine_claims, show
from kb.prose.scan import protected, templates
from kb.reads import graph_of
from kb.run import Kept
from kb.sitegen import urls


def has_markup(text: str) -> bool:
    """True when `text` may hold a template, a quotation or a URL (the fast path skips the rest)."""
    return "{" in text or '"' in text or "“" in text or "://" in text


# A URL ends at a space, a quotation mark, a backtick or an angle bracket; sentence
# punctuation after it (and a closing bracket it did not open) is the sentence's.
_URL = re.compile(r"https?://[^\s<>\"'`“”‘’]+", re.IGNORECASE)
_TRAILING = ".,;:!?"


def url_parts(text: str) -> list[dict[str, Any]]:
    """`text` cut into text and `url` parts: only what urls.external accepts is a link."""
    parts: list[dict[str, Any]] = []
    at = 0
    for match in _URL.finditer(text):
        candidate = _trimmed(match.group(0))
        href = urls.external(candidate)
        if href is None:
            continue
        start = match.start()
        if start > at:
            parts.append({"kind": "text", "text": text[at:start]})
        parts.append({"kind": "url", "href": href, "text": candidate})
        at = start + len(candidate)
    if at < len(text):
        parts.append({"kind": "text", "text": text[at:]})
    return parts


def _trimmed(url: str) -> str:
    while url and (
        url[-1] in _TRAILING
        or (url[-1] == ")" and url.count(")") > url.count("("))
        or (url[-1] == "]" and url.count("]") > url.count("["))
    ):
        url = url[:-1]
    return url


def _with_links(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text parts split at their URLs; a quotation keeps its text and gains `parts` too."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if "://" not in part.get("text", "") or part["kind"] not in ("text", "quote"):
            out.append(part)
        elif part["kind"] == "text":
            out.extend(url_parts(part["text"]))
        else:
            inner = url_parts(part["text"])
            out.append({**part, "parts": inner} if any(p["kind"] == "url" for p in inner) else part)
    return out


def prose_parts(text: str, kb: KnowledgeBase, owner: Record) -> list[dict[str, Any]]:
    """The parts of `text`, a prose field of `owner`, in order.

    A template of a record `owner` does not reference (kb.reads' graph: templates
    in prose are references) stays text as written: a page reads no record beyond
    its inputs.
    """
    named = graph_of(kb).targets(owner.id) | {"", owner.id}
    by_start = {t.start: t for t in templates(text) if t.record_id in named}
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
    return _with_links(parts) if "://" in text else parts


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


CLAIM_VALUES: Kept[ClaimValues] = Kept("prose claim values")  # _claim_values, once per run


def _claim_values(kb: KnowledgeBase) -> ClaimValues:
    return kb.run.once(CLAIM_VALUES, lambda: engine_claims(kb))
