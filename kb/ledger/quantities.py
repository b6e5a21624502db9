"""Exact figures: record quantities converted to base units (B, s, FLOP, USD, W, J) as Fractions.

Values are converted through their decimal text (`3.35` is 335/100, never a binary
float), so hand-worked ledgers match to the last digit. This is the ledger's own small
unit table; it refuses anything it does not know rather than guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb import numfmt

_DECIMAL = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def _unit_table() -> dict[str, tuple[Fraction, str]]:
    table: dict[str, tuple[Fraction, str]] = {"1": (Fraction(1), "1")}
    for prefix, factor in _DECIMAL.items():
        table[f"{prefix}B"] = (Fraction(factor), "B")
        table[f"{prefix}FLOP"] = (Fraction(factor), "FLOP")
        table[f"{prefix}bit" if prefix else "bit"] = (Fraction(factor, 8), "B")
    for prefix, factor in _BINARY.items():
        table[f"{prefix}B"] = (Fraction(factor), "B")
    table.update(
        {
            "s": (Fraction(1), "s"),
            "ms": (Fraction(1, 10**3), "s"),
            "us": (Fraction(1, 10**6), "s"),
            "ns": (Fraction(1, 10**9), "s"),
            "h": (Fraction(3600), "s"),
            "W": (Fraction(1), "W"),
            "J": (Fraction(1), "J"),
            "USD": (Fraction(1), "USD"),
        }
    )
    del table["kbit"]  # only the prefixes the record format lists
    table["Gbit"] = (Fraction(10**9, 8), "B")
    return table


UNITS = _unit_table()


class QuantityError(ValueError):
    """A figure the ledger cannot use: not a number, or a unit it does not know."""


def exact(value: Any) -> Fraction:
    """Convert a YAML number to an exact Fraction (through its decimal text); refuse bools."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction)):
        raise QuantityError(f"value {value!r} is not a number")
    try:
        return Fraction(str(value)) if not isinstance(value, Fraction) else value
    except (ValueError, ZeroDivisionError) as exc:
        raise QuantityError(f"value {value!r} is not a number") from exc


def parse_unit(unit: str) -> tuple[Fraction, str]:
    """`GB/s` -> (10**9, 'B/s'): the factor to base units and the base dimension."""
    numerator, _, denominator = unit.strip().partition("/")
    if numerator not in UNITS or (denominator and denominator not in UNITS):
        raise QuantityError(f"unit {unit!r} is not one the ledger knows")
    factor, dim = UNITS[numerator]
    if denominator:
        den_factor, den_dim = UNITS[denominator]
        return factor / den_factor, f"{dim}/{den_dim}"
    return factor, dim


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
    factor, dim = parse_unit(str(quantity["unit"]))
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
    factor, dim = parse_unit(unit)
    return exact(number) * factor, dim


# ---- display (kb/numfmt.py: the one formatter calc, ledger and the site share) ----------

SCALES = numfmt.SCALES


def number(value: Fraction, digits: int = numfmt.DIGITS) -> str:
    """Format a Fraction with `digits` significant digits, trailing zeros dropped."""
    return numfmt.significant(value, digits)


def amount(value: Fraction, dim: str) -> str:
    """Format a value in base units with a readable unit: 0.001728 s -> '1.728 ms'."""
    return numfmt.human(value, dim)
