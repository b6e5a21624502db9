"""Every field of a record as a small typed tree the record template renders recursively.

Quantities (`{value, unit, basis, source}`) become one node with a provenance
badge and a link to their source; provenance blocks (a map with `basis` but no
`value`, such as a model's geometry) carry the badge once; a string that is one
of its record's references (kb.reads: the schemas' `x-kb-ref`, bindings
`id#field`) to an existing record becomes a link, and so do http(s) URLs (links out,
urls.external: a `url` field whole or not at all); prose of a record (`owner`)
is cut into text, templates, quotations and the URLs written in it
(prose_view). Nothing here produces markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.model import KnowledgeBase, Record, split_binding
from kb.reads import graph_of
from kb.sitegen import urls
from kb.sitegen.prose_view import has_markup, prose_parts

QUANTITY_CORE = ("value", "unit", "basis", "source")  # the rest are shown as notes
URL_FIELDS = ("url",)  # a field that is one URL: never prose, so never linked in part


def value_tree(
    value: Any,
    kb: KnowledgeBase,
    path: str = "",
    owner: Record | None = None,
    of: Record | None = None,
) -> dict[str, Any]:
    """Return the display node of `value` found at dotted `path` of a record.

    `owner`: the record whose prose this is (its templates are shown); `of`
    (default `owner`): the record the value belongs to, whose references are links.
    """
    of = of or owner
    if type(value) is dict or isinstance(value, Mapping):  # dict first: Mapping's check is slow
        if "value" in value and "unit" in value:
            return quantity_node(value, kb, path, owner)
        return _map_node(value, kb, path, owner, of)
    if isinstance(value, list):
        items = [value_tree(v, kb, _join(path, str(i)), owner, of) for i, v in enumerate(value)]
        return {"type": "list", "items": items}
    if isinstance(value, str):
        if path.rpartition(".")[2] in URL_FIELDS:  # a URL is linked whole or not at all
            return text_node(value, kb, of=of)
        return text_node(value, kb, owner, of)
    return {"type": "scalar", "text": format_scalar(value)}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _map_node(
    value: Mapping[str, Any], kb: KnowledgeBase, path: str, owner: Record | None, of: Record | None
) -> dict[str, Any]:
    provenance = None
    if "basis" in value and "value" not in value:
        provenance = provenance_of(value, kb)
    items = [
        {
            "key": str(key),
            "node": value_tree(item, kb, _join(path, str(key)), owner, of),
            "anchor": urls.field_anchor(_join(path, str(key))),
        }
        for key, item in value.items()
        if not (provenance and key in ("basis", "source"))
    ]
    return {"type": "map", "items": items, "provenance": provenance}


def quantity_node(
    value: Mapping[str, Any], kb: KnowledgeBase, path: str = "", owner: Record | None = None
) -> dict[str, Any]:
    """Show a figure with its unit, provenance badge, source link and any notes."""
    extras = [
        (str(key), _extra(item, kb, owner))
        for key, item in value.items()
        if key not in QUANTITY_CORE and item is not None
    ]
    return {
        "type": "quantity",
        "value": format_scalar(value.get("value")),
        "unit": "" if value.get("unit") in (None, "1") else str(value.get("unit")),
        "provenance": provenance_of(value, kb),
        "extras": extras,
    }


def _extra(item: Any, kb: KnowledgeBase, owner: Record | None) -> Any:
    """A quantity's note or other extra: prose parts when it has templates or quotations."""
    if isinstance(item, str) and owner is not None and has_markup(item):
        return {"parts": prose_parts(item, kb, owner)}
    return format_scalar(item)


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


def text_node(
    text: str, kb: KnowledgeBase, owner: Record | None = None, of: Record | None = None
) -> dict[str, Any]:
    """Show a string: a link when it names a record its record references, else text.

    Its record is `of` (default `owner`); the references are kb.reads' graph's, so
    a page links no record its inputs do not hold. Long or multi-line text is `long`.

    Text of a record (`owner`) that holds templates or quotations also carries
    `parts` (prose_view): the page shows each template's value, linked.
    """
    if _is_reference(text, kb, of or owner):
        return {"type": "ref", "link": link_for(text, kb)}
    href = urls.external(text) if "://" in text else None
    if href is not None:
        return {"type": "url", "href": href, "text": text.strip()}
    node = {"type": "text", "text": text, "long": "\n" in text.strip() or len(text) > 160}
    if owner is not None and has_markup(text):
        node["parts"] = prose_parts(text, kb, owner)
    return node


def _is_reference(text: str, kb: KnowledgeBase, record: Record | None) -> bool:
    """True when `text` (`id` or `id#field`) is a reference `record` makes to a record."""
    if record is None or "/" not in text or " " in text:
        return False
    target = split_binding(text)[0]
    return target in graph_of(kb).targets(record.id) and kb.get(target) is not None


def format_scalar(value: Any) -> str:
    """Numbers as authored (no float noise), booleans as yes/no, None as an em dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
