"""A run's per-request times as integers over one denominator, read as Fractions.

kb.ledger.run_by_step counts time in integer units of 1/D seconds; a request's TTFT,
TPOT or latency is an integer difference over D (or D(O - 1)). `Scaled` keeps those
integers and gives each value as the Fraction it is only when asked, so a run of 30,000
requests' mean or median is integer arithmetic, one Fraction at the end: exactly the
value the Fractions' sum or middle gives (tests/ledger/test_scaled.py holds that).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import overload


class Scaled(Sequence[Fraction]):
    """numerators[i] / denominator, for each i: a sequence of Fractions, equal to their tuple."""

    __slots__ = ("numerators", "denominator")

    def __init__(self, numerators: tuple[int, ...], denominator: int) -> None:
        if denominator < 1:
            raise ValueError("a positive denominator")
        self.numerators, self.denominator = numerators, denominator

    def __len__(self) -> int:
        return len(self.numerators)

    @overload
    def __getitem__(self, index: int) -> Fraction: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Fraction, ...]: ...

    def __getitem__(self, index: int | slice) -> Fraction | tuple[Fraction, ...]:
        if isinstance(index, slice):
            return tuple(Fraction(n, self.denominator) for n in self.numerators[index])
        return Fraction(self.numerators[index], self.denominator)

    def __iter__(self) -> Iterator[Fraction]:
        return (Fraction(n, self.denominator) for n in self.numerators)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Scaled({len(self)} values over {self.denominator})"

    def mean(self) -> Fraction:
        """Sum / count, the integers summed."""
        return Fraction(sum(self.numerators), self.denominator * len(self.numerators))

    def median(self) -> Fraction:
        """The middle value, or the mean of the two middle ones (statistics.median's)."""
        ordered, middle = sorted(self.numerators), len(self.numerators) // 2
        if len(ordered) % 2:
            return Fraction(ordered[middle], self.denominator)
        return Fraction(ordered[middle - 1] + ordered[middle], 2 * self.denominator)
