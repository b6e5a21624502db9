"""The offline search index: a small JS file (`window.SEARCH_INDEX = [...]`).

A script file rather than fetched JSON, so search works from file:// as well as
over http. Entries carry id, title, kind, URL and a short text; the index is
written with sorted keys so two builds produce the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from kb.model import KnowledgeBase, Record
from kb.sitegen import urls

TEXT_FIELDS = ("summary", "text", "notes", "change")
TEXT_LIMIT = 400


def search_entries(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """One entry per record, in id order."""
    return [
        {
            "id": record.id,
            "title": record.title,
            "kind": record.kind,
            "url": urls.record_page(record.id),
            "text": record_text(record),
        }
        for record in kb
    ]


def record_text(record: Record) -> str:
    """Return a record's searchable prose, whitespace-collapsed and cut to a fixed length."""
    parts = [str(record.data.get(key, "")) for key in TEXT_FIELDS if record.data.get(key)]
    tags = record.data.get("tags")
    if isinstance(tags, list):
        parts.append(" ".join(str(t) for t in tags))
    return " ".join(" ".join(parts).split())[:TEXT_LIMIT]


def search_index_script(kb: KnowledgeBase) -> str:
    """Write the index as a script; `<` is escaped so no record text can close a tag."""
    payload = json.dumps(
        search_entries(kb), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    payload = payload.replace("<", "\\u003c").replace("\u2028", "\\u2028")
    payload = payload.replace("\u2029", "\\u2029")
    return f"window.SEARCH_INDEX = {payload};\n"
