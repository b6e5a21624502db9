"""numtext writes SymPy's own number texts without SymPy (checked against SymPy here)."""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from kb.equations.algebra import number_text as sympy_number_text
from kb.equations.numtext import n_format, n_text, number_text

FRACTIONS = st.builds(
    Fraction,
    st.one_of(st.integers(-10**40, 10**40), st.integers(-1000, 1000), st.just(0)),
    st.one_of(st.integers(1, 10**40), st.sampled_from([1, 3, 7, 10**6, 10**30])),
)


@given(FRACTIONS, st.sampled_from([2, 3, 8, 15]))
def test_n_text_is_sympys_text(value: Fraction, digits: int) -> None:
    exact = sp.Rational(value.numerator, value.denominator)
    assert n_text(value, digits) == str(sp.N(exact, digits))
    assert n_format(value, digits) == f"{sp.N(exact, digits)}"


@given(FRACTIONS)
def test_number_text_is_algebras(value: Fraction) -> None:
    assert number_text(value) == sympy_number_text(sp.Rational(value.numerator, value.denominator))


def test_known_texts() -> None:
    assert number_text(Fraction(8106, 25)) == "324.24000 (exact 8106/25)"
    assert number_text(Fraction(-17, 10**6)) == "-0.000017000000 (exact -17/1000000)"
    assert n_format(Fraction(1, 300), 3) == "0.00333"
    assert n_format(Fraction(0), 3) == "0"
