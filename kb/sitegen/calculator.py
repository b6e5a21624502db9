"""The calculator of a flop-class page: its equations as data for a small tree-walker.

Every equation `symbol = expression` of the record becomes a target. Its
expression is expanded exactly as `kb calc` expands it (kb.equations.evaluate.
prepare: definitions replaced, the symbols the record's claims bind kept) and
serialised as the exact tree of kb/equations/exact.py (`["n", "p/q"]`,
`["s", name]`, `+ * ^ max min floor ceil`, plus `sqrt log exp` evaluated in
floating point). `static/calc.js` walks that tree with exact rationals in the
browser; nothing is evaluated from text, there or here.

Each input symbol carries its declared unit, the units a reader may type it in
(with exact factors from kb's unit table), its claim default and the values the
records the page already depends on give it (the accelerators, interconnects and
models the class names, and the links of those accelerators; see
kb/sitegen/deps.py), so a reader can pick a product or type a quantity.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import sympy as sp

from kb.kinds import views
from kb.kinds.flop_class import EquationSections
from kb.model import KnowledgeBase, Record, split_binding
from kb.quantities import Unit, UnitError, format_dims, parse_unit

# Units a reader may type a value in; each symbol offers those of its dimension.
UNIT_CHOICES = (
    "1",
    "B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "bit", "Gbit",
    "s", "ms", "us", "ns", "min", "h",
    "B/s", "kB/s", "MB/s", "GB/s", "TB/s", "GiB/s", "Gbit/s", "Tbit/s",
    "FLOP", "GFLOP", "TFLOP", "PFLOP",
    "FLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s",
    "FLOP/B", "W", "kW", "J", "USD",
)  # fmt: skip
PICKER_KINDS = {"accelerator": "Accelerator", "interconnect": "Interconnect", "model": "Model"}
MAX_TARGETS = 80


class NotSerialisable(ValueError):
    """An expression with an operation the page's tree-walker does not know."""


def to_calc_tree(expr: sp.Expr) -> list[Any]:
    """exact.py's tree of `expr` (planbuild.to_tree's shape), plus sqrt, log and exp."""
    if expr.is_Rational:
        return ["n", str(expr)]
    if expr.is_Symbol:
        return ["s", expr.name]
    if expr == sp.E:
        return ["exp", ["n", "1"]]
    if isinstance(expr, sp.Add):
        return ["+", *(to_calc_tree(a) for a in expr.args)]
    if isinstance(expr, sp.Mul):
        return ["*", *(to_calc_tree(a) for a in expr.args)]
    if isinstance(expr, sp.Pow):
        return ["^", to_calc_tree(expr.base), to_calc_tree(expr.exp)]
    named = ((sp.Max, "max"), (sp.Min, "min"), (sp.floor, "floor"), (sp.ceiling, "ceil"))
    for kind, name in (*named, (sp.exp, "exp"), (sp.log, "log")):
        if isinstance(expr, kind):
            return [name, *(to_calc_tree(a) for a in expr.args)]
    raise NotSerialisable(f"{type(expr).__name__} is not in the calculator's language")


def calculator(record: Record, kb: KnowledgeBase) -> dict[str, Any] | None:
    """The calculator's data for a flop class, or None when it has no evaluable equation.

    A flop class that fails its schema has no view (kb.kinds) and no calculator;
    its page's equations section says why nothing is shown.
    """
    if record.kind != "flop_class" or not record.data.get("equations"):
        return None
    sections = views(kb).equations(record)
    if sections is None:
        return None
    try:
        return _calculator(record, sections, kb)
    except Exception:  # noqa: BLE001 - a calculator that cannot be built must not stop the build
        return None


def _calculator(
    record: Record, sections: EquationSections, kb: KnowledgeBase
) -> dict[str, Any] | None:
    from kb.equations.compose import compose
    from kb.equations.evaluate import bindings_in_force
    from kb.equations.shared import system_of

    composed = compose(kb, record).record
    system = system_of(composed.data)[0]  # the engine's memo: the check built it already
    targets = []
    for shape in _shapes(composed, sections, system):
        specs = bindings_in_force(composed, shape["id"], {})
        defaults = {n: _default(kb, specs.get(n)) for n in shape["inputs"]}
        targets.append({**shape, "defaults": defaults})
    if not targets:
        return None
    values: dict[str, dict[str, Any]] = {}
    candidates = _candidates(record, kb)
    inputs = sorted({n for t in targets for n in t["inputs"]})
    symbols = {name: _symbol(kb, sections, system, name, candidates, values) for name in inputs}
    ids = [t["id"] for t in targets]
    return {
        "record": record.id,
        "default": next((c.of for c in sections.numeric_claims() if c.of in ids), ids[0]),
        "targets": targets,
        "symbols": symbols,
        "values": values,
        "pickers": _pickers(symbols, values),
        "scales": _scales(),
    }


SHAPE_CACHE = 512
_SHAPES: dict[str, list[dict[str, Any]]] = {}


def _shapes(record: Record, sections: EquationSections, system: Any) -> list[dict[str, Any]]:
    """The targets' trees and texts, shared by records with the same maths (a family).

    They depend on the symbols, the equations and which symbols the numeric claims
    bind (kb calc keeps those), not on the values bound, so a family of flop
    classes expands its equations once.
    """
    bound = [sorted(c.bind) for c in sections.claims if c.kind == "numeric"]
    key = json.dumps(
        [record.data.get("symbols"), record.data.get("equations"), bound], default=repr
    )
    if key not in _SHAPES:
        if len(_SHAPES) >= SHAPE_CACHE:
            _SHAPES.clear()
        _SHAPES[key] = _build_shapes(record, system)
    return _SHAPES[key]


def _build_shapes(record: Record, system: Any) -> list[dict[str, Any]]:
    from kb.equations.evaluate import EvaluationError, prepare
    from kb.equations.expr import to_text

    shapes: list[dict[str, Any]] = []
    for eq_id, equation in system.equations.items():
        lhs = equation.lhs.value
        if not isinstance(lhs, sp.Symbol) or lhs in equation.rhs.value.free_symbols:
            continue
        try:
            plan = prepare(record, system, eq_id, {})
            tree = to_calc_tree(plan.expanded)
        except (EvaluationError, NotSerialisable):
            continue
        names = sorted(s.name for s in plan.expanded.free_symbols)
        if not names or len(shapes) >= MAX_TARGETS:
            continue
        unit = system.units[lhs.name]
        shapes.append(
            {
                "id": eq_id,
                "symbol": lhs.name,
                "unit": unit.text,
                "factor": str(unit.factor),
                "dims": format_dims(unit.dims),
                "equation": plan.equation,
                "expanded": to_text(plan.expanded) if plan.expanded != plan.expression else "",
                "tree": tree,
                "inputs": names,
            }
        )
    return shapes


def _default(kb: KnowledgeBase, spec: Any) -> dict[str, str] | None:
    """A claim's binding of a symbol: its exact value in base units and its origin."""
    from kb.equations.bind import Bound, resolve

    if spec is None:
        return None
    binding, origin = spec
    bound = resolve(kb, binding)
    if not isinstance(bound, Bound):
        return None
    where = f"{bound.record_id}#{bound.pointer[1:].replace('/', '.')}" if bound.record_id else ""
    return {
        "base": str(bound.value),
        "shown": bound.shown,
        "origin": f"{origin}: {where}" if where else origin,
    }


def _candidates(record: Record, kb: KnowledgeBase) -> list[Record]:
    """The records this page already depends on in full (deps.py): named ones, their links."""
    from kb.sitegen.deps import named_ids

    ids = set(named_ids(record.data)[0])
    for named in sorted(ids):
        target = kb.get(named)
        if target is not None and target.kind == "accelerator":
            ids |= named_ids(target.data)[0]
    found = [kb.get(i) for i in sorted(ids)]
    return [r for r in found if r is not None and r.kind in PICKER_KINDS]


def _bound_fields(
    sections: EquationSections, name: str, kb: KnowledgeBase
) -> list[tuple[str, str]]:
    """(kind, field) of every `id#field` binding of symbol `name` in the record's claims."""
    found: dict[tuple[str, str], None] = {}
    for claim in sections.claims:
        for specs in (claim.bind, claim.change):
            spec = specs.get(name)
            if isinstance(spec, str) and "#" in spec:  # not a literal, a number or an expression
                record_id, field = split_binding(spec)
                target = kb.get(record_id)
                if target is not None and target.kind in PICKER_KINDS:
                    found[(target.kind, field)] = None
    return list(found)


def _symbol(
    kb: KnowledgeBase,
    sections: EquationSections,
    system: Any,
    name: str,
    candidates: Iterable[Record],
    values: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    from kb.equations.bind import Bound, resolve

    unit: Unit = system.units[name]
    meaning = next((s.meaning for s in sections.symbols if s.name == name), "")
    options = []
    fields = _bound_fields(sections, name, kb)
    for kind, field in fields:
        for candidate in candidates:
            if candidate.kind != kind:
                continue
            key = f"{candidate.id}#{field}"
            bound = resolve(kb, key)
            if isinstance(bound, Bound) and bound.dims == unit.dims and key not in options:
                values[key] = {
                    "base": str(bound.value),
                    "shown": bound.shown,
                    "title": candidate.title or candidate.id,
                    "kind": candidate.kind,
                    "field": field,
                }
                options.append(key)
    return {
        "meaning": meaning,
        "unit": unit.text,
        "factor": str(unit.factor),
        "dims": format_dims(unit.dims),
        "units": _units_like(unit),
        "options": options,
    }


def _units_like(unit: Unit) -> list[list[str]]:
    """[unit text, exact factor] for every choice of the same dimension, declared first."""
    found = {unit.text: str(unit.factor)}
    for text in UNIT_CHOICES:
        try:
            other = parse_unit(text)
        except UnitError:
            continue
        if other.dims == unit.dims:
            found.setdefault(other.text, str(other.factor))
    return [[text, factor] for text, factor in found.items()]


def _pickers(
    symbols: Mapping[str, Mapping[str, Any]], values: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One picker per kind: its records, each setting every symbol it has an option for."""
    pickers = []
    for kind, label in PICKER_KINDS.items():
        records: dict[str, dict[str, Any]] = {}
        for name, symbol in symbols.items():
            for key in symbol["options"]:
                value = values[key]
                if value["kind"] != kind:
                    continue
                record_id = key.partition("#")[0]
                entry = records.setdefault(record_id, {"id": record_id, "title": value["title"]})
                entry.setdefault("sets", {}).setdefault(name, key)
        if records:
            pickers.append({"kind": kind, "label": label, "records": list(records.values())})
    return pickers


def _scales() -> dict[str, list[list[str]]]:
    """The ledger's readable units (kb.ledger.quantities.SCALES) by dimension text."""
    from kb.ledger.quantities import SCALES

    scales = {}
    for dim, steps in SCALES.items():
        scales[format_dims(parse_unit(dim).dims)] = [[str(Fraction(f)), u] for f, u in steps]
    return scales
