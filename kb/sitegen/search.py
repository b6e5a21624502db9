"""The offline search index: a small JS file (`window.SEARCH_INDEX = [...]`).

A script file rather than fetched JSON, so search works from file:// as well as
over http. Entries carry id, title, kind, URL, a short text and the record's
figures and short terms; the index is written with sorted keys so two builds
produce the same bytes.

The text is what the page shows, not what the YAML says: a template such as
`{hardware/h100#memory.bandwidth}` is indexed as its value and unit (prose_view).
Figures are indexed as authored and in the readable unit of their dimension
(`3350 GB/s` is also `3.35 TB/s`, kb/numfmt.py), so a reader finds a figure by
either number. Short string leaves (`HBM3e`, `all-reduce`) are terms. Matching
(prefix, typo-tolerant, kinds filter) is static/search.js.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb import numfmt
from kb.model import KnowledgeBase, Record
from kb.sitegen import inline_code, urls
from kb.sitegen.prose_view import has_markup, prose_parts

TEXT_FIELDS = ("summary", "text", "notes", "change")
TEXT_LIMIT = 400
TERM_LIMIT = 40  # a string leaf longer than this is prose, not a term
FIELD_LIMIT = 600  # characters of figures, and of terms, per entry
SKIPPED = ("history", "waivers", "id", "kind", "title", "version", "status", *TEXT_FIELDS)


def search_entry(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """A record's entry: what it reads is the record and those its templates show."""
    return {
        "id": record.id,
        "title": record.title,
        "kind": record.kind,
        "url": urls.record_page(record.id),
        "text": record_text(record, kb),
        "figures": _cut(" ".join(dict.fromkeys(figure_texts(record.data)))),
        "terms": _cut(" ".join(dict.fromkeys(term_texts(record.data)))),
    }


def _cut(text: str) -> str:
    return text[:FIELD_LIMIT].rsplit(" ", 1)[0] if len(text) > FIELD_LIMIT else text


def record_text(record: Record, kb: KnowledgeBase | None = None) -> str:
    """Return a record's searchable prose as rendered, whitespace-collapsed and cut."""
    parts = [
        rendered(str(record.data[key]), record, kb) for key in TEXT_FIELDS if record.data.get(key)
    ]
    tags = record.data.get("tags")
    if isinstance(tags, list):
        parts.append(" ".join(str(t) for t in tags))
    return inline_code.plain(" ".join(" ".join(parts).split()))[:TEXT_LIMIT]


def rendered(text: str, record: Record, kb: KnowledgeBase | None) -> str:
    """Prose with each template shown as its value and unit, as the page shows it."""
    if kb is None or not has_markup(text):
        return text
    pieces = []
    for part in prose_parts(text, kb, record):
        if part["kind"] == "figure":
            pieces.append(f"{part['value']} {part['unit']}".strip())
        else:
            pieces.append(str(part["text"]))
    return "".join(pieces)


def figure_texts(node: Any, key: str = "") -> list[str]:
    """Every quantity as authored (`3350 GB/s`) and in its readable unit (`3.35 TB/s`)."""
    found: list[str] = []
    _figures_into(found, node, key)
    return found


def _figures_into(found: list[str], node: Any, key: str) -> None:
    if key in SKIPPED:
        return
    if isinstance(node, Mapping):
        if "value" in node and "unit" in node:
            found.extend(_quantity_texts(node.get("value"), str(node.get("unit"))))
            return
        for child_key, child in node.items():
            _figures_into(found, child, str(child_key))
    elif isinstance(node, list):
        for child in node:
            _figures_into(found, child, "")


def _quantity_texts(value: Any, unit: str) -> tuple[str, ...]:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return ()
    return _figure_forms(str(value), unit)


@functools.lru_cache(maxsize=8192)
def _figure_forms(value: str, unit: str) -> tuple[str, ...]:
    """A figure (its text) as authored and in its readable unit, once per distinct figure."""
    shown = numfmt.unit_text(unit) if unit != "1" else ""
    authored = f"{value} {shown}".strip()
    scale = _unit_scale(unit)
    if scale is None or scale[1] not in numfmt.SCALES:
        return (authored,)
    try:
        exact = Fraction(value) * scale[0]
    except (ValueError, ZeroDivisionError):
        return (authored,)
    return (authored, numfmt.human(exact, scale[1]))


@functools.lru_cache(maxsize=1024)
def _unit_scale(unit: str) -> tuple[Fraction, str] | None:
    """(base units per `unit`, its dimension), or None for a unit kb does not know."""
    from kb.ledger.quantities import QuantityError, unit_scale

    try:
        return unit_scale(unit)
    except (QuantityError, ValueError, ZeroDivisionError):
        return None


def term_texts(node: Any, key: str = "") -> list[str]:
    """Short string leaves outside prose and provenance: `HBM3e`, `nvidia`, `all-reduce`."""
    found: list[str] = []
    _terms_into(found, node, key)
    return found


_NOT_TERMS = frozenset((*SKIPPED, "source", "basis", "note", "locator", "unit", "tier"))


def _terms_into(found: list[str], node: Any, key: str) -> None:
    if key in _NOT_TERMS:
        return
    if isinstance(node, Mapping):
        for child_key, child in node.items():
            _terms_into(found, child, str(child_key))
    elif isinstance(node, list):
        for child in node:
            _terms_into(found, child, "")
    elif isinstance(node, str) and len(node) <= TERM_LIMIT and "/" not in node:
        found.append(node)


def entry_text(record: Record, kb: KnowledgeBase) -> str:
    """One entry as the index writes it (sorted keys, escaped): kept between builds as is."""
    return _escaped(
        json.dumps(search_entry(record, kb), sort_keys=True, ensure_ascii=False, separators=SEP)
    )


def index_script(entries: list[str]) -> str:
    """The index from its entries' texts: the bytes of one `json.dumps` of the whole list."""
    return f"window.SEARCH_INDEX = [{','.join(entries)}];\n"


SEP = (",", ":")


def _escaped(payload: str) -> str:
    payload = payload.replace("<", "\\u003c").replace("\u2028", "\\u2028")
    return payload.replace("\u2029", "\\u2029")
