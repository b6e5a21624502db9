"""The calculator's pickers, once per site: every accelerator, interconnect and model.

A flop class's calculator (kb/sitegen/calculator.py) lets a reader fill its
inputs from any record of the picker kinds, not only from the records the class
names. Embedding those values in every flop-class page would repeat them on each
page and make each page depend on every such record; instead they are written
once, as a script (`window.KB_CALC_RECORDS = {...}`, urls.CALC_RECORDS) that
works from file:// with no fetch, and static/calc.js offers, for each symbol,
every record that has one of the symbol's fields in the symbol's dimension.

Only the fields some flop class binds (`id#field` in a claim's `bind` or
`change`, to a record of a picker kind) are written, per kind: the file's inputs
are every record of the picker kinds and every flop class (`INPUT_KINDS`, the
build's key for it, kb.sitegen.deps). Values are exact base-unit fractions as
text, with the figure as written and the dimension text the page compares.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from kb.model import KnowledgeBase, Record, split_binding
from kb.quantities import format_dims

PICKER_KINDS = {"accelerator": "Accelerator", "interconnect": "Interconnect", "model": "Model"}
INPUT_KINDS = (*PICKER_KINDS, "flop_class")


def bound_specs(record: Record) -> Iterator[tuple[str, str]]:
    """(symbol, `id#field`) of every record binding in the claims' `bind` and `change`."""
    claims = record.data.get("claims")
    for claim in claims if isinstance(claims, list) else ():
        for key in ("bind", "change"):
            specs = claim.get(key) if isinstance(claim, Mapping) else None
            for name, spec in specs.items() if isinstance(specs, Mapping) else ():
                if isinstance(spec, str) and "#" in spec:
                    yield str(name), spec


def picked_fields(kb: KnowledgeBase) -> dict[str, list[str]]:
    """Per picker kind, the fields of it that some flop class binds (sorted)."""
    found: dict[str, set[str]] = {kind: set() for kind in PICKER_KINDS}
    for record in kb.of_kind("flop_class"):
        for _, spec in bound_specs(record):
            record_id, field = split_binding(spec)
            target = kb.get(record_id)
            if target is not None and target.kind in found and field:
                found[target.kind].add(field)
    return {kind: sorted(fields) for kind, fields in found.items()}


def picker_records(kb: KnowledgeBase) -> dict[str, Any]:
    """`{kind: [[id, title, {field: [base, shown, dims]}], ...]}`, records in kb order.

    A record is listed when it has at least one of its kind's picked fields as a
    figure kb can bind (a quantity with a unit kb knows); the others are left out.
    """
    from kb.equations.bind import Bound, resolve

    fields = picked_fields(kb)
    out: dict[str, Any] = {}
    for kind in PICKER_KINDS:
        rows = []
        for record in kb.of_kind(kind):
            values = {}
            for field in fields[kind]:
                if record.get(field) is None:  # resolve would explain why, at a cost
                    continue
                bound = resolve(kb, f"{record.id}#{field}")
                if isinstance(bound, Bound):
                    values[field] = [str(bound.value), bound.shown, format_dims(bound.dims)]
            if values:
                rows.append([record.id, record.title or record.id, values])
        out[kind] = rows
    return {"kinds": PICKER_KINDS, "records": out}


def picker_script(kb: KnowledgeBase) -> str:
    """The shared data as a script; `<` and line separators escaped (no text closes a tag)."""
    payload = json.dumps(
        picker_records(kb), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    payload = payload.replace("<", "\\u003c").replace("\u2028", "\\u2028")
    payload = payload.replace("\u2029", "\\u2029")
    return f"window.KB_CALC_RECORDS = {payload};\n"
