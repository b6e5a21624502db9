"""A Max or Min of numbers, decided by interval arithmetic before SymPy compares them.

`kb.equations.evaluate` gives an expression its value by SymPy's `xreplace` where kb's
compiled tree has none (an irrational value: flops/moe-ep-nvlink-rdma-decode's
`ll_time_tail` is the max of two terms with `sqrt(log(N))`). Substituting numbers
into a `Max` makes SymPy order its arguments by numerical evaluation (`is_ge`, evalf
at growing precision), which cost about 6% of `kb build --plans`' pass. When the
arguments are plain numbers, `Max(a, b)` is the larger argument itself, the very
object SymPy returns: `decided` builds each argument as `xreplace` would, bounds each
with mpmath's interval arithmetic (outward rounding, so a bound always holds), and
returns the argument whose interval lies wholly above (Max) or below (Min) every
other's. When the intervals overlap (equal values, or values closer than the
working precision tells apart) or an argument holds a function it does not bound,
it returns None and SymPy decides, as before.

tests/equations/test_minmax.py holds `decided` equal to SymPy's own Max/Min on
random arguments of the EP class's shape (and on every EP evaluation of a planner
pass with KB_FULL=1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy as sp

PRECISION = 160  # bits of the interval bounds (SymPy's N(., 40) works at ~136)


def decided(expression: sp.Expr, values: Mapping[sp.Symbol, sp.Rational]) -> sp.Expr | None:
    """`expression.xreplace(values)` for a top-level Max or Min whose order intervals decide.

    None when `expression` is not a Max or Min, or the order is not decided here.
    """
    if expression.func not in (sp.Max, sp.Min) or len(expression.args) < 2:
        return None
    args = [a.xreplace(values) for a in expression.args]
    bounds = [_bounded(a) for a in args]
    if any(b is None for b in bounds):
        return None
    larger = expression.func is sp.Max
    for index, (low, high) in enumerate(b for b in bounds if b is not None):
        others = [b for i, b in enumerate(bounds) if i != index and b is not None]
        if larger and all(low > o_high for _, o_high in others):
            return args[index]
        if not larger and all(high < o_low for o_low, _ in others):
            return args[index]
    return None


def _bounded(value: sp.Expr) -> tuple[Any, Any] | None:
    """(lower, upper) mpmath bounds of a number expression, or None where none is derived."""
    from mpmath import iv

    saved = iv.prec
    iv.prec = PRECISION
    try:
        found = _interval(value, iv)
    except (ValueError, ZeroDivisionError, TypeError):
        found = None
    finally:
        iv.prec = saved
    if found is None:
        return None
    return found.a, found.b


def _interval(e: sp.Expr, iv: Any) -> Any:
    """An mpmath interval holding `e` (Add, Mul, rational and half powers, log), or None."""
    if e.is_Rational:
        return iv.mpf(int(e.p)) / iv.mpf(int(e.q))
    parts = [_interval(a, iv) for a in e.args]
    if any(p is None for p in parts):
        return None
    if e.is_Add:
        return sum(parts[1:], parts[0])
    if e.is_Mul:
        product = parts[0]
        for p in parts[1:]:
            product = product * p
        return product
    if isinstance(e, sp.log) and len(parts) == 1 and parts[0].a > 0:
        return iv.log(parts[0])
    if e.is_Pow and e.exp.is_Rational:
        return _power(parts[0], e.exp, iv)
    return None


def _power(base: Any, exponent: sp.Rational, iv: Any) -> Any:
    if exponent.is_Integer:
        n = int(exponent)
        if n < 0 and not base.a > 0:
            return None
        return base**n if n >= 0 else 1 / base ** (-n)
    if exponent.q == 2 and base.a > 0:
        root = iv.sqrt(base)
        n = int(exponent.p)
        return root**n if n > 0 else 1 / root ** (-n)
    return None
