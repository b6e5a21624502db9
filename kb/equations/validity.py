"""Where a class's equations apply: its `validity:` conditions, checked for given inputs.

A flop class may declare, beside its equations, the conditions under which they
describe the hardware (the seed crossover holds only below the ridge batch, a
tensor-parallel formula with N - 1 below needs N >= 2):

    validity:
      - id: below-ridge
        expr: B_star
        max: B_ridge
        reason: above the ridge batch the all-reduces compete with compute, not the weight read

`expr`, `min`, `max` and `above` are expressions of the class's symbols (the
safe expression language); a symbol defined by one of the class's equations is
expanded through it. `kb calc` checks every condition whose symbols it can bind:
a result outside one is refused with the condition's reason (exit 1); a condition
it cannot bind is named in the trail as not checked, never skipped in silence.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sympy as sp

from kb.equations.algebra import number_text
from kb.equations.expr import ExpressionError, parse_expression
from kb.equations.system import System

_BOUNDS = (
    ("min", ">=", sp.GreaterThan),
    ("max", "<=", sp.LessThan),
    ("above", ">", sp.StrictGreaterThan),
)


@dataclass(frozen=True)
class Verdict:
    """One condition for one set of inputs: holds, violated (with the reason) or unchecked."""

    condition: str
    state: str  # "holds" | "violated" | "unchecked"
    text: str


def conditions(record_data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The record's well-formed validity conditions (the schema reports the others)."""
    items = record_data.get("validity")
    return [c for c in items if isinstance(c, Mapping)] if isinstance(items, list) else []


def judge(
    record_data: Mapping[str, Any],
    system: System,
    values: Mapping[sp.Symbol, sp.Expr],
    value_of: Callable[[str], sp.Rational | None],
) -> list[Verdict]:
    """Judge every condition at `values`; `value_of(name)` binds a symbol they lack, or None."""
    return [_judge_one(c, system, values, value_of) for c in conditions(record_data)]


def _judge_one(
    condition: Mapping[str, Any],
    system: System,
    values: Mapping[sp.Symbol, sp.Expr],
    value_of: Callable[[str], sp.Rational | None],
) -> Verdict:
    name = str(condition.get("id"))
    sides = [
        (field, op, cmp) for field, op, cmp in _BOUNDS if isinstance(condition.get(field), str)
    ]
    try:
        left = _expanded(str(condition.get("expr")), system, values)
        rights = [
            (op, cmp, _expanded(str(condition[field]), system, values)) for field, op, cmp in sides
        ]
    except ExpressionError as exc:
        return Verdict(name, "unchecked", f"validity {name} not checked: {exc}")
    known = dict(values)
    needed = sorted(
        {s for e in (left, *(r for _, _, r in rights)) for s in e.free_symbols} - set(known),
        key=str,
    )
    missing = []
    for symbol in needed:
        bound = value_of(symbol.name)
        if bound is None:
            missing.append(symbol.name)
        else:
            known[symbol] = bound
    if missing:
        return Verdict(
            name, "unchecked", f"validity {name} not checked: {', '.join(missing)} not set"
        )
    shown_left = number_text(left.xreplace(known))
    for op, cmp, right in rights:
        lhs, rhs = left.xreplace(known), right.xreplace(known)
        if not (lhs.is_finite and rhs.is_finite):
            return Verdict(name, "unchecked", f"validity {name} not checked: no value here")
        if not bool(cmp(lhs, rhs)):
            written, value = _shown(condition, op), number_text(rhs)
            bound = value if written.strip() == value else f"{written} = {value}"
            text = (
                f"outside validity {name}: {condition['expr']} = {shown_left}, "
                f"needs {op} {bound}; {condition.get('reason')}"
            )
            return Verdict(name, "violated", text)
    return Verdict(name, "holds", f"validity {name} holds")


def _shown(condition: Mapping[str, Any], op: str) -> str:
    field = next(f for f, o, _ in _BOUNDS if o == op)
    return str(condition[field])


def _expanded(text: str, system: System, values: Mapping[sp.Symbol, sp.Expr]) -> sp.Expr:
    parsed = parse_expression(text, system.symbols)
    keep = set(values)
    return system.expand(parsed.value, keep)
