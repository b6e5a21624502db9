"""The context of one record's page: every field, equations, evidence, history, used-by."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kb.equations.verdict import LINKED
from kb.findings import pointer_parts
from kb.kinds import views
from kb.model import KnowledgeBase, Record
from kb.reads import graph_of
from kb.sitegen import urls
from kb.sitegen.calculator import calculator
from kb.sitegen.equations_view import equations_context, errata_by_claim
from kb.sitegen.explorer import plan_link
from kb.sitegen.fields import link_for, text_node, value_tree
from kb.sitegen.flop_chart import chart_or_reason
from kb.sitegen.headline import headline
from kb.sitegen.ledger_view import ledger_context

FIELDS_OPEN = 8  # more top-level fields than this: the field-by-field data starts collapsed
HEADER_FIELDS = ("kind", "id", "title", "version", "status", "summary", "tags", "history")
SECTION_FIELDS = ("symbols", "equations", "derivations", "claims", "evidence")


def record_context(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Everything the record template shows, as plain data (no markup)."""
    context = {
        "record": record,
        "tags": _tags(record),
        "summary": _summary(record, kb),
        "kind_url": urls.kind_index(record.kind),
        "page_url": urls.record_page(record.id),
        "json_url": urls.record_json(record.id),
        "fields": fields_tree(record, kb),
        "evidence": evidence_rows(record, kb),
        "history": history_rows(record),
        "used_by": used_by(record, kb),
        "external_url": urls.external(str(record.data.get("url") or "")),
        "waivers": record.waivers,
        "equations": equations_context(record, kb),
        "calculator": calculator(record, kb),  # i16-site-b
        "plan_link": plan_link(record),  # issue 36: the planner's worked tables
        **charts_and_ledger(record, kb),
    }
    context["headline"] = headline(record, kb, context["equations"]["claims"])
    context["key_results"] = key_results(record, kb, context["ledger"])
    context["errata"] = errata_statements(context["fields"])
    context["fields_long"] = len(context["fields"].get("items", [])) > FIELDS_OPEN
    return context


def key_results(
    record: Record, kb: KnowledgeBase, ledger: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The few figures a reader looks for first (tables.KEY_COLUMNS), or a placement's totals."""
    from kb.sitegen.tables import KEY_COLUMNS, cell

    rows = [
        {"label": label, "node": cell(record, path, kb)["node"]}
        for label, path in KEY_COLUMNS.get(record.kind, ())
        if record.get(path) is not None
    ]
    for side in ledger.get("candidates", []):
        shown = side["total"] or "infeasible: the state does not fit"
        rows.append(
            {
                "label": f"T_total, {side['name']}",
                "node": {"type": "scalar", "text": shown},
                "anchor": side["anchor"],
            }
        )
    for comparison in ledger.get("comparisons", []):
        if comparison["efficiency"]:
            rows.append(
                {
                    "label": f"Speed per step, {comparison['title']}",
                    "node": {"type": "scalar", "text": speed_words(comparison["efficiency"])},
                }
            )
    return rows


def speed_words(efficiency: str) -> str:
    """`1.453` -> `1.453x faster (T_r/T_c = 1.453)`: the placement efficiency in words."""
    try:
        value = float(efficiency)
    except ValueError:
        return efficiency
    if value > 1:
        return f"{efficiency}\u00d7 faster (T_r/T_c = {efficiency})"
    if value < 1:
        return f"{efficiency}\u00d7 the speed: slower (T_r/T_c = {efficiency})"
    return f"as fast (T_r/T_c = {efficiency})"


def errata_statements(fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each scales_with/workaround statement an erratum corrects, with that erratum."""
    found = []
    for entry in fields.get("items", []):
        if entry["key"] not in LINKED or entry["node"].get("type") != "list":
            continue
        for index, element in enumerate(entry["node"]["items"]):
            items = element.get("items", []) if element.get("type") == "map" else []
            by_key = {field["key"]: field for field in items}
            erratum = by_key.get("erratum", {}).get("node", {})
            if erratum.get("type") != "erratum":
                continue
            statement = by_key.get("text", by_key.get("name", by_key.get("id")))
            found.append(
                {
                    "statement": statement["node"] if statement else None,
                    "erratum": erratum,
                    "anchor": urls.field_anchor(f"{entry['key']}.{index}.erratum"),
                    "where": f"{entry['key']}[{index}]",
                }
            )
    return found


def charts_and_ledger(record: Record, kb: KnowledgeBase) -> dict[str, Any]:
    """Give a flop class its chart (or `no_chart`: why not), a placement its ledger and chart."""
    if record.kind == "placement":
        ledger, charts = ledger_context(record, kb)
        return {"ledger": ledger, "charts": charts, "no_chart": ""}
    if record.kind != "flop_class":
        return {"ledger": {"shown": False}, "charts": [], "no_chart": ""}
    charts, reason = chart_or_reason(record, kb)
    return {"ledger": {"shown": False}, "charts": charts, "no_chart": reason}


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
    tree = value_tree(rest, kb, owner=record)
    linked = [rest.get(section) for section in LINKED]
    if any(
        isinstance(e, Mapping) and "erratum" in e
        for items in linked
        if isinstance(items, list)
        for e in items
    ):
        _mark_errata(tree, errata_by_claim(record, kb))
    return tree


def _mark_errata(tree: dict[str, Any], errata: Mapping[str, Mapping[str, str]]) -> None:
    """Show an `erratum:` link of a scales_with/workaround item as its claim's erratum, red."""
    for entry in tree.get("items", []):
        if entry["key"] not in LINKED or entry["node"].get("type") != "list":
            continue
        for element in entry["node"]["items"]:
            for field in element.get("items", []) if element.get("type") == "map" else []:
                if field["key"] == "erratum" and field["node"].get("type") == "text":
                    claim = field["node"]["text"]
                    found = errata.get(
                        claim,
                        {"text": "no such claim in this record", "anchor": "", "state": "invalid"},
                    )
                    field["node"] = {"type": "erratum", "claim": claim, **found}


def _summary(record: Record, kb: KnowledgeBase) -> dict[str, Any] | None:
    summary = record.data.get("summary")
    return text_node(str(summary), kb, record) if summary else None


def evidence_rows(record: Record, kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Receipts that confirm, refute or give context to a flop class.

    From the flop class's view (kb.kinds): one that fails its schema has none, and
    its equations section says why.
    """
    sections = views(kb).equations(record) if record.kind == "flop_class" else None
    return [
        {
            "receipt": link_for(item.receipt, kb),
            "verdict": item.verdict,
            "note": text_node(item.note, kb, record) if item.note else None,
        }
        for item in (sections.evidence if sections is not None else ())
    ]


def history_rows(record: Record) -> list[dict[str, str]]:
    """List the version history, newest first."""
    rows = [
        {
            "version": str(h.get("version", "")),
            "date": str(h.get("date", "")),
            "change": str(h.get("change", "")),
        }
        for h in record.history
    ]
    return list(reversed(rows))


def used_by(record: Record, kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Every record that references this one, with the fields that do (linked)."""
    fields: dict[str, dict[str, str]] = {}
    for ref in graph_of(kb).references_to(record.id):
        source = kb.get(ref.source_id)
        if source is None or source.id == record.id:
            continue
        parts = pointer_parts(ref.pointer)
        anchor = field_link_anchor(source, parts)
        url = urls.record_page(source.id) + (f"#{anchor}" if anchor else "")
        fields.setdefault(source.id, {})[".".join(parts)] = url
    return [
        {
            "link": link_for(source_id, kb),
            "fields": [{"text": text, "url": url} for text, url in sorted(paths.items())],
        }
        for source_id, paths in sorted(fields.items())
    ]


def field_link_anchor(record: Record, parts: list[str]) -> str:
    """The anchor of the deepest field of `parts` that the record's page renders ("" if none)."""
    top = parts[0] if parts else ""
    if top == "claims":
        claims = record.data.get("claims")
        index = parts[1] if len(parts) > 1 else ""
        if not (isinstance(claims, list) and index.isdigit() and int(index) < len(claims)):
            return ""
        claim = claims[int(index)]
        root = (
            {k: v for k, v in claim.items() if k not in ("id", "text")}
            if isinstance(claim, Mapping)
            else {}
        )
        depth = _anchored_depth(root, parts[2:])
        return urls.field_anchor(".".join(parts[: 2 + depth])) if depth else ""
    if top in HEADER_FIELDS or top in SECTION_FIELDS or top == "waivers":
        return ""
    depth = _anchored_depth(record.data, parts)
    return urls.field_anchor(".".join(parts[:depth])) if depth else ""


def _anchored_depth(node: Any, parts: list[str]) -> int:
    """How many leading `parts` end on a map key the field tree gives an id (mirrors fields.py)."""
    best = 0
    for depth, part in enumerate(parts, start=1):
        if isinstance(node, Mapping):
            is_quantity = "value" in node and "unit" in node
            provenance_key = "basis" in node and "value" not in node and part in ("basis", "source")
            if is_quantity or provenance_key or part not in node:
                return best
            node, best = node[part], depth
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return best
    return best


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
