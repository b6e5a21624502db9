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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.findings import Finding, Severity
from kb.model import KnowledgeBase, Record
from kb.rules._base import found

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast")
MEASURED = ("latency", "bus_bandwidth", "algorithm_bandwidth")
SECTIONS = ("bind", "change", "measured")


@dataclass(frozen=True)
class RowBinding:
    """One bound figure of a collective receipt's row."""

    section: str
    symbol: str
    binding: str
    receipt: Record
    index: int
    field: str


def _entries(claim: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(section, symbol, value) of a claim's bind, change and measured entries."""
    for section in SECTIONS:
        entries = claim.get(section)
        if section == "measured":
            if entries is not None:
                yield section, "measured", entries
            continue
        for symbol, value in entries.items() if isinstance(entries, Mapping) else ():
            yield section, str(symbol), value


def _row(kb: KnowledgeBase, binding: str) -> tuple[Record, int, str] | None:
    """(receipt, row index, field) when `binding` names a field of a collective row."""
    from kb.model import split_binding

    record_id, path = split_binding(binding)
    parts = path.split(".")
    receipt = kb.get(record_id)
    if (
        receipt is None
        or receipt.kind != "receipt"
        or len(parts) != 3
        or parts[0] != "results"
        or not parts[1].isdigit()
        or receipt.get("pattern") not in COLLECTIVES
    ):
        return None
    return receipt, int(parts[1]), parts[2]


def _bytes(kb: KnowledgeBase, value: Any) -> Fraction | None:
    """The exact byte count a bound value stands for, or None when it is not in bytes."""
    from kb.ledger.quantities import QuantityError, figure
    from kb.model import split_binding

    quantity: Any = value
    origin = "claim"
    if isinstance(value, str) and "#" in value:
        record_id, path = split_binding(value)
        record = kb.get(record_id)
        quantity = record.get(path) if record is not None else None
        origin = record_id
    try:
        result = figure(quantity, origin) if isinstance(quantity, Mapping) else None
    except QuantityError:
        return None
    return result.value if result is not None and result.dim == "B" else None


def row_size(receipt: Record, index: int) -> Fraction | None:
    """Row `index`'s message size in bytes, or None when it states none."""
    from kb.ledger.quantities import QuantityError, figure

    row = receipt.get(f"results.{index}")
    size = row.get("message_size") if isinstance(row, Mapping) else None
    try:
        return figure(size, receipt.id).value if isinstance(size, Mapping) else None
    except QuantityError:
        return None


def _curve_key(receipt: Record, index: int) -> tuple[Any, ...]:
    """The curve a row belongs to: its gpus, algorithm and cuda_graphs (as curves.py)."""
    row = receipt.get(f"results.{index}")
    row = row if isinstance(row, Mapping) else {}
    gpus = row.get("gpus")
    algorithm = row.get("algorithm")
    graphs = row.get("cuda_graphs")
    return (
        gpus if isinstance(gpus, int) and not isinstance(gpus, bool) else None,
        algorithm if isinstance(algorithm, str) else None,
        graphs if isinstance(graphs, bool) else None,
    )


def _brackets(row: RowBinding, others: list[RowBinding], sizes: set[Fraction]) -> bool:
    """Row and another bound row of its curve are the nearest pair around a named size."""
    mine = row_size(row.receipt, row.index)
    if mine is None:
        return False
    key = _curve_key(row.receipt, row.index)
    results = row.receipt.get("results")
    curve = sorted(
        {
            s
            for i in range(len(results) if isinstance(results, list) else 0)
            if _curve_key(row.receipt, i) == key
            for s in [row_size(row.receipt, i)]
            if s is not None
        }
    )
    for other in others:
        theirs = row_size(other.receipt, other.index)
        if (
            other.receipt.id != row.receipt.id
            or theirs is None
            or theirs == mine
            or _curve_key(other.receipt, other.index) != key
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
    """LG009 findings for one flop class's claims."""
    claims = flop.data.get("claims")
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if isinstance(claim, Mapping):
            yield from _claim(kb, flop, index, claim, code, severity)


def _claim(
    kb: KnowledgeBase,
    flop: Record,
    index: int,
    claim: Mapping[str, Any],
    code: str,
    severity: Severity,
) -> Iterator[Finding]:
    rows: list[RowBinding] = []
    sizes: set[Fraction] = set()
    for section, symbol, value in _entries(claim):
        size = _bytes(kb, value)
        if size is not None:
            sizes.add(size)
        named = _row(kb, value) if isinstance(value, str) else None
        if named is not None and named[2] in MEASURED:
            rows.append(RowBinding(section, symbol, value, *named))
    for row in rows:
        size = row_size(row.receipt, row.index)
        if size is not None and (size in sizes or _brackets(row, rows, sizes)):
            continue
        what = (
            "its row states no message size, so it prices no particular message"
            if size is None
            else f"no message size of {size} B (or a size its curve brackets with "
            "another bound row) is bound beside it"
        )
        pointer = f"/claims/{index}/{row.section}"
        pointer += "" if row.section == "measured" else f"/{row.symbol}"
        yield found(
            code,
            severity,
            flop.path,
            pointer,
            f"claim {claim.get('id', index)!r} binds {row.binding}, a measured "
            f"collective {row.field.replace('_', ' ')}, but {what}",
            "bind the row's message_size to a symbol of the claim (e.g. "
            f"n: {row.binding.rsplit('.', 1)[0]}.message_size), or use a row of "
            "the size the claim prices (or the two rows that bracket it)",
        )
