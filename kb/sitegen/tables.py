"""Index tables: the key fields of each kind, and the hardware comparison table.

Which fields a table shows is data (`KEY_COLUMNS`, `HARDWARE_ROWS`); each cell is
a field-tree node plus a sort key, so the table sorts by number where it can. A
column of the index (a row of the hardware comparison) shows one unit: the unit
most of its figures are authored in, the others converted exactly into it
(`3.35 TB/s` in a GB/s column is `3350 GB/s`; the authored figure stays a note).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb import numfmt
from kb.ledger.quantities import QuantityError, unit_scale
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
    "engine": (
        ("Name", "name"),
        ("Versions", "versions"),
        ("CUDA graphs", "cuda_graphs"),
        ("All-reduce", "collective.implementation"),
    ),
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
    records = kb.of_kind(kind)
    units = [column_unit([r.get(path) for r in records]) for _, path in columns]
    rows = [
        {
            "link": {"text": record.id, "url": urls.record_page(record.id)},
            "title": record.title,
            "status": record.status,
            "version": record.version,
            "cells": [
                cell(record, path, kb, unit) for (_, path), unit in zip(columns, units, strict=True)
            ],
        }
        for record in records
    ]
    heads = [_with_unit(label, unit) for (label, _), unit in zip(columns, units, strict=True)]
    return {"columns": heads, "rows": rows}


def _with_unit(label: str, unit: str) -> str:
    return f"{label} ({numfmt.unit_text(unit)})" if unit and unit != "1" else label


def column_unit(values: list[Any]) -> str:
    """The unit most of a column's figures are authored in ("" when it has no figures)."""
    units = [
        str(v["unit"]) for v in values if isinstance(v, Mapping) and "value" in v and "unit" in v
    ]
    if not units:
        return ""
    return max(sorted(set(units)), key=units.count)


def in_unit(value: Mapping[str, Any], unit: str) -> Mapping[str, Any]:
    """The figure converted exactly to `unit` (same dimension), the authored form as a note."""
    authored = str(value.get("unit"))
    if not unit or authored == unit:
        return value
    try:
        from_factor, from_dim = unit_scale(authored)
        to_factor, to_dim = unit_scale(unit)
        number = Fraction(str(value.get("value")))
    except (QuantityError, ValueError, ZeroDivisionError):
        return value
    if from_dim != to_dim:
        return value
    shown = numfmt.significant(number * from_factor / to_factor)
    note = f"{value.get('value')} {numfmt.unit_text(authored)}"
    return {**value, "value": shown, "unit": unit, "authored as": note}


def hardware_table(kb: KnowledgeBase) -> dict[str, Any]:
    """All accelerators side by side: one column per record, one row per field."""
    accelerators = kb.of_kind("accelerator")
    rows = []
    for label, path in HARDWARE_ROWS:
        values = [record.get(path) for record in accelerators]
        if all(v is None for v in values):
            continue
        unit = column_unit(values)
        rows.append(
            {
                "label": _with_unit(label, unit),
                "cells": [cell(record, path, kb, unit) for record in accelerators],
            }
        )
    heads = [{"text": r.title or r.id, "url": urls.record_page(r.id)} for r in accelerators]
    return {"heads": heads, "rows": rows}


def cell(record: Record, path: str, kb: KnowledgeBase, unit: str = "") -> dict[str, Any]:
    """One table cell: the field's display node (in the column's unit) and its sort key."""
    value = record.get(path)
    if value is None:
        return {"node": None, "sort": ""}
    shown = in_unit(value, unit) if isinstance(value, Mapping) and "unit" in value else value
    return {"node": value_tree(shown, kb, path, of=record), "sort": sort_key(value)}


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
