"""Break-even roots of a piecewise-linear difference, exactly, without SymPy's solveset.

Since session 26 a placement whose model has measured non-matmul kernel rows
(kb/data/end-to-end.json `decode_kernels`) carries, in its batch break-even, the kernel
curve as a SymPy Piecewise of lines in the batch (`x <= 128`, `x <= 256`, ...) inside a
Max(0, ...). `solveset` on such a difference takes seconds (it rewrites every Piecewise
and Max as sets); the difference is a line on each interval between its break points, so
its positive roots are found exactly here:

- the break points are the Piecewise conditions' bounds (`x <= c`, `x < c`, c rational) and,
  on each interval between them, the points where two arguments of a Max or Min cross;
- on each open interval between break points every Piecewise, Max and Min is one of its
  arguments (the one that holds, or is largest or smallest, at the interval's midpoint), so
  the difference is `c + k*x`; its root, when it lies inside the interval, is a tie;
- each break point is a tie when the difference is exactly zero there.

Anything else (a condition that is not a rational bound on x, a Max of non-linear
arguments, a nested Max, a difference identically zero on an interval, a non-linear piece)
is not this shape: `solve_piecewise_linear` returns None and the caller asks SymPy, as
before. tests/ledger/test_piecewise_solve.py holds the answers equal to SymPy's.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

Solved = tuple[str, tuple[Fraction, ...], str]  # status, tie values, detail: a break-even's answer


class _NotThisShape(Exception):
    """The difference is not piecewise linear in the way this module solves."""


def solve_piecewise_linear(expr: Any, symbol: Any) -> Solved | None:
    """The positive roots of `expr = 0` when it is piecewise linear in `symbol`, else None."""
    import sympy

    if not expr.has(sympy.Piecewise, sympy.Max, sympy.Min):
        return None
    try:
        roots = _roots(expr, symbol)
    except _NotThisShape:
        return None
    if not roots:
        return "no tie", (), ""
    return "tie", tuple(sorted(roots)), ""


def _roots(expr: Any, symbol: Any) -> set[Fraction]:
    bounds = _piecewise_bounds(expr, symbol)
    roots: set[Fraction] = set()
    for low, high in _intervals(bounds):
        resolved = _resolve(expr, symbol, piecewise_only=True, at=_inside(low, high))
        points = [p for p in _crossings(resolved, symbol) if _within(p, low, high)]
        for sub_low, sub_high in _intervals(sorted(set(points)), low, high):
            line = _resolve(resolved, symbol, piecewise_only=False, at=_inside(sub_low, sub_high))
            roots |= _line_roots(line, symbol, sub_low, sub_high)
        roots |= {p for p in points if _value(expr, symbol, p) == 0}
    roots |= {p for p in bounds if _value(expr, symbol, p) == 0}
    return roots


def _piecewise_bounds(expr: Any, symbol: Any) -> list[Fraction]:
    """The positive rational c of every Piecewise condition `symbol <= c` or `symbol < c`."""
    import sympy

    found: set[Fraction] = set()
    for piecewise in expr.atoms(sympy.Piecewise):
        for _, condition in piecewise.args:
            if condition is sympy.true:
                continue
            if not isinstance(condition, (sympy.LessThan, sympy.StrictLessThan)):
                raise _NotThisShape
            if condition.lhs != symbol or not condition.rhs.is_Rational:
                raise _NotThisShape
            bound = _fraction(condition.rhs)
            if bound > 0:
                found.add(bound)
    return sorted(found)


def _intervals(
    points: list[Fraction], low: Fraction = Fraction(0), high: Fraction | None = None
) -> list[tuple[Fraction, Fraction | None]]:
    """The open intervals between `low`, the points and `high` (None: no upper end)."""
    edges: list[Fraction | None] = [low, *points, high]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if a is not None]


def _inside(low: Fraction, high: Fraction | None) -> Fraction:
    return low + 1 if high is None else (low + high) / 2


def _within(point: Fraction, low: Fraction, high: Fraction | None) -> bool:
    return point > low and (high is None or point < high)


def _resolve(expr: Any, symbol: Any, *, piecewise_only: bool, at: Fraction) -> Any:
    """`expr` with each Piecewise (and, unless `piecewise_only`, each Max and Min) resolved.

    Each is replaced by the argument it is at `at`: on an interval free of break points,
    what it is on the whole interval.
    """
    import sympy

    value = sympy.Rational(at.numerator, at.denominator)

    def pick(node: Any) -> Any:
        if isinstance(node, sympy.Piecewise):
            for branch, condition in node.args:
                if condition.subs(symbol, value) is sympy.true:
                    return pick(branch)
            raise _NotThisShape
        if not piecewise_only and isinstance(node, (sympy.Max, sympy.Min)):
            args = [pick(arg) for arg in node.args]
            values = [arg.subs(symbol, value) for arg in args]
            if not all(v.is_Rational for v in values):
                raise _NotThisShape
            chosen = max if isinstance(node, sympy.Max) else min
            return args[values.index(chosen(values))]
        if node.args:
            return node.func(*(pick(arg) for arg in node.args))
        return node

    return pick(expr)


def _crossings(expr: Any, symbol: Any) -> list[Fraction]:
    """Where two arguments of a Max or Min of `expr` (each a line in `symbol`) are equal."""
    import sympy

    found: list[Fraction] = []
    for node in expr.atoms(sympy.Max, sympy.Min):
        lines = [_line(arg, symbol) for arg in node.args]
        for index, (c1, k1) in enumerate(lines):
            for c2, k2 in lines[index + 1 :]:
                if k1 != k2:
                    found.append((c2 - c1) / (k1 - k2))
    return found


def _line(expr: Any, symbol: Any) -> tuple[Fraction, Fraction]:
    """(c, k) of `expr` = c + k*symbol with rational c and k, or _NotThisShape."""
    import sympy

    if expr.has(sympy.Piecewise, sympy.Max, sympy.Min):
        raise _NotThisShape  # nested: not solved here
    try:
        poly = sympy.Poly(expr, symbol)
    except sympy.PolynomialError as exc:
        raise _NotThisShape from exc
    if poly.degree() > 1 or not all(c.is_Rational for c in poly.all_coeffs()):
        raise _NotThisShape
    coeffs = [_fraction(c) for c in poly.all_coeffs()]
    return (coeffs[0], Fraction(0)) if len(coeffs) == 1 else (coeffs[1], coeffs[0])


def _line_roots(line: Any, symbol: Any, low: Fraction, high: Fraction | None) -> set[Fraction]:
    const, slope = _line(line, symbol)
    if slope == 0:
        if const == 0:
            raise _NotThisShape  # zero over a range: SymPy says how
        return set()
    root = -const / slope
    return {root} if _within(root, low, high) else set()


def _value(expr: Any, symbol: Any, point: Fraction) -> Fraction | None:
    import sympy

    found = expr.subs(symbol, sympy.Rational(point.numerator, point.denominator))
    return _fraction(found) if found.is_Rational else None


def _fraction(value: Any) -> Fraction:
    return Fraction(int(value.p), int(value.q))
