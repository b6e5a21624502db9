"""Index tables: the key fields of each kind, and the hardware comparison table.

Which fields a table shows is data (`KEY_COLUMNS`, `HARDWARE_ROWS`); each cell is
a field-tree node plus a sort key, so the table sorts by number where it can.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb.model import KnowledgeBase, Record
from kb.quantities import UnitError, parse_unit
from kb.sitegen import urls
from kb.sitegen.fields import value_tree

KEY_COLUMNS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "accelerator": (
        ("Vendor", "vendor"),
        ("Memory", "memory.capacity"),
        ("Memory bandwidth", "memory.bandwidth"),
        ("BF16 dense", "compute.bf16"),
        ("Power", "power"),
    ),
    "interconnect": (
        ("Family", "family"),
        ("Generation", "generation"),
        ("Scope", "scope"),
        ("Per link", "bandwidth.per_link"),
        ("Per device", "bandwidth.per_device"),
    ),
    "model": (
        ("Family", "family"),
        ("Architecture", "architecture"),
        ("d_model", "geometry.d_model"),
        ("Layers", "geometry.layers"),
        ("Parameters", "derived.params_total"),
    ),
    "source": (
        ("Publisher", "publisher"),
        ("Type", "source_type"),
        ("Tier", "tier"),
        ("Accessed", "accessed"),
    ),
    "receipt": (("Pattern", "pattern"), ("Evidence", "evidence_class"), ("Engine", "engine.name")),
    "flop_class": (("Arithmetic intensity", "arithmetic_intensity"),),
}
HARDWARE_ROWS: tuple[tuple[str, str], ...] = (
    ("Vendor", "vendor"),
    ("Architecture", "architecture"),
    ("Form factor", "form_factor"),
    ("Memory type", "memory.type"),
    ("Memory capacity", "memory.capacity"),
    ("Memory bandwidth (spec)", "memory.bandwidth"),
    ("Memory bandwidth (achieved)", "memory.bandwidth_achieved"),
    *(
        (f"{p.upper()} dense", f"compute.{p}")
        for p in ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
    ),
    ("Scale-up interconnect", "links.0.interconnect"),
    ("Links", "links.0.count"),
    ("Per link (per direction)", "links.0.per_link"),
    ("Per device (per direction)", "links.0.per_device"),
    ("Host link", "host_link.interconnect"),
    ("Power", "power"),
)


def kind_table(kb: KnowledgeBase, kind: str) -> dict[str, Any]:
    """Build the index table of one kind: id, title, status, version and key fields."""
    columns = KEY_COLUMNS.get(kind, ())
    rows = [
        {
            "link": {"text": record.id, "url": urls.record_page(record.id)},
            "title": record.title,
            "status": record.status,
            "version": record.version,
            "cells": [cell(record, path, kb) for _, path in columns],
        }
        for record in kb.of_kind(kind)
    ]
    return {"columns": [label for label, _ in columns], "rows": rows}


def hardware_table(kb: KnowledgeBase) -> dict[str, Any]:
    """All accelerators side by side: one column per record, one row per field."""
    accelerators = kb.of_kind("accelerator")
    rows = [
        {"label": label, "cells": [cell(record, path, kb) for record in accelerators]}
        for label, path in HARDWARE_ROWS
        if any(record.get(path) is not None for record in accelerators)
    ]
    heads = [{"text": r.title or r.id, "url": urls.record_page(r.id)} for r in accelerators]
    return {"heads": heads, "rows": rows}


def cell(record: Record, path: str, kb: KnowledgeBase) -> dict[str, Any]:
    """One table cell: the field's display node and the key the table sorts it by."""
    value = record.get(path)
    if value is None:
        return {"node": None, "sort": ""}
    return {"node": value_tree(value, kb, path), "sort": sort_key(value)}


def sort_key(value: Any) -> str:
    """Return a number in base units where the value is numeric, else lower-cased text."""
    if isinstance(value, Mapping) and "value" in value:
        number = _number(value.get("value"))
        if number is not None:
            return _format_key(number * _unit_scale(str(value.get("unit", ""))))
    number = _number(value)
    if number is not None:
        return _format_key(number)
    return str(value).lower() if not isinstance(value, (Mapping, list)) else ""


def _number(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        return None
    return Fraction(value)


def _unit_scale(unit: str) -> Fraction:
    """Base units per one `unit` (kb.quantities), so 3.35 TB/s sorts above 900 GB/s."""
    try:
        return parse_unit(unit).factor
    except UnitError:
        return Fraction(1)  # the record's own check reports the unit; sort by the number


def _format_key(number: Fraction) -> str:
    return repr(float(number))
