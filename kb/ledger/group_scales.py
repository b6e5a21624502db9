"""Per-group scales read with group-quantized weights (end-to-end.json `weight_group_scales`).

kb's formats count a weight at its width (`kb.ledger.scenario.PRECISION_BYTES`: int4 a half
byte) and leave block scales out. An engine declared in `weight_group_scales` stores, beside
each group of G weights, `scale_bytes_per_group` bytes of scales (gpt-fast's int4: a bf16
scale and a bf16 zero, 4 B), and its kernels read them with the weights. For a row of such
an engine and format whose precision states G, a weight costs

    width + scale_bytes_per_group / G        (gpt-fast int4 at G = 32: 1/2 + 4/32 = 0.625 B)

`extra_bytes` gives the second term, which kb.ledger.endtoend sets on the row's Scenario
(`weight_scale_bytes`); kb.ledger.scenario adds it to the workload's weight_bytes, so the
weight reads and the weights' memory use it alike. Pure: reads only the declaration.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

SECTION = "weight_group_scales"
_GROUP = re.compile(r"\bgroup(?:\s*size)?\s*(\d+)|\bG\s*=\s*(\d+)", re.IGNORECASE)

Declared = dict[tuple[str, str], Fraction]  # (engine, weight format) -> scale bytes per group


@lru_cache(maxsize=1)
def declared() -> Declared:
    """(engine, format) -> the bytes of scales stored per group, as the section declares them."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, _read)


def _read(entry: Any) -> Declared:
    """The section read (ValueError on a scale that is not a positive number of bytes)."""
    found: Declared = {}
    for engine, node in entry.items():
        if not (isinstance(node, dict) and "formats" in node):
            continue
        for fmt, spec in node["formats"].items():
            value = Fraction(str(spec["scale_bytes_per_group"]))
            if value <= 0:
                raise ValueError(f"{engine} {fmt}: scale_bytes_per_group must be positive")
            found[(str(engine), str(fmt))] = value
    return found


def group_size(text: str | None) -> int | None:
    """The group size a precision text states ('group 32', 'G=32'), or None."""
    match = _GROUP.search(text or "")
    if match is None:
        return None
    size = int(match.group(1) or match.group(2))
    return size if size > 0 else None


def extra_bytes(
    engine: str, weight_format: str, precision: str | None
) -> tuple[Fraction, int] | None:
    """(scale bytes per weight, G) for a declared engine and format whose row states G.

    None when the engine and format are not declared, or the row states no group size
    (the row then keeps the format's width; `unstated` says so).
    """
    per_group = declared().get((engine, weight_format))
    group = group_size(precision)
    if per_group is None or group is None:
        return None
    return per_group / group, group


def unstated(engine: str, weight_format: str, precision: str | None) -> bool:
    """True for a declared engine and format whose row states no group size."""
    return (engine, weight_format) in declared() and group_size(precision) is None
