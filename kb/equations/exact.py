"""Exact evaluation of a compiled expression tree with fractions; no SymPy.

A plan (plan.py) keeps a numeric claim's expression, definitions expanded and
bound symbols kept, as a small JSON tree of exact operations:

    ["n", "p/q"]  a rational          ["s", name]       a symbol
    ["+", a, b, ...] a sum            ["*", a, b, ...]  a product
    ["^", a, b]   a power (exact when b comes to an integer)
    ["max"|"min", a, b, ...]
    ["floor", a], ["ceil", a]

Evaluating it at exact bound values gives the very number SymPy's
`expr.xreplace(values)` gives, because every operation is exact on rationals.
What SymPy would report as an error (a division by zero, a symbol left unbound)
raises `Inexact`, and the caller takes the symbolic path, so the message is SymPy's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

MAX_POWER = 64  # larger powers only while the result stays under MAX_BITS (bounded work)
MAX_BITS = 1 << 16


class Inexact(Exception):
    """The tree cannot be evaluated here: the symbolic path decides (and words the error)."""


def evaluate_tree(tree: Any, values: Mapping[str, Fraction]) -> Fraction:
    """Return the exact value of `tree` at `values`; raise Inexact if it has none here."""
    try:
        return _eval(tree, values)
    except (ZeroDivisionError, KeyError, IndexError, TypeError, ValueError) as exc:
        raise Inexact(f"{type(exc).__name__}: {exc}") from None


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    """base**exponent when exact and of bounded size (a bound integer exponent, e.g. B)."""
    if exponent.denominator != 1:
        raise ValueError("a fractional power is not exact arithmetic")
    power = exponent.numerator
    size = max(base.numerator.bit_length(), base.denominator.bit_length(), 1)
    if abs(power) > MAX_POWER and abs(power) * size > MAX_BITS:
        raise ValueError(f"power {power} is too large to evaluate here")
    return base**power


def _eval(node: list[Any], values: Mapping[str, Fraction]) -> Fraction:
    op = node[0]
    if op == "s":
        return values[node[1]]
    if op == "n":
        return Fraction(node[1])
    if op == "+":
        return sum((_eval(arg, values) for arg in node[1:]), Fraction(0))
    if op == "*":
        product = Fraction(1)
        for arg in node[1:]:
            product *= _eval(arg, values)
        return product
    if op == "^":
        return _power(_eval(node[1], values), _eval(node[2], values))
    if op in ("max", "min"):
        found = [_eval(arg, values) for arg in node[1:]]
        return max(found) if op == "max" else min(found)
    if op == "floor":
        return Fraction(math.floor(_eval(node[1], values)))
    if op == "ceil":
        return Fraction(math.ceil(_eval(node[1], values)))
    raise ValueError(f"unknown operation {op!r}")
