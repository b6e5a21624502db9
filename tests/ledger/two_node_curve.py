"""The two-node, 16-rank H100 all-reduce curve, read by hand from its receipt (session 24).

receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce: the tests that hold the
two-node rows to it interpolate its rows here, as kb/ledger/curves.py documents (linear in
time between the two rows that bracket a size, never beyond them), from the record's own
figures, so that a hand-worked time and the ledger's can be compared exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kb.model import KnowledgeBase

CURVE = "receipts/jingchaozhang-nd-h100-v5-2node-torch-nccl-all-reduce"
_BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_SECONDS = {"us": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": Fraction(1)}


def _value(node: Mapping[str, Any], scale: Mapping[str, Any]) -> Fraction:
    return Fraction(str(node["value"])) * scale[node["unit"]]


def points(kb: KnowledgeBase) -> list[tuple[Fraction, Fraction]]:
    """The curve's (size in bytes, time in seconds) rows, by size."""
    record = kb.get(CURVE)
    assert record is not None, CURVE
    rows = record.data["results"]
    found = [(_value(r["message_size"], _BYTES), _value(r["latency"], _SECONDS)) for r in rows]
    return sorted(found)


def curve_time(kb: KnowledgeBase, size: int) -> Fraction:
    """One all-reduce of `size` bytes: linear in time between the rows that bracket it."""
    rows = points(kb)
    low = max(p for p in rows if p[0] <= size)
    high = min(p for p in rows if p[0] >= size)
    if low == high:
        return low[1]
    return low[1] + (high[1] - low[1]) * (size - low[0]) / (high[0] - low[0])
