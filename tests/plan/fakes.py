"""A stand-in pricing function for the planner's own tests (the real one: kb.ledger.scenario).

Each option's TPOT is a function of the batch the test chooses, so the comparison,
the Pareto marks and the sweep's tie solving are tested against hand-worked numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

GIB = 2**30


@dataclass(frozen=True)
class Row:
    name: str
    value: Fraction
    formula: str = "a hand-worked row"
    provenance: str = "estimated"
    receipts: tuple[str, ...] = ()


@dataclass(frozen=True)
class FakeOutcome:
    fits: bool
    need_per_device: Fraction
    have_per_device: Fraction
    tpot: Fraction | None
    batch: int
    devices: int
    problems: tuple[str, ...] = ()
    max_batch: int | None = 512
    max_context: int | None = 8192
    energy_per_token: Fraction | None = None
    rows: tuple[Any, ...] = field(default=())
    provenance: str = "estimated"

    @property
    def ttft(self) -> Fraction | None:
        return None if self.tpot is None else self.tpot * 10

    @property
    def latency(self) -> Fraction | None:
        return None

    @property
    def tokens_per_s_system(self) -> Fraction | None:
        return None if self.tpot is None else self.batch / self.tpot

    @property
    def tokens_per_s_per_device(self) -> Fraction | None:
        t = self.tokens_per_s_system
        return None if t is None else t / self.devices

    @property
    def exposed_share(self) -> Fraction | None:
        return None if self.tpot is None else Fraction(1, 10)


def pricing(
    tpot: Mapping[str, Callable[[int], Fraction]], too_big: Sequence[str] = ()
) -> Callable[[Sequence[Mapping[str, Any]], Any], list[FakeOutcome]]:
    """Price by name: `tpot[name](batch)`; names in `too_big` do not fit (90 of 80 GiB)."""

    def name(s: Mapping[str, Any]) -> str:
        parts = [f"dp{s['dp']}"] if s["dp"] > 1 else []
        parts += [f"{d}{s[d]}" for d in ("tp", "pp", "ep") if s[d] > 1]
        return "-".join(parts) or "tp1"

    def price(scenarios: Sequence[Mapping[str, Any]], kb: Any) -> list[FakeOutcome]:
        found = []
        for s in scenarios:
            n = name(s)
            if n in too_big:
                found.append(
                    FakeOutcome(
                        False,
                        Fraction(90 * GIB),
                        Fraction(80 * GIB),
                        None,
                        s["batch"],
                        s["count"],
                        ("device: does not fit: needs 90.00 GiB per device, has 80.00 GiB",),
                    )
                )
            elif n in tpot:
                t = tpot[n](s["batch"])
                rows = (Row("useful", t * 3 / 4), Row("exposed", t / 4, provenance="measured"))
                found.append(
                    FakeOutcome(
                        True,
                        Fraction(40 * GIB),
                        Fraction(80 * GIB),
                        t,
                        s["batch"],
                        s["count"],
                        rows=rows,
                    )
                )
            else:
                found.append(
                    FakeOutcome(
                        False,
                        Fraction(0),
                        Fraction(0),
                        None,
                        s["batch"],
                        s["count"],
                        ("not priced in this test",),
                    )
                )
        return found

    return price
