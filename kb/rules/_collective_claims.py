"""LG009's claim half: a measured collective figure bound by a claim names its message size.

A flop-class claim that binds (in `bind`, `change` or `measured`) the `latency`,
`bus_bandwidth` or `algorithm_bandwidth` of a row of a collective receipt uses a time or
a rate that holds for that row's message size only. The claim passes when it also names
that size, in one of two ways:

- **row**: some quantity the claim binds (a `...#results.J.message_size` of any receipt,
  another record's field, or a literal `{value, unit}`) is in bytes and equals the row's
  message size exactly;
- **interpolated**: the claim names a size S (a bound byte quantity) and binds a second
  row of the same curve (same receipt, `gpus`, `algorithm`, `cuda_graphs`), and the two
  rows are the nearest rows of that curve on either side of S, as the ledger interpolates
  (kb/ledger/curves.py).

Anything else is reported: the row states no message size (a peak or "large message"
figure cannot price any particular message), or no bound size matches it.

Claims and receipt rows are read through their typed views (kb.kinds): a flop class
that fails its schema is not checked, and a receipt or a bound record that fails its
schema names no row and no size (SC001 reports each of them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.findings import Finding, Severity
from kb.kinds import Views, views
from kb.kinds.flop_class import Claim
from kb.kinds.receipt import Receipt, ResultRow
from kb.model import KnowledgeBase, Record, split_binding
from kb.rules._base import found

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast")
MEASURED = ("latency", "bus_bandwidth", "algorithm_bandwidth")


@dataclass(frozen=True)
class RowBinding:
    """One bound figure of a collective receipt's row (`row` None: no such row)."""

    section: str
    symbol: str
    binding: str
    receipt: Receipt
    row: ResultRow | None
    field: str


def _entries(claim: Claim) -> Iterator[tuple[str, str, Any]]:
    """(section, symbol, value) of a claim's bind, change and measured entries."""
    for symbol, value in claim.bind.items():
        yield "bind", str(symbol), value
    for symbol, value in claim.change.items():
        yield "change", str(symbol), value
    if claim.measured is not None:
        yield "measured", "measured", claim.measured


def _row(
    kb: KnowledgeBase, checked: Views, section: str, symbol: str, binding: str
) -> RowBinding | None:
    """The bound row when `binding` names a measured field of a collective receipt's row."""
    record_id, path = split_binding(binding)
    parts = path.split(".")
    record = kb.get(record_id)
    if record is None or record.kind != "receipt" or len(parts) != 3:
        return None
    receipt = checked.receipt(record)
    if (
        receipt is None
        or receipt.pattern not in COLLECTIVES
        or parts[0] != "results"
        or not parts[1].isdigit()
        or parts[2] not in MEASURED
    ):
        return None
    index = int(parts[1])
    row = receipt.rows[index] if index < len(receipt.rows) else None
    return RowBinding(section, symbol, binding, receipt, row, parts[2])


def _bytes(kb: KnowledgeBase, checked: Views, value: Any) -> Fraction | None:
    """The exact byte count a bound value stands for, or None when it is not in bytes.

    A binding reads a field of a schema-valid record only (as kb.ledger.inputs does).
    """
    from kb.ledger.quantities import QuantityError, figure

    quantity: Any = value
    origin = "claim"
    if isinstance(value, str):  # an expression, or a binding `record#field`
        if "#" not in value:
            return None
        record_id, path = split_binding(value)
        record = kb.get(record_id)
        readable = record is not None and checked.passed(record)
        quantity = record.get(path) if record is not None and readable else None
        origin = record_id
    try:
        result = figure(quantity, origin) if isinstance(quantity, Mapping) else None
    except QuantityError:
        return None
    return result.value if result is not None and result.dim == "B" else None


def row_size(receipt: Receipt, row: ResultRow | None) -> Fraction | None:
    """The row's message size in bytes, or None when there is no such row or it states none."""
    from kb.ledger.quantities import QuantityError, figure

    if row is None or row.message_size is None:
        return None
    try:
        return figure(row.message_size, receipt.id).value
    except QuantityError:
        return None


def _brackets(bound: RowBinding, others: list[RowBinding], sizes: set[Fraction]) -> bool:
    """ResultRow and another bound row of its curve are the nearest pair around a named size."""
    from kb.ledger.curves import curve_key, outlier

    receipt, row = bound.receipt, bound.row
    mine = row_size(receipt, row)
    if mine is None or row is None:
        return False
    key = curve_key(receipt, row)
    curve = sorted(
        {
            s
            for other in receipt.rows
            if curve_key(receipt, other) == key and outlier(other) is None
            for s in [row_size(receipt, other)]
            if s is not None
        }
    )
    for other in others:
        theirs = row_size(other.receipt, other.row)
        if (
            other.receipt.id != receipt.id
            or other.row is None
            or theirs is None
            or theirs == mine
            or curve_key(receipt, other.row) != key
        ):
            continue
        low, high = min(mine, theirs), max(mine, theirs)
        for size in sizes:
            if low < size < high and not any(low < s < high for s in curve):
                return True
    return False


def check_claims(
    kb: KnowledgeBase, flop: Record, code: str, severity: Severity
) -> Iterator[Finding]:
    """LG009 findings for one flop class's claims (none when it fails its schema)."""
    checked = views(kb)
    sections = checked.equations(flop)
    for claim in sections.claims if sections is not None else ():
        yield from _claim(kb, checked, flop, claim, code, severity)


def _claim(
    kb: KnowledgeBase,
    checked: Views,
    flop: Record,
    claim: Claim,
    code: str,
    severity: Severity,
) -> Iterator[Finding]:
    rows: list[RowBinding] = []
    sizes: set[Fraction] = set()
    for section, symbol, value in _entries(claim):
        size = _bytes(kb, checked, value)
        if size is not None:
            sizes.add(size)
        named = _row(kb, checked, section, symbol, value) if isinstance(value, str) else None
        if named is not None:
            rows.append(named)
    for row in rows:
        size = row_size(row.receipt, row.row)
        if size is not None and (size in sizes or _brackets(row, rows, sizes)):
            continue
        what = (
            "its row states no message size, so it prices no particular message"
            if size is None
            else f"no message size of {size} B (or a size its curve brackets with "
            "another bound row) is bound beside it"
        )
        pointer = f"/claims/{claim.index}/{row.section}"
        pointer += "" if row.section == "measured" else f"/{row.symbol}"
        yield found(
            code,
            severity,
            flop.path,
            pointer,
            f"claim {claim.id!r} binds {row.binding}, a measured "
            f"collective {row.field.replace('_', ' ')}, but {what}",
            "bind the row's message_size to a symbol of the claim (e.g. "
            f"n: {row.binding.rsplit('.', 1)[0]}.message_size), or use a row of "
            "the size the claim prices (or the two rows that bracket it)",
        )
