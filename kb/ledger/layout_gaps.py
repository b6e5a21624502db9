"""Rows priced under a layout kb knows the run did not use (end-to-end.json `layout_gaps`).

Where a source establishes that a run used a layout kb cannot express, the row is still
priced under the layout it states, and says what kb priced instead of what ran. (Declared in
session 22 for TensorRT-LLM 1.0's attention data parallelism with tensor-parallel experts;
since session 23 kb prices that layout, `moe_tp`, and no receipt is declared.)
The note is declared per receipt, with the rows it covers and its sources, and is added to
the row's `assumed` list; it changes no price. Pure: reads only the declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SECTION = "layout_gaps"


@dataclass(frozen=True)
class Gap:
    """One receipt's declared gap: the rows it covers (None: all) and what a row says."""

    rows: frozenset[int] | None
    note: str


@lru_cache(maxsize=1)
def declared() -> Mapping[str, Gap]:
    """Each receipt with a declared gap, and the gap (the section as read)."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, _read)


def _read(entry: Any) -> dict[str, Gap]:
    found = {}
    for receipt, node in entry["receipts"].items():
        rows = None if node["rows"] == "all" else frozenset(int(i) for i in node["rows"])
        note = str(node["note"])
        if not note or not node["sources"]:
            raise ValueError(f"{receipt}: a layout gap needs its note and its sources")
        found[str(receipt)] = Gap(rows, note)
    return found


def note(receipt: str, index: int) -> str | None:
    """What row `index` of `receipt` says of the layout kb priced, if a gap covers it."""
    gap = declared().get(receipt)
    if gap is None or (gap.rows is not None and index not in gap.rows):
        return None
    return gap.note
