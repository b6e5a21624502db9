"""Collective time by message size, from the measured curve of a receipt.

A receipt's result rows are points (message size S, time t) of one collective. A row's
time is its `latency` when it states one, else it follows from its bandwidth by
nccl-tests' definitions (domain-facts §3.1): `t = S*factor/busbw` for bus bandwidth,
`t = S/algbw` for algorithm bandwidth. Rows form one *curve* when they share a receipt,
a rank count (`gpus`), an `algorithm` and a `cuda_graphs` state: ring, tree, NVLS and
one-shot/two-shot custom all-reduce are never mixed, and a row of one algorithm never
prices a transfer of another (a row without an algorithm serves only a transfer without
one).

A transfer of size S is priced from a curve in one of two ways, and no other:

- **row**: a row of exactly size S gives its time;
- **interpolated**: the two rows that bracket S (S1 < S < S2, nearest on each side) give
  `t = t1 + (t2 - t1)*(S - S1)/(S2 - S1)`, linear in time between them. Between two
  measured sizes this is the alpha-beta model fitted to those two points; it never
  reaches outside the measured range.

A row its receipt marks `outlier` (with the reason from its source) is no point of any
curve: `outlier()` is the one rule, applied here and wherever a curve is read (the
prefill's matmul times by tokens, kb/ledger/prefill.py). The row stays in the receipt as
printed; a price read from a curve that skipped one names the row and its reason.

Outside the measured range nothing is extrapolated here: the transfer is not priced by
the receipt, and the ledger says why (above a curve whose bus bandwidth has flattened at
its largest row, kb/ledger/saturation.py prices it at that row's bus bandwidth, a
declared rule of its own). Arithmetic is exact (Fractions). Among several curves
an exact row wins over an interpolation, then the narrowest bracket (smallest S2/S1),
then the receipt id. Rows are read from the receipt's typed view (kb.kinds.receipt):
only a receipt the schema stage passed has curves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kb.kinds.receipt import Receipt, ResultRow
from kb.ledger.quantities import QuantityError, figure

CurveKey = tuple[str, "int | None", "str | None", "bool | None"]


@dataclass(frozen=True)
class Point:
    """One measured row: message size and time of one collective, both exact."""

    size: Fraction
    time: Fraction
    index: int  # row index in the receipt's results


@dataclass(frozen=True)
class Pricing:
    """How a receipt priced one collective: the time and the rows it came from."""

    receipt: str
    time: Fraction  # seconds per collective
    rows: tuple[Point, ...]  # one row (exact) or two (bracketing)
    skipped: tuple[tuple[int, str], ...] = ()  # the curve's outlier rows: (index, reason)

    @property
    def interpolated(self) -> bool:
        return len(self.rows) == 2

    @property
    def span(self) -> Fraction:
        return self.rows[-1].size / self.rows[0].size if self.interpolated else Fraction(1)

    def describe(self) -> str:
        if not self.interpolated:
            text = f"{self.receipt} row {self.rows[0].index} (S = {self.rows[0].size} B)"
        else:
            low, high = self.rows
            text = (
                f"{self.receipt}: linear in time between rows {low.index} "
                f"(S = {low.size} B) and {high.index} (S = {high.size} B)"
            )
        return text + skipped_text(self.skipped)


def outlier(row: ResultRow | Mapping[str, Any]) -> str | None:
    """The reason a row is no point of its curve (its `outlier`), or None: the one rule."""
    reason = row.outlier if isinstance(row, ResultRow) else row.get("outlier")
    return reason if isinstance(reason, str) and reason.strip() else None


def skipped_text(skipped: Iterable[tuple[int, str]]) -> str:
    """How a price says which outlier rows its curve skipped ('' when none)."""
    return "".join(f"; row {i} skipped as an outlier ({reason})" for i, reason in skipped)


def outliers(receipt: Receipt) -> dict[CurveKey, tuple[tuple[int, str], ...]]:
    """Each curve's outlier rows, (index, reason), in row order."""
    found: dict[CurveKey, list[tuple[int, str]]] = {}
    for row in receipt.rows:
        reason = outlier(row)
        if reason is not None:
            found.setdefault(curve_key(receipt, row), []).append((row.index, reason))
    return {key: tuple(rows) for key, rows in found.items()}


def row_time(row: ResultRow, factor: Fraction, receipt: str) -> Point | None:
    """The (size, time) point of a row, or None when it states no usable size or time."""
    if row.message_size is None:
        return None
    try:
        size = figure(row.message_size, receipt).value
        if size <= 0:
            return None
        if row.latency is not None:
            time = figure(row.latency, receipt).value
        elif row.bus_bandwidth is not None:
            time = size * factor / figure(row.bus_bandwidth, receipt).value
        elif row.algorithm_bandwidth is not None:
            time = size / figure(row.algorithm_bandwidth, receipt).value
        else:
            return None
    except (QuantityError, ZeroDivisionError):
        return None
    return Point(size, time, row.index) if time > 0 else None


def curve_key(receipt: Receipt, row: ResultRow) -> CurveKey:
    """The curve a row belongs to: its receipt, rank count, algorithm and CUDA-graphs state."""
    return (receipt.id, row.gpus, row.algorithm, row.cuda_graphs)


def curves(
    receipt: Receipt, factor_of: Callable[[int | None], Fraction]
) -> dict[CurveKey, list[Point]]:
    """The receipt's rows grouped into curves, each sorted by size.

    A curve holding two rows of one size with different times is ambiguous and dropped
    (rule LG009 reports it on the receipt). A row marked `outlier` is skipped.
    """
    grouped: dict[CurveKey, list[Point]] = {}
    for row in receipt.rows:
        if outlier(row) is not None:
            continue
        point = row_time(row, factor_of(row.gpus), receipt.id)
        if point is not None:
            grouped.setdefault(curve_key(receipt, row), []).append(point)
    result = {}
    for key, points in grouped.items():
        points.sort(key=lambda p: (p.size, p.index))
        sizes = [p.size for p in points]
        if len(set(sizes)) == len(sizes):
            result[key] = points
    return result


def duplicate_sizes(receipt: Receipt) -> list[tuple[int, int]]:
    """Pairs of row indices that share a curve and a message size (an ambiguous curve)."""
    seen: dict[tuple[CurveKey, Fraction], int] = {}
    pairs = []
    for row in receipt.rows:
        if row.message_size is None or outlier(row) is not None:
            continue
        try:
            size = figure(row.message_size, receipt.id).value
        except QuantityError:
            continue
        key = (curve_key(receipt, row), size)
        if key in seen:
            pairs.append((seen[key], row.index))
        else:
            seen[key] = row.index
    return pairs


def price(
    points: list[Point],
    size: Fraction,
    receipt: str,
    skipped: tuple[tuple[int, str], ...] = (),
) -> Pricing | None:
    """Price size S from one sorted curve: its exact row, or the bracketing pair; else None.

    `skipped` are the curve's outlier rows (`outliers`): the price names them.
    """
    below = [p for p in points if p.size <= size]
    above = [p for p in points if p.size >= size]
    if not below or not above:
        return None  # outside the measured range: never extrapolated
    low, high = below[-1], above[0]
    if low.size == size:
        return Pricing(receipt, low.time, (low,), skipped)
    time = low.time + (high.time - low.time) * (size - low.size) / (high.size - low.size)
    return Pricing(receipt, time, (low, high), skipped)


def best(candidates: Iterable[Pricing]) -> Pricing | None:
    """Exact row first, then the narrowest bracket, then the receipt id."""
    ordered = sorted(candidates, key=lambda p: (p.interpolated, p.span, p.receipt))
    return ordered[0] if ordered else None


def measured_range(points: list[Point]) -> str:
    return f"{points[0].size} B to {points[-1].size} B" if points else "no sized rows"
