"""Exact numbers shown as text: kb's own printer, the one every judged claim value goes through.

`n_text(x, 8)` rounds the exact rational `x` correctly (half to even) to 8
significant digits and writes it as `decimal.Decimal` does, keeping trailing
zeros (`38.350080`, `0.000017000000`, `1.2345679E+8`); `number_text` adds the
exact value (`3318.4478 (exact 222336/67)`). Both paths of the engine, the
symbolic one (claims.py) and the plan (plan.py), print judged values only
through here (claimbase.py judges numeric, effect and prediction claims), so
their texts agree by construction, whatever SymPy's own printer does: kb no
longer pins SymPy to keep a copy of it in step. No SymPy, no mpmath.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction

_EMAX = 999_999_999  # any exponent a record can reach, either way


def n_text(value: Fraction, digits: int) -> str:
    """`value` correctly rounded to `digits` significant digits (digits >= 1), as text."""
    if value == 0:
        return "0"
    context = Context(prec=digits, rounding=ROUND_HALF_EVEN, Emax=_EMAX, Emin=-_EMAX)
    rounded = context.divide(Decimal(value.numerator), Decimal(value.denominator))
    exponent = rounded.adjusted() - digits + 1
    return str(rounded.quantize(Decimal(1).scaleb(exponent), context=context))


def number_text(value: Fraction, digits: int = 8) -> str:
    """Show an exact number as `3318.4478 (exact 222336/67)` (an integer as itself)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{n_text(value, digits)} (exact {value})"
