"""kb/numfmt.py: the one number formatter of `kb calc`, `kb ledger` and the site."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kb import numfmt
from tests.conftest import read_shown_number


@pytest.mark.parametrize(
    ("value", "dim", "text"),
    [
        (Fraction(23301689, 10**13), "s", "2.33 µs"),
        (Fraction(48, 10) * 10**12, "B/s", "4.8 TB/s"),
        (Fraction(3350) * 10**9, "B/s", "3.35 TB/s"),
        (Fraction(-874701, 10**8), "s", "-8.747 ms"),
        (Fraction(-71970000000), "B", "-71.97 GB"),
        (Fraction(1, 10**12), "s", "0.001 ns"),
        (Fraction(0), "s", "0 s"),
        (Fraction(21), "1", "21"),
        (Fraction(222336, 67), "1", "3318"),
        (Fraction(11), "FLOP", "11 FLOP"),
        (Fraction(1234567), "B", "1.235 MB"),
        (Fraction(99995), "B", "100 kB"),
    ],
)
def test_human(value: Fraction, dim: str, text: str) -> None:
    assert numfmt.human(value, dim) == text


@pytest.mark.parametrize(
    ("unit", "text"),
    [
        ("us", "µs"),
        ("B^-1*s", "B⁻¹·s"),
        ("FLOP/B", "FLOP/B"),
        ("s^2", "s²"),
        ("B^(-1)", "B⁻¹"),
        ("bus", "bus"),  # a word, not a micro prefix
        ("GB/s", "GB/s"),
    ],
)
def test_unit_text(unit: str, text: str) -> None:
    assert numfmt.unit_text(unit) == text


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("oo", "∞"),
        ("[4, 'oo']", "[4, ∞)"),
        ("[4, oo]", "[4, ∞)"),
        ("-oo", "-∞"),
        ("zoom and oo_x", "zoom and oo_x"),
    ],
)
def test_infinity_text(raw: str, text: str) -> None:
    assert numfmt.infinity_text(raw) == text


@given(st.fractions(min_value=Fraction(1, 10**15), max_value=10**15, max_denominator=10**15))
def test_human_is_the_value_to_four_significant_digits(value: Fraction) -> None:
    for dim in ("s", "B", "B/s"):
        number, _, unit = numfmt.human(value, dim).partition(" ")
        factor = dict((u, f) for f, u in numfmt.SCALES[dim])[unit]
        shown = read_shown_number(number) * factor
        assert abs(shown - value) <= value * Fraction(5, 10**4)
        digits = number.partition("×")[0]
        assert len(digits.replace(".", "").lstrip("0")) <= 4 or "." not in digits


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Fraction(1659, 10**23), "1.659×10⁻²⁰"),
        (Fraction(-3, 10**7), "-3×10⁻⁷"),
        (Fraction(1, 10**4), "0.0001"),
        (Fraction(99999, 10**9), "0.0001"),  # rounds up into the plain range
        (Fraction(99994, 10**9), "9.999×10⁻⁵"),
        (Fraction(10**15 - 1), "1×10¹⁵"),  # rounds up out of it
        (Fraction(123456789012345), "123500000000000"),
        (Fraction(6022, 1000) * 10**23, "6.022×10²³"),
    ],
)
def test_significant_uses_powers_of_ten_outside_the_plain_range(value: Fraction, text: str) -> None:
    assert numfmt.significant(value) == text


@given(st.fractions(min_value=Fraction(1, 10**40), max_value=10**40))
def test_significant_shows_the_rounded_value(value: Fraction) -> None:
    shown = read_shown_number(numfmt.significant(value))
    assert shown == Fraction(numfmt.rounded(value))
    assert "0000" not in numfmt.significant(value).partition(".")[2]
