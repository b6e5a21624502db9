"""Exact units and dimensions, the one table for the engine, the ledger, the prose and the site.

Parse `GB/s`, `TFLOP/s`, `us`; convert without floats. Base dimensions: `B`
(information, bytes), `s` (time), `FLOP` (computation), `J` (energy; `W` is
J/s) and `USD` (money); `1` is a count or ratio. Decimal prefixes k M G T P E
and binary prefixes Ki Mi Gi Ti Pi are exact (GB = 10**9 B, GiB = 2**30 B).
Spellings that people read two ways (`Gb`, `b`, `GBps`, `Gbps`, `mB`) are
refused with a hint instead of guessed. Imports nothing from kb and no SymPy:
kb.equations, kb.ledger, kb.prose and kb.sitegen all sit above it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

DECIMAL = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
SUBSECOND = {"ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}

Dims = tuple[tuple[str, Fraction], ...]
DIMENSIONLESS: Dims = ()

# name -> (factor to base units, dimension); these take decimal prefixes.
_PREFIXABLE: Mapping[str, tuple[Fraction, Mapping[str, int]]] = {
    "B": (Fraction(1), {"B": 1}),
    "bit": (Fraction(1, 8), {"B": 1}),
    "FLOP": (Fraction(1), {"FLOP": 1}),
    "W": (Fraction(1), {"J": 1, "s": -1}),
    "J": (Fraction(1), {"J": 1}),
}
_PLAIN: Mapping[str, tuple[Fraction, Mapping[str, int]]] = {
    "s": (Fraction(1), {"s": 1}),
    "min": (Fraction(60), {"s": 1}),
    "h": (Fraction(3600), {"s": 1}),
    "USD": (Fraction(1), {"USD": 1}),
}
_AMBIGUOUS: Mapping[str, str] = {
    "b": "write bit or B",
    "Gb": "write Gbit (gigabit) or GB (gigabyte)",
    "Mb": "write Mbit (megabit) or MB (megabyte)",
    "Kb": "write kbit or kB",
    "kb": "write kbit or kB",
    "Tb": "write Tbit or TB",
    "GBps": "write GB/s",
    "MBps": "write MB/s",
    "TBps": "write TB/s",
    "Gbps": "write Gbit/s",
    "Mbps": "write Mbit/s",
    "Tbps": "write Tbit/s",
    "bps": "write bit/s",
    "mB": "milli-bytes are not a size: write MB (megabyte)",
    "KB": "write kB (10**3 B) or KiB (2**10 B)",
    "FLOPS": "write FLOP/s",
    "TFLOPS": "write TFLOP/s",
    "PFLOPS": "write PFLOP/s",
    "GFLOPS": "write GFLOP/s",
    "flop": "write FLOP",
    "byte": "write B",
    "sec": "write s",
    "\u00b5s": "write us",
}


class UnitError(ValueError):
    """A unit string that is unknown or ambiguous; `hint` says what to write."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class Unit:
    """An exact unit: `factor` base units per one of it, and its dimension."""

    text: str
    factor: Fraction
    dims: Dims

    def to_base(self, value: Fraction) -> Fraction:
        return value * self.factor

    def from_base(self, value: Fraction) -> Fraction:
        return value / self.factor


def make_dims(pairs: Mapping[str, Fraction | int] | Iterable[tuple[str, Fraction | int]]) -> Dims:
    """Build a canonical dimension: sorted (base, exponent) pairs without zeros."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    merged: dict[str, Fraction] = {}
    for base, exponent in items:
        merged[base] = merged.get(base, Fraction(0)) + Fraction(exponent)
    return tuple(sorted((b, e) for b, e in merged.items() if e != 0))


def multiply_dims(left: Dims, right: Dims, power: Fraction | int = 1) -> Dims:
    """Return left * right**power."""
    return make_dims([*left, *((b, e * power) for b, e in right)])


def format_dims(dims: Dims) -> str:
    """`B·s^-1`; `1` for a dimensionless quantity."""
    parts = [b if e == 1 else f"{b}^{e}" for b, e in dims]
    return "·".join(parts) or "1"


def parse_unit(text: object) -> Unit:
    """Parse a unit string exactly: `GB/s` -> factor 10**9, dims B·s^-1."""
    if not isinstance(text, str):
        got = "null" if text is None else repr(text)  # no kb import here: YAML's word by hand
        raise UnitError(f"unit must be a string, got {got}")
    parsed = _parse_unit(text)
    if isinstance(parsed, Unit):
        return parsed
    raise UnitError(*parsed)  # a new error each time: one raised twice would grow its traceback


# A KB repeats a few dozen units ~50 us each to parse, and prose repeats the words after its
# numbers that are no unit (`on`, `GPUs`): both are kept, a refusal as its message and hint.
@functools.lru_cache(maxsize=4096)
def _parse_unit(text: str) -> Unit | tuple[str, str]:
    try:
        return _parsed_unit(text)
    except UnitError as exc:
        return str(exc), exc.hint


def _parsed_unit(text: str) -> Unit:
    clean = text.strip()
    if clean in ("", "1"):
        return Unit(clean or "1", Fraction(1), DIMENSIONLESS)
    if len(clean) > 60:
        raise UnitError("unit string longer than 60 characters")
    try:
        tree = ast.parse(clean.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError):
        raise _unknown(clean) from None
    factor, dims = _evaluate(tree.body, clean, 0)
    return Unit(clean, factor, dims)


def unit_named(name: str) -> tuple[Fraction, Dims]:
    """Return the factor and dimension of one unit name (`GiB`, `us`, `TFLOP`)."""
    if name in _AMBIGUOUS:
        raise UnitError(f"unit {name!r} is ambiguous", _AMBIGUOUS[name])
    if name in _PLAIN:
        factor, dims = _PLAIN[name]
        return factor, make_dims(dims)
    if name in SUBSECOND:
        return SUBSECOND[name], make_dims({"s": 1})
    for table in (BINARY, DECIMAL):
        for prefix, scale in table.items():
            rest = name[len(prefix) :]
            if name.startswith(prefix) and rest in _PREFIXABLE:
                if table is BINARY and rest not in ("B", "bit"):
                    continue
                factor, dims = _PREFIXABLE[rest]
                return factor * scale, make_dims(dims)
    if name in _PREFIXABLE:
        factor, dims = _PREFIXABLE[name]
        return factor, make_dims(dims)
    raise _unknown(name)


def _unknown(name: str) -> UnitError:
    hint = _AMBIGUOUS.get(
        name,
        "use B, bit, FLOP, s, W, J, USD or 1 with a k/M/G/T/P/E "
        "or Ki/Mi/Gi/Ti/Pi prefix, e.g. GB/s, TFLOP/s, Gbit/s, us",
    )
    return UnitError(f"unknown unit {name!r}", hint)


def _evaluate(node: ast.AST, text: str, depth: int) -> tuple[Fraction, Dims]:
    if depth > 10:
        raise UnitError(f"unit {text!r} is nested too deeply")
    if isinstance(node, ast.Name):
        return unit_named(node.id)
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value == 1:
        return Fraction(1), DIMENSIONLESS
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        lf, ld = _evaluate(node.left, text, depth + 1)
        rf, rd = _evaluate(node.right, text, depth + 1)
        if isinstance(node.op, ast.Mult):
            return lf * rf, multiply_dims(ld, rd)
        return lf / rf, multiply_dims(ld, rd, -1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        exponent = node.right
        if isinstance(exponent, ast.UnaryOp) and isinstance(exponent.op, ast.USub):
            exponent = exponent.operand
            sign = -1
        else:
            sign = 1
        if not (isinstance(exponent, ast.Constant) and type(exponent.value) is int):
            raise UnitError(f"unit {text!r}: exponents are small integers")
        power = sign * exponent.value
        if abs(power) > 4:
            raise UnitError(f"unit {text!r}: exponent {power} out of range")
        bf, bd = _evaluate(node.left, text, depth + 1)
        return bf**power, multiply_dims(DIMENSIONLESS, bd, power)
    raise UnitError(
        f"unit {text!r} is not a product or quotient of unit names",
        "write e.g. GB/s, FLOP/B, USD/h",
    )


def convert(value: Fraction, source: Unit, target: Unit) -> Fraction:
    """`value` in `source` expressed in `target`; the dimensions must agree."""
    if source.dims != target.dims:
        raise UnitError(
            f"cannot convert {source.text} ({format_dims(source.dims)}) to "
            f"{target.text} ({format_dims(target.dims)})"
        )
    return value * source.factor / target.factor


def exact_number(value: object) -> Fraction:
    """Convert a YAML number to an exact fraction (`3.35` -> 67/20); refuse bools, text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise ValueError(f"{value!r} is not a finite number")
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
