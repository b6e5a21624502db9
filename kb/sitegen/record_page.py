"""The context of one record's page: every field, equations, evidence, history, used-by."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from kb.model import KnowledgeBase, Record, Reference
from kb.sitegen import urls
from kb.sitegen.equations_view import equations_context
from kb.sitegen.fields import link_for, text_node, value_tree
from kb.sitegen.flop_chart import flop_charts
from kb.sitegen.ledger_view import ledger_context

HEADER_FIELDS = ("kind", "id", "title", "version", "status", "summary", "tags", "history")
SECTION_FIELDS = ("symbols", "equations", "derivations", "claims", "evidence")


def record_context(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Everything the record template shows, as plain data (no markup)."""
    return {
        "record": record,
        "tags": _tags(record),
        "summary": str(record.data.get("summary") or ""),
        "kind_url": urls.kind_index(record.kind),
        "page_url": urls.record_page(record.id),
        "json_url": urls.record_json(record.id),
        "fields": fields_tree(record, kb),
        "evidence": evidence_rows(record, kb),
        "history": history_rows(record),
        "used_by": used_by(record, kb),
        "waivers": record.waivers,
        "equations": equations_context(record, kb),
        **charts_and_ledger(record, kb),
    }


def charts_and_ledger(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Give a flop class its chart, and a placement its ledger and stacked chart."""
    if record.kind == "placement":
        ledger, charts = ledger_context(record, kb)
        return {"ledger": ledger, "charts": charts}
    charts = flop_charts(record, kb) if record.kind == "flop_class" else []
    return {"ledger": {"shown": False}, "charts": charts}


def _tags(record: Record) -> list[str]:
    tags = record.data.get("tags")
    return [str(t) for t in tags] if isinstance(tags, list) else []


def fields_tree(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Return the record's own fields (those without a section of their own) as a tree."""
    rest = {
        key: value
        for key, value in record.data.items()
        if key not in HEADER_FIELDS and key not in SECTION_FIELDS and key != "waivers"
    }
    return value_tree(rest, kb)


def evidence_rows(record: Record, kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Receipts that confirm, refute or give context to a flop class."""
    items = record.data.get("evidence")
    if not isinstance(items, list):
        return []
    return [
        {
            "receipt": link_for(str(item.get("receipt", "")), kb),
            "verdict": str(item.get("verdict", "")),
            "note": text_node(str(item.get("note", "")), kb) if item.get("note") else None,
        }
        for item in items
        if isinstance(item, Mapping)
    ]


def history_rows(record: Record) -> list[dict[str, str]]:
    """List the version history, newest first."""
    rows = [
        {"version": str(h.get("version", "")), "date": str(h.get("date", "")),
         "change": str(h.get("change", ""))}
        for h in record.history
    ]
    return list(reversed(rows))


def referrer_index(kb: KnowledgeBase) -> dict[str, list[Reference]]:
    """Target id -> the references to it, built once per knowledge base (not per page)."""
    cached = _REFERRERS.get(id(kb))
    if cached is not None and cached[0]() is kb:
        return cached[1]
    index: dict[str, list[Reference]] = {}
    for ref in kb.references:
        index.setdefault(ref.target.partition("#")[0], []).append(ref)
    _REFERRERS[id(kb)] = (weakref.ref(kb), index)
    return index


_REFERRERS: dict[int, tuple[weakref.ref[KnowledgeBase], dict[str, list[Reference]]]] = {}


def used_by(record: Record, kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Every record that references this one, with the fields that do."""
    fields: dict[str, list[str]] = {}
    for ref in referrer_index(kb).get(record.id, []):
        if ref.source_id != record.id:
            fields.setdefault(ref.source_id, []).append(_pointer_to_dotted(ref.pointer))
    return [
        {"link": link_for(source_id, kb), "fields": sorted(set(paths))}
        for source_id, paths in sorted(fields.items())
    ]


def _pointer_to_dotted(pointer: str) -> str:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    return ".".join(parts)


def latest_changes(kb: KnowledgeBase, limit: int = 15) -> list[dict[str, Any]]:
    """List the newest history entries across all records (date, then id, newest first)."""
    entries = [
        (str(h.get("date", "")), record.id, str(h.get("version", "")), str(h.get("change", "")))
        for record in kb
        for h in record.history
    ]
    entries.sort(key=lambda e: (e[0], e[1], int(e[2]) if e[2].isdigit() else 0), reverse=True)
    return [
        {"date": date, "link": link_for(record_id, kb), "version": version, "change": change}
        for date, record_id, version, change in entries[:limit]
    ]
