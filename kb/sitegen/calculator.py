"""The calculator of a flop-class page: its equations as data for a small tree-walker.

Every equation `symbol = expression` of the record becomes a target. Its
expression is expanded exactly as `kb calc` expands it (kb.equations.evaluate.
prepare: definitions replaced, the symbols the record's claims bind kept) and
serialised as kb's one compiled tree (kb.equations.expr.to_tree with `real`:
exact.py's `["n", "p/q"]`, `["s", name]`, `+ * ^ max min floor ceil`, plus
`sqrt log exp` evaluated in floating point). `static/calc.js` walks that tree
with exact rationals in the browser; nothing is evaluated from text, there or here.

Each input symbol carries its declared unit, the units a reader may type it in
(with exact factors from kb's unit table), its claim default and the fields of
the kinds its claims bind it to (`[kind, field]`: `BW_hbm` is an accelerator's
`memory.bandwidth`). The values a reader can pick are every accelerator,
interconnect and model of the knowledge base, not only those the page names:
they are serialised once per site (`picker_script`, urls.CALC_RECORDS, a
`<script src>` that works from file://), and static/calc.js offers each record
that has a symbol's field in the symbol's dimension. So a page's own bytes read
no record beyond the ones it binds (kb/sitegen/deps.py), and the shared file's
inputs are every record of the picker kinds and every flop class (which fields
they bind): build.write_calc_records keys it through kb.sitegen.deps.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy as sp

from kb.equations.expr import NotCompiled, to_tree
from kb.model import KnowledgeBase, Record, split_binding
from kb.numfmt import DIGITS
from kb.quantities import Unit, UnitError, format_dims, parse_unit
from kb.sitegen.calc_records import PICKER_KINDS, bound_specs

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
MAX_TARGETS = 80


def calculator(record: Record, kb: KnowledgeBase) -> dict[str, Any] | None:
    """The calculator's data for a flop class, or None when it has no evaluable equation."""
    if record.kind != "flop_class" or not record.data.get("equations"):
        return None
    try:
        return _calculator(record, kb)
    except Exception:  # noqa: BLE001 - a calculator that cannot be built must not stop the build
        return None


def _calculator(record: Record, kb: KnowledgeBase) -> dict[str, Any] | None:
    from kb.equations.compose import compose
    from kb.equations.engine import analysed
    from kb.equations.evaluate import bindings_in_force
    from kb.equations.shared import system_of

    composed = compose(kb, record).record
    analysis = analysed(kb)  # the run's shared work: the check built the system already
    system = system_of(composed.data, analysis.shared if analysis else None)[0]
    targets = []
    for shape in _shapes(composed, system):
        specs = bindings_in_force(composed, shape["id"], {})
        defaults = {n: _default(kb, specs.get(n)) for n in shape["inputs"]}
        validity = validity_checks(composed, system, shape)
        optional = sorted({n for c in validity for n in c["missing"] if n in system.units})
        defaults.update({n: _default(kb, specs.get(n)) for n in optional})
        targets.append({**shape, "defaults": defaults, "validity": validity, "optional": optional})
    if not targets:
        return None
    inputs = sorted({n for t in targets for n in (*t["inputs"], *t["optional"])})
    symbols = {name: _symbol(kb, composed, system, name) for name in inputs}
    ids = [t["id"] for t in targets]
    kinds = {kind for symbol in symbols.values() for kind, _ in symbol["fields"]}
    return {
        "record": record.id,
        "default": next((of for of in _claimed_targets(composed) if of in ids), ids[0]),
        "targets": targets,
        "symbols": symbols,
        "pickers": [{"kind": k, "label": v} for k, v in PICKER_KINDS.items() if k in kinds],
        "scales": _scales(),
        "digits": DIGITS,
    }


# A condition's bounds as kb.equations.validity reads them: field, operator shown, and
# the test the page applies (calc.js: "min" holds when value >= bound, ...).
BOUNDS = (("min", ">="), ("max", "<="), ("above", ">"))


def validity_checks(record: Record, system: Any, shape: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The record's `validity:` conditions as trees calc.js checks, as `kb calc` does.

    Each side is expanded as kb.equations.validity expands it for `kb calc`: the
    target's inputs and its own symbol kept, every other defined symbol replaced by
    its definition. A condition that needs a symbol the target does not take is
    carried with that name as `missing` (the page says "not checked", as `kb calc`
    does); one the tree-walker cannot express is carried with its `error`.
    """
    from kb.equations.algebra import expand_definitions
    from kb.equations.expr import ExpressionError, parse_expression
    from kb.equations.validity import conditions

    keep = {system.symbols[n] for n in (*shape["inputs"], shape["symbol"]) if n in system.symbols}
    known = {s.name for s in keep}
    checks = []
    for condition in conditions(record.data):
        check: dict[str, Any] = {
            "id": str(condition.get("id")),
            "expr": str(condition.get("expr")),
            "reason": str(condition.get("reason", "")),
            "bounds": [],
            "missing": [],
            "error": "",
        }
        try:
            sides = [("", str(condition.get("expr")))] + [
                (op, str(condition[field]))
                for field, op in BOUNDS
                if isinstance(condition.get(field), str)
            ]
            trees = []
            for op, text in sides:
                parsed = parse_expression(text, system.symbols).value
                expanded = expand_definitions(parsed, system.definitions(), keep)
                check["missing"] += [f.name for f in expanded.free_symbols if f.name not in known]
                trees.append((op, text, to_tree(expanded, real=True)))
        except (ExpressionError, NotCompiled) as exc:
            check["error"] = str(exc)
            checks.append(check)
            continue
        check["missing"] = sorted(set(check["missing"]))
        check["left"] = trees[0][2]
        check["bounds"] = [{"op": op, "text": text, "tree": tree} for op, text, tree in trees[1:]]
        checks.append(check)
    return checks


SHAPE_CACHE = 512
_SHAPES: dict[str, list[dict[str, Any]]] = {}


def _shapes(record: Record, system: Any) -> list[dict[str, Any]]:
    """The targets' trees and texts, shared by records with the same maths (a family).

    They depend on the symbols, the equations and which symbols the numeric claims
    bind (kb calc keeps those), not on the values bound, so a family of flop
    classes expands its equations once.
    """
    claims = record.data.get("claims")
    bound = [
        sorted(map(str, c["bind"]))
        for c in (claims if isinstance(claims, list) else ())
        if isinstance(c, Mapping)
        and c.get("kind") == "numeric"
        and isinstance(c.get("bind"), Mapping)
    ]
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
            plan = _as_kb_calc_takes_it(record, system, eq_id, prepare(record, system, eq_id, {}))
            tree = to_tree(plan.expanded, real=True)
        except (EvaluationError, NotCompiled):
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


def _as_kb_calc_takes_it(record: Record, system: Any, eq_id: str, plan: Any) -> Any:
    """The plan `kb calc` follows when given exactly the plan's inputs with --set.

    The page pre-fills its inputs from the claims (prepare without `strict`); kb
    calc, given those same names, keeps a defined symbol whose definition they
    cannot settle and asks for it. Re-prepared strictly until the inputs stop
    changing, the page asks for what kb calc asks for, so the two give one answer.
    """
    from kb.equations.evaluate import prepare

    for _ in range(4):
        names = {s.name: None for s in plan.expanded.free_symbols}
        strict = prepare(record, system, eq_id, names, strict=True)
        if strict.expanded == plan.expanded:
            return plan
        plan = strict
    return plan


def _claimed_targets(record: Record) -> list[str]:
    """The equations the record's numeric claims evaluate, first claim first (kb calc's default)."""
    claims = record.data.get("claims")
    return [
        str(c["of"])
        for c in (claims if isinstance(claims, list) else ())
        if isinstance(c, Mapping) and c.get("kind") == "numeric" and isinstance(c.get("of"), str)
    ]


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


def _bound_fields(record: Record, name: str, kb: KnowledgeBase) -> list[tuple[str, str]]:
    """(kind, field) of every `id#field` binding of symbol `name` in the record's claims."""
    found: dict[tuple[str, str], None] = {}
    for symbol, spec in bound_specs(record):
        record_id, field = split_binding(spec)
        target = kb.get(record_id) if symbol == name else None
        if target is not None and target.kind in PICKER_KINDS:
            found[(target.kind, field)] = None
    return list(found)


def _symbol(kb: KnowledgeBase, record: Record, system: Any, name: str) -> dict[str, Any]:
    unit: Unit = system.units[name]
    spec = record.data.get("symbols", {}).get(name)
    meaning = str(spec.get("meaning", "")) if isinstance(spec, Mapping) else ""
    return {
        "meaning": meaning,
        "unit": unit.text,
        "factor": str(unit.factor),
        "dims": format_dims(unit.dims),
        "units": _units_like(unit),
        "fields": [list(pair) for pair in _bound_fields(record, name, kb)],
    }


def _units_like(unit: Unit) -> list[list[str]]:
    """[unit text, exact factor] for every choice of the same dimension, declared first."""
    found = {unit.text: str(unit.factor)}
    for other in _unit_choices():
        if other.dims == unit.dims:
            found.setdefault(other.text, str(other.factor))
    return [[text, factor] for text, factor in found.items()]


@functools.lru_cache(maxsize=1)
def _unit_choices() -> tuple[Unit, ...]:
    """UNIT_CHOICES parsed once per process (every symbol of every page offers some)."""
    parsed = []
    for text in UNIT_CHOICES:
        try:
            parsed.append(parse_unit(text))
        except UnitError:
            continue
    return tuple(parsed)


def _scales() -> dict[str, list[list[str]]]:
    """The ledger's readable units (kb.ledger.quantities.SCALES) by dimension text."""
    from kb.ledger.quantities import SCALES

    scales = {}
    for dim, steps in SCALES.items():
        scales[format_dims(parse_unit(dim).dims)] = [[str(Fraction(f)), u] for f, u in steps]
    return scales
