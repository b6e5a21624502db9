"""Derivation steps, each re-derived: derived, refuted (residual/counterexample) or unverified.

A step names its rule and its input and result equations (ids under
`equations:`). Rules:

- `define`: the result is a definition; only its dimensions are checked.
- `solve_for` (`var`): the result `X = expr` solves `from` for `var`; checked by
  back-substitution with cancel(together(...)) (no solve() unless it fails).
- `substitute` (`from: [target, def, ...]`): the definitions substituted into
  the target give the result.
- `rewrite`: the result is the same equation rearranged (same residual up to a
  nonzero constant factor, or equal sides).
- `scale` (`factor`): both sides multiplied by `factor`.
- `approximate` (`var`, `range: [lo, hi]`, `tolerance`): the result's right side
  is within the relative tolerance of `from`'s on the range; `limit` (`var`,
  `to`): the result's right side is the limit of `from`'s.
- `regime` (`condition: "a <= b"`): the result picks the branch of a max/min
  that the condition makes active.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import sympy as sp

from kb.equations import codes
from kb.equations.algebra import (
    NONZERO,
    ZERO,
    decide_zero,
    number_text,
    ratio_constant,
    short,
)
from kb.equations.expr import ExpressionError, Parsed, ParsedEquation, parse_expression
from kb.equations.results import DERIVED, INVALID, REFUTED, UNVERIFIED, Item
from kb.equations.system import System
from kb.equations.timeout import CheckGuard, CheckTimeout, run_with_budget
from kb.equations.work import uncounted  # parsing is bounded: never counted in a check
from kb.findings import pointer_join
from kb.run import Spending

Outcome = tuple[str, str]
# One rule: (system, the step, its `from` equations, its result) -> (state, detail).
Rule = Callable[[System, Mapping[str, Any], list[ParsedEquation], ParsedEquation], Outcome]


def check_derivations(system: System, derivations: Any, run: Spending | None = None) -> None:
    """Check every step of every derivation; add items and issues to `system`.

    `run`: what the checks spend from (kb.equations.timeout; None, each step's own budget).
    """
    if not isinstance(derivations, list):
        return
    for index, derivation in enumerate(derivations):
        if not isinstance(derivation, Mapping):
            continue
        der_id = str(derivation.get("id", index))
        steps = derivation.get("steps")
        for number, step in enumerate(steps if isinstance(steps, list) else []):
            pointer = pointer_join("/derivations", index, "steps", number)
            if isinstance(step, Mapping):
                _check_step(system, f"{der_id}.{number + 1}", step, pointer, run)


def _check_step(
    system: System, step_id: str, step: Mapping[str, Any], pointer: str, run: Spending | None
) -> None:
    rule = step.get("rule")
    result = _equation(system, step.get("result"), pointer_join(pointer, "result"))
    sources = _sources(system, step.get("from"), pointer_join(pointer, "from"))
    check = RULES.get(rule) if isinstance(rule, str) else None
    if check is None or not isinstance(rule, str):
        # no default: the schema's enum reports it (SC001, with the closest rule), and the
        # step is invalid here; one finding, not two
        system.items.append(Item("derivation", step_id, pointer, INVALID, f"rule {rule!r}"))
        return
    if result is None or sources is None or (rule != "define" and not sources):
        system.items.append(Item("derivation", step_id, pointer, INVALID, "missing equation"))
        return
    try:
        state, detail = run_with_budget(lambda: check(system, step, sources, result), run=run)
    except CheckGuard as exc:  # an internal limit, not the input's count of steps
        state, detail = UNVERIFIED, f"unverified (timeout): {exc}"
        system.add(codes.CHECK_INTERNAL_LIMIT, pointer, f"step {step_id} ({rule}): {detail}")
    except CheckTimeout as exc:
        state, detail = UNVERIFIED, f"unverified (timeout): {exc}"
        system.add(
            codes.CHECK_TIMEOUT,
            pointer,
            f"step {step_id} ({rule}): {detail}",
            "simplify the step or split it into smaller steps",
        )
    except _StepError as exc:
        system.add(exc.code, pointer_join(pointer, exc.field), str(exc), exc.hint)
        state, detail = INVALID, str(exc)
    except Exception:  # SymPy raises many types on odd input; each is a finding
        # the library's own words (an exception class and its text) mean nothing to an author
        detail = f"step {step_id} ({rule}) cannot be checked: the algebra failed on its fields"
        system.add(codes.EXPRESSION_UNSAFE, pointer, detail, "check the step's fields")
        state = INVALID
    _report(system, step_id, rule, pointer, state, detail, result)


def _report(
    system: System,
    step_id: str,
    rule: str,
    pointer: str,
    state: str,
    detail: str,
    result: ParsedEquation,
) -> None:
    system.items.append(Item("derivation", step_id, pointer, state, detail, result.source))
    if state == REFUTED:
        system.add(
            codes.DERIVATION_REFUTED,
            pointer,
            f"step {step_id} ({rule}) is refuted: {result.source!r}: {detail}",
            "correct the result equation (the computed form is in the message)"
            + (
                ", or add to `from` the definitions of the symbols the computed form still has"
                if rule == "substitute"
                else ""
            ),
        )
    elif state == UNVERIFIED and "timeout" not in detail:
        system.add(
            codes.DERIVATION_UNVERIFIED,
            pointer,
            f"step {step_id} ({rule}) is unverified: {detail}",
            UNVERIFIED_HINTS.get(rule, UNVERIFIED_HINTS[""]),
        )


# What to do about an unverified step, by its rule (the hint must fit the step's own failure).
UNVERIFIED_HINTS = {
    "approximate": "approximate bounds the relative error over its one `var` on `range`: pick as"
    " var the symbol the approximation is about and state both equations so the other symbols"
    " cancel from (result - from)/from, or check the figure with a numeric claim instead",
    "regime": "a regime needs a two-argument max/min in `from` and a condition `a <= b` that"
    " compares exactly its two arguments (up to a positive factor)",
    "": "split the step into smaller ones (define, substitute, solve_for) that kb can derive"
    " one by one, or add a regime that decides a max/min",
}


class _StepError(ValueError):
    def __init__(
        self, message: str, field: str, code: str = codes.EXPRESSION_UNSAFE, hint: str = ""
    ) -> None:
        super().__init__(message)
        self.field, self.code, self.hint = field, code, hint

    def __reduce__(self) -> tuple[Any, ...]:  # survives the trip back from a budget child
        return (type(self), (str(self), self.field, self.code, self.hint))


def _equation(system: System, eq_id: Any, pointer: str) -> ParsedEquation | None:
    if not isinstance(eq_id, str) or not eq_id:
        system.add(
            codes.REFERENCE_UNKNOWN,
            pointer,
            "a derivation step needs an equation id here",
            None,  # the rule module's HINT (kb/rules/eq_reference_unknown.py)
        )
        return None
    found = system.equations.get(eq_id)
    if found is None and eq_id not in system.failed:
        from kb.suggest import did_you_mean

        known = [*system.equations, *system.failed]
        system.add(
            codes.REFERENCE_UNKNOWN,
            pointer,
            f"no equation {eq_id!r} in this record",
            did_you_mean(eq_id, known) or None,  # else the rule module's HINT
        )
    return found


def _sources(system: System, value: Any, pointer: str) -> list[ParsedEquation] | None:
    if value is None:
        return []
    ids = [value] if isinstance(value, str) else value if isinstance(value, list) else [None]
    found = [_equation(system, eq_id, pointer_join(pointer, n)) for n, eq_id in enumerate(ids)]
    resolved = [f for f in found if f is not None]
    return resolved if len(resolved) == len(found) else None


def _define(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    return DERIVED, "definition (checked for dimensions only)"


def _variable(system: System, step: Mapping[str, Any]) -> sp.Symbol:
    name = step.get("var")
    symbol = system.symbols.get(name) if isinstance(name, str) else None
    if symbol is None:
        raise _StepError(
            f"var {name!r} is not a declared symbol",
            "var",
            codes.SYMBOL_UNDECLARED,
            "name the variable, a symbol declared under symbols:",
        )
    return symbol


def _solve_for(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    source = sources[0]
    var = _variable(system, step)
    if not isinstance(result.lhs.value, sp.Symbol) or var in result.rhs.value.free_symbols:
        raise _StepError("solve_for needs a result `X = expression` free of the variable", "result")
    residual = source.residual.xreplace({var: result.rhs.value})
    verdict = decide_zero(residual)
    if verdict.outcome == ZERO:
        numerator = sp.numer(sp.together(source.residual))
        degree = sp.Poly(numerator, var).degree() if numerator.is_polynomial(var) else None
        unique = "the unique solution" if degree == 1 else "a solution"
        return DERIVED, f"back-substitution leaves residual 0: {result.source} is {unique}"
    solutions = sp.solve(source.residual, var)
    shown = ", ".join(f"{var} = {short(s)}" for s in solutions) or "no positive solution"
    state = REFUTED if verdict.outcome == NONZERO else UNVERIFIED
    return state, f"{verdict.describe()}; the equation gives {shown}"


def _same(left: sp.Expr, right: sp.Expr) -> bool:
    return decide_zero(left - right).outcome == ZERO


def _equivalent(first: ParsedEquation, second: ParsedEquation) -> Outcome:
    if _same(first.lhs.value, second.lhs.value) and _same(first.rhs.value, second.rhs.value):
        return DERIVED, "both sides agree"
    factor = ratio_constant(second.residual, first.residual)
    if factor is not None:
        return DERIVED, f"same equation (residual scaled by {factor})"
    verdict = decide_zero(first.residual - second.residual)
    computed = f"{short(first.lhs.value)} = {short(first.rhs.value)}"
    if verdict.outcome == NONZERO:
        return REFUTED, f"expected {computed}; {verdict.describe()}"
    return UNVERIFIED, f"expected {computed}; {verdict.describe()}"


def _substitute(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    target, defs = sources[0], sources[1:]
    mapping = {}
    for definition in defs:
        if not isinstance(definition.lhs.value, sp.Symbol):
            raise _StepError(f"{definition.source!r} is not a definition `X = ...`", "from")
        mapping[definition.lhs.value] = definition.rhs.value
    replaced = ParsedEquation(target.source, _with(target.lhs, mapping), _with(target.rhs, mapping))
    return _equivalent(replaced, result)


def _with(side: Parsed, mapping: Mapping[sp.Symbol, sp.Expr]) -> Parsed:
    """`side` with its value substituted (the tree kept as authored)."""
    value = side.value
    for _ in range(10):
        value = value.xreplace(mapping)
    return type(side)(side.source, side.tree, value)


def _rewrite(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    return _equivalent(sources[0], result)


def _scale(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    source = sources[0]
    factor = _expr(system, step.get("factor"), "factor")
    lhs, rhs = factor * source.lhs.value, factor * source.rhs.value
    checks = [decide_zero(lhs - result.lhs.value), decide_zero(rhs - result.rhs.value)]
    if all(c.outcome == ZERO for c in checks):
        return DERIVED, f"both sides multiplied by {short(factor)}"
    computed = f"{short(lhs)} = {short(rhs)}"
    state = REFUTED if any(c.outcome == NONZERO for c in checks) else UNVERIFIED
    return state, f"multiplying by {short(factor)} gives {computed}"


def _expr(system: System, text: Any, field: str) -> sp.Expr:
    try:
        return uncounted(lambda: parse_expression(text, system.symbols)).value
    except ExpressionError as exc:
        code = codes.SYMBOL_UNDECLARED if exc.reason == "undeclared" else codes.EXPRESSION_UNSAFE
        raise _StepError(f"{field}: {exc}", field, code) from None


def _bound(system: System, value: Any, field: str) -> sp.Expr:
    if value == "oo" or value == "inf":
        return sp.oo
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return sp.Rational(str(value))
    return _expr(system, value, field)


def _limit(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    source = sources[0]
    var = _variable(system, step)
    to = _bound(system, step.get("to", "oo"), "to")
    computed = sp.limit(source.rhs.value, var, to)
    if _same(computed, result.rhs.value):
        return DERIVED, f"limit as {var} -> {to} is {short(computed)}"
    return REFUTED, f"limit as {var} -> {to} is {short(computed)}, not {short(result.rhs.value)}"


def _approximate(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    source = sources[0]
    var = _variable(system, step)
    span = step.get("range")
    if not (isinstance(span, list) and len(span) == 2):
        raise _StepError("approximate needs range: [low, high]", "range")
    low, high = _bound(system, span[0], "range"), _bound(system, span[1], "range")
    tolerance = _bound(system, step.get("tolerance"), "tolerance")
    exact = source.rhs.value
    error = sp.cancel(sp.together((result.rhs.value - exact) / exact))
    if error.free_symbols - {var}:
        others = ", ".join(sorted(s.name for s in error.free_symbols - {var}))
        return UNVERIFIED, f"relative error {short(error)} depends on {others}"
    worst, where = _worst_error(error, var, low, high)
    text = f"max relative error {number_text(worst)} at {var}={where} on [{low}, {high}]"
    if worst <= tolerance:
        return DERIVED, f"{text} <= tolerance {tolerance}"
    return REFUTED, f"{text} exceeds tolerance {tolerance}"


def _worst_error(
    error: sp.Expr, var: sp.Symbol, low: sp.Expr, high: sp.Expr
) -> tuple[sp.Expr, sp.Expr]:
    candidates = [low, high]
    critical = sp.solve(sp.diff(error, var), var)
    candidates += [c for c in critical if c.is_real and low <= c <= high]
    values = []
    for point in candidates:
        at = sp.limit(error, var, point) if point.is_infinite else error.xreplace({var: point})
        values.append((abs(at), point))
    return max(values, key=lambda pair: pair[0])


def _regime(
    system: System, step: Mapping[str, Any], sources: list[ParsedEquation], result: ParsedEquation
) -> Outcome:
    source = sources[0]
    condition = step.get("condition")
    if not isinstance(condition, str) or condition.count("<=") != 1:
        raise _StepError('regime needs condition: "a <= b"', "condition")
    low, high = (_expr(system, part, "condition") for part in condition.split("<="))
    branch = next(
        (a for a in sp.preorder_traversal(source.rhs.value) if isinstance(a, (sp.Max, sp.Min))),
        None,
    )
    if branch is None or len(branch.args) != 2:
        return UNVERIFIED, "the source's right side has no two-argument max/min"
    picked = next(
        (
            arg
            for arg in branch.args
            if _same(source.rhs.value.xreplace({branch: arg}), result.rhs.value)
        ),
        None,
    )
    if picked is None:
        return REFUTED, f"{short(result.rhs.value)} does not pick a branch of {short(branch)}"
    other = branch.args[1] if picked == branch.args[0] else branch.args[0]
    larger, smaller = (picked, other) if isinstance(branch, sp.Max) else (other, picked)
    scale = ratio_constant(larger - smaller, high - low)
    if scale is not None and scale > 0:
        return DERIVED, f"under {condition}, {short(branch)} = {short(picked)}"
    if scale is not None:
        return REFUTED, f"under {condition}, {short(branch)} = {short(other)}, not {short(picked)}"
    return UNVERIFIED, f"could not show that {condition} selects {short(picked)}"


# The derivation rules: the one list, used to validate a step's `rule` and to dispatch it.
# The schema's `rule` enum, docs/equations.md and the README are tested against it.
RULES: Mapping[str, Rule] = {
    "define": _define,
    "solve_for": _solve_for,
    "substitute": _substitute,
    "rewrite": _rewrite,
    "scale": _scale,
    "approximate": _approximate,
    "limit": _limit,
    "regime": _regime,
}
