"""Above a curve's largest row: its saturated bus bandwidth (`collective_saturation`).

Declared in kb/data/end-to-end.json (issue 35, session 25). A collective's time is
`alpha + factor*S/B_sat` (the alpha-beta model kb/ledger/curves.py interpolates between two
rows), so its bus bandwidth `factor*S/t` rises with S toward B_sat and never falls. Above
a curve's largest row S_max the bus bandwidth of that row is therefore a lower bound on
the true one, and the link's line rate an upper bound no ring reaches. When the curve has
flattened at its end (its largest row's bus bandwidth at most `growth` times the row's
below it: the declared 1.05, which bounds B_sat within 5.3% of it by the same model), a
collective above S_max is priced at that bus bandwidth, `t(S) = t(S_max)*S/S_max`, its
latency inside it; a curve still climbing, or of one row, extends nothing (kb prices the
line rate, as before). Nothing is ever extended below a curve's smallest row.

This module holds the curve arithmetic; kb.ledger.transfers chooses the curves (the same
matching as a price in range) and calls `extension` only when no curve priced the size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from kb.ledger.curves import Point, skipped_text

SECTION = "collective_saturation"
EXTENDED = "extended: "  # how a transfer priced by this rule begins `pricing`


@lru_cache(maxsize=1)
def growth() -> Fraction:
    """The largest ratio of the two top rows' bus bandwidths a saturated curve may show."""
    from kb.resources import end_to_end

    return end_to_end(SECTION, lambda entry: Fraction(str(entry["growth_limit"])))


def rate(point: Point) -> Fraction:
    """Bytes per second of one row, S/t (its bus bandwidth over the collective's factor)."""
    return point.size / point.time


def saturated(points: list[Point]) -> bool:
    """True when the sorted curve has two rows or more and its top one grew at most `growth()`."""
    if len(points) < 2:
        return False
    return rate(points[-1]) <= growth() * rate(points[-2])


@dataclass(frozen=True)
class Extension:
    """A collective above a curve's largest row, priced at that row's bus bandwidth."""

    receipt: str
    time: Fraction  # seconds per collective at the transfer's size
    top: Point  # the curve's largest row
    below: Point  # the row under it (the saturation test's other row)
    skipped: tuple[tuple[int, str], ...] = ()

    def describe(self, factor: Fraction) -> str:
        """What the transfer says: the curve, its top row and bus bandwidth, and the rule."""
        top, below = self.top, self.below
        busbw = float(factor * rate(top) / 10**9)
        ratio = float(rate(top) / rate(below))
        return (
            f"{EXTENDED}{self.receipt} row {top.index} (S = {top.size} B, the curve's largest) "
            f"at its bus bandwidth {busbw:.2f} GB/s, the curve saturated ({ratio:.3f} x row "
            f"{below.index}) ({SECTION})" + skipped_text(self.skipped)
        )


def extension(
    size: Fraction,
    curves: Iterable[tuple[str, list[Point], tuple[tuple[int, str], ...]]],
) -> Extension | None:
    """Price size S above the saturated curves it exceeds; None when none qualifies.

    `curves` are the matching curves (receipt id, sorted points, outlier rows). The one with
    the largest S_max below S wins, then the receipt id.
    """
    found = [
        (points[-1].size, receipt, points, skipped)
        for receipt, points, skipped in curves
        if points and points[-1].size < size and saturated(points)
    ]
    if not found:
        return None
    _, receipt, points, skipped = min(found, key=lambda f: (-f[0], f[1]))
    top = points[-1]
    return Extension(receipt, top.time * size / top.size, top, points[-2], skipped)
