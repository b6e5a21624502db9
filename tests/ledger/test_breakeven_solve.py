"""The exact solver of `c + k*x` and `c + k/x` gives what SymPy's solveset gives."""

from __future__ import annotations

import os
from fractions import Fraction

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.ledger.breakeven import _solve, _solve_simple, _solve_sympy

# Fixed examples (tests/conftest.py's profile derandomizes); `KB_FUZZ_EXAMPLES` sets the count.
EXAMPLES = int(os.environ.get("KB_FUZZ_EXAMPLES", "0"))

X = sympy.Symbol("x", positive=True)
rational = st.fractions(min_value=-(10**12), max_value=10**12, max_denominator=10**9)
nonzero = rational.filter(lambda value: value != 0)


def _rat(value: Fraction) -> sympy.Rational:
    return sympy.Rational(value.numerator, value.denominator)


@settings(max_examples=EXAMPLES or 50, deadline=None)
@given(const=rational | st.just(Fraction(0)), coeff=nonzero, inverse=st.booleans())
def test_simple_differences_are_solved_as_sympy_solves_them(
    const: Fraction, coeff: Fraction, inverse: bool
) -> None:
    expr = _rat(const) + _rat(coeff) * (1 / X if inverse else X)
    simple = _solve_simple(expr, X)
    assert simple is not None  # this shape is always solved without SymPy
    assert simple == _solve_sympy(expr, X)
    assert _solve(expr, X) == simple


def test_a_root_is_exact_and_positive() -> None:
    expr = sympy.Rational(-3, 200) + 30720000 / X  # a corpus difference: x = 30720000*200/3
    assert _solve_simple(expr, X) == ("tie", (Fraction(2_048_000_000),), "")
    assert _solve_simple(sympy.Rational(3, 200) + 30720000 / X, X) == ("no tie", (), "")
    assert _solve_simple(128 * X - sympy.Rational(19584, 1953125), X) == (
        "tie",
        (Fraction(19584, 1953125 * 128),),
        "",
    )


def test_other_shapes_go_to_sympy() -> None:
    """max/min, both x and 1/x, a float, a constant: not the simple shape."""
    for expr in (
        sympy.Max(0, X - 1) - sympy.Rational(1, 2),
        1 + X + 1 / X,
        sympy.Float(0.5) + 2 / X,
        X**2 - 4,
        sympy.Rational(1, 2),
        sympy.Integer(0),
    ):
        assert _solve_simple(expr, X) is None
        assert _solve(expr, X) == _solve_sympy(expr, X)
