"""Claims, checked rather than trusted: numeric, scaling and effect.

Every claim names what it is about with `of` (an equation id, whose right side
is used, or a symbol, replaced by its unique definition) or `expr` (an
expression). Definitions are expanded transitively, except for bound or
changed symbols.

- numeric: `bind` every symbol (a literal `{value, unit}` or `id#field`), then
  `expect: {value, unit, round | rel_tol | abs_tol}`; units convert exactly.
- scaling: `var`, `law` (proportional | inverse | constant | power | affine),
  `exponent` for power, `asymptotic: true` to take the limit var -> oo; decided
  by the elasticity var*df/dvar/f.
- effect: `change: {symbol: expression | binding}` and the claimed `factor` on
  the target, optionally at an operating point (`bind`); or `replace: {term:
  new term}` in the equation `of`, solved for `var` before and after (rewrites.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from kb.equations.algebra import (
    ZERO,
    decide_zero,
    expand_definitions,
    number_text,
    rational_value,
    short,
)
from kb.equations.bind import BindError, Bound
from kb.equations.dims import DimensionError, dims_of
from kb.equations.expr import ExpressionError, parse_expression
from kb.equations.results import INVALID, PROVED, REFUTED, UNVERIFIED, Item
from kb.equations.system import System
from kb.equations.timeout import CheckTimeout, run_with_budget
from kb.equations.units import Dims, UnitError, exact_number, format_dims, parse_unit
from kb.findings import Location, pointer_join

Resolver = Callable[[Any], "Bound | BindError"]
CODES = {"numeric": "EQ007", "scaling": "EQ008", "effect": "EQ009"}
LAWS = {"proportional": 1, "inverse": -1, "constant": 0}


class ClaimError(ValueError):
    """A malformed claim: reported with its own code at a field of the claim."""

    def __init__(self, code: str, field: str, message: str, hint: str = "",
                 related: tuple[Location, ...] = ()) -> None:
        super().__init__(message)
        self.code, self.field, self.hint, self.related = code, field, hint, related

    def __reduce__(self) -> tuple[Any, ...]:  # survives the trip back from a budget child
        return (type(self), (self.code, self.field, str(self), self.hint, self.related))


@dataclass
class Context:
    """What one claim check needs: the system, the resolver, and where it is."""

    system: System
    resolve: Resolver
    claim: Mapping[str, Any]
    pointer: str
    related: tuple[Location, ...] = ()


def check_claims(system: System, claims: Any, resolve: Resolver) -> None:
    """Check every claim of a record, adding items and issues to `system`."""
    if not isinstance(claims, list):
        return
    for index, claim in enumerate(claims):
        if isinstance(claim, Mapping):
            context = Context(system, resolve, claim, pointer_join("/claims", index))
            context.related = _related(claim, resolve)
            _check_claim(context, str(claim.get("id", index)))


def _check_claim(ctx: Context, claim_id: str) -> None:
    kind = ctx.claim.get("kind")
    checker = {"numeric": _numeric, "scaling": _scaling, "effect": _effect}.get(str(kind))
    if checker is None:
        ctx.system.add("EQ001", pointer_join(ctx.pointer, "kind"), f"unknown claim kind {kind!r}",
                       "use numeric, scaling or effect")
        return
    try:
        state, detail, claimed, computed = run_with_budget(lambda: checker(ctx))
    except CheckTimeout as exc:
        state, detail, claimed, computed = UNVERIFIED, f"unverified (timeout): {exc}", "", ""
        ctx.system.add("EQ014", ctx.pointer, f"claim {claim_id}: {detail}", "simplify the claim")
    except Exception as exc:  # SymPy raises many types on odd input; each is a finding
        if isinstance(exc, ClaimError):
            _report_claim_error(ctx, claim_id, exc)
        else:  # malformed input SymPy chokes on: a finding, never a traceback
            ctx.system.add("EQ001", ctx.pointer, f"claim {claim_id} cannot be checked: "
                           f"{type(exc).__name__}: {exc}", "check the claim's fields")
        state, detail, claimed, computed = INVALID, str(exc), "", ""
    _record_outcome(ctx, claim_id, str(kind), (state, detail, claimed, computed))


def _report_claim_error(ctx: Context, claim_id: str, exc: ClaimError) -> None:
    pointer = pointer_join(ctx.pointer, *exc.field.split("/"))
    ctx.system.add(exc.code, pointer, f"claim {claim_id}: {exc}", exc.hint,
                   exc.related or ctx.related)


def _record_outcome(ctx: Context, claim_id: str, kind: str, outcome: tuple[str, ...]) -> None:
    state, detail, claimed, computed = outcome
    ctx.system.items.append(Item("claim", claim_id, ctx.pointer, state, detail, claimed, computed))
    if state == REFUTED:
        ctx.system.add(CODES[kind], ctx.pointer, f"claim {claim_id} is refuted: {detail}",
                       "correct the claim (or the record it binds) and bump the version",
                       ctx.related)
    elif state == UNVERIFIED and "timeout" not in detail:
        ctx.system.add("EQ015", ctx.pointer, f"claim {claim_id} is unverified: {detail}",
                       "bind an operating point or state a regime", ctx.related)


def _related(claim: Mapping[str, Any], resolve: Resolver) -> tuple[Location, ...]:
    """List the bound records' fields, so a finding on the claim names both files."""
    found: list[Location] = []
    for field in ("bind", "change"):
        specs = claim.get(field)
        for spec in specs.values() if isinstance(specs, Mapping) else ():
            if isinstance(spec, str) and "#" in spec:
                bound = resolve(spec)
                location = bound.location if isinstance(bound, Bound) else bound.related
                if location is not None and location not in found:
                    found.append(location)
    return tuple(found)


def target(ctx: Context, keep: set[sp.Symbol]) -> tuple[sp.Expr, Dims]:
    """Return the claim's expression (definitions expanded, `keep` kept) and its dims."""
    system = ctx.system
    if "expr" in ctx.claim:
        try:
            parsed = parse_expression(ctx.claim["expr"], system.symbols)
            dims = dims_of(parsed.tree, system.dims)
        except ExpressionError as exc:
            code = "EQ002" if exc.reason == "undeclared" else "EQ001"
            raise ClaimError(code, "expr", str(exc)) from None
        except DimensionError as exc:
            raise ClaimError("EQ004", "expr", str(exc)) from None
        return expand_definitions(parsed.value, system.definitions(), keep), dims
    name = ctx.claim.get("of")
    if isinstance(name, str) and name in system.equations:
        equation = system.equations[name]
        dims = dims_of(equation.lhs.tree, system.dims)
        return expand_definitions(equation.rhs.value, system.definitions(), keep), dims
    if isinstance(name, str) and name in system.symbols and name in system.units:
        symbol = system.symbols[name]
        value = expand_definitions(symbol, system.definitions(), keep)
        return value, system.units[name].dims
    raise ClaimError("EQ016", "of", f"of: {name!r} is neither an equation id nor a symbol",
                     "name an equation under equations: or a declared symbol")


def symbol_named(ctx: Context, name: Any, field: str) -> sp.Symbol:
    symbol = ctx.system.symbols.get(name) if isinstance(name, str) else None
    if symbol is None:
        raise ClaimError("EQ002", field, f"{name!r} is not a declared symbol",
                         "declare it under symbols: with a meaning and a unit")
    return symbol


def bind_values(ctx: Context, specs: Any, field: str) -> dict[sp.Symbol, sp.Rational]:
    """Resolve `bind:` to exact values in base units, checking each unit."""
    values: dict[sp.Symbol, sp.Rational] = {}
    if not isinstance(specs, Mapping):
        return values
    for name, spec in specs.items():
        values[symbol_named(ctx, name, field)] = _bound_value(ctx, name, spec, f"{field}/{name}")
    return values


def _bound_value(ctx: Context, name: str, spec: Any, field: str) -> sp.Rational:
    bound = ctx.resolve(spec)
    if isinstance(bound, BindError):
        related = (bound.related,) if bound.related else ()
        raise ClaimError(bound.code, field, f"{name}: {bound.message}", bound.hint, related)
    declared = ctx.system.units.get(name)
    if declared is None:
        raise ClaimError("EQ003", field, f"symbol {name} has no usable unit")
    if declared.dims != bound.dims:
        raise ClaimError("EQ012", field, f"{name} is declared {declared.text} "
                         f"({format_dims(declared.dims)}) but is bound to {bound.shown} "
                         f"({format_dims(bound.dims)})", "bind a field with a matching unit",
                         ctx.related)
    return sp.Rational(bound.value.numerator, bound.value.denominator)


def compare(computed: sp.Expr, claimed: Fraction, spec: Mapping[str, Any]) -> tuple[bool, str]:
    """Compare under `round`, `rel_tol` or `abs_tol` (else exactly); say how."""
    value = sp.Rational(claimed.numerator, claimed.denominator)
    if "round" in spec:
        step = sp.Rational(str(spec["round"]))
        if step <= 0:
            raise ClaimError("EQ001", "expect/round", f"round must be positive, not {step}")
        rounded = sp.floor(computed / step + sp.Rational(1, 2)) * step
        return rounded == value, f"rounded to a multiple of {step}: {rounded}"
    if "rel_tol" in spec:
        tol = sp.Rational(str(spec["rel_tol"]))
        error = abs(computed - value) / abs(value) if value else abs(computed)
        return bool(error <= tol), f"relative error {sp.N(error, 3)} vs rel_tol {tol}"
    if "abs_tol" in spec:
        tol = sp.Rational(str(spec["abs_tol"]))
        return bool(abs(computed - value) <= tol), f"abs_tol {tol}"
    return computed == value, "exact comparison"


def _numeric(ctx: Context) -> tuple[str, str, str, str]:
    values = bind_values(ctx, ctx.claim.get("bind"), "bind")
    expr, dims = target(ctx, set(values))
    computed = expr.xreplace(values)
    if computed.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise ClaimError("EQ007", "bind", f"{short(expr)} is undefined at the bound values "
                         "(a division by zero)", "check the bound values", ctx.related)
    missing = sorted(s.name for s in computed.free_symbols)
    if missing:
        raise ClaimError("EQ010", "bind", f"symbols not bound: {', '.join(missing)}",
                         "bind each symbol to a record field or a {value, unit}", ctx.related)
    expect = ctx.claim.get("expect")
    if not isinstance(expect, Mapping):
        raise ClaimError("EQ001", "expect", "numeric claim needs expect: {value, unit}")
    claimed, unit = _expected(ctx, expect, dims)
    shown = rational_value(computed) / sp.Rational(unit.factor.numerator, unit.factor.denominator)
    ok, how = compare(shown, claimed, expect)
    suffix = "" if unit.text == "1" else f" {unit.text}"
    claimed_text = f"{expect.get('value')}{suffix}"
    computed_text = f"{number_text(shown)}{suffix}"
    detail = f"computed {computed_text}, claimed {claimed_text} ({how})"
    return (PROVED if ok else REFUTED), detail, claimed_text, computed_text


def _expected(ctx: Context, expect: Mapping[str, Any], dims: Dims):
    try:
        claimed = exact_number(expect.get("value"))
    except ValueError:
        raise ClaimError("EQ001", "expect/value", f"expected value {expect.get('value')!r} "
                         "is not a number", "write 1.0e+9, not 1e9") from None
    try:
        unit = parse_unit(expect.get("unit", "1"))
    except UnitError as exc:
        raise ClaimError("EQ003", "expect/unit", str(exc), exc.hint) from None
    if unit.dims != dims:
        raise ClaimError("EQ012", "expect/unit", f"the result is {format_dims(dims)} but expect "
                         f"is in {unit.text} ({format_dims(unit.dims)})",
                         "state the expected value in a unit of the result's dimension")
    return claimed, unit


def _scaling(ctx: Context) -> tuple[str, str, str, str]:
    var = symbol_named(ctx, ctx.claim.get("var"), "var")
    law = ctx.claim.get("law")
    expr, _ = target(ctx, {var})
    if law == "affine":
        return _affine(expr, var)
    if law == "power":
        exponent = ctx.claim.get("exponent")
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
            raise ClaimError("EQ001", "exponent", "law power needs a numeric exponent")
        expected = sp.Rational(str(exponent))
    elif law in LAWS:
        expected = sp.Integer(LAWS[str(law)])
    else:
        raise ClaimError("EQ001", "law", f"unknown law {law!r}",
                         "use proportional, inverse, constant, power (with exponent) or affine")
    elasticity = sp.cancel(sp.together(var * sp.diff(expr, var) / expr))
    claimed = f"{law} in {var} (elasticity {expected})"
    if ctx.claim.get("asymptotic"):
        elasticity = sp.limit(elasticity, var, sp.oo)
        claimed += " as it grows"
    return _judge_elasticity(elasticity, expected, claimed)


def _judge_elasticity(elasticity: sp.Expr, expected: sp.Expr, claimed: str):
    computed = f"elasticity {short(elasticity)}"
    if decide_zero(elasticity - expected).outcome == ZERO:
        return PROVED, f"{computed} = {expected}", claimed, computed
    if elasticity.has(sp.Max, sp.Min, sp.Heaviside, sp.Piecewise):
        return UNVERIFIED, f"{computed} depends on the regime", claimed, computed
    return REFUTED, f"{computed}, not {expected}", claimed, computed


def _affine(expr: sp.Expr, var: sp.Symbol) -> tuple[str, str, str, str]:
    slope, curvature = sp.diff(expr, var), sp.diff(expr, var, 2)
    intercept = sp.cancel(expr - var * slope)
    claimed = f"affine in {var}"
    computed = f"slope {short(slope)}, intercept {short(intercept)}"
    if decide_zero(curvature).outcome != ZERO or decide_zero(slope).outcome == ZERO:
        return REFUTED, f"not affine: second derivative {short(curvature)}", claimed, computed
    if decide_zero(intercept).outcome == ZERO:
        return REFUTED, "proportional (intercept 0), not affine", claimed, computed
    return PROVED, computed, claimed, computed


def _effect(ctx: Context) -> tuple[str, str, str, str]:
    if "replace" in ctx.claim:
        return _judge_factor(ctx, _term_ratio(ctx))
    changes = ctx.claim.get("change")
    if not isinstance(changes, Mapping) or not changes:
        raise ClaimError("EQ001", "change", "effect claim needs change: {symbol: new value}")
    values = bind_values(ctx, ctx.claim.get("bind"), "bind")
    replaced = {symbol_named(ctx, n, "change"): _changed(ctx, n, s) for n, s in changes.items()}
    expr, _ = target(ctx, set(values) | set(replaced))
    return _judge_factor(ctx, _ratio(expr.xreplace(replaced), expr, values))


def _term_ratio(ctx: Context) -> sp.Expr:
    """Solve `of` (an equation) for `var` before and after `replace`; return new/old."""
    from kb.equations.rewrites import RewriteError, solution_ratio

    equation = ctx.system.equations.get(ctx.claim.get("of"))  # type: ignore[arg-type]
    if equation is None:
        raise ClaimError("EQ016", "of", "an effect with replace: needs of: an equation id")
    pairs = ctx.claim.get("replace")
    if not isinstance(pairs, Mapping) or not pairs:
        raise ClaimError("EQ001", "replace", "replace maps a term to its replacement")
    parsed = [(_term(ctx, old), _term(ctx, new)) for old, new in pairs.items()]
    try:
        _, _, ratio = solution_ratio(equation, parsed, symbol_named(ctx, ctx.claim.get("var"),
                                                                     "var"))
    except RewriteError as exc:
        raise ClaimError("EQ001", "replace", str(exc)) from None
    return ratio


def _term(ctx: Context, text: Any) -> sp.Expr:
    try:
        return parse_expression(text, ctx.system.symbols).value
    except ExpressionError as exc:
        code = "EQ002" if exc.reason == "undeclared" else "EQ001"
        raise ClaimError(code, "replace", str(exc)) from None


def _judge_factor(ctx: Context, ratio: sp.Expr) -> tuple[str, str, str, str]:
    claimed_spec = ctx.claim.get("factor")
    claimed_text = f"factor {claimed_spec}"
    computed_text = f"factor {number_text(ratio) if ratio.is_number else short(ratio)}"
    if ratio.is_Rational and isinstance(claimed_spec, (int, float)):
        ok, how = compare(ratio, exact_number(claimed_spec), ctx.claim)
        state = PROVED if ok else REFUTED
        detail = f"{computed_text}, claimed {claimed_spec} ({how})"
        return state, detail, claimed_text, computed_text
    claimed = _claimed_factor(ctx, claimed_spec)
    verdict = decide_zero(ratio - claimed)
    if verdict.outcome == ZERO:
        return PROVED, f"{computed_text} = claimed {claimed_spec}", claimed_text, computed_text
    if ratio.free_symbols and not claimed.free_symbols:
        detail = f"{computed_text} depends on the operating point"
        return UNVERIFIED, detail, claimed_text, computed_text
    return REFUTED, f"{computed_text}, claimed {claimed_spec}", claimed_text, computed_text


def _ratio(changed: sp.Expr, original: sp.Expr, values: dict[sp.Symbol, sp.Rational]) -> sp.Expr:
    """Return changed/original: plain arithmetic at an operating point, else cancelled."""
    if (changed.free_symbols | original.free_symbols) <= set(values):
        before = original.xreplace(values)
        if before != 0:
            return changed.xreplace(values) / before
    ratio = sp.cancel(sp.together(changed / original)).xreplace(values)
    return sp.cancel(ratio)


def _changed(ctx: Context, name: str, spec: Any) -> sp.Expr:
    if isinstance(spec, Mapping) or (isinstance(spec, str) and "#" in spec):
        return _bound_value(ctx, name, spec, f"change/{name}")
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return sp.Rational(str(spec))
    try:
        parsed = parse_expression(spec, ctx.system.symbols)
    except ExpressionError as exc:
        code = "EQ002" if exc.reason == "undeclared" else "EQ001"
        raise ClaimError(code, f"change/{name}", str(exc)) from None
    return parsed.value


def _claimed_factor(ctx: Context, spec: Any) -> sp.Expr:
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return sp.Rational(str(spec))
    try:
        return parse_expression(spec, ctx.system.symbols).value
    except ExpressionError as exc:
        raise ClaimError("EQ001", "factor", f"factor: {exc}") from None
