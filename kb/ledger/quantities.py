"""Exact figures: record quantities converted to base units (B, s, FLOP, USD, J) as Fractions.

Values are converted through their decimal text (`3.35` is 335/100, never a binary
float), so hand-worked ledgers match to the last digit. Units are parsed by
kb.quantities, the one unit table; a Figure carries its dimension as the ledger
prints it (`B/s`, `FLOP/s`, `W` for J/s, `1` for a count).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kb import numfmt
from kb.quantities import Dims, UnitError, exact_number, parse_unit

# Dimensions the ledger names by their own unit, not by their base units.
_NAMED_DIMS: Mapping[Dims, str] = {(("J", Fraction(1)), ("s", Fraction(-1))): "W"}


class QuantityError(ValueError):
    """A figure the ledger cannot use: not a number, or a unit kb does not know."""


def exact(value: Any) -> Fraction:
    """Convert a YAML number (or `--set` text) to an exact Fraction; refuse bools."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, str):
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError) as exc:
            raise QuantityError(f"value {value!r} is not a number") from exc
    try:
        return exact_number(value)
    except ValueError as exc:
        raise QuantityError(f"value {value!r} is not a number") from exc


def dim_text(dims: Dims) -> str:
    """A dimension as the ledger prints and compares it: `B/s`, `FLOP`, `W`, `1`, `1/s`."""
    if dims in _NAMED_DIMS:
        return _NAMED_DIMS[dims]
    over = [(b, e) for b, e in dims if e > 0]
    under = [(b, -e) for b, e in dims if e < 0]
    text = "·".join(b if e == 1 else f"{b}^{e}" for b, e in over) or "1"
    if under:
        text += "/" + "·".join(b if e == 1 else f"{b}^{e}" for b, e in under)
    return text


@lru_cache(maxsize=4096)  # a placement page reads every interconnect's rate per break-even
def unit_scale(unit: str) -> tuple[Fraction, str]:
    """`GB/s` -> (10**9, 'B/s'): the factor to base units and the ledger's dimension."""
    try:
        parsed = parse_unit(unit)
    except UnitError as exc:
        hint = f"; {exc.hint}" if exc.hint else ""
        raise QuantityError(f"unit {unit!r}: {exc}{hint}") from None
    return parsed.factor, dim_text(parsed.dims)


@dataclass(frozen=True)
class Figure:
    """A resolved figure: exact value in base units, its dimension and its provenance."""

    value: Fraction
    dim: str
    basis: str
    origin: str
    pointer: str = ""

    @property
    def measured(self) -> bool:
        return self.basis == "measured"


def figure(quantity: Mapping[str, Any], origin: str, pointer: str = "") -> Figure:
    """Convert a record quantity `{value, unit, basis, source}` into a Figure."""
    if not isinstance(quantity, Mapping) or "value" not in quantity or "unit" not in quantity:
        raise QuantityError("expected a quantity {value, unit, basis, source}")
    factor, dim = unit_scale(str(quantity["unit"]))
    basis = str(quantity.get("basis", "unverified"))
    source = str(quantity.get("source", ""))
    return Figure(exact(quantity["value"]) * factor, dim, basis, source or origin, pointer)


def parse_setting(text: str) -> tuple[Fraction, str]:
    """`140GB` or `140 GB` or `8` -> (exact base value, dimension) for `--set`."""
    text = text.strip()
    index = len(text)
    while index and not (text[index - 1].isdigit() or text[index - 1] == "."):
        index -= 1
    number, unit = text[:index].strip(), text[index:].strip() or "1"
    factor, dim = unit_scale(unit)
    return exact(number) * factor, dim


# ---- display (kb/numfmt.py: the one formatter calc, ledger and the site share) ----------

SCALES = numfmt.SCALES


def number(value: Fraction, digits: int = numfmt.DIGITS) -> str:
    """Format a Fraction with `digits` significant digits, trailing zeros dropped."""
    return numfmt.significant(value, digits)


def amount(value: Fraction, dim: str) -> str:
    """Format a value in base units with a readable unit: 0.001728 s -> '1.728 ms'."""
    return numfmt.human(value, dim)
