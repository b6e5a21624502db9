"""numtext: kb's own exact number texts, correctly rounded (no SymPy, no mpmath)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from kb.equations.numtext import n_text, number_text

FRACTIONS = st.builds(
    Fraction,
    st.one_of(st.integers(-(10**40), 10**40), st.integers(-1000, 1000), st.just(0)),
    st.one_of(st.integers(1, 10**40), st.sampled_from([1, 3, 7, 10**6, 10**30])),
)


@given(FRACTIONS, st.sampled_from([1, 2, 3, 8, 15]))
def test_n_text_is_the_value_correctly_rounded_to_its_digits(value: Fraction, digits: int) -> None:
    text = n_text(value, digits)
    if value == 0:
        assert text == "0"
        return
    shown = Decimal(text)
    assert len(shown.as_tuple().digits) == digits  # trailing zeros kept
    ulp = Fraction(10) ** (shown.adjusted() - digits + 1)
    error = abs(Fraction(shown) - value)
    assert error <= ulp / 2  # nearest (ties to even: never more than half a unit)
    assert (Fraction(shown) >= 0) == (value > 0) or Fraction(shown) == 0


def test_ties_go_to_even_and_carries_move_the_exponent() -> None:
    assert n_text(Fraction(25, 10), 1) == "2"
    assert n_text(Fraction(35, 10), 1) == "4"
    assert n_text(Fraction(99999, 10000), 3) == "10.0"


def test_known_texts() -> None:
    assert number_text(Fraction(8106, 25)) == "324.24000 (exact 8106/25)"
    assert number_text(Fraction(-17, 10**6)) == "-0.000017000000 (exact -17/1000000)"
    assert number_text(Fraction(222336, 67)) == "3318.4478 (exact 222336/67)"
    assert number_text(Fraction(7)) == "7"
    assert n_text(Fraction(1, 300), 3) == "0.00333"
    assert n_text(Fraction(1, 10**8), 3) == "1.00E-8"
    assert n_text(Fraction(0), 3) == "0"
