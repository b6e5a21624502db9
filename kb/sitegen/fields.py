"""Every field of a record as a small typed tree the record template renders recursively.

Quantities (`{value, unit, basis, source}`) become one node with a provenance
badge and a link to their source; provenance blocks (a map with `basis` but no
`value`, such as a model's geometry) carry the badge once; strings that name a
record (or `id#field` bindings) become links. Nothing here produces markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.model import KnowledgeBase, split_binding
from kb.sitegen import urls

QUANTITY_CORE = ("value", "unit", "basis", "source")  # the rest are shown as notes


def value_tree(value: Any, kb: KnowledgeBase, path: str = "") -> dict[str, Any]:
    """Return the display node of `value` found at dotted `path` of a record."""
    if isinstance(value, Mapping):
        if "value" in value and "unit" in value:
            return quantity_node(value, kb, path)
        return _map_node(value, kb, path)
    if isinstance(value, list):
        items = [value_tree(item, kb, _join(path, str(i))) for i, item in enumerate(value)]
        return {"type": "list", "items": items}
    if isinstance(value, str):
        return text_node(value, kb)
    return {"type": "scalar", "text": format_scalar(value)}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _map_node(value: Mapping[str, Any], kb: KnowledgeBase, path: str) -> dict[str, Any]:
    provenance = None
    if "basis" in value and "value" not in value:
        provenance = provenance_of(value, kb)
    items = [
        {"key": str(key), "node": value_tree(item, kb, _join(path, str(key))),
         "anchor": urls.field_anchor(_join(path, str(key)))}
        for key, item in value.items()
        if not (provenance and key in ("basis", "source"))
    ]
    return {"type": "map", "items": items, "provenance": provenance}


def quantity_node(value: Mapping[str, Any], kb: KnowledgeBase, path: str = "") -> dict[str, Any]:
    """Show a figure with its unit, provenance badge, source link and any notes."""
    extras = [(str(key), format_scalar(item)) for key, item in value.items()
              if key not in QUANTITY_CORE and item is not None]
    return {
        "type": "quantity",
        "value": format_scalar(value.get("value")),
        "unit": "" if value.get("unit") in (None, "1") else str(value.get("unit")),
        "provenance": provenance_of(value, kb),
        "extras": extras,
    }


def provenance_of(value: Mapping[str, Any], kb: KnowledgeBase) -> dict[str, Any]:
    """Describe a figure's badge: its basis and the source it cites (linked if it exists)."""
    basis = str(value.get("basis") or "unverified")
    source = value.get("source")
    return {"basis": basis, "source": link_for(str(source), kb) if source else None}


def link_for(target: str, kb: KnowledgeBase) -> dict[str, Any]:
    """Link to a record (or to a field of it); `url` is None when it does not resolve."""
    record_id, field = split_binding(target)
    record = kb.get(record_id)
    if record is None:
        return {"text": target, "url": None, "title": ""}
    anchor = f"#{urls.field_anchor(field)}" if field else ""
    return {"text": target, "url": urls.record_page(record_id) + anchor, "title": record.title}


def text_node(text: str, kb: KnowledgeBase) -> dict[str, Any]:
    """Show a string: a link when it names a record, else text (`long` if it is prose)."""
    if "/" in text and " " not in text and kb.get(split_binding(text)[0]) is not None:
        return {"type": "ref", "link": link_for(text, kb)}
    return {"type": "text", "text": text, "long": "\n" in text.strip() or len(text) > 160}


def format_scalar(value: Any) -> str:
    """Numbers as authored (no float noise), booleans as yes/no, None as an em dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
