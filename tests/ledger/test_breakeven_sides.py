"""Placing interconnects beside a break-even: one difference per interval = one per figure."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.api import open_kb, validate
from kb.ledger import breakeven
from kb.ledger.analysis import analyze_placement
from kb.ledger.breakeven import placeable, placed

ROOT = Path(__file__).resolve().parents[2] / "records"
positive = st.fractions(min_value=Fraction(1, 10**6), max_value=10**6)


def _sign_of_product(roots: list[Fraction], flip: bool):  # type: ignore[no-untyped-def]
    def side_at(value: Fraction) -> str:
        product = Fraction(-1 if flip else 1)
        for root in roots:
            product *= value - root
        if product == 0:
            return "tie"
        return "candidate faster" if product < 0 else "reference faster"

    return side_at


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    roots=st.lists(positive, max_size=4, unique=True),
    extra=st.lists(positive, max_size=12),
    flip=st.booleans(),
)
def test_one_difference_per_interval_places_every_figure_as_computing_each(
    roots: list[Fraction], extra: list[Fraction], flip: bool
) -> None:
    """A continuous difference whose zeros are `ties` (a product of x - root)."""
    ties = tuple(sorted(roots))
    values = [*extra, *roots]
    figures = placeable((f"interconnects/link-{i}", v) for i, v in enumerate(values))
    side_at = _sign_of_product(list(ties), flip)
    calls: list[Fraction] = []

    def counted(value: Fraction) -> str:
        calls.append(value)
        return side_at(value)

    fast = placed(figures, counted, ties)
    assert fast == placed(figures, side_at, None)
    assert len(calls) <= len(ties) + 1


@pytest.fixture(scope="module")
def shipped(repo_stores: Path):  # type: ignore[no-untyped-def]
    """The shipped records in place, checked (the claims' stores seeded: tests/warm.py)."""
    result = validate(ROOT, remember=False)
    return open_kb(ROOT, checked=result)


def test_shipped_placements_place_their_interconnects_as_computing_each(
    shipped, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every shipped break-even: the sides equal those of computing both ledgers per figure."""
    placements = [r for r in shipped if r.kind == "placement"]
    fast = [analyze_placement(r, shipped, with_break_even=True) for r in placements]
    slow_placed = placed

    def every_figure(figures, side_at, ties):  # type: ignore[no-untyped-def]
        return slow_placed(figures, side_at, None)

    monkeypatch.setattr(breakeven, "placed", every_figure)
    slow = [analyze_placement(r, shipped, with_break_even=True) for r in placements]
    evens = [b for a in fast for b in getattr(a, "break_evens", ())]
    assert sum(len(b.sides) for b in evens) > 50  # the shipped records place many figures
    assert [getattr(a, "break_evens", None) for a in fast] == [
        getattr(a, "break_evens", None) for a in slow
    ]


def test_a_side_outside_the_three_is_placed_as_given() -> None:
    """`placed` shares the three sides' objects; any other word still places every figure."""
    figures = placeable([("interconnects/a", Fraction(2)), ("interconnects/b", Fraction(5))])
    sides = placed(figures, lambda value: "unknown", (Fraction(3),))
    assert [(p.interconnect, p.value, p.side) for p in sides] == [
        ("interconnects/a", Fraction(2), "unknown"),
        ("interconnects/b", Fraction(5), "unknown"),
    ]
    assert [p.side for p in placed(figures, lambda value: "tie", (Fraction(5),))] == ["tie"] * 2


def test_a_memoised_solve_is_the_fresh_solve_and_sympy_is_asked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`_solve_sympy` keeps SymPy's answer per expression; an "unverified" one is never kept."""
    import sympy

    x = sympy.Symbol("x", positive=True)
    fresh = breakeven._solve_fresh
    calls: list[object] = []

    def counted(expr: object, symbol: object) -> breakeven.Solved:
        calls.append(expr)
        return fresh(expr, symbol)

    monkeypatch.setattr(breakeven, "_SOLVED", {})
    monkeypatch.setattr(breakeven, "_solve_fresh", counted)
    quadratic = x**2 - 4  # not `c + k*x`: SymPy's
    first, again = breakeven._solve_sympy(quadratic, x), breakeven._solve_sympy(quadratic, x)
    assert first == again == fresh(quadratic, x) == ("tie", (Fraction(2),), "")
    assert calls == [quadratic]
    monkeypatch.setattr(breakeven, "SOLVE_STEPS", 1)  # the budget spent: unverified
    cubic = x**3 - 2 * x - 5
    spent = [breakeven._solve_sympy(cubic, x) for _ in range(2)]
    assert [status for status, _, _ in spent] == ["unverified", "unverified"]
    assert calls == [quadratic, cubic, cubic] and list(breakeven._SOLVED) == [(quadratic, x)]
