"""Evaluate a record's equation for new inputs (`kb calc`, the ledger, the site).

`evaluate(kb, record, target, bindings, claim=None)` finds the target (an equation
id or a symbol with one defining equation), expands definitions, binds every
remaining symbol and returns the value in the target's declared unit with a trail
that shows each substitution and where each value came from.

A symbol takes its value from, in order: the given bindings (`--set`), the inputs
of the one claim named by `claim` (`--claim ID`), or the default its class
declares (`symbols: {N: {..., default: {value, unit, basis, source}}}`, shown as
"assumed: default of this class"). Nothing else: a value is never borrowed from
another claim's binding (issue 35), so a symbol left unset is an `Unset` error
naming it and the records the class's claims bind it to.

A result the equation does not give (a division by zero, N = 1 in a formula with
N - 1 below) is `OutsideValidity`, and so is a result outside a condition the
class declares under `validity:` (kb/equations/validity.py), e.g. a crossover
batch above the ridge batch, where the model stops applying.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

import sympy as sp

from kb.equations import codes
from kb.equations.algebra import number_text, rational_value
from kb.equations.bind import BindError, Bound, resolve
from kb.equations.compose import compose
from kb.equations.expr import to_text
from kb.equations.system import System, system_of
from kb.model import KnowledgeBase, Record
from kb.quantities import DIMENSIONLESS, Unit, format_dims, multiply_dims

QUANTITY_RE = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*\Z")


class EvaluationError(ValueError):
    """Bad input to evaluate(): an unknown target, a mismatched binding (a usage error)."""


class Unset(EvaluationError):
    """Symbols the inputs leave without a value: a finding about the question (exit 1)."""


class OutsideValidity(EvaluationError):
    """The inputs lie where the equation gives no value or the class says it stops applying."""


@dataclass(frozen=True)
class Product:
    """A --set value that multiplies or divides quantities and bindings: `id#f / 8`.

    `factors` holds (exponent, spec) pairs, exponent +1 or -1, each spec a quantity
    mapping or an `id#field` text as `binding_spec` makes them.
    """

    text: str
    factors: tuple[tuple[int, Any], ...]


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


_OPERATOR = re.compile(r"\s+([*/])\s+")


def binding_spec(text: str) -> Any:
    """Turn a --set value into a binding: `id#field` stays, anything else is a quantity.

    Factors joined by ` * ` or ` / ` (spaces on both sides, so `GB/s` stays a unit)
    make a `Product`: `--set P="models/llama-3.1-70b#derived.params_total / 8"`.
    """
    parts = _OPERATOR.split(text.strip())
    if len(parts) == 1:
        return _single_spec(text)
    factors = [(1, _single_spec(parts[0]))]
    for operator, operand in zip(parts[1::2], parts[2::2], strict=True):
        factors.append((1 if operator == "*" else -1, _single_spec(operand)))
    return Product(text.strip(), tuple(factors))


def _single_spec(text: str) -> Any:
    if not text.strip():
        raise EvaluationError("an operator ` * ` or ` / ` needs a factor on each side")
    return text.strip() if "#" in text else parse_quantity(text)


def evaluate(
    kb: KnowledgeBase,
    record: Record,
    target: str | None,
    bindings: Mapping[str, Any],
    claim: str | None = None,
) -> Evaluation:
    """Evaluate `target` of `record` with `bindings` (name -> spec); see module doc.

    A frozen knowledge base answers a question it was asked before from its run's
    memo (kb.equations.evalmemo: the same answer, or the same error, again).
    """
    from kb.equations.evalmemo import evaluations

    memo = evaluations(kb)
    if memo is None:
        return _evaluate(kb, record, target, bindings, claim)
    return memo.of(
        record,
        target,
        bindings,
        claim,
        lambda: _evaluate(kb, record, target, bindings, claim),
        (EvaluationError,),
    )


def _evaluate(
    kb: KnowledgeBase,
    record: Record,
    target: str | None,
    bindings: Mapping[str, Any],
    claim: str | None,
) -> Evaluation:
    from kb.equations.validity import judge

    record = compose(kb, record).record  # `uses` equations resolved, as the engine checks them
    system = system_of(kb, record.data)
    name = target or _default_target(record, claim)
    plan, tree, free = _prepared(kb, record, system, name, bindings, claim)
    symbol, expression, expanded, specs = plan.symbol, plan.expression, plan.expanded, plan.specs
    trail = [f"{symbol} = {plan.equation}"]
    if expanded != expression:
        trail.append(f"  = {system.text(expanded)}")
    values = {}
    for symbol_in in free:  # by name
        if symbol_in.name in specs:  # a wrong input is a usage error before a missing one
            values[symbol_in] = _bound(kb, record, system, symbol_in.name, specs, trail)
    unset = [s.name for s in free if s.name not in specs]
    if unset:
        raise Unset(_unset_message(record, unset, claim, system.units))
    result = _substituted(expanded, tree, values)
    finite = bool(result.is_finite)
    known = {**values, symbol: result} if finite else dict(values)
    verdicts = judge(record.data, system, known, lambda n: _value_of(kb, system, n, specs))
    outside = [v.text for v in verdicts if v.state == "violated"]
    if not finite:
        raise OutsideValidity(
            "; ".join([*outside, _no_value_message(symbol.name, expanded, values, system)])
        )
    if outside:
        raise OutsideValidity(f"{symbol.name} = {number_text(result)}: " + "; ".join(outside))
    negative = [  # sorted by text only when there is one (printing every input costs)
        f"{s} = {_declared_text(v, system.units.get(s.name))}"
        for s, v in (
            sorted(values.items(), key=str) if any(v.p < 0 for v in values.values()) else ()
        )
        if v < 0
    ]
    if negative:  # the site's calculator refuses the same inputs in the same words
        raise OutsideValidity(
            ", ".join(negative) + ": negative; kb declares every symbol a positive quantity "
            "(a size, a rate, a time, a count), so this class's equations do not cover it"
        )
    unit = system.units[symbol.name]
    value = _in_unit(result, unit)
    trail.extend(f"  {v.text}" for v in verdicts)
    return Evaluation(record.id, symbol.name, plan.equation, value, unit.text, trail)


def _prepared(
    kb: KnowledgeBase,
    record: Record,
    system: System,
    name: str,
    bindings: Mapping[str, Any],
    claim: str | None,
) -> tuple[Prepared, Any, tuple[sp.Symbol, ...]]:
    """`prepare` (strict), the expanded expression's tree (None: not compiled), its symbols.

    The free symbols of the expanded expression come sorted by name.

    The expansion depends on the record, the target, the claim and which symbols are
    bound, never on their values: a frozen knowledge base's run expands it once
    (kb.equations.evalmemo `Evaluations.derived`), and the specs are those of `bindings`.
    """
    from kb.equations.evalmemo import evaluations

    def expanded() -> tuple[Prepared, Any, tuple[sp.Symbol, ...]]:
        plan = prepare(record, system, name, bindings, claim=claim, strict=True)
        free = tuple(sorted(plan.expanded.free_symbols, key=lambda s: s.name))
        return plan, compiled_tree(plan.expanded), free

    memo = evaluations(kb)
    if memo is None:
        return expanded()
    question = ("prepare", name, claim, tuple(sorted(bindings)))
    plan, tree, free = memo.derived(record, question, expanded)
    specs = _strict_specs(record, system, bindings, claim)
    return Prepared(plan.symbol, plan.expression, plan.expanded, plan.equation, specs), tree, free


def compiled_tree(expression: sp.Expr) -> Any:
    """The expression compiled to kb's one evaluable tree (expr.to_tree), or None."""
    from kb.equations.expr import NotCompiled, to_tree

    try:
        return to_tree(expression)
    except NotCompiled:
        return None


def exact_at(tree: Any, values: Mapping[str, Fraction]) -> Fraction | None:
    """The compiled tree's exact value at `values` (kb.equations.exact), or None.

    None where it has none: no tree, a division by zero, a power too large for its
    bounded work.
    """
    from kb.equations.exact import Inexact, evaluate_tree

    if tree is None:
        return None
    try:
        found: Fraction = evaluate_tree(tree, values)
    except Inexact:
        return None
    return found


def _substituted(expanded: sp.Expr, tree: Any, values: Mapping[sp.Symbol, sp.Rational]) -> Any:
    """The expression at `values`: on the compiled tree where it is exact, else SymPy's xreplace.

    kb.equations.exact gives the very rational xreplace gives; where it has no value
    (a division by zero, a power too large for its bounded work) SymPy decides, so
    an infinite result and its message are SymPy's as before. A Max or Min of numbers
    whose order interval arithmetic decides is its larger (smaller) argument, the very
    expression SymPy's xreplace returns (kb.equations.minmax), without SymPy's ordering.
    """
    from kb.equations.minmax import decided

    exact = {s.name: coprime_fraction(int(v.p), int(v.q)) for s, v in values.items()}
    found = exact_at(tree, exact) if tree is not None else None
    if found is not None:
        return sp.Rational(found.numerator, found.denominator)
    chosen = decided(expanded, values)
    return chosen if chosen is not None else expanded.xreplace(values)


def _declared_text(value: sp.Rational, unit: Unit | None) -> str:
    """A base-unit value shown in the symbol's declared unit (`3350 GB/s`, `8`)."""
    if unit is None:
        return number_text(value)
    shown = unit.from_base(Fraction(int(value.p), int(value.q)))
    number = number_text(sp.Rational(shown.numerator, shown.denominator))
    return number if unit.text == "1" else f"{number} {unit.text}"


def _unit_hint(unit: Unit | None) -> str:
    if unit is None:
        return ""
    return " (a count)" if unit.text == "1" else f" (a quantity in {unit.text} or a unit alike)"


def _unset_message(
    record: Record, unset: list[str], claim: str | None, units: Mapping[str, Unit]
) -> str:
    """Name each unset symbol and the fields the class's claims bind it to."""
    carriers = _carriers(record)
    lines = [f"not set: {', '.join(unset)} (kb calc never takes a value from another claim)"]
    for name in unset:
        where = carriers.get(name)
        if where:
            lines.append(f"  {name}: --set {name}=VALUE; records that carry it: {', '.join(where)}")
        else:
            lines.append(f"  {name}: --set {name}=VALUE{_unit_hint(units.get(name))}")
    if claim is None:
        ids = [str(c.get("id")) for c in _claims(record) if c.get("kind") == "numeric"]
        if ids:
            lines.append(f"  or --claim ID to take one claim's inputs ({', '.join(ids[:6])})")
    return "\n".join(lines)


def _carriers(record: Record) -> dict[str, list[str]]:
    """Map each symbol to the distinct record fields (`id#field`) the class's claims bind it to."""
    found: dict[str, list[str]] = {}
    for claim in _claims(record):
        bind = claim.get("bind")
        for name, spec in bind.items() if isinstance(bind, Mapping) else ():
            if isinstance(spec, str) and "#" in spec and spec not in found.get(str(name), []):
                found.setdefault(str(name), []).append(spec)
    return {name: specs[:4] for name, specs in found.items()}


def _no_value_message(
    name: str, expanded: sp.Expr, values: Mapping[sp.Symbol, sp.Rational], system: System
) -> str:
    """Why the expression has no finite value: the factor that divides by zero, if one does."""
    _, denominator = sp.fraction(sp.together(expanded))
    zeros = [
        f"{to_text(factor)} = 0"
        for factor in sp.Mul.make_args(denominator)
        if factor.free_symbols and factor.xreplace(dict(values)) == 0
    ]
    shown = ", ".join(
        f"{s} = {_declared_text(v, system.units.get(s.name))}"
        for s, v in sorted(values.items(), key=str)
    )
    reason = f"division by zero ({'; '.join(zeros)})" if zeros else "no finite value"
    return f"{name} has no value at {shown}: {reason}; the equation does not cover these inputs"


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


def prepare(
    record: Record,
    system: System,
    name: str,
    bindings: Mapping[str, Any],
    claim: str | None = None,
    strict: bool = False,
) -> Prepared:
    """Find target `name` of a composed `record` and expand it as `evaluate` does.

    `strict` (kb calc) takes values only from `bindings`, the named `claim` and the
    class's declared defaults; otherwise (the site's calculator, which pre-fills its
    inputs and says from which claim) the claims about `name` supply the rest.
    """
    symbol, expression, equation = _target(system, name)
    specs = (
        _strict_specs(record, system, bindings, claim)
        if strict
        else _with_defaults(record, name, bindings)
    )
    unknown = sorted(set(bindings) - set(system.symbols))
    if unknown:
        named = ", ".join(_with_suggestion(n, system.symbols) for n in unknown)
        raise EvaluationError(f"not symbols of {record.id}: {named}")
    keep = {system.symbols[n] for n in specs if n in system.symbols}
    definitions = system.definitions()
    if strict:  # an unset symbol is named itself, not through its definition's inputs
        keep |= _unsettled(expression, definitions, keep)
    expanded = system.expand(expression, keep)
    return Prepared(symbol, expression, expanded, equation, specs)


def _unsettled(
    expression: sp.Expr, definitions: Mapping[sp.Symbol, sp.Expr], given: set[sp.Symbol]
) -> set[sp.Symbol]:
    """The defined symbols whose definitions the inputs cannot settle: kept, so named as unset.

    A symbol with a definition is expanded only when every symbol its definition
    reaches has a value or is itself settled; otherwise the question lacks that
    symbol, and saying so beats naming the inputs of its calibration.
    """
    settled: dict[sp.Symbol, bool] = {}

    def settles(symbol: sp.Symbol, path: frozenset[sp.Symbol]) -> bool:
        if symbol in given:
            return True
        if symbol in settled:
            return settled[symbol]
        definition = definitions.get(symbol)
        ok = (
            definition is not None
            and symbol not in path
            and all(settles(s, path | {symbol}) for s in definition.free_symbols)
        )
        settled[symbol] = ok
        return ok

    for symbol in expression.free_symbols:
        settles(symbol, frozenset())
    return {s for s, ok in settled.items() if not ok and s in definitions}


def _with_suggestion(name: str, known: Iterable[str]) -> str:
    """`'name'`, or `'name' (did you mean 'x'?)` when kb.suggest finds a close known name."""
    from kb.suggest import did_you_mean

    hint = did_you_mean(name, known)
    return f"{name!r} ({hint})" if hint else repr(name)


def _default_target(record: Record, claim: str | None = None) -> str:
    if claim is not None and all(item.get("id") != claim for item in _claims(record)):
        ids = [str(c.get("id")) for c in _claims(record) if c.get("kind") == "numeric"]
        named = _with_suggestion(claim, ids)
        raise EvaluationError(f"{named} is no claim of {record.id} (claims: {', '.join(ids)})")
    for item in _claims(record):
        if claim is not None and item.get("id") != claim:
            continue
        if item.get("kind") == "numeric" and isinstance(item.get("of"), str):
            return str(item["of"])
    raise EvaluationError(f"{record.id}: name an equation or symbol to evaluate")


def _strict_specs(
    record: Record, system: System, given: Mapping[str, Any], claim: str | None
) -> dict[str, Any]:
    """Map name to (spec, origin): declared defaults, then one named claim's inputs, then --set."""
    specs: dict[str, Any] = {}
    symbols = record.data.get("symbols")
    for name, declared in symbols.items() if isinstance(symbols, Mapping) else ():
        default = declared.get("default") if isinstance(declared, Mapping) else None
        if isinstance(default, Mapping) and name in system.symbols:
            specs[str(name)] = (default, "assumed: default of this class")
    if claim is not None:
        chosen = next((c for c in _claims(record) if c.get("id") == claim), None)
        if chosen is None:
            ids = [str(c.get("id")) for c in _claims(record) if c.get("kind") == "numeric"]
            named = _with_suggestion(claim, ids)
            raise EvaluationError(f"{named} is no claim of {record.id} (claims: {', '.join(ids)})")
        bind = chosen.get("bind")
        for name, spec in bind.items() if isinstance(bind, Mapping) else ():
            specs[str(name)] = (spec, f"input of claim {claim}")
    specs.update({name: (spec, "--set") for name, spec in given.items()})
    return specs


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


def _bound(
    kb: KnowledgeBase,
    record: Record,
    system: System,
    name: str,
    specs: Mapping[str, Any],
    trail: list[str],
) -> sp.Rational:
    """`_bind` of one symbol, kept for the run: a frozen knowledge base binds it once.

    The value and the trail line are a function of the (composed) record, whose
    system declares the symbol's unit, the symbol and its (spec, origin) alone, and
    a frozen knowledge base's `id#field` bindings cannot change: the run's evaluation
    memo (kb.equations.evalmemo `Evaluations.derived`) keeps them, and an error too,
    raised again in the same words. A spec that cannot be a key is bound every time.
    """
    from kb.equations.evalmemo import Unkeyable, evaluations, frozen

    memo = evaluations(kb)
    if memo is None or name not in specs:
        return _bind(kb, system, name, specs, trail)
    try:
        question = ("bind", name, frozen(specs[name]))
    except Unkeyable:
        return _bind(kb, system, name, specs, trail)

    def bind() -> tuple[sp.Rational | None, str, EvaluationError | None]:
        lines: list[str] = []
        try:
            return _bind(kb, system, name, specs, lines), lines[0], None
        except EvaluationError as exc:
            return None, "", exc

    value, line, error = memo.derived(record, question, bind)
    if error is not None:
        raise type(error)(*error.args)
    assert value is not None
    trail.append(line)
    return value


def _bind(
    kb: KnowledgeBase,
    system: System,
    name: str,
    specs: Mapping[str, Any],
    trail: list[str],
) -> sp.Rational:
    if name not in specs:
        raise EvaluationError(
            f"symbol {name} is not bound: use --set {name}=VALUE "
            f"(a quantity such as '63 GB/s' or record-id#field)"
        )
    spec, origin = specs[name]
    bound = resolve_spec(kb, spec)
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


def _value_of(
    kb: KnowledgeBase, system: System, name: str, specs: Mapping[str, Any]
) -> sp.Rational | None:
    """A symbol a validity condition needs, bound from the specs in force, or None."""
    if name not in specs:
        return None
    bound = resolve_spec(kb, specs[name][0])
    declared = system.units.get(name)
    if not isinstance(bound, Bound) or declared is None or declared.dims != bound.dims:
        return None
    return sp.Rational(bound.value.numerator, bound.value.denominator)


def resolve_spec(kb: KnowledgeBase, spec: Any) -> Bound | BindError:
    """`resolve`, and a `Product` of resolved factors (values multiply, dimensions add)."""
    if not isinstance(spec, Product):
        return resolve(kb, spec)
    value, dims = Fraction(1), DIMENSIONLESS
    shown: list[str] = []
    for exponent, factor in spec.factors:
        bound = resolve(kb, factor)
        if not isinstance(bound, Bound):
            return bound
        if exponent < 0 and bound.value == 0:
            return BindError(
                codes.BINDING_UNRESOLVED, f"{spec.text}: divides by {bound.shown}, which is zero"
            )
        value = value * bound.value if exponent > 0 else value / bound.value
        dims = multiply_dims(dims, bound.dims, exponent)
        shown.append(("" if not shown else " * " if exponent > 0 else " / ") + bound.shown)
    return Bound(value, dims, f"({''.join(shown)})")


def _in_unit(result: sp.Expr, unit: Unit) -> Fraction:
    value = rational_value(result)
    return coprime_fraction(int(value.p), int(value.q)) / unit.factor


def coprime_fraction(p: int, q: int) -> Fraction:
    """p/q as a Fraction without reducing it again: p and q of a SymPy Rational.

    SymPy keeps every Rational in lowest terms with q > 0, and `Fraction(p, q)` would
    compute their gcd once more: for the exact `1 - (1 - k/E)^B` of an MoE prefill
    (B = batch x prompt tokens, numbers of a million bits) that one gcd was most of a
    model's planner pass. The value is the same Fraction (equal, same hash).
    """
    make = getattr(Fraction, "_from_coprime_ints", None)  # Python 3.12+
    if make is not None:
        return cast("Fraction", make(p, q))
    new: Any = Fraction  # 3.10, 3.11: the keyword the arithmetic operators use
    return cast("Fraction", new(p, q, _normalize=False))
