"""Numbers as people read them: one formatter for `kb calc`, `kb ledger` and the site.

A value in base units (s, B, B/s) is scaled to a readable unit (`2.33 µs`, `4.8 TB/s`)
and rounded to `DIGITS` significant digits (half to even), trailing zeros dropped
(powers of ten outside 10⁻⁴ to 10¹⁵);
any other unit keeps its own. Unit text is shown with `µ`, `·` and superscript
exponents (`B⁻¹·s`), and SymPy's `oo` as `∞`. Pure text: the site escapes it.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction

DIGITS = 4  # significant digits of every number shown to a reader
_EMAX = 999_999_999
PLAIN_EXPONENTS = (-4, 15)  # a decimal exponent in [-4, 15) is shown as a plain decimal

SCALES: dict[str, list[tuple[Fraction, str]]] = {
    "s": [
        (Fraction(1), "s"),
        (Fraction(1, 10**3), "ms"),
        (Fraction(1, 10**6), "µs"),
        (Fraction(1, 10**9), "ns"),
    ],
    "B": [
        (Fraction(10**12), "TB"),
        (Fraction(10**9), "GB"),
        (Fraction(10**6), "MB"),
        (Fraction(10**3), "kB"),
        (Fraction(1), "B"),
    ],
    "B/s": [
        (Fraction(10**12), "TB/s"),
        (Fraction(10**9), "GB/s"),
        (Fraction(10**6), "MB/s"),
        (Fraction(1), "B/s"),
    ],
}
_SUPERSCRIPT = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_POWER = re.compile(r"\^\(?(-?[0-9]+)\)?")
_MICRO = re.compile(r"(?<![A-Za-z])u(?=(s|B|FLOP|W|J)\b)")


def rounded(value: Fraction, digits: int = DIGITS) -> Decimal:
    """`value` rounded to `digits` significant digits (half to even), exactly."""
    context = Context(prec=digits, rounding=ROUND_HALF_EVEN, Emax=_EMAX, Emin=-_EMAX)
    return context.divide(Decimal(value.numerator), Decimal(value.denominator))


def significant(value: Fraction, digits: int = DIGITS) -> str:
    """`value` to `digits` significant digits, trailing zeros dropped: `0.0125`, `4.8`.

    Below 10⁻⁴ or from 10¹⁵ on, a plain decimal is a row of zeros a reader has to count,
    so the number is shown in powers of ten (`1.659×10⁻²⁰`), as tables in papers print it.
    """
    if value == 0:
        return "0"
    number = rounded(value, digits)
    exponent = number.adjusted()
    if PLAIN_EXPONENTS[0] <= exponent < PLAIN_EXPONENTS[1]:
        return _trimmed(format(number, "f"))
    mantissa = _trimmed(format(number.scaleb(-exponent), "f"))
    return f"{mantissa}×10{str(exponent).translate(_SUPERSCRIPT)}"


def _trimmed(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def scaled(value: Fraction, dim: str) -> tuple[Fraction, str]:
    """`(2.33e-6, "s")` -> `(2.33, "µs")`: the value in the readable unit of its dimension."""
    scales = SCALES.get(dim)
    if not scales or value == 0:
        return value, dim
    for factor, unit in scales:
        if abs(value) >= factor:
            return value / factor, unit
    factor, unit = scales[-1]
    return value / factor, unit


def human(value: Fraction, dim: str, digits: int = DIGITS) -> str:
    """A value in base units as a reader reads it: `2.33 µs`, `4.8 TB/s`, `21`."""
    number, unit = scaled(value, dim)
    text = significant(number, digits)
    return text if unit in ("", "1") else f"{text} {unit_text(unit)}"


def unit_text(unit: str) -> str:
    """`us` -> `µs`, `B^-1*s` -> `B⁻¹·s`: a unit as printed for a reader (plain text)."""
    text = _MICRO.sub("µ", unit.replace("*", "·"))
    return _POWER.sub(lambda m: m.group(1).translate(_SUPERSCRIPT), text)


def infinity_text(text: str) -> str:
    """SymPy's `oo` as `∞`, and a quoted `'oo'` inside an interval (`[4, 'oo']` -> `[4, ∞)`)."""
    text = re.sub(r"\[([^\[\]]*?),\s*'?oo'?\]", r"[\1, ∞)", text)
    return re.sub(r"(?<![A-Za-z0-9_])'?(-?)oo'?(?![A-Za-z0-9_])", r"\1∞", text)
