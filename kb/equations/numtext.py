"""Exact numbers shown as SymPy shows them, without importing SymPy.

`n_text(x, 8)` is `str(sympy.N(Rational(x), 8))` character for character
(`n_format` the f-string form, which SymPy routes through `decimal.Decimal`): SymPy
rounds the rational to `prec + 4` bits, then to `prec` bits (`Float._new`), and
prints `prec_to_dps(prec)` digits without stripping zeros. The same steps are
taken here with mpmath's own primitives (mpmath is SymPy's arithmetic, ~20 ms
to import against SymPy's ~400 ms), so the plan path of the engine writes the
very texts the symbolic path writes. tests/equations/test_numtext.py checks it
against SymPy on random rationals.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction


def n_text(value: Fraction, digits: int) -> str:
    """Return `str(sympy.N(value, digits))` for an exact rational `value` (digits >= 2)."""
    if value == 0:
        return "0"  # SymPy's N(0) is the integer zero
    from mpmath.libmp import (
        dps_to_prec,
        from_rational,
        normalize,
        prec_to_dps,
        round_nearest,
        to_str,
    )

    prec = dps_to_prec(digits)
    sign, man, exp, bits = from_rational(value.numerator, value.denominator, prec + 4)
    mpf = normalize(sign, man, exp, bits, prec, round_nearest)
    text = to_str(mpf, prec_to_dps(prec), strip_zeros=False)
    if text.startswith("-.0"):
        text = "-0." + text[3:]
    elif text.startswith(".0"):
        text = "0." + text[2:]
    return text.removeprefix("+")


def n_format(value: Fraction, digits: int) -> str:
    """Return `f"{sympy.N(value, digits)}"`: SymPy formats a Float through decimal.Decimal."""
    text = n_text(value, digits)
    return text if value == 0 else format(Decimal(text), "")


def number_text(value: Fraction, digits: int = 8) -> str:
    """Show an exact number as `3318.4478 (exact 222336/67)` (algebra.number_text's text)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{n_format(value, digits)} (exact {value})"
