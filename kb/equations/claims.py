"""Claims, checked rather than trusted: numeric, scaling, effect and prediction.

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
- prediction: evaluated like a numeric claim, then compared with the figure
  `measured` names (a receipt's `id#field`) under `band: {rel}`
  (claimbase.judge_prediction).
- bound: a prediction that is an `upper` or `lower` bound (`bound:`) on the
  measured figure: it holds or is contradicted, with its tightness.

A numeric, scaling or effect claim with `erratum:` keeps a source's statement that
kb refutes: its outcome is turned around in claimbase.record_outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import sympy as sp

from kb.equations import codes
from kb.equations.algebra import (
    NONZERO,
    ZERO,
    ZeroVerdict,
    decide_zero,
    expand_definitions,
    number_text,
    rational_value,
    short,
)
from kb.equations.claimbase import (
    CODES,
    ClaimError,
    Context,
    bound_value,
    bound_values,
    compare,
    declared_name,
    error_state,
    expected,
    is_binding,
    judge_factor,
    judge_numeric,
    judge_prediction,
    record_outcome,
    report_claim_error,
)
from kb.equations.dims import DimensionError, dims_of
from kb.equations.expr import ExpressionError, parse_expression
from kb.equations.numtext import number_text as exact_text
from kb.equations.results import DOWNSTREAM, INVALID, RECOMPUTED, REFUTED, UNVERIFIED
from kb.equations.system import System
from kb.equations.timeout import CheckGuard, CheckTimeout, run_with_budget
from kb.equations.work import uncounted  # parsing is bounded: never counted in a check
from kb.quantities import Dims
from kb.run import Spending

__all__ = [
    "CODES",
    "ClaimError",
    "Context",
    "ClaimVerdict",
    "check_claim",
    "compare",
    "is_binding",
    "name_waiting_claims",
    "target",
]
LAWS = {"proportional": 1, "inverse": -1, "constant": 0}


ClaimVerdict = tuple[str, Any]
"""("ok", (state, detail, claimed, computed)) | ("claim", ClaimError) | ("error", (type, text))
| ("timeout", text) | ("guard", text): what a claim's checker came to, free of tracebacks
(shared.py keeps it)."""


def name_waiting_claims(system: System, claims: list[Any]) -> None:
    """Add to a failed equation's own finding the claims that wait on it (see DOWNSTREAM)."""
    waiting: dict[str, list[str]] = {}
    for index, claim in enumerate(claims):
        of = claim.get("of") if isinstance(claim, Mapping) else None
        if isinstance(of, str) and of in system.failed and "expr" not in claim:
            waiting.setdefault(of, []).append(str(claim.get("id", index)))
    for position, issue in enumerate(system.issues):
        parts = issue.pointer.split("/")
        ids = waiting.get(parts[2]) if len(parts) > 2 and parts[1] == "equations" else None
        if ids:
            shown = ", ".join(ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")
            message = f"{issue.message} (claims {shown} cite it: checked once it is fixed)"
            system.issues[position] = replace(issue, message=message)
            waiting.pop(parts[2])


def check_claim(
    ctx: Context, claim_id: str, known: ClaimVerdict | None = None, run: Spending | None = None
) -> ClaimVerdict | None:
    """Check one claim (or take its `known` verdict); return the verdict, None if no kind.

    `run`: what the check spends from (kb.equations.timeout; None, its own budget only).
    """
    kind = ctx.claim.get("kind")
    checker = {
        "numeric": _numeric,
        "scaling": _scaling,
        "effect": _effect,
        "prediction": _prediction,
        "bound": _prediction,
    }.get(str(kind))
    if checker is None:  # the schema's enum reports it (SC001, with the closest kind)
        return None
    of = ctx.claim.get("of")
    if isinstance(of, str) and of in ctx.system.failed and "expr" not in ctx.claim:
        # DOWNSTREAM: nothing of this claim can be checked; its equation's finding says why
        outcome = INVALID, f"of: {of!r} is an equation kb could not check", "", ""
        record_outcome(ctx, claim_id, str(kind), outcome)
        return None
    verdict = known if known is not None else _verdict(lambda: checker(ctx), run)
    status, found = verdict
    if status == "ok":
        outcome = found
    elif status == "timeout":
        outcome = UNVERIFIED, f"unverified (timeout): {found}", "", ""
        ctx.system.add(
            codes.CHECK_TIMEOUT,
            ctx.pointer,
            f"claim {claim_id}: {outcome[1]}",
            "simplify the claim",
        )
    elif status == "guard":  # an internal limit, not the input's count of steps
        outcome = UNVERIFIED, f"unverified (timeout): {found}", "", ""
        ctx.system.add(codes.CHECK_INTERNAL_LIMIT, ctx.pointer, f"claim {claim_id}: {outcome[1]}")
    elif status == "claim":
        report_claim_error(ctx, claim_id, found)
        outcome = error_state(found), str(found), "", ""
    else:  # malformed input SymPy chokes on: a finding, never a traceback
        ctx.system.add(
            codes.EXPRESSION_UNSAFE,
            ctx.pointer,
            f"claim {claim_id} cannot be checked: {found[0]}: {found[1]}",
            "check the claim's fields",
        )
        outcome = INVALID, found[1], "", ""
    cause = found if status == "claim" else None
    record_outcome(ctx, claim_id, str(kind), outcome, cause)
    return verdict


def _verdict(check: Callable[[], tuple[str, str, str, str]], run: Spending | None) -> ClaimVerdict:
    try:
        return "ok", run_with_budget(check, run=run)
    except CheckGuard as exc:
        return "guard", str(exc)
    except CheckTimeout as exc:
        return "timeout", str(exc)
    except ClaimError as exc:  # a fresh copy: no traceback keeping SymPy objects alive
        return "claim", ClaimError(exc.code, exc.field, str(exc), exc.hint, exc.related)
    except Exception as exc:  # SymPy raises many types on odd input; each is a finding
        return "error", (type(exc).__name__, str(exc))


def target(ctx: Context, keep: set[sp.Symbol]) -> tuple[sp.Expr, Dims]:
    """Return the claim's expression (definitions expanded, `keep` kept) and its dims."""
    system = ctx.system
    if "expr" in ctx.claim:
        try:
            parsed = uncounted(lambda: parse_expression(ctx.claim["expr"], system.symbols))
            dims = dims_of(parsed.tree, system.dims)
        except ExpressionError as exc:
            code = (
                codes.SYMBOL_UNDECLARED if exc.reason == "undeclared" else codes.EXPRESSION_UNSAFE
            )
            raise ClaimError(code, "expr", str(exc)) from None
        except DimensionError as exc:
            raise ClaimError(codes.DIMENSION_MISMATCH, "expr", str(exc)) from None
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
    if isinstance(name, str) and name in system.failed:
        raise ClaimError(DOWNSTREAM, "of", f"of: {name!r} is an equation kb could not check")
    from kb.suggest import did_you_mean

    known = [*system.equations, *system.failed, *system.symbols]
    raise ClaimError(
        codes.REFERENCE_UNKNOWN,
        "of",
        f"of: {name!r} is neither an equation id nor a symbol",
        did_you_mean(str(name), known, "name an equation under equations: or a declared symbol"),
    )


def symbol_named(ctx: Context, name: Any, field: str) -> sp.Symbol:
    symbol: sp.Symbol = ctx.system.symbols[declared_name(ctx, name, field)]
    return symbol


def bind_values(ctx: Context, specs: Any, field: str) -> dict[sp.Symbol, sp.Rational]:
    """Resolve `bind:` to exact values in base units, checking each unit."""
    return {
        ctx.system.symbols[name]: _rational(value)
        for name, value in bound_values(ctx, specs, field).items()
    }


def _rational(value: Fraction) -> sp.Rational:
    return sp.Rational(value.numerator, value.denominator)


def _fraction(value: sp.Rational) -> Fraction:
    return Fraction(int(value.p), int(value.q))


def _numeric(ctx: Context) -> tuple[str, str, str, str]:
    computed, expr, dims = _evaluated(ctx)
    expect = ctx.claim.get("expect")
    expected(expect, dims)  # checked before the value is made rational, as it always was
    return judge_numeric(_fraction(rational_value(computed)), expect, dims)


def _prediction(ctx: Context) -> tuple[Any, ...]:
    computed, _, dims = _evaluated(ctx)
    return judge_prediction(ctx, _fraction(rational_value(computed)), dims)


def _evaluated(ctx: Context) -> tuple[sp.Expr, sp.Expr, Dims]:
    """The claim's target at its bound values (a number), the target and its dims."""
    values = bind_values(ctx, ctx.claim.get("bind"), "bind")
    expr, dims = target(ctx, set(values))
    computed = expr.xreplace(values)
    if computed.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise ClaimError(
            CODES.get(str(ctx.claim.get("kind")), codes.NUMERIC_CLAIM_REFUTED),
            "bind",
            f"{short(expr)} is undefined at the bound values (a division by zero)",
            "check the bound values",
            ctx.related,
        )
    missing = sorted(s.name for s in computed.free_symbols)
    if missing:
        raise ClaimError(
            codes.BINDING_UNRESOLVED,
            "bind",
            f"symbols not bound: {', '.join(missing)}",
            "bind each symbol to a record field or a {value, unit}",
            ctx.related,
        )
    return computed, expr, dims


def _scaling(ctx: Context) -> tuple[str, str, str, str]:
    var = symbol_named(ctx, ctx.claim.get("var"), "var")
    law = ctx.claim.get("law")
    expr, _ = target(ctx, {var})
    if law == "affine":
        return _affine(expr, var)
    if law == "power":
        exponent = ctx.claim.get("exponent")
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
            raise ClaimError(
                codes.EXPRESSION_UNSAFE, "exponent", "law power needs a numeric exponent"
            )
        expected = sp.Rational(str(exponent))
    elif isinstance(law, str) and law in LAWS:
        expected = sp.Integer(LAWS[law])
    else:
        raise ClaimError(
            codes.EXPRESSION_UNSAFE,
            "law",
            f"law must be one of the named laws, not {law!r}",
            "use proportional, inverse, constant, power (with exponent) or affine",
        )
    elasticity = sp.cancel(sp.together(var * sp.diff(expr, var) / expr))
    claimed = f"{law} in {var} (elasticity {expected})"
    if ctx.claim.get("asymptotic"):
        elasticity = sp.limit(elasticity, var, sp.oo)
        claimed += " as it grows"
    return _judge_elasticity(elasticity, expected, claimed)


def _judge_elasticity(
    elasticity: sp.Expr, expected: sp.Expr, claimed: str
) -> tuple[str, str, str, str]:
    computed = f"elasticity {short(elasticity)}"
    verdict = decide_zero(elasticity - expected)
    if verdict.outcome == ZERO:
        return RECOMPUTED, f"{computed} = {expected}", claimed, computed
    if elasticity.has(sp.Max, sp.Min, sp.Heaviside, sp.Piecewise):
        return UNVERIFIED, f"{computed} depends on the regime", claimed, computed
    if verdict.outcome != NONZERO:
        return UNVERIFIED, _undecided(verdict, f"{computed} equals {expected}"), claimed, computed
    return REFUTED, f"{computed}, not {expected}", claimed, computed


def _undecided(verdict: ZeroVerdict, question: str) -> str:
    """Why a claim is unverified when kb could neither prove nor refute it (never refuted)."""
    if verdict.timed_out:
        return f"unverified (timeout): kb could not decide within its budget whether {question}"
    return f"kb could not decide whether {question} (no proof, no counterexample)"


def _affine(expr: sp.Expr, var: sp.Symbol) -> tuple[str, str, str, str]:
    slope, curvature = sp.diff(expr, var), sp.diff(expr, var, 2)
    intercept = sp.cancel(expr - var * slope)
    claimed = f"affine in {var}"
    computed = f"slope {short(slope)}, intercept {short(intercept)}"
    bent, flat, through_zero = (decide_zero(e) for e in (curvature, slope, intercept))
    undecided = [v for v in (bent, flat, through_zero) if v.outcome not in (ZERO, NONZERO)]
    if bent.outcome == NONZERO or flat.outcome == ZERO:
        return REFUTED, f"not affine: second derivative {short(curvature)}", claimed, computed
    if undecided:
        return UNVERIFIED, _undecided(undecided[0], f"it is {claimed}"), claimed, computed
    if through_zero.outcome == ZERO:
        return REFUTED, "proportional (intercept 0), not affine", claimed, computed
    return RECOMPUTED, computed, claimed, computed


def _effect(ctx: Context) -> tuple[str, str, str, str]:
    if "replace" in ctx.claim:
        return _judge_factor(ctx, _term_ratio(ctx))
    changes = ctx.claim.get("change")
    if not isinstance(changes, Mapping) or not changes:
        raise ClaimError(
            codes.EXPRESSION_UNSAFE, "change", "effect claim needs change: {symbol: new value}"
        )
    values = bind_values(ctx, ctx.claim.get("bind"), "bind")
    replaced = {
        symbol_named(ctx, n, "change"): changed_value(ctx, n, s) for n, s in changes.items()
    }
    expr, _ = target(ctx, set(values) | set(replaced))
    return _judge_factor(ctx, _ratio(expr.xreplace(replaced), expr, values))


def _term_ratio(ctx: Context) -> sp.Expr:
    """Solve `of` (an equation) for `var` before and after `replace`; return new/old."""
    from kb.equations.rewrites import RewriteError, solution_ratio

    equation = ctx.system.equations.get(ctx.claim.get("of"))
    if equation is None:
        raise ClaimError(
            codes.REFERENCE_UNKNOWN, "of", "an effect with replace: needs of: an equation id"
        )
    pairs = ctx.claim.get("replace")
    if not isinstance(pairs, Mapping) or not pairs:
        raise ClaimError(
            codes.EXPRESSION_UNSAFE, "replace", "replace maps a term to its replacement"
        )
    parsed = [(_term(ctx, old), _term(ctx, new)) for old, new in pairs.items()]
    try:
        _, _, ratio = solution_ratio(
            equation, parsed, symbol_named(ctx, ctx.claim.get("var"), "var")
        )
    except RewriteError as exc:
        raise ClaimError(codes.EXPRESSION_UNSAFE, "replace", str(exc)) from None
    return ratio


def _term(ctx: Context, text: Any) -> sp.Expr:
    try:
        return uncounted(lambda: parse_expression(text, ctx.system.symbols)).value
    except ExpressionError as exc:
        code = codes.SYMBOL_UNDECLARED if exc.reason == "undeclared" else codes.EXPRESSION_UNSAFE
        raise ClaimError(code, "replace", str(exc)) from None


def _judge_factor(ctx: Context, ratio: sp.Expr) -> tuple[str, str, str, str]:
    claimed_spec = ctx.claim.get("factor")
    if ratio.is_Rational and isinstance(claimed_spec, (int, float)):
        return judge_factor(_fraction(ratio), claimed_spec, ctx.claim)  # as plan.py judges it
    claimed_text = f"factor {claimed_spec}"
    shown = (
        exact_text(_fraction(ratio))
        if ratio.is_Rational
        else number_text(ratio)
        if ratio.is_number
        else short(ratio)
    )
    computed_text = f"factor {shown}"
    claimed = _claimed_factor(ctx, claimed_spec)
    verdict = decide_zero(ratio - claimed)
    if verdict.outcome == ZERO:
        return RECOMPUTED, f"{computed_text} = claimed {claimed_spec}", claimed_text, computed_text
    if ratio.free_symbols and not claimed.free_symbols:
        detail = f"{computed_text} depends on the operating point"
        return UNVERIFIED, detail, claimed_text, computed_text
    if verdict.outcome != NONZERO:
        detail = _undecided(verdict, f"{computed_text} equals {claimed_spec}")
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


def changed_value(ctx: Context, name: str, spec: Any) -> sp.Expr:
    """The new value of a changed symbol: a bound quantity, a number or an expression."""
    if is_binding(spec):
        return _rational(bound_value(ctx, name, spec, f"change/{name}"))
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return sp.Rational(str(spec))
    try:
        parsed = uncounted(lambda: parse_expression(spec, ctx.system.symbols))
    except ExpressionError as exc:
        code = codes.SYMBOL_UNDECLARED if exc.reason == "undeclared" else codes.EXPRESSION_UNSAFE
        raise ClaimError(code, f"change/{name}", str(exc)) from None
    return parsed.value


def _claimed_factor(ctx: Context, spec: Any) -> sp.Expr:
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return sp.Rational(str(spec))
    try:
        return uncounted(lambda: parse_expression(spec, ctx.system.symbols)).value
    except ExpressionError as exc:
        raise ClaimError(codes.EXPRESSION_UNSAFE, "factor", f"factor: {exc}") from None
