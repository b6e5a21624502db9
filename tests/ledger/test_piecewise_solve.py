"""The exact solver of piecewise-linear break-evens gives what SymPy's solveset gives."""

from __future__ import annotations

import os
from fractions import Fraction

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.ledger.breakeven import _solve, _solve_sympy
from kb.ledger.piecewise_solve import solve_piecewise_linear

EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "0"))
X = sympy.Symbol("x", positive=True)
R = sympy.Rational


def _curve(points: list[tuple[int, int]]) -> sympy.Expr:
    """A kernel-like curve: 0 up to x = 1, then lines between (x, y) points, then the last line."""
    pieces: list[tuple[sympy.Expr, object]] = [(sympy.Integer(0), X <= 1)]
    previous = (1, 0)
    for x, y in points:
        slope = R(y - previous[1], x - previous[0])
        pieces.append((slope * (X - previous[0]) + previous[1], X <= x))
        previous = (x, y)
    pieces.append((slope * (X - previous[0]) + previous[1], True))
    return sympy.Piecewise(*pieces)


CASES = [
    sympy.Max(0, _curve([(4, 3), (8, 5)])) - 4,  # one tie inside a piece
    sympy.Max(0, _curve([(4, 3), (8, 5)])) - 3,  # a tie on a break point
    sympy.Max(0, _curve([(4, 3), (8, 5)])) + 1,  # no tie
    R(1, 10) * X - sympy.Max(0, _curve([(4, 6), (8, 7)])),  # two ties
    sympy.Max(X - 2, 3 - X) - 1,  # a Max of lines crossing at 5/2: ties at 2 and 3
    sympy.Min(X, 4) - 4 + R(1, 2),  # a Min: a tie at 7/2
]


def test_fixed_cases_are_solved_as_sympy_solves_them() -> None:
    for expr in CASES:
        exact = solve_piecewise_linear(expr, X)
        assert exact is not None, expr
        assert exact == _solve_sympy(expr, X), expr
        assert _solve(expr, X) == exact


@settings(max_examples=EXAMPLES or 8, deadline=None)
@given(
    ys=st.lists(st.integers(min_value=-4, max_value=9), min_size=2, max_size=3),
    level=st.fractions(min_value=-3, max_value=12, max_denominator=4),
    slope=st.fractions(min_value=-1, max_value=1, max_denominator=3),
)
def test_random_curves_are_solved_as_sympy_solves_them(
    ys: list[int], level: Fraction, slope: Fraction
) -> None:
    points = [(4 * (i + 1), y) for i, y in enumerate(ys)]
    expr = R(slope.numerator, slope.denominator) * X + sympy.Max(0, _curve(points))
    expr -= R(level.numerator, level.denominator)
    exact = solve_piecewise_linear(expr, X)
    reference = _solve_sympy(expr, X)
    if exact is None:  # zero over a range: left to SymPy
        assert _solve(expr, X) == reference
    elif reference[0] != "unverified":
        assert exact == reference, expr


def test_other_shapes_are_left_to_sympy() -> None:
    for expr in (
        sympy.Max(0, X**2 - 4) - 1,  # a non-linear argument
        sympy.Max(0, 1 / X) - 1,  # not a line in x
        sympy.Piecewise((X, 1 / X <= 2), (2 * X, True)) - 1,  # a condition not on x
        sympy.Max(0, sympy.Min(X, 2) - 1) - R(1, 2),  # a Min nested in a Max
        sympy.Max(0, _curve([(4, 3)])) - sympy.Max(0, _curve([(4, 3)])) + X - X,  # zero
        1 + X,  # no Piecewise, Max or Min
    ):
        assert solve_piecewise_linear(expr, X) is None, expr
