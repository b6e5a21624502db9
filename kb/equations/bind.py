"""Bindings: a symbol's value from a literal quantity or another record's field.

A binding is either `{value: 3350, unit: GB/s}` (a literal quantity) or
`hardware/nvidia-h100-sxm#memory.bandwidth` (the quantity at a dotted path of
another record). A plain number is accepted only for a dimensionless symbol
(a count such as `models/llama-2-7b#geometry.d_model`). Values are exact
fractions in base units (B, s, FLOP, J, USD). No SymPy here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.equations import codes
from kb.equations.results import DOWNSTREAM, UNREADABLE
from kb.findings import Location
from kb.model import KnowledgeBase, is_valid_id, split_binding
from kb.quantities import DIMENSIONLESS, Dims, UnitError, exact_number, parse_unit
from kb.yamlwords import yaml_kind

_NUMBER_TEXT = re.compile(r"[-+]?(\d[\d_]*)?\.?\d+([eE][-+]?\d+)?")


@dataclass(frozen=True)
class Bound:
    """A resolved binding: the exact value in base units and where it came from."""

    value: Fraction
    dims: Dims
    shown: str
    record_id: str = ""
    record_path: str = ""
    pointer: str = ""
    unit: str = "1"  # the unit it was written in (a prediction shows its measurement in it)

    @property
    def location(self) -> Location | None:
        if not self.record_path:
            return None
        return Location(self.record_path, 0, 0, self.pointer)

    def key(self) -> str:
        """Return a stable text for cache keys."""
        return f"{self.value}|{self.dims}|{self.unit}|{self.record_path}|{self.pointer}"


@dataclass(frozen=True)
class BindError:
    """A binding that does not resolve (EQ010), is no quantity (EQ011) or has a bad unit."""

    code: str
    message: str
    hint: str = ""
    related: Location | None = None


def _bare_hint(spec: Any) -> str:
    """The fix for a bare binding: a number is a count or a quantity with its unit."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return (
            f'write {{value: {spec}, unit: "1", basis: ..., source: ...}} for a count, '
            f"or give its unit ({{value: {spec}, unit: GB/s, ...}})"
        )
    return "write {value: 63, unit: GB/s} or hardware/<id>#memory.bandwidth"


def resolve(kb: KnowledgeBase, spec: Any) -> Bound | BindError:
    """Resolve a binding spec (a quantity mapping or an `id#dotted.path` string)."""
    if isinstance(spec, Mapping):
        return quantity(spec, "literal")
    if spec is None:  # a placeholder left unfilled (`~`): the schema's finding says so
        return BindError(DOWNSTREAM, "binding left unfilled")
    if not isinstance(spec, str) or "#" not in spec:
        return BindError(
            codes.BINDING_UNRESOLVED,
            f"binding {spec!r} is neither a quantity nor id#field",
            _bare_hint(spec),
        )
    record_id, path = split_binding(spec)
    record = kb.get(record_id) if is_valid_id(record_id) else None
    if record is None and is_valid_id(record_id) and kb.exists(record_id):
        message = f"binding {spec!r}: {record_id} cannot be read (its own finding says why)"
        return BindError(UNREADABLE, message)
    if record is None:  # RF001 reports the dangling reference itself; no second finding
        return BindError(
            "RF001",
            f"binding {spec!r}: no record {record_id!r}",
            "check the id under records/ (kb list)",
        )
    pointer = "/" + "/".join(path.split("."))
    related = Location(record.path, 0, 0, pointer)
    target = record.get(path) if path else None
    if target is None:
        from kb.suggest import did_you_mean

        hint = did_you_mean(path, field_paths(record.data), "check the dotted path (kb show)")
        return BindError(
            codes.BINDING_UNRESOLVED,
            f"binding {spec!r}: {record.path} has no field {path!r}",
            hint,
            related,
        )
    found = _target_value(target, spec)
    if isinstance(found, BindError):
        return BindError(found.code, found.message, found.hint, related)
    return Bound(found.value, found.dims, found.shown, record.id, record.path, pointer, found.unit)


def field_paths(data: Any, prefix: str = "", limit: int | None = None) -> list[str]:
    """Every dotted path of a record's data (list items by index), for suggestions.

    Depth first in the record's order (a path, then the paths below it); the walk
    stops after `limit` paths (default kb.suggest.MAX_PATHS), so a record of 99,000
    keys costs a bounded walk.
    """
    from kb.suggest import MAX_PATHS

    cap = MAX_PATHS if limit is None else limit
    paths: list[str] = []
    stack = [(prefix, _items(data))]
    while stack and len(paths) < cap:
        here, items = stack[-1]
        step = next(items, None)
        if step is None:
            stack.pop()
            continue
        path = f"{here}{step[0]}"
        paths.append(path)
        stack.append((f"{path}.", _items(step[1])))
    return paths


def _items(node: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(node, Mapping):
        return iter(node.items())
    if isinstance(node, list):
        return iter(enumerate(node))
    return iter(())


def _target_value(target: Any, spec: str) -> Bound | BindError:
    if isinstance(target, Mapping):
        if "value" not in target or "unit" not in target:
            return BindError(
                codes.BINDING_NOT_A_QUANTITY,
                f"binding {spec!r} lands on a mapping, not a quantity",
                "bind to a field holding {value, unit}",
            )
        return quantity(target, spec)
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        return Bound(exact_number(target), DIMENSIONLESS, f"{target}")
    if isinstance(target, str) and _NUMBER_TEXT.fullmatch(target.strip()):
        # a number YAML 1.1 read as text (1e9): LD009 reports it at the field itself
        return BindError(DOWNSTREAM, f"binding {spec!r} lands on the text {target!r} (LD009)")
    return BindError(
        codes.BINDING_NOT_A_QUANTITY,
        f"binding {spec!r} lands on {yaml_kind(target)}, not a quantity",
        "bind to a field holding {value, unit} or a plain count",
    )


def quantity(data: Mapping[str, Any], label: str) -> Bound | BindError:
    """Convert a `{value, unit}` mapping to an exact value in base units."""
    raw, unit_text = data.get("value"), data.get("unit")
    try:
        value = exact_number(raw)
    except ValueError:
        hint = "write 1.0e+9, not 1e9 (YAML reads 1e9 as text)" if isinstance(raw, str) else ""
        return BindError(
            codes.BINDING_NOT_A_QUANTITY, f"{label}: value {raw!r} is not a number", hint
        )
    try:
        unit = parse_unit(unit_text)
    except UnitError as exc:
        return BindError(codes.UNIT_UNKNOWN, f"{label}: {exc}", exc.hint)
    shown = f"{raw}" if unit.text == "1" else f"{raw} {unit.text}"
    return Bound(unit.to_base(value), unit.dims, shown, unit=unit.text)


def referenced_records(spec: Any) -> str | None:
    """Return the record id a binding spec points at (None for a literal)."""
    if isinstance(spec, str) and "#" in spec:
        return split_binding(spec)[0]
    return None
