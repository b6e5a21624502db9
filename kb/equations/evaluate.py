"""Evaluate a record's equation for new inputs (`kb calc`, the ledger, the site).

`evaluate(kb, record, target, bindings)` finds the target (an equation id or a
symbol with one defining equation), expands definitions, binds every remaining
symbol (given bindings first, then the bindings of the record's numeric claims
about the same target, then any claim's binding of that symbol), converts units
exactly and returns the value in the target's declared unit with a trail that
shows each substitution.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy as sp

from kb.equations.algebra import expand_definitions, number_text, rational_value
from kb.equations.bind import Bound, resolve
from kb.equations.compose import compose
from kb.equations.expr import to_text
from kb.equations.system import System, build_system
from kb.model import KnowledgeBase, Record
from kb.quantities import Unit, format_dims

QUANTITY_RE = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*\Z")


class EvaluationError(ValueError):
    """Bad input to evaluate(): an unknown target, a missing or mismatched binding."""


@dataclass(frozen=True)
class Evaluation:
    """The value of a target, in its declared unit, and how it was computed (`trail`).

    `kb calc` prints the trail, then the value (kb/commands/calc.py, `result_text`).
    """

    record_id: str
    target: str
    equation: str
    value: Fraction
    unit: str
    trail: list[str] = field(default_factory=list)

    @property
    def shown(self) -> str:
        suffix = "" if self.unit == "1" else f" {self.unit}"
        return f"{number_text(sp.Rational(self.value.numerator, self.value.denominator))}{suffix}"


def parse_quantity(text: str) -> dict[str, Any]:
    """`63 GB/s` -> {value: 63, unit: GB/s}; a bare number is a count (unit 1)."""
    match = QUANTITY_RE.match(text)
    if not match:
        raise EvaluationError(f"{text!r} is neither a quantity like '63 GB/s' nor id#field")
    if not math.isfinite(float(match.group(1))):  # 1e999999 would be a million-digit integer
        raise EvaluationError(f"{text!r}: {match.group(1)} is not a finite number")
    number = Fraction(match.group(1))
    value = int(number) if number.denominator == 1 else float(match.group(1))
    return {"value": value, "unit": match.group(2) or "1"}


def binding_spec(text: str) -> Any:
    """Turn a --set value into a binding: `id#field` stays, anything else is a quantity."""
    return text.strip() if "#" in text else parse_quantity(text)


def evaluate(
    kb: KnowledgeBase, record: Record, target: str | None, bindings: Mapping[str, Any]
) -> Evaluation:
    """Evaluate `target` of `record` with `bindings` (name -> spec); see module doc."""
    record = compose(kb, record).record  # `uses` equations resolved, as the engine checks them
    system = build_system(record.data)
    name = target or _default_target(record)
    plan = prepare(record, system, name, bindings)
    symbol, expression, expanded, specs = plan.symbol, plan.expression, plan.expanded, plan.specs
    trail = [f"{symbol} = {plan.equation}"]
    if expanded != expression:
        trail.append(f"  = {to_text(expanded)}")
    values = {}
    for free in sorted(expanded.free_symbols, key=lambda s: s.name):
        values[free] = _bind(kb, system, free.name, specs, bindings, trail)
    result = expanded.xreplace(values)
    unit = system.units[symbol.name]
    value = _in_unit(result, unit)
    return Evaluation(record.id, symbol.name, plan.equation, value, unit.text, trail)


@dataclass(frozen=True)
class Prepared:
    """A target ready to bind: its authored and expanded expression and the specs in force.

    `specs` maps a symbol to (spec, origin): the given bindings over the record's
    claim defaults. The expanded expression keeps every symbol that has a spec,
    so its free symbols are exactly what `evaluate` binds (the site's calculator
    serialises the same expression).
    """

    symbol: sp.Symbol
    expression: sp.Expr
    expanded: sp.Expr
    equation: str
    specs: dict[str, Any]


def prepare(record: Record, system: System, name: str, bindings: Mapping[str, Any]) -> Prepared:
    """Find target `name` of a composed `record` and expand it as `evaluate` does."""
    symbol, expression, equation = _target(system, name)
    specs = _with_defaults(record, name, bindings)
    unknown = sorted(set(bindings) - set(system.symbols))
    if unknown:
        named = ", ".join(_with_suggestion(n, system.symbols) for n in unknown)
        raise EvaluationError(f"not symbols of {record.id}: {named}")
    keep = {system.symbols[n] for n in specs if n in system.symbols}
    expanded = expand_definitions(expression, system.definitions(), keep)
    return Prepared(symbol, expression, expanded, equation, specs)


def _with_suggestion(name: str, known: Iterable[str]) -> str:
    """`'name'`, or `'name' (did you mean 'x'?)` when kb.suggest finds a close known name."""
    from kb.suggest import did_you_mean

    hint = did_you_mean(name, known)
    return f"{name!r} ({hint})" if hint else repr(name)


def _default_target(record: Record) -> str:
    for claim in _claims(record):
        if claim.get("kind") == "numeric" and isinstance(claim.get("of"), str):
            return str(claim["of"])
    raise EvaluationError(f"{record.id}: name an equation or symbol to evaluate")


def _claims(record: Record) -> list[Mapping[str, Any]]:
    claims = record.data.get("claims")
    return [c for c in claims if isinstance(c, Mapping)] if isinstance(claims, list) else []


def _target(system: System, name: str) -> tuple[sp.Symbol, sp.Expr, str]:
    if name in system.equations:
        equation = system.equations[name]
        if not isinstance(equation.lhs.value, sp.Symbol):
            raise EvaluationError(f"equation {name} is not of the form `symbol = expression`")
        return equation.lhs.value, equation.rhs.value, equation.rhs.source
    symbol = system.symbols.get(name)
    if symbol is None:
        known = ", ".join(sorted(system.equations)) or "none"
        close = _with_suggestion(name, [*system.equations, *system.symbols])
        raise EvaluationError(f"{close} is neither an equation nor a symbol (equations: {known})")
    definition = system.definitions().get(symbol)
    if definition is None:
        raise EvaluationError(f"symbol {name} has no single defining equation")
    authored = next(
        (
            eq.rhs.source
            for eq in system.equations.values()
            if eq.lhs.value == symbol and eq.rhs.value == definition
        ),
        None,
    )
    return symbol, definition, authored or to_text(definition)


def bindings_in_force(record: Record, target: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The specs `evaluate` binds for `target` (name -> (spec, origin)): given over defaults."""
    return _with_defaults(record, target, given)


def _with_defaults(record: Record, target: str, given: Mapping[str, Any]) -> dict[str, Any]:
    specs: dict[str, Any] = {}
    claims = [c for c in _claims(record) if c.get("kind") == "numeric"]
    preferred = [c for c in claims if c.get("of") == target] + claims
    for claim in preferred:
        bind = claim.get("bind")
        for name, spec in bind.items() if isinstance(bind, Mapping) else ():
            specs.setdefault(str(name), (spec, f"default from claim {claim.get('id')}"))
    specs.update({name: (spec, "--set") for name, spec in given.items()})
    return specs


def _bind(
    kb: KnowledgeBase,
    system: System,
    name: str,
    specs: Mapping[str, Any],
    given: Mapping[str, Any],
    trail: list[str],
) -> sp.Rational:
    if name not in specs:
        raise EvaluationError(
            f"symbol {name} is not bound: use --set {name}=VALUE "
            f"(a quantity such as '63 GB/s' or record-id#field)"
        )
    spec, origin = specs[name]
    bound = resolve(kb, spec)
    if not isinstance(bound, Bound):
        hint = f" ({bound.hint})" if bound.hint else ""
        raise EvaluationError(f"{name}: {bound.message}{hint}")
    declared = system.units.get(name)
    if declared is None or declared.dims != bound.dims:
        want = f"{declared.text} ({format_dims(declared.dims)})" if declared else "no unit"
        raise EvaluationError(
            f"{name} is declared {want} but {bound.shown} is {format_dims(bound.dims)}"
        )
    where = f"{bound.record_id}#{bound.pointer[1:].replace('/', '.')}" if bound.record_id else ""
    in_declared = declared.from_base(bound.value)
    shown = number_text(sp.Rational(in_declared.numerator, in_declared.denominator))
    unit = "" if declared.text == "1" else f" {declared.text}"
    same_unit = bound.shown.rpartition(" ")[2] == declared.text or bound.shown == shown
    converted = "" if same_unit else f" = {shown}{unit}"
    origins = f"{origin}: {where}" if where else origin
    trail.append(f"  {name} = {bound.shown}{converted}   ({origins})")
    return sp.Rational(bound.value.numerator, bound.value.denominator)


def _in_unit(result: sp.Expr, unit: Unit) -> Fraction:
    value = rational_value(result)
    base = Fraction(int(value.p), int(value.q))
    return base / unit.factor
